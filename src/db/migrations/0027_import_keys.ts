import { type Kysely, PostgresAdapter, sql } from "kysely";

/** Tables of this migration that move the cache epoch (see 0013); nothing caches them yet. */
export const CACHE_EPOCH_TABLES = ["importkey"];

/**
 * `importkey`: the OpenPGP key pairs token import files may be encrypted to (privacyIDEA's
 * GnuPG home, `PI_GNUPG_HOME`), in the database so every node decrypts with the same keys:
 * the key id and fingerprint, the armoured public key, and the armoured private key encrypted
 * under the key file's configuration key.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.createTable("importkey")
    .addColumn("keyid", "varchar(16)", (c) => c.primaryKey())
    .addColumn("fingerprint", "varchar(64)", (c) => c.notNull())
    .addColumn("public_armor", "text", (c) => c.notNull())
    .addColumn("private_enc", "text", (c) => c.notNull())
    .addColumn("origin", "varchar(20)", (c) => c.notNull())
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .execute();
  if (!(db.getExecutor().adapter instanceof PostgresAdapter)) return;
  for (const table of CACHE_EPOCH_TABLES) {
    await sql`create trigger ${sql.id(`${table}_cache_epoch`)}
      after insert or update or delete or truncate on ${sql.id(table)}
      for each statement execute function tessera_bump_cache_epoch()`.execute(db);
  }
}

/** Drops the table (and with it its trigger). */
export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable("importkey").execute();
}
