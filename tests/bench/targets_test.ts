import assert from "node:assert/strict";
import { planRun, shareKeys, threadsFor } from "../../bench/lib/targets.ts";

Deno.test("planRun: SQLite keeps the benchmark's old paths; PostgreSQL nodes get a folder each", () => {
  const sqlite = planRun({ database: "sqlite", nodes: 1 }, "/t", true);
  assert.deepEqual(sqlite.dataDirs, ["/t/data"]);
  assert.deepEqual(sqlite.logs, ["/t/tessera.log"]);
  assert.deepEqual(sqlite.signedLogs, ["/t/tessera-signed.log"]);
  assert.equal(sqlite.usersDatabase, undefined);
  assert.equal(sqlite.label, "SQLite, 1 node");
  const pg = planRun({ database: "postgres", nodes: 2 }, "/t", false);
  assert.deepEqual(pg.dataDirs, ["/t/postgres-2nodes/node1", "/t/postgres-2nodes/node2"]);
  assert.deepEqual(pg.logs, ["/t/postgres-2nodes/node1.log", "/t/postgres-2nodes/node2.log"]);
  // one users file outside the data directories: both nodes resolve the same users
  assert.equal(pg.usersDatabase, "/t/postgres-2nodes/bench-users.sqlite");
  assert.equal(pg.label, "PostgreSQL, 2 nodes");
  assert.equal(pg.primary, false);
});

Deno.test("threadsFor: at least the asked threads, a multiple of the nodes", () => {
  assert.equal(threadsFor(1, 1), 1);
  assert.equal(threadsFor(1, 2), 2);
  assert.equal(threadsFor(2, 2), 2);
  assert.equal(threadsFor(3, 2), 4);
});

Deno.test("shareKeys copies the key files a node has (mode 0600) and skips missing ones", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await Deno.mkdir(`${dir}/a`);
    await Deno.writeTextFile(`${dir}/a/encKey`, "secret");
    await shareKeys(`${dir}/a`, `${dir}/b`);
    assert.equal(await Deno.readTextFile(`${dir}/b/encKey`), "secret");
    assert.equal((await Deno.stat(`${dir}/b/encKey`)).mode! & 0o777, 0o600);
    await assert.rejects(() => Deno.stat(`${dir}/b/signing-key.pem`), Deno.errors.NotFound);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
