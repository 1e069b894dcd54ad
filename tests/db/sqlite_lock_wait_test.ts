/**
 * SQLite's write lock, held by another process: the hot path's writes wait
 * for it without blocking the thread (the event loop keeps serving), share one
 * write group once it is free, and fail with SQLite's busy error after the
 * statement timeout, having written nothing. Kysely's transactions still wait
 * for it as before. The other process is a real child `deno` holding
 * `begin immediate` on the same file.
 *
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { migrateToLatest, openDatabase } from "../../src/db/database.ts";
import { runCached } from "../../src/db/compiled.ts";
import { isTransientDbError } from "../../src/db/transient_error.ts";
import type { Db } from "../../src/db/schema.ts";
import { AuditWriter } from "../../src/domain/audit/mod.ts";
import { memoryLogger } from "../../src/lib/logger.ts";
import { createTestApp, jsonOf } from "../test_app.ts";
import { enrollHotp, hotp } from "../fixtures/tokens.ts";
import { TEST_ENGINE } from "../test_db.ts";

// about SQLite files: the PostgreSQL run leaves them out
const SQLITE_ONLY = { ignore: TEST_ENGINE !== "sqlite" };

/** A child process that holds the write lock of `path` for `ms`, then commits. */
export async function holdWriteLock(
  path: string,
  ms: number,
): Promise<{ released: Promise<number> }> {
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "eval",
      `import { DatabaseSync } from "node:sqlite";
       const db = new DatabaseSync(${JSON.stringify(path)});
       db.exec("begin immediate");
       console.log("held");
       await new Promise((r) => setTimeout(r, ${ms}));
       db.exec("commit");
       console.log(performance.timeOrigin + performance.now());`,
    ],
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const lines = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let text = "";
  while (!text.includes("held\n")) {
    const { value, done } = await lines.read();
    if (done) throw new Error(`the lock holder ended: ${text}`);
    text += value;
  }
  const released = (async () => {
    for (;;) {
      const { value, done } = await lines.read();
      if (done) break;
      text += value;
    }
    await child.status;
    // the holder's clock at the commit, on this process's clock (both are wall-clock based)
    return Number(text.trim().split("\n").pop()) - performance.timeOrigin;
  })();
  return { released };
}

async function withFile(
  timeoutMs: number,
  fn: (db: Db, path: string, tokenId: number) => Promise<void>,
): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "tessera-lockwait-" });
  const path = join(dir, "db.sqlite");
  const db = openDatabase(`sqlite:${path}`, { statementTimeoutMs: timeoutMs });
  try {
    await migrateToLatest(db);
    const row = await db.insertInto("token")
      .values({ serial: "LW1", tokentype: "hotp", created_at: 0 } as never)
      .returning("id").executeTakeFirstOrThrow();
    await fn(db, path, Number(row.id));
  } finally {
    await db.destroy();
    await Deno.remove(dir, { recursive: true });
  }
}

function setCount(db: Db, id: number, count: number) {
  return runCached(
    db,
    "lock-wait-count",
    (c, i) => db.updateTable("token").set({ count: c as number }).where("id", "=", i as number),
    [count, id],
    undefined,
    {
      onDirect: (res) => seen.push({ count, affected: res.numAffectedRows, group: res.committed }),
    },
  );
}
const seen: { count: number; affected?: bigint; group?: Promise<void> }[] = [];

function addInfo(db: Db, id: number, key: string) {
  return runCached(
    db,
    "lock-wait-info",
    (i, k) =>
      db.insertInto("tokeninfo").values({
        token_id: i as number,
        key: k as string,
        value: "v",
        type: "",
        description: "",
      } as never),
    [id, key],
  );
}

function readCount(path: string, id: number): number {
  const other = new DatabaseSync(path, { readOnly: true });
  try {
    return Number((other.prepare('select "count" from "token" where id = ?').get(id)!).count);
  } finally {
    other.close();
  }
}

Deno.test(
  "runCached: a hot-path write waits for another process's write lock without blocking the thread",
  SQLITE_ONLY,
  async () => {
    await withFile(5000, async (db, path, id) => {
      seen.length = 0;
      const { released } = await holdWriteLock(path, 500);
      const started = performance.now();
      let timerAt = Infinity;
      const timer = new Promise<void>((r) =>
        setTimeout(() => {
          timerAt = performance.now() - started;
          r();
        }, 20)
      );
      let writeDoneAt = Infinity;
      const writes = [7, 8, 9].map((n) =>
        setCount(db, id, n).then((res) => {
          writeDoneAt = Math.min(writeDoneAt, performance.now() - started);
          return res;
        })
      );
      // a read on the same connection answers while the writes wait
      const read = await runCached<{ count: number }>(
        db,
        "lock-wait-read",
        (i) => db.selectFrom("token").select("count").where("id", "=", i as number),
        [id],
      );
      const readAt = performance.now() - started;
      await timer;
      const results = await Promise.all(writes);
      const releasedAt = (await released) - started;
      assert.ok(timerAt < 250, `the event loop was blocked: a 20 ms timer fired at ${timerAt} ms`);
      assert.ok(readAt < 250, `a read answered only at ${readAt} ms`);
      assert.equal(Number(read.rows[0].count), 0, "the read ran before the writes");
      assert.ok(
        writeDoneAt >= releasedAt - 5,
        `a write finished (${writeDoneAt}) before the release`,
      );
      assert.ok(writeDoneAt < releasedAt + 250, `waited ${writeDoneAt - releasedAt} ms too long`);
      for (const res of results) assert.equal(res.numAffectedRows, 1n);
      // onDirect ran with each result; the writes that waited together shared one group
      assert.deepEqual(seen.map((s) => [s.count, s.affected]), [[7, 1n], [8, 1n], [9, 1n]]);
      assert.ok(seen[0].group !== undefined && seen.every((s) => s.group === seen[0].group));
      // committed before the callers went on: another connection reads the last one
      assert.equal(readCount(path, id), 9);
    });
  },
);

Deno.test(
  "runCached: a write that waits longer than the statement timeout fails with the busy error and writes nothing",
  SQLITE_ONLY,
  async () => {
    await withFile(300, async (db, path, id) => {
      const { released } = await holdWriteLock(path, 1500);
      const started = performance.now();
      let ticks = 0;
      const ticker = setInterval(() => ticks++, 10);
      // a request's two writes: the first fails, so the second is never made
      const request = (async () => {
        await setCount(db, id, 42);
        await addInfo(db, id, "after");
      })();
      const err = await request.then(() => undefined, (e) => e);
      const ms = performance.now() - started;
      clearInterval(ticker);
      assert.ok(err, "the write went through another process's lock");
      assert.ok(isTransientDbError(err), String(err));
      assert.equal((err as { errcode?: number }).errcode! & 0xff, 5, "SQLITE_BUSY");
      assert.match(String(err), /database is locked/);
      assert.ok(ms >= 290 && ms < 1000, `gave up after ${Math.round(ms)} ms`);
      assert.ok(ticks >= 15, `the event loop ran only ${ticks} times while waiting`);
      // a Kysely transaction gives up the same way, without a statement run
      const trxStarted = performance.now();
      const trxErr = await db.transaction().execute(async (t) => {
        await t.updateTable("token").set({ maxfail: 99 }).where("id", "=", id).execute();
      }).then(() => undefined, (e) => e);
      const trxMs = performance.now() - trxStarted;
      assert.ok(trxErr && isTransientDbError(trxErr), String(trxErr));
      assert.ok(trxMs >= 290 && trxMs < 1000, `the transaction gave up after ${trxMs} ms`);
      await released;
      assert.equal(readCount(path, id), 0);
      const maxfail = await db.selectFrom("token").select("maxfail").where("id", "=", id)
        .executeTakeFirstOrThrow();
      assert.notEqual(maxfail.maxfail, 99);
      const info = await db.selectFrom("tokeninfo").selectAll().execute();
      assert.deepEqual(info, []);
      // the lock is free again: the next write goes through at once
      await setCount(db, id, 43);
      assert.equal(readCount(path, id), 43);
    });
  },
);

Deno.test(
  "SQLite: a Kysely transaction waits for another process's write lock without blocking the thread, next to waiting hot-path writes",
  SQLITE_ONLY,
  async () => {
    await withFile(5000, async (db, path, id) => {
      const { released } = await holdWriteLock(path, 500);
      const started = performance.now();
      let timerAt = Infinity;
      setTimeout(() => timerAt = performance.now() - started, 20);
      const hot = setCount(db, id, 5);
      const trx = db.transaction().execute(async (t) => {
        await t.insertInto("config").values({ key: "lw", value: "1", type: "", description: "" })
          .execute();
        await t.updateTable("token").set({ maxfail: 7 }).where("id", "=", id).execute();
      });
      await Promise.all([hot, trx, released]);
      assert.ok(timerAt < 250, `the event loop was blocked: a 20 ms timer fired at ${timerAt} ms`);
      const other = new DatabaseSync(path, { readOnly: true });
      try {
        assert.deepEqual(
          { ...other.prepare('select "count", maxfail from "token" where id = ?').get(id) },
          { count: 5, maxfail: 7 },
        );
        assert.equal(other.prepare("select value from config where key = 'lw'").get()!.value, "1");
      } finally {
        other.close();
      }
    });
  },
);

Deno.test(
  "POST /validate/check waits for another process's write lock; /healthz answers meanwhile",
  SQLITE_ONLY,
  async () => {
    const dir = await Deno.makeTempDir({ prefix: "tessera-lockwait-http-" });
    const path = join(dir, "tessera.sqlite");
    const db = openDatabase(`sqlite:${path}`);
    await migrateToLatest(db);
    const log = memoryLogger();
    const t = await createTestApp({ deps: { db, audit: new AuditWriter(db, log), log } });
    try {
      const serial = await enrollHotp(t, { serial: "LWHTTP" });
      await t.deps.audit.flush();
      const { released } = await holdWriteLock(path, 500);
      const started = performance.now();
      let checkAt = Infinity;
      const check = t.post("/validate/check", { serial, pass: hotp(0) }).then(async (res) => {
        checkAt = performance.now() - started;
        return await jsonOf(res);
      });
      // asked once the check waits for its counter write: answered while the lock is held
      await new Promise((r) => setTimeout(r, 20));
      const health = await t.get("/healthz");
      const healthAt = performance.now() - started;
      assert.equal(health.status, 200);
      await health.body?.cancel();
      const { status, body } = await check;
      const releasedAt = (await released) - started;
      assert.ok(healthAt < 250, `/healthz answered only after ${Math.round(healthAt)} ms`);
      assert.ok(checkAt >= releasedAt - 5, `the check answered (${checkAt}) before the release`);
      assert.equal(status, 200);
      assert.equal(body.result.status, true);
      assert.equal(body.result.value, true, JSON.stringify(body));
      // the counter and the audit row were committed before the answer
      const other = new DatabaseSync(path, { readOnly: true });
      try {
        assert.equal(
          Number(other.prepare("select count from token where serial = ?").get(serial)!.count),
          1,
        );
        const rows = other.prepare(
          "select success from audit where action = 'POST /validate/check' and serial = ?",
        ).all(serial);
        assert.deepEqual(rows.map((r) => Number(r.success)), [1]);
      } finally {
        other.close();
      }
    } finally {
      await t.close();
      await db.destroy();
      await Deno.remove(dir, { recursive: true });
    }
  },
);
