/**
 * SQL of validate's own reads and writes: authentication attempts counted
 * from the audit log (policies `auth_max_success` / `auth_max_fail`), the
 * realms of a token a serial-only check matches policies on, and the
 * deletion of a one-time token whose row count decides its use.
 *
 * @module
 */
import type { Db } from "../../db/schema.ts";
import { runCached } from "../../db/compiled.ts";

/** Number of `/validate/check` audit rows of a user since `since` with the given outcome. */
export async function countAuthAttempts(
  db: Db,
  q: { user: string; realm: string; since: number; isSuccess: boolean },
): Promise<number> {
  const row = await db.selectFrom("audit")
    .select((eb) => eb.fn.countAll<number>().as("n"))
    .where("user", "=", q.user)
    .where("realm", "=", q.realm)
    .where("ts", ">=", q.since)
    .where("success", "=", q.isSuccess ? 1 : 0)
    .where("action", "in", ["GET /validate/check", "POST /validate/check"])
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** The token realms of one token, sorted. */
export async function realmsOfToken(db: Db, tokenId: number): Promise<string[]> {
  const { rows } = await runCached<{ realm: string }>(
    db,
    "validate:realmsOfToken",
    (id) =>
      db.selectFrom("token_realm").select("realm").where("token_id", "=", id as number)
        .orderBy("realm"),
    [tokenId],
  );
  return rows.map((r) => r.realm);
}

/**
 * Deletes a one-time token (registration) after its use, with its info and
 * realms; true only for the call whose statement removed the token row, so
 * of parallel uses of one code exactly one is told it used it.
 */
export async function deleteUsedToken(db: Db, tokenId: number): Promise<boolean> {
  return await db.transaction().execute(async (trx) => {
    await trx.deleteFrom("tokeninfo").where("token_id", "=", tokenId).execute();
    await trx.deleteFrom("token_realm").where("token_id", "=", tokenId).execute();
    const res = await trx.deleteFrom("token").where("id", "=", tokenId).executeTakeFirst();
    return Number(res.numDeletedRows) === 1;
  });
}
