import { type Kysely, PostgresAdapter, sql } from "kysely";
import { idColumn } from "./_columns.ts";

/**
 * Tables of this migration that move the cache epoch (see 0013): the user
 * store generation, which processes read to know when to drop what they keep
 * of user stores (domain/user_cache).
 */
export const CACHE_EPOCH_TABLES = ["user_cache_generation"];

/**
 * `usercache`: privacyIDEA's user cache (system config `UserCacheExpiration`):
 * which user a login named (login, the login used, resolver, uid) and when
 * the row was written. A hot table like `challenge`: written by user lookups,
 * read by no process cache, so it has no cache-epoch trigger.
 *
 * `user_cache_generation`: one row, moved whenever the user cache is
 * flushed or a user is changed through Tessera; its trigger moves the cache
 * epoch, so every node sees the move at its next request.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.createTable("usercache")
    .addColumn("id", idColumn(db), (c) => c.primaryKey().autoIncrement())
    .addColumn("username", "varchar(320)", (c) => c.notNull())
    .addColumn("used_login", "varchar(320)", (c) => c.notNull())
    .addColumn("resolver", "varchar(255)", (c) => c.notNull())
    .addColumn("user_id", "varchar(320)", (c) => c.notNull())
    .addColumn("timestamp", "bigint", (c) => c.notNull())
    .execute();
  await db.schema.createIndex("usercache_login").on("usercache")
    .columns(["used_login", "resolver"]).execute();
  await db.schema.createIndex("usercache_uid").on("usercache")
    .columns(["user_id", "resolver"]).execute();
  await db.schema.createTable("user_cache_generation")
    .addColumn("id", "integer", (c) => c.primaryKey())
    .addColumn("n", "bigint", (c) => c.notNull().defaultTo(0))
    .execute();
  await sql`insert into user_cache_generation (id, n) values (1, 0)`.execute(db);
  if (!(db.getExecutor().adapter instanceof PostgresAdapter)) return;
  for (const table of CACHE_EPOCH_TABLES) {
    await sql`create trigger ${sql.id(`${table}_cache_epoch`)}
      after insert or update or delete or truncate on ${sql.id(table)}
      for each statement execute function tessera_bump_cache_epoch()`.execute(db);
  }
}

/** Drops both tables (and with them the trigger). */
export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable("user_cache_generation").execute();
  await db.schema.dropTable("usercache").execute();
}
