import type { Kysely } from "kysely";

/**
 * `audit.request_id`: the id of the request the row records, the one its log
 * lines and its `X-Request-ID` response header carry, so that an audit row
 * and the log lines of the same request can be found from each other. Rows
 * from before this migration keep the empty value.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable("audit")
    .addColumn("request_id", "varchar(128)", (c) => c.notNull().defaultTo(""))
    .execute();
}

/** Drops the column. */
export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable("audit").dropColumn("request_id").execute();
}
