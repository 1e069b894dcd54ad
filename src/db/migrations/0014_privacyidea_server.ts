import { type Kysely, PostgresAdapter, sql } from "kysely";
import { idColumn } from "./_columns.ts";

/**
 * Tables of this migration that move the cache epoch (see 0013): every table
 * but the hot ones has the trigger, so a cache added later stays correct.
 */
export const CACHE_EPOCH_TABLES = ["privacyideaserver"];

/** Remote privacyIDEA-compatible server definitions (`/privacyideaserver/`). */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.createTable("privacyideaserver")
    .addColumn("id", idColumn(db), (c) => c.primaryKey().autoIncrement())
    .addColumn("identifier", "varchar(255)", (c) => c.notNull().unique())
    .addColumn("url", "varchar(255)", (c) => c.notNull())
    .addColumn("tls", "integer", (c) => c.notNull().defaultTo(1))
    .addColumn("description", "varchar(2000)", (c) => c.notNull().defaultTo(""))
    .execute();
  if (!(db.getExecutor().adapter instanceof PostgresAdapter)) return;
  for (const table of CACHE_EPOCH_TABLES) {
    await sql`create trigger ${sql.id(`${table}_cache_epoch`)}
      after insert or update or delete or truncate on ${sql.id(table)}
      for each statement execute function tessera_bump_cache_epoch()`.execute(db);
  }
}

/** Drops the privacyIDEA server definitions (and with them their trigger). */
export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable("privacyideaserver").execute();
}
