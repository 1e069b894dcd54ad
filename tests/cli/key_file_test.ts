/**
 * A node started with a key file other than the one the database's secrets
 * are encrypted with (or none) refuses with one readable line and leaves
 * nothing behind: no key file, no data directory, no other file.
 *
 * @module
 */
import assert from "node:assert/strict";
import { keyFingerprint } from "../../src/domain/keys/mod.ts";
import { TEST_ENGINE } from "../test_db.ts";
import { serverDatabase } from "./_server.ts";

const MAIN = new URL("../../main.ts", import.meta.url).pathname;

async function tessera(args: string[], env: Record<string, string>) {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", MAIN, ...args],
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
    env: { NO_COLOR: "1", TESSERA_SIGNING_ENABLED: "true", ...env },
  }).output();
  return {
    code: out.code,
    stdout: new TextDecoder().decode(out.stdout),
    stderr: new TextDecoder().decode(out.stderr),
  };
}

function entries(dir: string): string[] {
  try {
    return [...Deno.readDirSync(dir)].map((e) => e.name).sort();
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return ["(no such folder)"];
    throw err;
  }
}

Deno.test("serve with the wrong key file or none: 'Error: …', exit 1, nothing created", async () => {
  const dir = await Deno.makeTempDir({ prefix: "tessera-keyfile-" });
  const database = await serverDatabase();
  try {
    // node A: the first start records its key file in the database
    const env = TEST_ENGINE === "sqlite"
      ? { TESSERA_STORAGE_DATABASE_URL: `sqlite:${dir}/a/tessera.sqlite` }
      : database.env;
    const first = await tessera(["--data-dir", `${dir}/a`, "migrate"], env);
    assert.equal(first.code, 0, first.stderr);
    const recorded = keyFingerprint(await Deno.readFile(`${dir}/a/encKey`)).slice(0, 12);
    const listenAt = ["serve", "--listen", "127.0.0.1:0"];

    // node B without a key file
    const none = await tessera(["--data-dir", `${dir}/b`, ...listenAt], env);
    assert.equal(none.code, 1, none.stderr);
    assert.equal(
      none.stderr,
      `Error: The key file "${dir}/b/encKey" does not exist, but the database's secrets are ` +
        `encrypted with a key file (${recorded}…): copy that key file to "${dir}/b/encKey" ` +
        `(mode 0600) or set storage.key_file to its path; refusing to start without creating ` +
        `a new one\n`,
    );
    assert.equal(none.stdout, "");
    assert.deepEqual(entries(`${dir}/b`), ["(no such folder)"]);

    // node B with a key file of its own
    await Deno.mkdir(`${dir}/c`, { mode: 0o700 });
    const otherKey = crypto.getRandomValues(new Uint8Array(96));
    await Deno.writeFile(`${dir}/c/encKey`, otherKey, { mode: 0o600 });
    const other = await tessera(["--data-dir", `${dir}/c`, ...listenAt], env);
    assert.equal(other.code, 1, other.stderr);
    assert.equal(
      other.stderr,
      `Error: The key file "${dir}/c/encKey" does not match the key the database's secrets are ` +
        `encrypted with (database ${recorded}…, key file ${
          keyFingerprint(otherKey).slice(0, 12)
        }…): every node sharing a database needs the same key file; refusing to start\n`,
    );
    // no signing key, no initial admin password, no database file
    assert.deepEqual(entries(`${dir}/c`), ["encKey"]);

    // a copy of node A's key file starts; the database still knows node A's key only
    await Deno.copyFile(`${dir}/a/encKey`, `${dir}/c/encKey`);
    const copy = await tessera(["--data-dir", `${dir}/c`, "migrate"], env);
    assert.equal(copy.code, 0, copy.stderr);
    assert.equal(copy.stdout, "Database is up to date\n");
  } finally {
    await database.drop();
    await Deno.remove(dir, { recursive: true });
  }
});
