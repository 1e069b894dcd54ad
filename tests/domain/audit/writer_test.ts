import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { sql } from "kysely";
import { type AuditEntry, AuditWriter, newAuditEntry } from "../../../src/domain/audit/mod.ts";
import { migrateToLatest, openDatabase } from "../../../src/db/database.ts";
import type { Db } from "../../../src/db/schema.ts";
import { memoryLogger } from "../../../src/lib/logger.ts";
import { openTestDatabase, TEST_ENGINE } from "../../test_db.ts";
import { startPgCluster } from "../../pg_cluster.ts";

const FAST = { retryMinMs: 10, retryMaxMs: 80 };

function entry(i: number, action = `GET /row/${i}`): AuditEntry {
  return newAuditEntry(1_700_000_000_000 + i, action, "node-a");
}

async function countRows(db: Db): Promise<number> {
  const row = await db.selectFrom("audit").select((eb) => eb.fn.countAll<number>().as("n"))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

async function actions(db: Db): Promise<string[]> {
  const rows = await db.selectFrom("audit").select("action").orderBy("id").execute();
  return rows.map((r) => r.action);
}

/** A migrated SQLite file and a second connection on it that can lock it. */
async function lockableFile() {
  const dir = await Deno.makeTempDir({ prefix: "tessera-audit-" });
  const path = `${dir}/tessera.sqlite`;
  // the writer's connection gives up on a lock after 20 ms instead of 5 s: the test is
  // about what the writer does with "database is locked", not about SQLite's wait
  const db = openDatabase(`sqlite:${path}`, { statementTimeoutMs: 20 });
  await migrateToLatest(db);
  const other = new DatabaseSync(path);
  return {
    db,
    path,
    lock: () => other.exec("BEGIN IMMEDIATE"),
    unlock: () => other.exec("COMMIT"),
    async close() {
      if (other.isTransaction) other.exec("ROLLBACK");
      other.close();
      await db.destroy();
      await Deno.remove(dir, { recursive: true });
    },
  };
}

function settledFlag(p: Promise<unknown>): { isSettled: boolean } {
  const flag = { isSettled: false };
  p.finally(() => flag.isSettled = true).catch(() => {});
  return flag;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

Deno.test({
  name: "AuditWriter keeps rows while another connection locks the SQLite file, then writes all",
  ignore: TEST_ENGINE !== "sqlite",
  async fn() {
    const f = await lockableFile();
    const log = memoryLogger();
    const writer = new AuditWriter(f.db, log, FAST);
    try {
      f.lock();
      // more than one batch (1,000) and more than one transaction's worth of timer flushes
      for (let i = 0; i < 2500; i++) writer.write(entry(i));
      await sleep(100);
      for (let i = 2500; i < 2600; i++) writer.write(entry(i));
      const flushed = writer.flush();
      const flag = settledFlag(flushed);
      await sleep(300);
      assert.equal(flag.isSettled, false, "flush waits while the file is locked");
      assert.equal(writer.pending, 2600);
      assert.ok(
        log.lines.some((l) => /WARN Cannot write audit rows now.*database is locked/.test(l)),
      );
      f.unlock();
      assert.equal(await flushed, 0);
      assert.equal(await countRows(f.db), 2600);
      const written = await actions(f.db);
      assert.deepEqual(written, Array.from({ length: 2600 }, (_, i) => `GET /row/${i}`));
      assert.ok(log.lines.some((l) => /INFO Writing audit rows again/.test(l)));
      assert.ok(!log.lines.some((l) => / ERROR /.test(l)), log.lines.join("\n"));
    } finally {
      await writer.close();
      await f.close();
    }
  },
});

Deno.test({
  name: "AuditWriter writes queued rows on its timer once a lock is gone, without a flush",
  ignore: TEST_ENGINE !== "sqlite",
  async fn() {
    const f = await lockableFile();
    const writer = new AuditWriter(f.db, memoryLogger(), FAST);
    try {
      f.lock();
      for (let i = 0; i < 10; i++) writer.write(entry(i));
      await sleep(200);
      f.unlock();
      const deadline = Date.now() + 5000;
      while (writer.pending > 0 && Date.now() < deadline) await sleep(20);
      assert.equal(writer.pending, 0);
      assert.equal(await countRows(f.db), 10);
    } finally {
      await writer.close();
      await f.close();
    }
  },
});

Deno.test({
  name: "AuditWriter.flush with a timeout gives up waiting and keeps the rows",
  ignore: TEST_ENGINE !== "sqlite",
  async fn() {
    const f = await lockableFile();
    const writer = new AuditWriter(f.db, memoryLogger(), FAST);
    try {
      f.lock();
      for (let i = 0; i < 5; i++) writer.write(entry(i));
      assert.equal(await writer.flush({ timeoutMs: 150 }), 5);
      assert.equal(writer.pending, 5);
      f.unlock();
      assert.equal(await writer.flush(), 0);
      assert.equal(await countRows(f.db), 5);
    } finally {
      await writer.close();
      await f.close();
    }
  },
});

Deno.test({
  name: "AuditWriter.close gives up after its wait, reports the rows left and leaves no timer",
  ignore: TEST_ENGINE !== "sqlite",
  async fn() {
    const f = await lockableFile();
    const writer = new AuditWriter(f.db, memoryLogger(), FAST);
    try {
      f.lock();
      for (let i = 0; i < 7; i++) writer.write(entry(i));
      assert.equal(await writer.close({ timeoutMs: 150 }), 7);
      // closed: nothing runs any more (the test's leak check would see a timer)
      assert.equal(await writer.flush(), 7);
    } finally {
      await f.close();
    }
  },
});

Deno.test({
  name: "AuditWriter.room makes callers wait while the queue is over its limit",
  ignore: TEST_ENGINE !== "sqlite",
  async fn() {
    const f = await lockableFile();
    const log = memoryLogger();
    const writer = new AuditWriter(f.db, log, { ...FAST, queueLimit: 10 });
    try {
      for (let i = 0; i < 9; i++) writer.write(entry(i));
      assert.equal(writer.isFull, false);
      await writer.room();
      await writer.flush();
      f.lock();
      for (let i = 9; i < 30; i++) writer.write(entry(i));
      // each row waits for the write lock up to the statement timeout (20 ms), then queues
      await sleep(60);
      assert.equal(writer.isFull, true);
      const room = settledFlag(writer.room());
      await sleep(200);
      assert.equal(room.isSettled, false, "room() waits while the database takes no rows");
      assert.ok(log.lines.some((l) => /ERROR Audit queue is full.*pending=10 limit=10/.test(l)));
      f.unlock();
      await writer.room();
      await writer.flush();
      // nothing was dropped beyond the limit
      assert.equal(await countRows(f.db), 30);
      assert.ok(log.lines.some((l) => /INFO Audit queue below its limit again/.test(l)));
    } finally {
      await writer.close();
      await f.close();
    }
  },
});

Deno.test({
  name: "AuditWriter.write resolves once the row is committed, visible to another connection",
  ignore: TEST_ENGINE !== "sqlite",
  async fn() {
    const f = await lockableFile();
    const writer = new AuditWriter(f.db, memoryLogger(), FAST);
    const other = new DatabaseSync(f.path, { readOnly: true });
    const seen = () => Number(other.prepare("select count(*) as n from audit").get()!.n);
    try {
      const rows = [writer.write(entry(0)), writer.write(entry(1))];
      // in the connection's write group, not committed yet: nobody else sees them
      assert.equal(seen(), 0);
      assert.equal(writer.pending, 2);
      await Promise.all(rows);
      assert.equal(seen(), 2);
      assert.equal(writer.pending, 0);
    } finally {
      other.close();
      await writer.close();
      await f.close();
    }
  },
});

Deno.test({
  name: "AuditWriter.commit waits for its row at most timeoutMs, then keeps it queued",
  ignore: TEST_ENGINE !== "sqlite",
  async fn() {
    const f = await lockableFile();
    const log = memoryLogger();
    const writer = new AuditWriter(f.db, log, FAST);
    try {
      assert.equal(await writer.commit(entry(0), { timeoutMs: 1000 }), true);
      assert.equal(await countRows(f.db), 1);
      f.lock();
      const started = performance.now();
      assert.equal(await writer.commit(entry(1), { timeoutMs: 200 }), false);
      assert.ok(performance.now() - started < 1000, "the wait is bounded");
      assert.ok(log.lines.some((l) => /WARN Answering before the audit row is committed/.test(l)));
      assert.equal(writer.pending, 1);
      f.unlock();
      assert.equal(await writer.flush(), 0);
      assert.deepEqual(await actions(f.db), ["GET /row/0", "GET /row/1"]);
    } finally {
      await writer.close();
      await f.close();
    }
  },
});

Deno.test({
  name: "AuditWriter.write on PostgreSQL resolves once the row's batch is committed",
  ignore: TEST_ENGINE !== "postgres",
  async fn() {
    const t = await openTestDatabase();
    const writer = new AuditWriter(t.db, memoryLogger(), FAST);
    const other = openDatabase(t.url, { poolSize: 1 });
    try {
      // rows of concurrent requests: each caller learns when its own row is in
      const rows = Array.from({ length: 300 }, (_, i) => writer.write(entry(i)));
      for (const [i, row] of rows.entries()) {
        await row;
        const n = await countRows(other);
        assert.ok(n >= i + 1, `row ${i} resolved with ${n} rows committed`);
      }
      assert.equal(await countRows(other), 300);
    } finally {
      await other.destroy();
      await writer.close();
      await t.drop();
    }
  },
});

Deno.test("AuditWriter skips only the invalid rows of a batch, logged with the reason", async () => {
  const t = await openTestDatabase();
  const log = memoryLogger();
  const writer = new AuditWriter(t.db, log, FAST);
  try {
    const rows = Array.from({ length: 40 }, (_, i) => entry(i));
    // NOT NULL columns: refused by SQLite and PostgreSQL alike, whatever the moment
    rows[3].action = null as unknown as string;
    rows[29].node = null as unknown as string;
    for (const r of rows) writer.write(r);
    assert.equal(await writer.flush(), 0);
    const expected = rows.filter((_, i) => i !== 3 && i !== 29).map((r) => r.action);
    assert.deepEqual(await actions(t.db), expected);
    const skipped = log.lines.filter((l) => /ERROR Cannot write an audit row; skipping it/.test(l));
    assert.equal(skipped.length, 2, log.lines.join("\n"));
    assert.match(skipped[0], /action=null .*error=.*(NOT NULL|not-null|null value)/i);
    assert.match(skipped[1], /action="GET \/row\/29".*error=/);
    // the queue goes on as usual afterwards
    writer.write(entry(100));
    await writer.flush();
    assert.equal(await countRows(t.db), 39);
  } finally {
    await writer.close();
    await t.drop();
  }
});

/**
 * A TCP relay in front of the run's PostgreSQL server: `cut()` drops every
 * connection and stops listening (as a server that went away: sessions end,
 * new connections are refused), `restore()` listens again on the same port.
 */
function relay(target: URL) {
  const conns = new Set<Deno.Conn>();
  let listener: Deno.Listener | undefined;
  let port = 0;
  const pipe = async (from: Deno.Conn, to: Deno.Conn) => {
    try {
      await from.readable.pipeTo(to.writable);
    } catch { /* cut */ }
    for (const c of [from, to]) {
      try {
        c.close();
      } catch { /* closed */ }
      conns.delete(c);
    }
  };
  const serve = async (l: Deno.Listener) => {
    for await (const client of l) {
      try {
        const server = await Deno.connect({
          hostname: target.hostname,
          port: Number(target.port),
        });
        conns.add(client).add(server);
        void pipe(client, server);
        void pipe(server, client);
      } catch {
        client.close();
      }
    }
  };
  const listen = () => {
    listener = Deno.listen({ hostname: "127.0.0.1", port });
    port = (listener.addr as Deno.NetAddr).port;
    void serve(listener).catch(() => {});
  };
  listen();
  // the closed listener lets go of its port a moment later
  const restore = async () => {
    for (let tries = 0; listener === undefined; tries++) {
      try {
        listen();
      } catch (err) {
        if (!(err instanceof Deno.errors.AddrInUse) || tries > 100) throw err;
        await sleep(20);
      }
    }
  };
  const url = new URL(target);
  url.port = String(port);
  return {
    url: url.toString(),
    cut() {
      listener?.close();
      listener = undefined;
      for (const c of conns) {
        try {
          c.close();
        } catch { /* closed */ }
      }
      conns.clear();
    },
    restore,
  };
}

Deno.test({
  name: "AuditWriter keeps rows while PostgreSQL is unreachable and writes them after",
  ignore: TEST_ENGINE !== "postgres",
  async fn() {
    const t = await openTestDatabase();
    const link = relay(new URL(t.url));
    const db = openDatabase(link.url, { poolSize: 2 });
    const log = memoryLogger();
    const writer = new AuditWriter(db, log, { retryMinMs: 20, retryMaxMs: 200 });
    try {
      for (let i = 0; i < 50; i++) writer.write(entry(i));
      await writer.flush();
      link.cut();
      for (let i = 50; i < 1200; i++) writer.write(entry(i));
      const flushed = writer.flush();
      const flag = settledFlag(flushed);
      await sleep(500);
      assert.equal(flag.isSettled, false, "flush waits while PostgreSQL cannot be reached");
      assert.equal(writer.pending, 1150);
      await link.restore();
      assert.equal(await flushed, 0);
      assert.deepEqual(
        await actions(t.db),
        Array.from({ length: 1200 }, (_, i) => `GET /row/${i}`),
      );
      const warnings = log.lines.filter((l) => /WARN Cannot write audit rows now/.test(l));
      assert.match(warnings[0] ?? "", /ECONNREFUSED|terminated|ECONNRESET/, log.lines.join("\n"));
      assert.ok(!log.lines.some((l) => / ERROR /.test(l)), log.lines.join("\n"));
    } finally {
      await link.restore();
      await writer.close({ timeoutMs: 1000 });
      await db.destroy();
      link.cut();
      await t.drop();
    }
  },
});

Deno.test({
  name: "AuditWriter retries a batch whose session an admin ended mid-statement (57P01)",
  ignore: TEST_ENGINE !== "postgres",
  async fn() {
    const t = await openTestDatabase();
    const db = openDatabase(t.url, { poolSize: 2 });
    const log = memoryLogger();
    const writer = new AuditWriter(db, log, { retryMinMs: 20, retryMaxMs: 200 });
    try {
      for (let i = 0; i < 50; i++) writer.write(entry(i));
      await writer.flush();
      // another session locks the table, so the next batch waits inside the server
      let unlock!: () => void;
      const locked = new Promise<void>((resolve) => unlock = resolve);
      const holding = t.db.transaction().execute(async (trx) => {
        await sql`lock table audit in exclusive mode`.execute(trx);
        await locked;
      });
      await sleep(100);
      for (let i = 50; i < 1200; i++) writer.write(entry(i));
      const flushed = writer.flush();
      const flag = settledFlag(flushed);
      // "terminating connection due to administrator command" for the waiting insert
      let ended = 0;
      for (let tries = 0; ended === 0 && tries < 100; tries++) {
        await sleep(50);
        const r = await sql<{ n: number }>`
          select count(pg_terminate_backend(pid))::int as n from pg_stat_activity
          where datname = current_database() and wait_event_type = 'Lock'
            and query ilike 'insert into "audit"%'
        `.execute(t.db);
        ended = r.rows[0].n;
      }
      assert.equal(ended, 1, "the batch's session waited for the lock and was ended");
      await sleep(200);
      assert.equal(flag.isSettled, false, "the batch waits for the lock again");
      unlock();
      await holding;
      assert.equal(await flushed, 0);
      assert.deepEqual(
        await actions(t.db),
        Array.from({ length: 1200 }, (_, i) => `GET /row/${i}`),
      );
      // the server's 57P01 message, or the reset socket when the driver reads that first
      const warnings = log.lines.filter((l) => /WARN Cannot write audit rows now/.test(l));
      assert.match(
        warnings[0] ?? "",
        /administrator command|ECONNRESET|terminated/,
        log.lines.join("\n"),
      );
      assert.ok(!log.lines.some((l) => / ERROR /.test(l)), log.lines.join("\n"));
    } finally {
      await writer.close({ timeoutMs: 1000 });
      await db.destroy();
      await t.drop();
    }
  },
});

Deno.test({
  name: "AuditWriter keeps rows through a PostgreSQL restart and writes them after it",
  ignore: TEST_ENGINE !== "postgres",
  async fn() {
    // a cluster of its own: stopping the run's cluster would break the tests beside this one
    const cluster = await startPgCluster();
    const admin = openDatabase(cluster.url, { poolSize: 1 });
    await sql`create database audit_restart`.execute(admin);
    await admin.destroy();
    const db = openDatabase(cluster.urlOf("audit_restart"), { poolSize: 2 });
    const log = memoryLogger();
    const writer = new AuditWriter(db, log, { retryMinMs: 20, retryMaxMs: 200 });
    try {
      await migrateToLatest(db);
      for (let i = 0; i < 50; i++) writer.write(entry(i));
      await writer.flush();
      // a fast shutdown: open sessions are ended, then nothing listens until the restart
      await cluster.pause();
      for (let i = 50; i < 1200; i++) writer.write(entry(i));
      const flushed = writer.flush();
      const flag = settledFlag(flushed);
      await sleep(500);
      assert.equal(flag.isSettled, false, "flush waits while PostgreSQL is down");
      assert.equal(writer.pending, 1150);
      await cluster.resume();
      assert.equal(await flushed, 0);
      assert.deepEqual(await actions(db), Array.from({ length: 1200 }, (_, i) => `GET /row/${i}`));
      assert.ok(log.lines.some((l) => /WARN Cannot write audit rows now/.test(l)));
      assert.ok(!log.lines.some((l) => / ERROR /.test(l)), log.lines.join("\n"));
    } finally {
      await writer.close({ timeoutMs: 1000 });
      await db.destroy();
      await cluster.stop();
    }
  },
});
