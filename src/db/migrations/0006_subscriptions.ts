import type { Kysely } from "kysely";
import { idColumn } from "./_columns.ts";

/** Uploaded vendor-signed subscriptions (issue 9, spec 06). */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.createTable("subscription")
    .addColumn("id", idColumn(db), (c) => c.primaryKey().autoIncrement())
    // exact-case unique: upload replaces the row whose application matches exactly (spec 06 §2)
    .addColumn("application", "varchar(80)", (c) => c.notNull().unique())
    .addColumn("for_name", "varchar(80)", (c) => c.notNull())
    .addColumn("for_address", "varchar(128)", (c) => c.notNull())
    .addColumn("for_email", "varchar(128)", (c) => c.notNull())
    .addColumn("for_phone", "varchar(50)", (c) => c.notNull())
    .addColumn("for_url", "varchar(80)", (c) => c.notNull())
    .addColumn("for_comment", "varchar(255)", (c) => c.notNull())
    .addColumn("by_name", "varchar(50)", (c) => c.notNull())
    .addColumn("by_email", "varchar(128)", (c) => c.notNull())
    .addColumn("by_address", "varchar(128)", (c) => c.notNull())
    .addColumn("by_phone", "varchar(50)", (c) => c.notNull())
    .addColumn("by_url", "varchar(80)", (c) => c.notNull())
    .addColumn("date_from", "bigint", (c) => c.notNull())
    .addColumn("date_till", "bigint", (c) => c.notNull())
    .addColumn("num_users", "integer", (c) => c.notNull())
    .addColumn("num_tokens", "integer", (c) => c.notNull())
    .addColumn("num_clients", "integer", (c) => c.notNull())
    .addColumn("level", "varchar(80)", (c) => c.notNull())
    .addColumn("signature", "varchar(640)", (c) => c.notNull())
    .addColumn("updated_at", "bigint", (c) => c.notNull())
    .execute();
  // the runtime check counts distinct owners of active tokens: let it read the index only
  await db.schema.createIndex("token_active_owner").on("token")
    .columns(["active", "resolver", "user_id"]).execute();
}

/** Drops the subscription table and the owner index. */
export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex("token_active_owner").execute();
  await db.schema.dropTable("subscription").execute();
}
