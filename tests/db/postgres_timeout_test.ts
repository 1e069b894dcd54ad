/**
 * Every PostgreSQL call is bounded by the statement timeout: a slow statement
 * is cancelled by the server, a server whose processes are stopped is given
 * up by the client (its connection discarded, not reused), and the pool works
 * again once the server runs (the PostgreSQL run only).
 *
 * @module
 */
import assert from "node:assert/strict";
import { sql } from "kysely";
import { openDatabase } from "../../src/db/database.ts";
import { poolStats } from "../../src/db/postgres.ts";
import { isLostAnswer, isTransientDbError } from "../../src/db/transient_error.ts";
import { TEST_ENGINE, TEST_PG_URL } from "../test_db.ts";
import { startPgCluster } from "../pg_cluster.ts";

const TIMEOUT_MS = 400;

async function timed<T>(p: Promise<T>): Promise<{ ms: number; value?: T; error?: unknown }> {
  const started = performance.now();
  try {
    const value = await p;
    return { ms: performance.now() - started, value };
  } catch (error) {
    return { ms: performance.now() - started, error };
  }
}

Deno.test({
  name: "a statement over the statement timeout is cancelled (transient) and the pool goes on",
  ignore: TEST_ENGINE !== "postgres",
  async fn() {
    const db = openDatabase(TEST_PG_URL!, { poolSize: 1, statementTimeoutMs: TIMEOUT_MS });
    try {
      const slow = await timed(sql`select pg_sleep(3)`.execute(db));
      assert.ok(slow.error, "pg_sleep(3) finished under a 400 ms statement timeout");
      assert.match(String(slow.error), /statement timeout/);
      assert.ok(isTransientDbError(slow.error), "a cancelled statement answers 503");
      // the server cancelled it and said so: it took no effect
      assert.equal(isLostAnswer(slow.error), false);
      assert.ok(slow.ms < 2000, `cancelled after ${Math.round(slow.ms)} ms`);
      // the only connection of the pool serves the next statement at once
      const next = await timed(sql<{ n: number }>`select 1 as n`.execute(db));
      assert.equal(next.value?.rows[0].n, 1);
      assert.ok(next.ms < 500, `next statement took ${Math.round(next.ms)} ms`);
    } finally {
      await db.destroy();
    }
  },
});

Deno.test({
  name: "statements on a stopped PostgreSQL fail within the timeout and the pool recovers",
  ignore: TEST_ENGINE !== "postgres",
  async fn() {
    // a cluster of its own: stopping the run's cluster would break the tests beside this one
    const cluster = await startPgCluster();
    const db = openDatabase(cluster.url, { poolSize: 2, statementTimeoutMs: TIMEOUT_MS });
    try {
      // both connections open before the server stops
      await Promise.all([sql`select 1`.execute(db), sql`select 1`.execute(db)]);
      await cluster.freeze();
      // without client-side limits the statements would wait for the server forever: it runs
      // again after 10 s whatever happens, and then they would succeed (and fail the test)
      const guard = setTimeout(() => cluster.thaw(), 10_000);
      // two statements hold the connections, two more wait for one
      const during = await Promise.all(
        Array.from({ length: 4 }, () => timed(sql`select 1`.execute(db))),
      );
      clearTimeout(guard);
      // the two that held the connections got no answer: they may have run on the server
      assert.equal(during.filter((r) => isLostAnswer(r.error)).length, 2, String(during[0].error));
      for (const [i, r] of during.entries()) {
        assert.ok(r.error, `statement ${i} answered by a stopped server`);
        assert.ok(isTransientDbError(r.error), `statement ${i}: ${r.error}`);
        // the statement's own limit plus the client's margin, or a wait for a connection and
        // a connection attempt, each bounded by the same timeout
        assert.ok(
          r.ms < 3 * TIMEOUT_MS + 1000,
          `statement ${i} failed after ${Math.round(r.ms)} ms`,
        );
      }
      await cluster.thaw();
      // the timed-out connections were closed, not handed out again behind their old statement
      const after = await timed(sql<{ n: number }>`select 1 as n`.execute(db));
      assert.equal(after.value?.rows[0].n, 1, String(after.error));
      assert.ok(after.ms < 1000, `first statement after the stop took ${Math.round(after.ms)} ms`);
      const both = await Promise.all([sql`select 1`.execute(db), sql`select 1`.execute(db)]);
      assert.equal(both.length, 2);
      assert.ok(poolStats(db)!.total <= 2);
    } finally {
      await cluster.thaw();
      await db.destroy();
      await cluster.stop();
    }
  },
});
