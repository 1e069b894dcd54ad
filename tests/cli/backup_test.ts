import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { TEST_ENGINE } from "../test_db.ts";
import { startTessera } from "./_server.ts";

const LISTEN_REGEXP = /Tessera listening address=127\.0\.0\.1:(\d+)/;
const MAIN = new URL("../../main.ts", import.meta.url).pathname;

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
    assert.match(stdout, /^Backed up .* pages, .* MiB in \d+ ms\. Keep the key file/);
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
