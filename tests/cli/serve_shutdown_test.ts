import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { TEST_ENGINE } from "../test_db.ts";
import { auditRows, serverDatabase, startTessera } from "./_server.ts";

const LISTEN_REGEXP = /Tessera listening address=127\.0\.0\.1:(\d+)/;

Deno.test("serve: SIGTERM during requests answers them, writes their audit rows, exits 0", async () => {
  const db = await serverDatabase();
  const server = await startTessera(["serve", "--listen", "127.0.0.1:0"], { env: db.env });
  try {
    const port = Number((await server.waitFor(LISTEN_REGEXP))[1]);
    const base = `http://127.0.0.1:${port}`;
    // logins are slow (a password hash each, one at a time): some are still running at the signal
    const statusOf = (r: Response) => r.body?.cancel().then(() => r.status) ?? r.status;
    const logins: Promise<number>[] = [];
    for (let i = 0; i < 12; i++) {
      logins.push(
        fetch(`${base}/auth`, {
          method: "POST",
          body: new URLSearchParams({ username: "admin", password: `wrong-${i}` }),
        }).then(statusOf),
      );
    }
    const checks: Promise<number>[] = [];
    // a refused admin call: answered at once and audited (the health probes write no row)
    for (let i = 0; i < 30; i++) checks.push(fetch(`${base}/system/`).then(statusOf));
    const requests = [...logins, ...checks];
    // the signal comes once the server answers (on a loaded machine that may take a while)
    await Promise.any(checks);
    server.child.kill("SIGTERM");
    const outcomes = await Promise.allSettled(requests);
    const answered = outcomes.filter((o) => o.status === "fulfilled").length;
    const status = await server.status;
    assert.equal(status.code, 0, server.log());
    assert.ok(answered > 0, "some requests were answered");
    const rows = await db.rows(server.dataDir);
    // every answered request has its row, none twice
    assert.equal(rows.length, answered, server.log());
    assert.ok(rows.some((r) => r.action === "POST /auth"));
    const signalled = server.log().match(/^(\S+) INFO Shutting down reason=SIGTERM/m);
    assert.ok(signalled, server.log());
    // requests that were still running at the signal finished and were audited
    const runningAtSignal = rows.filter((r) => r.ts + r.durationMs > Date.parse(signalled[1]));
    assert.ok(runningAtSignal.length > 0, JSON.stringify(rows));
    assert.match(server.log(), /INFO Stopped/);
  } finally {
    await server.cleanup();
    await db.drop();
  }
});

Deno.test({
  name: "serve: audit rows queued while another process locks the SQLite file land after SIGTERM",
  ignore: TEST_ENGINE !== "sqlite",
}, async () => {
  const server = await startTessera(["serve", "--listen", "127.0.0.1:0"]);
  let lock: DatabaseSync | undefined;
  try {
    const port = Number((await server.waitFor(LISTEN_REGEXP))[1]);
    lock = new DatabaseSync(`${server.dataDir}/tessera.sqlite`);
    lock.exec("BEGIN IMMEDIATE");
    // sent at once: each answer waits for its row's commit, which waits out the lock
    await Promise.all(
      Array.from({ length: 3 }, async () => {
        const res = await fetch(`http://127.0.0.1:${port}/system/`);
        assert.equal(res.status, 401);
        await res.body?.cancel();
      }),
    );
    server.child.kill("SIGTERM");
    // the server's insert waits out SQLite's busy timeout (5 s), fails, keeps the rows
    await server.waitFor(/WARN Cannot write audit rows now.*database is locked/, {
      timeoutMs: 15_000,
    });
    lock.exec("COMMIT");
    const status = await server.status;
    assert.equal(status.code, 0, server.log());
    const rows = auditRows(server.dataDir);
    assert.equal(rows.filter((r) => r.action === "GET /system").length, 3, server.log());
    assert.match(server.log(), /INFO Writing audit rows again/);
    assert.doesNotMatch(server.log(), /lost/);
  } finally {
    if (lock?.isTransaction) lock.exec("ROLLBACK");
    lock?.close();
    await server.cleanup();
  }
});
