/**
 * SQL of password recovery codes (`passwordreset`). No cache: read by `/recover/reset` only.
 *
 * @module
 */
import type { Db } from "../../db/schema.ts";

/** One outstanding recovery code (its hash). */
export interface RecoveryCodeRow {
  id: number;
  codeHash: string;
}

/**
 * Stores a code's hash for `username@realm` (returns its id), keeping at most `keep` codes of that user (the
 * oldest beyond go), so repeated requests cannot grow the table without bound.
 */
export async function insertCode(
  db: Db,
  row: { codeHash: string; username: string; realm: string; createdAt: number; expiresAt: number },
  keep: number,
): Promise<number> {
  return await db.transaction().execute(async (trx) => {
    const { id } = await trx.insertInto("passwordreset").values({
      code_hash: row.codeHash,
      username: row.username,
      realm: row.realm,
      created_at: row.createdAt,
      expires_at: row.expiresAt,
    }).returning("id").executeTakeFirstOrThrow();
    const ids = (await trx.selectFrom("passwordreset").select("id")
      .where("username", "=", row.username).where("realm", "=", row.realm)
      .orderBy("id", "desc").execute()).map((r) => r.id);
    if (ids.length > keep) {
      await trx.deleteFrom("passwordreset").where("id", "in", ids.slice(keep)).execute();
    }
    return id;
  });
}

/** Deletes every code that expired before `now`; how many. */
export async function deleteExpired(db: Db, now: number): Promise<number> {
  const res = await db.deleteFrom("passwordreset").where("expires_at", "<", now)
    .executeTakeFirst();
  return Number(res.numDeletedRows);
}

/** The codes of `username@realm` that are still valid at `now`. */
export async function codesOf(
  db: Db,
  user: { username: string; realm: string },
  now: number,
): Promise<RecoveryCodeRow[]> {
  const rows = await db.selectFrom("passwordreset").select(["id", "code_hash"])
    .where("username", "=", user.username).where("realm", "=", user.realm)
    .where("expires_at", ">=", now).orderBy("id").execute();
  return rows.map((r) => ({ id: r.id, codeHash: r.code_hash }));
}

/**
 * Deletes the code `id`; true only for the one caller whose statement removed it, so a code
 * used by two requests at once lets exactly one through.
 */
export async function consumeCode(db: Db, id: number): Promise<boolean> {
  const res = await db.deleteFrom("passwordreset").where("id", "=", id).executeTakeFirst();
  return Number(res.numDeletedRows) === 1;
}

/** Deletes a code without using it (the mail carrying it could not be sent). */
export async function deleteCode(db: Db, id: number): Promise<void> {
  await db.deleteFrom("passwordreset").where("id", "=", id).execute();
}
