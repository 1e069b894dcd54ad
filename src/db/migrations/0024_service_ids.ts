import { type Kysely, PostgresAdapter, sql } from "kysely";
import { idColumn } from "./_columns.ts";

/** Tables of this migration that move the cache epoch (see 0013); nothing caches them yet. */
export const CACHE_EPOCH_TABLES = ["serviceid"];

/**
 * Service IDs (`/serviceid/`) as privacyIDEA keeps them: a name and a description. SSH key
 * bindings name one in their `service_id` option (spec 07 §4); nothing references the table.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.createTable("serviceid")
    .addColumn("id", idColumn(db), (c) => c.primaryKey().autoIncrement())
    .addColumn("name", "varchar(255)", (c) => c.notNull().unique())
    .addColumn("description", "varchar(255)", (c) => c.notNull().defaultTo(""))
    .execute();
  if (!(db.getExecutor().adapter instanceof PostgresAdapter)) return;
  for (const table of CACHE_EPOCH_TABLES) {
    await sql`create trigger ${sql.id(`${table}_cache_epoch`)}
      after insert or update or delete or truncate on ${sql.id(table)}
      for each statement execute function tessera_bump_cache_epoch()`.execute(db);
  }
}

/** Drops the service ID table (and with it its trigger). */
export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable("serviceid").execute();
}
