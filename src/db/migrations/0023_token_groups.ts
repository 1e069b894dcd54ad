import { type Kysely, PostgresAdapter, sql } from "kysely";
import { idColumn } from "./_columns.ts";

/**
 * Tables of this migration that move the cache epoch (see 0013). No process caches them; every
 * table but the hot ones has the trigger, so a cache added later stays correct.
 */
export const CACHE_EPOCH_TABLES = ["tokengroup", "tokentokengroup"];

/**
 * Token groups (`/tokengroup/`, `/token/group/…`) as privacyIDEA keeps them: the groups
 * (`tokengroup`) and which token is in which group (`tokentokengroup`). A deleted token leaves
 * its groups (cascade); a group with tokens cannot be deleted (the reference restricts it, the
 * domain says so first).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.createTable("tokengroup")
    .addColumn("id", idColumn(db), (c) => c.primaryKey().autoIncrement())
    .addColumn("name", "varchar(255)", (c) => c.notNull().unique())
    .addColumn("description", "varchar(255)", (c) => c.notNull().defaultTo(""))
    .execute();
  await db.schema.createTable("tokentokengroup")
    .addColumn("token_id", "integer", (c) => c.notNull().references("token.id").onDelete("cascade"))
    .addColumn("tokengroup_id", "integer", (c) => c.notNull().references("tokengroup.id"))
    .addPrimaryKeyConstraint("tokentokengroup_pk", ["token_id", "tokengroup_id"])
    .execute();
  await db.schema.createIndex("tokentokengroup_group").on("tokentokengroup")
    .column("tokengroup_id").execute();
  if (!(db.getExecutor().adapter instanceof PostgresAdapter)) return;
  for (const table of CACHE_EPOCH_TABLES) {
    await sql`create trigger ${sql.id(`${table}_cache_epoch`)}
      after insert or update or delete or truncate on ${sql.id(table)}
      for each statement execute function tessera_bump_cache_epoch()`.execute(db);
  }
}

/** Drops the token group tables (and with them their triggers). */
export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable("tokentokengroup").execute();
  await db.schema.dropTable("tokengroup").execute();
}
