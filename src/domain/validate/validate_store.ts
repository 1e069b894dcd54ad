/**
 * SQL of validate's own table, the auth cache (policy `auth_cache`; read only
 * while such a policy matches). The token and audit rows a check reads or
 * writes go through their own stores.
 *
 * @module
 */
import type { Db } from "../../db/schema.ts";

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
