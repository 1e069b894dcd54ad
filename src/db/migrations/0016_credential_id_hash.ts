import { type Kysely, sql } from "kysely";

/**
 * A unique partial index on the tokeninfo value `credential_id_hash` (the
 * SHA-256 of a WebAuthn/passkey credential id, spec 11 §4.3, §5.2):
 * `/validate/check` without a user finds the token of a credential through
 * it, and one credential can belong to one token only, also when two
 * enrolments race (the second write fails on the index). Partial (only rows
 * of that key), so no other tokeninfo value is indexed or constrained; the
 * same statement works on SQLite and PostgreSQL. `tokeninfo` is a hot table,
 * not a cached one: no cache-epoch trigger.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`create unique index tokeninfo_credential_id_hash on tokeninfo (value)
    where key = 'credential_id_hash'`.execute(db);
}

/** Drops the index. */
export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex("tokeninfo_credential_id_hash").ifExists().execute();
}
