import { type Kysely, PostgresAdapter, sql } from "kysely";
import { idColumn } from "./_columns.ts";

/**
 * Tables of this migration that move the cache epoch (see 0013): the task
 * definitions. No process caches them today (the scheduler reads them on
 * every tick), but every table but the hot ones has the trigger. The last
 * runs, the leases and the statistics are written by every run and have none.
 */
export const CACHE_EPOCH_TABLES = ["periodictask", "periodictaskoption"];

/**
 * Periodic tasks (`/periodictask/`) as privacyIDEA has them: the definition
 * (`periodictask`), its options, its last run per node; the lease a process
 * holds while it runs a task for a node (`periodictasklease`, so that of
 * several processes with the node's name one runs it); and the statistics the
 * tasks write (`monitoringstats`, read through `/monitoring/`). Times are
 * milliseconds since the epoch.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.createTable("periodictask")
    .addColumn("id", idColumn(db), (c) => c.primaryKey().autoIncrement())
    .addColumn("name", "varchar(64)", (c) => c.notNull().unique())
    .addColumn("active", "integer", (c) => c.notNull().defaultTo(1))
    .addColumn("retry_if_failed", "integer", (c) => c.notNull().defaultTo(1))
    .addColumn("interval", "varchar(256)", (c) => c.notNull())
    .addColumn("nodes", "varchar(256)", (c) => c.notNull())
    .addColumn("taskmodule", "varchar(256)", (c) => c.notNull())
    .addColumn("ordering", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("last_update", "bigint", (c) => c.notNull())
    .execute();
  await db.schema.createTable("periodictaskoption")
    .addColumn("id", idColumn(db), (c) => c.primaryKey().autoIncrement())
    .addColumn(
      "periodictask_id",
      "integer",
      (c) => c.notNull().references("periodictask.id").onDelete("cascade"),
    )
    .addColumn("key", "varchar(255)", (c) => c.notNull())
    .addColumn("value", "varchar(2000)", (c) => c.notNull().defaultTo(""))
    .addUniqueConstraint("periodictaskoption_task_key", ["periodictask_id", "key"])
    .execute();
  await db.schema.createTable("periodictasklastrun")
    .addColumn("id", idColumn(db), (c) => c.primaryKey().autoIncrement())
    .addColumn(
      "periodictask_id",
      "integer",
      (c) => c.notNull().references("periodictask.id").onDelete("cascade"),
    )
    .addColumn("node", "varchar(255)", (c) => c.notNull())
    .addColumn("timestamp", "bigint", (c) => c.notNull())
    .addUniqueConstraint("periodictasklastrun_task_node", ["periodictask_id", "node"])
    .execute();
  await db.schema.createTable("periodictasklease")
    .addColumn(
      "periodictask_id",
      "integer",
      (c) => c.notNull().references("periodictask.id").onDelete("cascade"),
    )
    .addColumn("node", "varchar(255)", (c) => c.notNull())
    .addColumn("holder", "varchar(255)", (c) => c.notNull().defaultTo(""))
    .addColumn("expires_at", "bigint", (c) => c.notNull().defaultTo(0))
    .addPrimaryKeyConstraint("periodictasklease_pk", ["periodictask_id", "node"])
    .execute();
  await db.schema.createTable("monitoringstats")
    .addColumn("id", idColumn(db), (c) => c.primaryKey().autoIncrement())
    .addColumn("timestamp", "bigint", (c) => c.notNull())
    .addColumn("stats_key", "varchar(128)", (c) => c.notNull())
    .addColumn("stats_value", "bigint", (c) => c.notNull())
    .execute();
  await db.schema.createIndex("monitoringstats_key_time").on("monitoringstats")
    .columns(["stats_key", "timestamp"]).execute();
  if (!(db.getExecutor().adapter instanceof PostgresAdapter)) return;
  for (const table of CACHE_EPOCH_TABLES) {
    await sql`create trigger ${sql.id(`${table}_cache_epoch`)}
      after insert or update or delete or truncate on ${sql.id(table)}
      for each statement execute function tessera_bump_cache_epoch()`.execute(db);
  }
}

/** Drops the tables of this migration (and with them their triggers). */
export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable("monitoringstats").execute();
  await db.schema.dropTable("periodictasklease").execute();
  await db.schema.dropTable("periodictasklastrun").execute();
  await db.schema.dropTable("periodictaskoption").execute();
  await db.schema.dropTable("periodictask").execute();
}
