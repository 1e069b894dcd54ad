/**
 * SQL of validate's own reads and writes: authentication attempts counted
 * from the audit log (policies `auth_max_success` / `auth_max_fail`), the
 * realms of a token a serial-only check matches policies on, the
 * deletion of a one-time token whose row count decides its use, and the
 * auth cache (policy `auth_cache`; read only while such a policy matches).
 *
 * @module
 */
import type { Db } from "../../db/schema.ts";
import { runCached } from "../../db/compiled.ts";

/** Number of `/validate/check` and `/auth` audit rows of a user since `since` with the outcome. */
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
    // privacyIDEA counts /validate/check and /auth (not radiuscheck or samlcheck)
    .where("action", "in", ["GET /validate/check", "POST /validate/check", "POST /auth"])
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

/** One remembered authentication of a user (policy `auth_cache`). */
export interface AuthCacheEntry {
  id: number;
  passHash: string;
  /** Milliseconds since the epoch. */
  firstAuth: number;
  lastAuth: number;
  authCount: number;
}

/** Who an auth-cache entry belongs to. */
export interface AuthCacheUser {
  login: string;
  realm: string;
  resolver: string;
}

/** Every auth-cache entry of a user. */
export async function authCacheEntries(db: Db, who: AuthCacheUser): Promise<AuthCacheEntry[]> {
  const rows = await db.selectFrom("auth_cache")
    .select(["id", "pass_hash", "first_auth", "last_auth", "auth_count"])
    .where("login", "=", who.login)
    .where("realm", "=", who.realm)
    .where("resolver", "=", who.resolver)
    .orderBy("id")
    .execute();
  return rows.map((r) => ({
    id: Number(r.id),
    passHash: r.pass_hash,
    firstAuth: Number(r.first_auth),
    lastAuth: Number(r.last_auth),
    authCount: Number(r.auth_count),
  }));
}

/**
 * Counts one use of an entry (compare-and-set): true when this call used it,
 * false when parallel uses reached `maxUses` first (0: no limit).
 */
export async function useAuthCacheEntry(
  db: Db,
  id: number,
  use: { now: number; maxUses: number },
): Promise<boolean> {
  let q = db.updateTable("auth_cache")
    .set((eb) => ({ last_auth: use.now, auth_count: eb("auth_count", "+", 1) }))
    .where("id", "=", id);
  if (use.maxUses > 0) q = q.where("auth_count", "<", use.maxUses);
  const res = await q.executeTakeFirst();
  return Number(res.numUpdatedRows) === 1;
}

/** Deletes auth-cache entries by id. */
export async function deleteAuthCacheEntries(db: Db, ids: number[]): Promise<void> {
  if (ids.length === 0) return;
  await db.deleteFrom("auth_cache").where("id", "in", ids).execute();
}

/**
 * Remembers a successful authentication and drops the user's entries that
 * were first used before `expiredBefore` (they can never hit again).
 */
export async function addAuthCacheEntry(
  db: Db,
  who: AuthCacheUser,
  entry: { passHash: string; now: number; expiredBefore: number },
): Promise<void> {
  await db.transaction().execute(async (trx) => {
    await trx.deleteFrom("auth_cache")
      .where("login", "=", who.login)
      .where("realm", "=", who.realm)
      .where("resolver", "=", who.resolver)
      .where("first_auth", "<", entry.expiredBefore)
      .execute();
    await trx.insertInto("auth_cache").values({
      login: who.login,
      realm: who.realm,
      resolver: who.resolver,
      pass_hash: entry.passHash,
      first_auth: entry.now,
      last_auth: entry.now,
      auth_count: 0,
    }).execute();
  });
}

/** Serials of the tokens without owner that have `realm` among their token realms, oldest first. */
export async function unassignedSerialsInRealm(db: Db, realm: string): Promise<string[]> {
  const rows = await db.selectFrom("token")
    .innerJoin("token_realm", "token_realm.token_id", "token.id")
    .select(["token.serial"])
    .where("token.user_id", "=", "")
    .where("token_realm.realm", "=", realm)
    .orderBy("token.id")
    .execute();
  return rows.map((r) => r.serial);
}
