/**
 * SQL of validate's own reads: authentication attempts counted from the audit
 * log (policies `auth_max_success` / `auth_max_fail`).
 *
 * @module
 */
import type { Db } from "../../db/schema.ts";

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
