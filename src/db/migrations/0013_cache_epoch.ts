import { type Kysely, PostgresAdapter, sql } from "kysely";

/**
 * Tables whose rows processes keep in caches (configuration, policies,
 * events, realms, resolvers, admins, machines, servers, subscriptions). Every
 * table but the hot ones (`token`, `tokeninfo`, `token_realm`, `challenge`,
 * `audit`, `eventcounter`) belongs here: a new table that a cache reads needs
 * a migration adding its trigger (tests/db/cache_epoch_test.ts checks it).
 */
export const CACHED_TABLES = [
  "admin",
  "config",
  "policy",
  "policy_version",
  "eventhandler",
  "eventconfig_version",
  "realm",
  "realm_resolver",
  "resolver",
  "machineresolver",
  "machineresolverconfig",
  "machinetoken",
  "machinetokenoption",
  "smtpserver",
  "radiusserver",
  "subscription",
  "user_attribute",
  "key_check",
];

/**
 * `cache_epoch`: one row counting the committed changes of the cached tables.
 * On PostgreSQL a statement trigger on each of them moves it in the writing
 * transaction, so every node reads at the start of a request whether its
 * caches are still current (db/direct.ts). SQLite has the table too (one
 * schema), but its caches use `PRAGMA data_version` instead.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.createTable("cache_epoch")
    .addColumn("id", "integer", (c) => c.primaryKey())
    .addColumn("n", "bigint", (c) => c.notNull().defaultTo(0))
    .execute();
  await sql`insert into cache_epoch (id, n) values (1, 0)`.execute(db);
  if (!(db.getExecutor().adapter instanceof PostgresAdapter)) return;
  await sql`
    create function tessera_bump_cache_epoch() returns trigger language plpgsql as $$
    begin
      update cache_epoch set n = n + 1 where id = 1;
      return null;
    end $$`.execute(db);
  for (const table of CACHED_TABLES) {
    await sql`create trigger ${sql.id(`${table}_cache_epoch`)}
      after insert or update or delete or truncate on ${sql.id(table)}
      for each statement execute function tessera_bump_cache_epoch()`.execute(db);
  }
}

/** Drops the triggers, the function and the table. */
export async function down(db: Kysely<unknown>): Promise<void> {
  if (db.getExecutor().adapter instanceof PostgresAdapter) {
    for (const table of CACHED_TABLES) {
      await sql`drop trigger if exists ${sql.id(`${table}_cache_epoch`)} on ${sql.id(table)}`
        .execute(db);
    }
    await sql`drop function if exists tessera_bump_cache_epoch()`.execute(db);
  }
  await db.schema.dropTable("cache_epoch").execute();
}
