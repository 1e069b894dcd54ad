import type { Kysely } from "kysely";

/**
 * `admin.credential_version`: an opaque value that every admin JWT carries and
 * that changes with the admin's credentials (new password; a deleted and
 * re-created admin gets a fresh one), so earlier JWTs stop working at once.
 * Rows from before this migration keep the empty value until their next
 * password change; their JWTs from before it carry no version and are refused.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable("admin")
    .addColumn("credential_version", "varchar(64)", (c) => c.notNull().defaultTo(""))
    .execute();
}

/** Drops the column. */
export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable("admin").dropColumn("credential_version").execute();
}
