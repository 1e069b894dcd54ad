import { type Kysely, PostgresAdapter, sql } from "kysely";
import { idColumn } from "./_columns.ts";

/**
 * Tables of this migration that move the cache epoch (see 0013). No process
 * caches them today (a gateway is read when an SMS is sent), but every table
 * but the hot ones has the trigger, so a cache added later stays correct.
 */
export const CACHE_EPOCH_TABLES = ["smsgateway", "smsgatewayoption"];

/**
 * SMS gateway definitions (`/smsgateway/`): a provider module and its
 * options and headers; `is_secret` values are encrypted.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.createTable("smsgateway")
    .addColumn("id", idColumn(db), (c) => c.primaryKey().autoIncrement())
    .addColumn("identifier", "varchar(255)", (c) => c.notNull().unique())
    .addColumn("description", "varchar(2000)", (c) => c.notNull().defaultTo(""))
    .addColumn("providermodule", "varchar(1024)", (c) => c.notNull())
    .execute();
  await db.schema.createTable("smsgatewayoption")
    .addColumn("id", idColumn(db), (c) => c.primaryKey().autoIncrement())
    .addColumn("gateway_id", "integer", (c) => c.notNull())
    .addColumn("key", "varchar(255)", (c) => c.notNull())
    .addColumn("value", "text", (c) => c.notNull())
    .addColumn("type", "varchar(16)", (c) => c.notNull())
    .addColumn("is_secret", "integer", (c) => c.notNull().defaultTo(0))
    .addUniqueConstraint("smsgatewayoption_gateway_key_type", ["gateway_id", "key", "type"])
    .execute();
  if (!(db.getExecutor().adapter instanceof PostgresAdapter)) return;
  for (const table of CACHE_EPOCH_TABLES) {
    await sql`create trigger ${sql.id(`${table}_cache_epoch`)}
      after insert or update or delete or truncate on ${sql.id(table)}
      for each statement execute function tessera_bump_cache_epoch()`.execute(db);
  }
}

/** Drops the SMS gateway tables (and with them their triggers). */
export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable("smsgatewayoption").execute();
  await db.schema.dropTable("smsgateway").execute();
}
