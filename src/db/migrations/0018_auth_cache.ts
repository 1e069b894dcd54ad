import type { Kysely } from "kysely";
import { idColumn } from "./_columns.ts";

/**
 * `auth_cache`: credentials that authenticated a user recently (policy
 * `auth_cache`, spec 15 §3.1), as a keyed hash with the time of the first
 * and the last use and the number of uses since. A hot table like
 * `challenge`: written by `/validate/check`, read by no cache, so it has no
 * cache-epoch trigger (see 0013).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.createTable("auth_cache")
    .addColumn("id", idColumn(db), (c) => c.primaryKey().autoIncrement())
    .addColumn("login", "varchar(320)", (c) => c.notNull())
    .addColumn("realm", "varchar(255)", (c) => c.notNull())
    .addColumn("resolver", "varchar(255)", (c) => c.notNull())
    .addColumn("pass_hash", "varchar(255)", (c) => c.notNull())
    .addColumn("first_auth", "bigint", (c) => c.notNull())
    .addColumn("last_auth", "bigint", (c) => c.notNull())
    .addColumn("auth_count", "integer", (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema.createIndex("auth_cache_user").on("auth_cache")
    .columns(["login", "realm", "resolver"]).execute();
}

/** Drops the table. */
export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable("auth_cache").execute();
}
