/**
 * On SQLite the statement timeout is the busy timeout: a write waits for
 * another connection's write lock that long, then fails with a transient
 * error (HTTP 503), and works once the lock is gone.
 *
 * @module
 */
import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { sql } from "kysely";
import { migrateToLatest, openDatabase } from "../../src/db/database.ts";
import { isTransientDbError } from "../../src/db/transient_error.ts";

Deno.test("SQLite waits for another connection's write lock at most the statement timeout", async () => {
  const dir = await Deno.makeTempDir({ prefix: "tessera-busy-" });
  const path = `${dir}/tessera.sqlite`;
  const db = openDatabase(`sqlite:${path}`, { statementTimeoutMs: 300 });
  const other = new DatabaseSync(path);
  try {
    await migrateToLatest(db);
    other.exec("BEGIN IMMEDIATE");
    const started = performance.now();
    const err = await sql`insert into cache_epoch (id, n) values (2, 0)`.execute(db).then(
      () => undefined,
      (e) => e,
    );
    const ms = performance.now() - started;
    assert.ok(err, "the write went through another connection's lock");
    assert.ok(isTransientDbError(err), String(err));
    assert.ok(ms >= 250 && ms < 2000, `gave up after ${Math.round(ms)} ms`);
    other.exec("COMMIT");
    await sql`insert into cache_epoch (id, n) values (2, 0)`.execute(db);
  } finally {
    if (other.isTransaction) other.exec("ROLLBACK");
    other.close();
    await db.destroy();
    await Deno.remove(dir, { recursive: true });
  }
});
