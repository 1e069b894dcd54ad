import { type Kysely, PostgresAdapter, sql } from "kysely";

/** The columns of `token` whose change moves the cache epoch on PostgreSQL. */
export const TOKEN_OWNER_COLUMNS = ["active", "user_id", "resolver"];

/**
 * On PostgreSQL the token tables move no cache epoch (a check updates `token` on every
 * login), so a value computed from them was loaded on every use: the number of users
 * with an active token, which the subscription meter needs on every request of a
 * client component. This trigger moves the epoch when a token is added or deleted or
 * its owner or active flag changes (`UPDATE OF` fires only for statements that set one
 * of these columns, never for a check's counter and fail counter updates), so such a
 * value can be kept on every node until one of these changes. SQLite needs no such
 * trigger: its token epoch moves with every token write but a check's own.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  if (!(db.getExecutor().adapter instanceof PostgresAdapter)) return;
  await sql`create trigger token_owner_epoch
    after insert or delete or truncate or update of ${
    sql.join(TOKEN_OWNER_COLUMNS.map((c) => sql.id(c)))
  } on "token"
    for each statement execute function tessera_bump_cache_epoch()`.execute(db);
}

/** Drops the trigger. */
export async function down(db: Kysely<unknown>): Promise<void> {
  if (!(db.getExecutor().adapter instanceof PostgresAdapter)) return;
  await sql`drop trigger if exists token_owner_epoch on "token"`.execute(db);
}
