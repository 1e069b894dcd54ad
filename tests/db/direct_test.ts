import assert from "node:assert/strict";
import { join } from "node:path";
import { sql } from "kysely";
import { migrateToLatest, openDatabase } from "../../src/db/database.ts";
import { directOf, EpochCache, movesEpoch } from "../../src/db/direct.ts";
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
