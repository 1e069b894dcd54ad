import assert from "node:assert/strict";
import { join } from "node:path";
import { sql } from "kysely";
import { migrateToLatest, openDatabase, sqliteConnectionOf } from "../../src/db/database.ts";
import {
  beginRequest,
  directOf,
  EpochCache,
  movesEpoch,
  PendingCommits,
  TOKEN_WRITE,
} from "../../src/db/direct.ts";
import { runCached } from "../../src/db/compiled.ts";
import type { Db } from "../../src/db/schema.ts";
import { EXTERNAL_CHECK_MS } from "../../src/db/sqlite_adapter.ts";

async function withTwoConnections(fn: (a: Db, b: Db) => Promise<void>): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "tessera-direct-" });
  const file = join(dir, "db.sqlite");
  const a = openDatabase(`sqlite:${file}`);
  await migrateToLatest(a);
  const b = openDatabase(`sqlite:${file}`);
  try {
    await fn(a, b);
  } finally {
    await a.destroy();
    await b.destroy();
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("movesEpoch: hot-path writes and reads keep the epoch, every other write moves it", () => {
  for (
    const quiet of [
      'select * from "token"',
      'insert into "audit" ("ts") values (?)',
      'insert into "tokeninfo" ("token_id", "key") values (?, ?) on conflict do nothing',
      'update "token" set "count" = ? where "id" = ?',
      'update "tokencontainer" set "last_seen" = ? where "id" in (select "container_id" from "tokencontainertoken")',
      'delete from "challenge" where "transaction_id" = ?',
      "begin",
      "commit",
      "PRAGMA data_version",
    ]
  ) assert.equal(movesEpoch(quiet), false, quiet);
  for (
    const moving of [
      'insert into "config" ("key") values (?)',
      'update "policy" set "active" = 0',
      'delete from "token" where "id" = ?', // cascades to machine bindings
      'insert into "token" ("serial") values (?)',
      'delete from "realm_resolver" where "realm_id" = ?',
      'update "tokenrealm" set x = 1', // not the token table
      'update "tokencontainertoken" set "container_id" = ?', // membership
      'delete from "tokencontainer" where "id" = ?',
      "rollback",
      'create table "x" ("a" integer)',
    ]
  ) assert.equal(movesEpoch(moving), true, moving);
});

Deno.test("epoch: moves on this connection's config writes and on another connection's commits", async () => {
  await withTwoConnections(async (a, b) => {
    const direct = directOf(a)!;
    const e0 = direct.epoch();
    assert.equal(direct.epoch(), e0, "stable while nothing happens");
    await sql`update "token" set "count" = 1 where "id" = -1`.execute(a);
    assert.equal(direct.epoch(), e0, "a hot-path write on this connection keeps it");
    await a.insertInto("config").values({ key: "k", value: "v", type: "", description: "" })
      .execute();
    const e1 = direct.epoch();
    assert.notEqual(e1, e0);
    await b.updateTable("config").set({ value: "w" }).where("key", "=", "k").execute();
    await new Promise((r) => setTimeout(r, EXTERNAL_CHECK_MS + 1));
    assert.notEqual(direct.epoch(), e1, "another connection's commit moves it");
  });
});

Deno.test("beginRequest: another connection's commit is seen by the next request at once", async () => {
  await withTwoConnections(async (a, b) => {
    const direct = directOf(a)!;
    await a.insertInto("config").values({ key: "k", value: "v", type: "", description: "" })
      .execute();
    const e1 = direct.epoch();
    await b.updateTable("config").set({ value: "w" }).where("key", "=", "k").execute();
    // within the millisecond, a look inside the same request may still see the old epoch…
    direct.epoch();
    // …but a request that starts after the commit sees it, with no wait
    beginRequest(a);
    assert.notEqual(direct.epoch(), e1);
  });
});

Deno.test("beginRequest: every SQLite database of the process reads other connections' commits afresh", async () => {
  // the request's database is `main`; `users` stands for an SQL resolver's user database,
  // whose rows are cached under its own epoch and changed by another process (`other`)
  await withTwoConnections(async (main) => {
    await withTwoConnections(async (users, other) => {
      await users.insertInto("config").values({ key: "k", value: "v", type: "", description: "" })
        .execute();
      const direct = directOf(users)!;
      const e1 = direct.epoch();
      // synchronous, so the next look falls within the millisecond a reading is reused
      sqliteConnectionOf(other)!.raw.exec(`update "config" set "value" = 'w' where "key" = 'k'`);
      beginRequest(main);
      assert.notEqual(direct.epoch(), e1, "a request that starts after the commit sees it");
    });
  });
});

Deno.test("EpochCache: reloads after a change from either connection, not before", async () => {
  await withTwoConnections(async (a, b) => {
    const cache = new EpochCache<string, string>();
    let loads = 0;
    const read = () =>
      cache.get(a, "k", async () => {
        loads++;
        const row = await a.selectFrom("config").select("value").where("key", "=", "k")
          .executeTakeFirst();
        return row?.value ?? "none";
      });
    assert.equal(await read(), "none");
    assert.equal(await read(), "none");
    assert.equal(loads, 1);
    await b.insertInto("config").values({ key: "k", value: "from b", type: "", description: "" })
      .execute();
    await new Promise((r) => setTimeout(r, EXTERNAL_CHECK_MS + 1));
    assert.equal(await read(), "from b");
    await a.updateTable("config").set({ value: "from a" }).where("key", "=", "k").execute();
    assert.equal(await read(), "from a");
    assert.equal(await read(), "from a");
    assert.equal(loads, 3);
  });
});

Deno.test("EpochCache: a change rolled back inside a transaction is not kept", async () => {
  await withTwoConnections(async (a) => {
    const cache = new EpochCache<string, string>();
    const load = (db: Db) => async () =>
      (await db.selectFrom("config").select("value").where("key", "=", "k").executeTakeFirst())
        ?.value ?? "none";
    await assert.rejects(() =>
      a.transaction().execute(async (trx) => {
        await trx.insertInto("config").values({ key: "k", value: "tmp", type: "", description: "" })
          .execute();
        // a read inside the transaction sees its own write; the cache must not keep it
        assert.equal(await cache.get(a, "k", load(trx)), "tmp");
        throw new Error("abort");
      }), /abort/);
    assert.equal(await cache.get(a, "k", load(a)), "none");
  });
});

Deno.test("runCached: never reads inside another request's open transaction", async () => {
  await withTwoConnections(async (a) => {
    let release!: () => void;
    const held = new Promise<void>((r) => release = r);
    let started!: () => void;
    const inside = new Promise<void>((r) => started = r);
    const writer = a.transaction().execute(async (trx) => {
      await trx.insertInto("config").values({ key: "k", value: "tmp", type: "", description: "" })
        .execute();
      started();
      await held;
      throw new Error("abort");
    }).catch((e) => e);
    await inside;
    assert.equal(directOf(a)!.inTransaction(), true);
    const reader = runCached<{ value: string }>(
      a,
      "test-config-k",
      (k) => a.selectFrom("config").select("value").where("key", "=", k as string),
      ["k"],
    );
    release();
    assert.match(String(await writer), /abort/);
    assert.deepEqual((await reader).rows, [], "the rolled-back row was never visible");
  });
});

/** A token row to write counters and info against; its id. */
async function insertToken(db: Db, serial: string): Promise<number> {
  const row = await db.insertInto("token").values(
    { serial, tokentype: "hotp", created_at: 0 } as never,
  )
    .returning("id").executeTakeFirstOrThrow();
  return Number(row.id);
}

const advance = (db: Db, id: number, to: number, pending?: PendingCommits) =>
  runCached(
    db,
    "test-advance",
    (c, i, c2) =>
      db.updateTable("token").set({ count: c as number }).where("id", "=", i as number)
        .where("count", "<", c2 as number),
    [to, id, to],
    pending,
  );

const infoWrite = (db: Db, id: number, key: string, pending?: PendingCommits) =>
  runCached(
    db,
    "test-info",
    (i, k) =>
      db.insertInto("tokeninfo").values({
        token_id: i as number,
        key: k as string,
        value: sql<string>`'v'`,
        type: sql<string>`''`,
      }),
    [id, key],
    pending,
  );

const rawOf = (db: Db) => sqliteConnectionOf(db)!;

function statementsOf(db: Db): string[] {
  const seen: string[] = [];
  rawOf(db).observe = (text) => seen.push(text.trim().split(/\s+/)[0].toLowerCase());
  return seen;
}

Deno.test("write group: parallel hot-path writes share one commit; each caller goes on after it", async () => {
  await withTwoConnections(async (a, b) => {
    const ids = [];
    for (let i = 0; i < 10; i++) ids.push(await insertToken(a, `G${i}`));
    const seen = statementsOf(a);
    const results = await Promise.all(ids.map((id) => advance(a, id, 5)));
    assert.deepEqual(results.map((r) => r.numAffectedRows), ids.map(() => 1n));
    assert.deepEqual(seen.filter((s) => s === "begin" || s === "commit"), ["begin", "commit"]);
    assert.equal(seen.filter((s) => s === "update").length, 10);
    // committed when the callers went on: the other connection sees every write
    const rows = await b.selectFrom("token").select("count").where("id", "in", ids).execute();
    assert.deepEqual(rows.map((r) => r.count), ids.map(() => 5));
    // the compare-and-set inside a group still refuses a counter already used
    const again = await Promise.all([advance(a, ids[0], 5), advance(a, ids[0], 6)]);
    assert.deepEqual(again.map((r) => r.numAffectedRows), [0n, 1n]);
  });
});

Deno.test("write group: PendingCommits lets one request's writes share a commit, settled before it goes on", async () => {
  await withTwoConnections(async (a, b) => {
    const id = await insertToken(a, "P1");
    const seen = statementsOf(a);
    const pending = new PendingCommits();
    await advance(a, id, 3, pending);
    await infoWrite(a, id, "k1", pending);
    assert.equal(seen.filter((s) => s === "commit").length, 0, "not committed yet");
    await pending.settle();
    assert.deepEqual(seen, ["begin", "update", "insert", "commit"]);
    const info = await b.selectFrom("tokeninfo").select("key").where("token_id", "=", id)
      .execute();
    assert.deepEqual(info.map((r) => r.key), ["k1"]);
  });
});

Deno.test("write group: a Kysely transaction or statement first commits the open group", async () => {
  await withTwoConnections(async (a, b) => {
    const id = await insertToken(a, "K1");
    const pending = new PendingCommits();
    await advance(a, id, 7, pending);
    // would fail with "cannot start a transaction within a transaction" otherwise
    await a.transaction().execute(async (trx) => {
      await trx.updateTable("token").set({ description: "in trx" }).where("id", "=", id).execute();
    });
    const row = await b.selectFrom("token").select(["count", "description"]).where("id", "=", id)
      .executeTakeFirstOrThrow();
    assert.deepEqual({ ...row }, { count: 7, description: "in trx" });
    await pending.settle();
    // a direct write while another request's Kysely transaction is open waits for it (no group)
    let release!: () => void;
    const held = new Promise<void>((r) => release = r);
    let started!: () => void;
    const inside = new Promise<void>((r) => started = r);
    const trx = a.transaction().execute(async (t) => {
      await t.updateTable("token").set({ description: "held" }).where("id", "=", id).execute();
      started();
      await held;
    });
    await inside;
    const write = advance(a, id, 8);
    release();
    await trx;
    assert.equal((await write).numAffectedRows, 1n);
  });
});

Deno.test("write group: a failed commit rolls every member back and rejects each caller", async () => {
  await withTwoConnections(async (a, b) => {
    const id = await insertToken(a, "F1");
    const first = new PendingCommits();
    await advance(a, id, 9, first);
    // foreign keys checked at commit: the next write (a missing token) makes the commit fail
    rawOf(a).raw.exec("PRAGMA defer_foreign_keys = ON");
    const second = new PendingCommits();
    await infoWrite(a, 999_999, "orphan", second);
    await assert.rejects(() => first.settle(), /FOREIGN KEY/);
    await assert.rejects(() => second.settle(), /FOREIGN KEY/);
    const row = await b.selectFrom("token").select("count").where("id", "=", id)
      .executeTakeFirstOrThrow();
    assert.equal(row.count, 0, "the counter write of the failed group was rolled back");
    assert.equal(rawOf(a).raw.isTransaction, false);
    // the connection goes on working
    assert.equal((await advance(a, id, 10)).numAffectedRows, 1n);
  });
});

Deno.test("TOKEN_WRITE: writes to the token tables move the token epoch, nothing else does", () => {
  const moves = [
    `update "token" set "active" = ? where "id" = ?`,
    `insert into "token" ("serial") values (?)`,
    `insert into "tokeninfo" ("token_id", "key") values (?, ?) on conflict do nothing`,
    `delete from "tokeninfo" where "token_id" = ?`,
    `delete from "token_realm" where "token_id" = ?`,
    `insert or replace into token_realm (token_id, realm) values (?, ?)`,
    `  UPDATE token SET failcount = 0`,
  ];
  const keeps = [
    `select * from "token"`,
    `update "tokenowner" set x = 1`,
    `insert into "audit" ("serial") values ('token')`,
    `update "challenge" set "otp_received" = 1`,
    `delete from "token_group" where id = 1`,
  ];
  for (const sql of moves) assert.ok(TOKEN_WRITE.test(sql), sql);
  for (const sql of keeps) assert.ok(!TOKEN_WRITE.test(sql), sql);
});

Deno.test("EpochCache readsTokenTables: reloads after a token write, keeps after a counter write the token cache patches", async () => {
  await withTwoConnections(async (a, b) => {
    const cache = new EpochCache<string, number>({ readsTokenTables: true });
    let loads = 0;
    const read = () => cache.get(a, "n", () => Promise.resolve(++loads));
    await read();
    await read();
    assert.equal(loads, 1, "kept while nothing changed");
    // a quiet write (it keeps the epoch) to the token table moves the token epoch
    await sql`update "token" set "active" = 0 where "id" = -1`.execute(a);
    await read();
    assert.equal(loads, 2, "reloaded after a write to the token table");
    // the check path's own counter write, whose effect the token cache patches itself
    const direct = directOf(a)!;
    const res = direct.execute(`update "token" set "count" = 1 where "id" = -1`, [], {
      keepsTokenCache: true,
    });
    assert.ok(!("lockWait" in res), "no other connection holds the write lock");
    await res.committed;
    await read();
    assert.equal(loads, 2, "a keepsTokenCache write keeps it");
    // another process's commit (any: data_version counts commits that changed something)
    sqliteConnectionOf(b)!.raw.exec(`insert into "config" ("key", "value") values ('k', 'v')`);
    beginRequest(a);
    await read();
    assert.equal(loads, 3, "another connection's commit, seen at the next request");
  });
});
