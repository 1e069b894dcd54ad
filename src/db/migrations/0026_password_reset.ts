import type { Kysely } from "kysely";
import { idColumn } from "./_columns.ts";

/**
 * `passwordreset`: the outstanding password recovery codes of `/recover` (spec 14 §14.3), as a
 * keyed hash with the user they were sent to and their expiry (ms since the epoch). Written by
 * anonymous requests and read by no cache, so it has no cache-epoch trigger (see 0013): an
 * anonymous caller must not be able to empty every node's caches.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.createTable("passwordreset")
    .addColumn("id", idColumn(db), (c) => c.primaryKey().autoIncrement())
    .addColumn("code_hash", "varchar(255)", (c) => c.notNull())
    .addColumn("username", "varchar(320)", (c) => c.notNull())
    .addColumn("realm", "varchar(255)", (c) => c.notNull())
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .addColumn("expires_at", "bigint", (c) => c.notNull())
    .execute();
  await db.schema.createIndex("passwordreset_user").on("passwordreset")
    .columns(["username", "realm"]).execute();
  await db.schema.createIndex("passwordreset_expires").on("passwordreset")
    .column("expires_at").execute();
}

/** Drops the table. */
export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable("passwordreset").execute();
}
