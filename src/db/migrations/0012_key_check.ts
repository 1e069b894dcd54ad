import type { Kysely } from "kysely";

/**
 * `key_check`: one row naming the key file the database's secrets are
 * encrypted under (an HKDF value of the key file, never the key), so a node
 * started with another key file refuses to serve instead of writing secrets
 * that no other node can read.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.createTable("key_check")
    .addColumn("name", "varchar(40)", (c) => c.primaryKey())
    .addColumn("fingerprint", "varchar(128)", (c) => c.notNull())
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .execute();
}

/** Drops the table. */
export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable("key_check").execute();
}
