import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { DatabaseSync } from "node:sqlite";
import { TEST_ENGINE } from "../test_db.ts";
import { startTessera } from "./_server.ts";

const LISTEN_REGEXP = /Tessera listening address=127\.0\.0\.1:(\d+)/;
const MAIN = new URL("../../main.ts", import.meta.url).pathname;
/** The end of a "Backed up …" line. */
const SUMMARY = String.raw`\d+ pages, \d+\.\d MiB in \d+ ms\.`;

/** `text` as a regexp source that matches it literally. */
function literal(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

async function backup(dataDir: string, file: string) {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", MAIN, "--data-dir", dataDir, "backup", file],
    env: { NO_COLOR: "1" },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  return {
    code: out.code,
    stdout: new TextDecoder().decode(out.stdout),
    stderr: new TextDecoder().decode(out.stderr),
  };
}

async function adminJwt(base: string, dataDir: string): Promise<string> {
  const password = (await Deno.readTextFile(`${dataDir}/initial-admin-password`)).trim();
  const login = await (await fetch(`${base}/auth`, {
    method: "POST",
    body: new URLSearchParams({ username: "admin", password }),
  })).json();
  return login.result.value.token as string;
}

Deno.test({
  name:
    "tessera backup: a copy taken while the server enrols tokens opens and has every token committed before it",
  ignore: TEST_ENGINE !== "sqlite",
}, async () => {
  const server = await startTessera(["serve", "--listen", "127.0.0.1:0"]);
  const copy = `${await Deno.makeTempDir({ prefix: "tessera-backup-" })}/copy.sqlite`;
  try {
    const port = Number((await server.waitFor(LISTEN_REGEXP))[1]);
    const base = `http://127.0.0.1:${port}`;
    const password = (await Deno.readTextFile(`${server.dataDir}/initial-admin-password`)).trim();
    const login = await (await fetch(`${base}/auth`, {
      method: "POST",
      body: new URLSearchParams({ username: "admin", password }),
    })).json();
    const jwt = login.result.value.token as string;
    const enrolled: string[] = [];
    const enrol = async (i: number) => {
      const res = await fetch(`${base}/token/init`, {
        method: "POST",
        headers: { "PI-Authorization": jwt },
        body: new URLSearchParams({ type: "hotp", genkey: "1", serial: `BACKUP${i}` }),
      });
      await res.body?.cancel();
      if (res.status === 200) enrolled.push(`BACKUP${i}`);
    };
    for (let i = 0; i < 50; i++) await enrol(i);
    // write load while the backup runs
    let stop = false;
    let n = 50;
    const writer = (async () => {
      while (!stop) await enrol(n++);
    })();
    const committedBefore = [...enrolled];
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", MAIN, "--data-dir", server.dataDir, "backup", copy],
      env: { NO_COLOR: "1" },
      stdout: "piped",
      stderr: "piped",
    }).output();
    stop = true;
    await writer;
    const stdout = new TextDecoder().decode(out.stdout);
    assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
    assert.match(
      stdout,
      new RegExp(
        `^Backed up ${literal(`${server.dataDir}/tessera.sqlite to ${copy}`)}: ${SUMMARY}\n` +
          literal(
            `Keep the key file (${server.dataDir}/encKey) with the copies, stored apart: ` +
              "without it the copies' secrets cannot be read.\n",
          ) + "$",
      ),
    );
    // the copy holds every secret of the database: its owner's alone, whatever the umask
    assert.equal((await Deno.stat(copy)).mode! & 0o777, 0o600);
    const db = new DatabaseSync(copy, { readOnly: true });
    const serials = new Set(
      (db.prepare("select serial from token").all() as { serial: string }[]).map((r) => r.serial),
    );
    db.close();
    for (const s of committedBefore) assert.ok(serials.has(s), `${s} is missing from the copy`);
    assert.ok(enrolled.length > committedBefore.length, "the server kept writing meanwhile");
    // a second backup to the same file is refused
    const again = await new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", MAIN, "--data-dir", server.dataDir, "backup", copy],
      stdout: "piped",
      stderr: "piped",
    }).output();
    assert.equal(again.code, 1);
    assert.match(new TextDecoder().decode(again.stderr), /the file exists/);
  } finally {
    await server.cleanup();
    await Deno.remove(copy.replace(/\/copy\.sqlite$/, ""), { recursive: true }).catch(() => {});
  }
});

Deno.test({
  name:
    "tessera backup: the SQLite user store of a sqlresolver is copied beside the database, with the users still in its WAL",
  ignore: TEST_ENGINE !== "sqlite",
}, async () => {
  const server = await startTessera(["serve", "--listen", "127.0.0.1:0"]);
  const dir = await Deno.makeTempDir({ prefix: "tessera-backup-" });
  try {
    const port = Number((await server.waitFor(LISTEN_REGEXP))[1]);
    const base = `http://127.0.0.1:${port}`;
    const headers = { "PI-Authorization": await adminJwt(base, server.dataDir) };
    const post = async (path: string, params: Record<string, string>) => {
      const res = await fetch(`${base}${path}`, {
        method: "POST",
        headers,
        body: new URLSearchParams(params),
      });
      const body = await res.json();
      assert.equal(res.status, 200, JSON.stringify(body));
    };
    // the README's quick start: an editable sqlresolver on people.sqlite, a realm, a user
    await post("/resolver/people", {
      type: "sqlresolver",
      Database: "people.sqlite",
      Table: "users",
      Editable: "1",
      Map: JSON.stringify({ userid: "id", username: "username", password: "password" }),
    });
    await post("/realm/staff", { resolvers: "people" });
    await post("/user/", { user: "alice", resolver: "people", password: "Alice-Pass-1" });
    // the server holds people.sqlite open: alice's row is in its write-ahead log
    assert.ok((await Deno.stat(`${server.dataDir}/people.sqlite-wal`)).size > 0);

    const r = await backup(server.dataDir, `${dir}/copy.sqlite`);
    assert.equal(r.code, 0, r.stderr);
    const people = `${dir}/copy.resolver-people.sqlite`;
    assert.match(
      r.stdout,
      new RegExp(
        `^Backed up ${literal(`${server.dataDir}/tessera.sqlite to ${dir}/copy.sqlite`)}: ` +
          `${SUMMARY}\n` +
          `Backed up ${
            literal(
              `the users of resolver "people" (${server.dataDir}/people.sqlite) to ${people}`,
            )
          }: ${SUMMARY}\n` +
          literal(
            `Keep the key file (${server.dataDir}/encKey) with the copies, stored apart: ` +
              "without it the copies' secrets cannot be read.\n",
          ) + "$",
      ),
    );
    assert.equal((await Deno.stat(people)).mode! & 0o777, 0o600);
    const copy = new DatabaseSync(people, { readOnly: true });
    const rows = copy.prepare("select username from users").all();
    copy.close();
    assert.deepEqual(rows.map((row) => row.username), ["alice"]);

    // a second backup to a name whose user-store copy exists is refused before anything is written
    await Deno.remove(`${dir}/copy.sqlite`);
    const again = await backup(server.dataDir, `${dir}/copy.sqlite`);
    assert.equal(again.code, 1);
    assert.match(again.stderr, /the file exists/);
    assert.equal(existsSync(`${dir}/copy.sqlite`), false);
  } finally {
    await server.cleanup();
    await Deno.remove(dir, { recursive: true });
  }
});
