import type { Kysely } from "kysely";

/**
 * Index for the token lookup of `/validate/check` (owner by realm and uid):
 * `token_owner` (realm, login) alone made it scan every token of the realm.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.createIndex("token_owner_uid").on("token")
    .columns(["user_realm", "user_id", "resolver"]).execute();
}

/** Drops the index. */
export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex("token_owner_uid").execute();
}
