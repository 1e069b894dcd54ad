import { type Kysely, PostgresAdapter, sql } from "kysely";
import { idColumn } from "./_columns.ts";

/**
 * Tables of this migration that move the cache epoch (see 0013). No process
 * caches them (a connector is read when a certificate is signed or revoked),
 * but every table but the hot ones has the trigger, so a cache added later
 * stays correct.
 */
export const CACHE_EPOCH_TABLES = ["caconnector", "caconnectorconfig", "localca", "cacertificate"];

/**
 * CA connectors (`/caconnector/`) as privacyIDEA keeps them (`caconnector`,
 * `caconnectorconfig`), and what privacyIDEA's local CA keeps in files under
 * its CA directory, here in the database so every node shares it: the CA's key
 * (encrypted) and certificate, the next serial and the current CRL
 * (`localca`), and the issued certificates with their state (`cacertificate`,
 * privacyIDEA's `index.txt`).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.createTable("caconnector")
    .addColumn("id", idColumn(db), (c) => c.primaryKey().autoIncrement())
    .addColumn("name", "varchar(255)", (c) => c.notNull().unique())
    .addColumn("catype", "varchar(255)", (c) => c.notNull())
    .execute();
  await db.schema.createTable("caconnectorconfig")
    .addColumn("id", idColumn(db), (c) => c.primaryKey().autoIncrement())
    .addColumn("caconnector_id", "integer", (c) => c.notNull())
    .addColumn("key", "varchar(255)", (c) => c.notNull())
    .addColumn("value", "text", (c) => c.notNull())
    .addColumn("type", "varchar(100)", (c) => c.notNull().defaultTo(""))
    .addColumn("description", "varchar(2000)", (c) => c.notNull().defaultTo(""))
    .addUniqueConstraint("caconnectorconfig_connector_key", ["caconnector_id", "key"])
    .execute();
  await db.schema.createTable("localca")
    .addColumn("caconnector_id", "integer", (c) => c.primaryKey())
    .addColumn("key_enc", "text", (c) => c.notNull())
    .addColumn("certificate", "text", (c) => c.notNull())
    .addColumn("next_serial", "varchar(80)", (c) => c.notNull())
    .addColumn("templates", "text", (c) => c.notNull().defaultTo("{}"))
    .addColumn("crl", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("crl_number", "integer", (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema.createTable("cacertificate")
    .addColumn("id", idColumn(db), (c) => c.primaryKey().autoIncrement())
    .addColumn("caconnector_id", "integer", (c) => c.notNull())
    .addColumn("serial", "varchar(80)", (c) => c.notNull())
    .addColumn("subject", "varchar(1024)", (c) => c.notNull())
    .addColumn("not_after", "bigint", (c) => c.notNull())
    .addColumn("status", "varchar(1)", (c) => c.notNull())
    .addColumn("revoked_at", "bigint")
    .addColumn("reason", "varchar(32)", (c) => c.notNull().defaultTo(""))
    .addColumn("certificate", "text", (c) => c.notNull().defaultTo(""))
    .addUniqueConstraint("cacertificate_connector_serial", ["caconnector_id", "serial"])
    .execute();
  if (!(db.getExecutor().adapter instanceof PostgresAdapter)) return;
  for (const table of CACHE_EPOCH_TABLES) {
    await sql`create trigger ${sql.id(`${table}_cache_epoch`)}
      after insert or update or delete or truncate on ${sql.id(table)}
      for each statement execute function tessera_bump_cache_epoch()`.execute(db);
  }
}

/** Drops the CA connector tables (and with them their triggers). */
export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable("cacertificate").execute();
  await db.schema.dropTable("localca").execute();
  await db.schema.dropTable("caconnectorconfig").execute();
  await db.schema.dropTable("caconnector").execute();
}
