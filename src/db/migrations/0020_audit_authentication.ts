import type { Kysely } from "kysely";

/**
 * `audit.authentication`: the outcome a `/validate/check`, `radiuscheck`,
 * `samlcheck` or `triggerchallenge` answered (`ACCEPT`, `REJECT`,
 * `CHALLENGE`, `DECLINED`), as privacyIDEA's audit column of that name, so
 * `auth_max_fail` can leave challenges out. Other rows, and rows from before
 * this migration, keep the empty value.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable("audit")
    .addColumn("authentication", "varchar(12)", (c) => c.notNull().defaultTo(""))
    .execute();
}

/** Drops the column. */
export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable("audit").dropColumn("authentication").execute();
}
