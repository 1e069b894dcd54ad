/**
 * privacyIDEA's user cache (spec 16 §7): with system config
 * `UserCacheExpiration` set to a number of seconds, which user a login named
 * (login, resolver, uid) is kept in the shared database for that long, so a
 * user is resolved without asking the user store. The rows, their expiry and
 * their invalidation are user_cache_store.ts's (its cache rule).
 *
 * @module
 */
import type { Deps } from "../../deps.ts";
import { loadSystemConfig } from "../system_config/mod.ts";
import * as store from "./user_cache_store.ts";

export type { CachedUser } from "./user_cache_store.ts";

/** The system config key: seconds a row counts; 0, absent or not a number switch the cache off. */
export const USER_CACHE_EXPIRATION = "UserCacheExpiration";

/** Seconds the user cache keeps a row, or 0 when it is off. */
export async function userCacheSeconds(deps: Deps): Promise<number> {
  const text = (await loadSystemConfig(deps)).get(USER_CACHE_EXPIRATION, "0").trim();
  // privacyIDEA: int(value); anything else switches the cache off
  if (!/^[-+]?\d+$/.test(text)) return 0;
  const seconds = Number.parseInt(text, 10);
  return seconds > 0 ? seconds : 0;
}

/** The oldest row time that counts, or undefined when the cache is off. */
async function validSince(deps: Deps): Promise<number | undefined> {
  const seconds = await userCacheSeconds(deps);
  return seconds > 0 ? deps.clock.now() - seconds * 1000 : undefined;
}

/** The user `login` named in `resolver` (and with `uid`, when given), if the cache knows it. */
export async function cachedLogin(
  deps: Deps,
  key: { login: string; resolver: string; uid?: string },
): Promise<store.CachedUser | undefined> {
  const since = await validSince(deps);
  if (since === undefined) return undefined;
  return await store.findByLogin(deps.db, {
    usedLogin: key.login,
    resolver: key.resolver,
    uid: key.uid,
  }, since);
}

/** The user with `uid` in `resolver`, if the cache knows it. */
export async function cachedUid(
  deps: Deps,
  key: { uid: string; resolver: string },
): Promise<store.CachedUser | undefined> {
  const since = await validSince(deps);
  if (since === undefined) return undefined;
  return await store.findByUid(deps.db, key, since);
}

/** Adds a row when the cache is on. */
export async function rememberUser(
  deps: Deps,
  user: { username: string; usedLogin: string; resolver: string; uid: string },
): Promise<void> {
  if ((await userCacheSeconds(deps)) === 0) return;
  await store.insertRow(deps.db, { ...user, timestamp: deps.clock.now() });
}

/**
 * `DELETE /system/user-cache`: deletes every row, and every node drops what it
 * keeps of user stores (the LDAP resolvers' lookups) at its next request.
 * Returns the number of rows.
 */
export async function flushUserCache(deps: Deps): Promise<number> {
  return await store.deleteRows(deps.db, {}, { bumps: true });
}

/** A resolver was saved or deleted: its rows go (its instances are rebuilt anyway). */
export async function forgetResolverUsers(deps: Deps, resolver: string): Promise<void> {
  await store.deleteRows(deps.db, { resolver }, { bumps: false });
}

/**
 * A user was changed or deleted through Tessera: the rows of its login go,
 * and every node drops what it keeps of user stores at its next request.
 */
export async function forgetUser(deps: Deps, resolver: string, login: string): Promise<void> {
  await store.deleteRows(deps.db, { resolver, username: login }, { bumps: true });
}

/** The user store generation: what a process keeps of user stores is used while it stays. */
export async function userStoreGeneration(deps: Deps): Promise<number> {
  return await store.userStoreGeneration(deps.db);
}
