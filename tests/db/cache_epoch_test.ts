/**
 * PostgreSQL's cache epoch (migration 0013, db/direct.ts VersionSource): a
 * change committed on one node is seen by a request that starts on another;
 * this process's own writes are seen at once; every cached table has its
 * trigger. PostgreSQL run only (SQLite uses PRAGMA data_version: direct_test).
 */
import assert from "node:assert/strict";
import { sql } from "kysely";
import { openDatabase } from "../../src/db/database.ts";
import { beginRequest, EpochCache } from "../../src/db/direct.ts";
import { CACHED_TABLES as CACHED_0013 } from "../../src/db/migrations/0013_cache_epoch.ts";
import { CACHE_EPOCH_TABLES as CACHED_0014 } from "../../src/db/migrations/0014_privacyidea_server.ts";
import { CACHE_EPOCH_TABLES as CACHED_0015 } from "../../src/db/migrations/0015_smsgateway.ts";
import { CACHE_EPOCH_TABLES as CACHED_0019 } from "../../src/db/migrations/0019_user_cache.ts";
import { CACHE_EPOCH_TABLES as CACHED_0021 } from "../../src/db/migrations/0021_periodic_tasks.ts";
import { CACHE_EPOCH_TABLES as CACHED_0022 } from "../../src/db/migrations/0022_caconnector.ts";
import { CACHE_EPOCH_TABLES as CACHED_0023 } from "../../src/db/migrations/0023_token_groups.ts";
import { CACHE_EPOCH_TABLES as CACHED_0024 } from "../../src/db/migrations/0024_service_ids.ts";
import { CACHE_EPOCH_TABLES as CACHED_0025 } from "../../src/db/migrations/0025_token_containers.ts";
import { CACHE_EPOCH_TABLES as CACHED_0027 } from "../../src/db/migrations/0027_import_keys.ts";
import { openTestDatabase, TEST_ENGINE } from "../test_db.ts";

const onPostgres = { ignore: TEST_ENGINE !== "postgres" };
// the tables with a trigger: 0013's, plus those later migrations add
const CACHED_TABLES = [
  ...CACHED_0013,
  ...CACHED_0014,
  ...CACHED_0015,
  ...CACHED_0019,
  ...CACHED_0021,
  ...CACHED_0022,
  ...CACHED_0023,
  ...CACHED_0024,
  ...CACHED_0025,
  ...CACHED_0027,
];
const HOT = [
  "token",
  "tokeninfo",
  "token_realm",
  "challenge",
  "audit",
  "eventcounter",
  "auth_cache",
  "usercache",
  "periodictasklastrun",
  "periodictasklease",
  "monitoringstats",
  // written by anonymous /recover requests: they must not empty every cache (0026)
  "passwordreset",
  // last_seen is written by successful checks (0025)
  "tokencontainer",
];

Deno.test({
  name: "cache epoch: every table but the hot ones moves it (a trigger each)",
  ...onPostgres,
  fn: async () => {
    const t = await openTestDatabase();
    try {
      const tables = (await sql<{ table_name: string }>`
        select table_name from information_schema.tables
        where table_schema = 'public' and table_type = 'BASE TABLE'`.execute(t.db)).rows
        .map((r) => r.table_name)
        .filter((n) => !n.startsWith("kysely_") && n !== "cache_epoch" && !HOT.includes(n));
      assert.deepEqual(tables.sort(), [...CACHED_TABLES].sort(), "cached tables of the schema");
      const triggers = (await sql<{ event_object_table: string }>`
        select distinct event_object_table from information_schema.triggers
        where trigger_name like '%_cache_epoch'`.execute(t.db)).rows.map((r) =>
        r.event_object_table
      );
      assert.deepEqual(triggers.sort(), [...CACHED_TABLES].sort());
    } finally {
      await t.drop();
    }
  },
});

Deno.test({
  name: "cache epoch: another node's commit is seen by the next request; own writes at once",
  ...onPostgres,
  fn: async () => {
    const t = await openTestDatabase();
    const a = t.db;
    const b = openDatabase(t.url, { poolSize: 2 });
    const cache = new EpochCache<"config", string>();
    let loads = 0;
    const read = (db: typeof a) =>
      cache.get(db, "config", async () => {
        loads++;
        const row = await db.selectFrom("config").select("value").where("key", "=", "k")
          .executeTakeFirst();
        return row?.value ?? "";
      });
    try {
      await a.insertInto("config").values({ key: "k", value: "v1", type: "", description: "" })
        .execute();
      beginRequest(b);
      assert.equal(await read(b), "v1");
      assert.equal(await read(b), "v1");
      assert.equal(loads, 1, "kept while nothing changed");
      // node A changes it; node B's next request sees it without any wait
      await a.updateTable("config").set({ value: "v2" }).where("key", "=", "k").execute();
      beginRequest(b);
      assert.equal(await read(b), "v2");
      // a change in a transaction counts once committed, also for hot-table-only requests
      await a.transaction().execute(async (trx) => {
        await trx.updateTable("config").set({ value: "v3" }).where("key", "=", "k").execute();
      });
      beginRequest(b);
      assert.equal(await read(b), "v3");
      // node B's own write is seen by its very next look, in the same request
      await b.updateTable("config").set({ value: "v4" }).where("key", "=", "k").execute();
      assert.equal(await read(b), "v4");
      // writes to the hot tables move nothing
      const before = loads;
      beginRequest(b);
      await read(b);
      await sql`update token set count = count where id = -1`.execute(a);
      beginRequest(b);
      await read(b);
      assert.equal(loads, before);
    } finally {
      await b.destroy();
      await t.drop();
    }
  },
});

Deno.test({
  name: "cache epoch: a database without the row never reuses a cached value",
  ...onPostgres,
  fn: async () => {
    const t = await openTestDatabase();
    try {
      await sql`delete from cache_epoch`.execute(t.db);
      const cache = new EpochCache<"x", number>();
      let loads = 0;
      beginRequest(t.db);
      await cache.get(t.db, "x", () => Promise.resolve(++loads));
      beginRequest(t.db);
      await cache.get(t.db, "x", () => Promise.resolve(++loads));
      assert.equal(loads, 2);
    } finally {
      await t.drop();
    }
  },
});

Deno.test({
  name:
    "cache epoch: a token added, deleted, assigned or disabled moves it; a check's counter and fail counter updates do not (0028)",
  ...onPostgres,
  fn: async () => {
    const t = await openTestDatabase();
    const a = t.db;
    const b = openDatabase(t.url, { poolSize: 2 });
    const cache = new EpochCache<"n", number>({ readsTokenOwners: true });
    let loads = 0;
    const count = async () => {
      beginRequest(b);
      return await cache.get(b, "n", async () => {
        loads++;
        // through the query builder: a raw statement counts as a possible write of its own
        const r = await b.selectFrom("token").select((eb) => eb.fn.countAll<number>().as("n"))
          .where("active", "=", 1).where("user_id", "<>", "").executeTakeFirstOrThrow();
        return Number(r.n);
      });
    };
    try {
      assert.equal(await count(), 0);
      await sql`insert into token (serial, tokentype, created_at, active, user_id, resolver)
        values ('T1', 'hotp', 0, 1, '', '')`.execute(a);
      await count();
      assert.equal(loads, 2, "an insert moves it");
      await sql`update token set user_id = 'u1', resolver = 'r' where serial = 'T1'`.execute(a);
      assert.equal(await count(), 1, "an assignment on another node is seen at once");
      // what a check writes moves nothing
      const before = loads;
      await sql`update token set count = count + 1 where serial = 'T1'`.execute(a);
      await sql`update token set failcount = failcount + 1 where serial = 'T1'`.execute(a);
      assert.equal(await count(), 1);
      assert.equal(loads, before, "kept across counter and fail counter updates");
      await sql`update token set active = 0 where serial = 'T1'`.execute(a);
      assert.equal(await count(), 0, "disabling is seen at once");
      await sql`update token set active = 1 where serial = 'T1'`.execute(a);
      assert.equal(await count(), 1);
      await sql`delete from token where serial = 'T1'`.execute(a);
      assert.equal(await count(), 0, "a delete is seen at once");
    } finally {
      await b.destroy();
      await t.drop();
    }
  },
});
