/**
 * Storage of privacyIDEA's user cache (`usercache`) and of the user store
 * generation (`user_cache_generation`), both in the shared database.
 *
 * Cache rule: a `usercache` row counts while it is younger than
 * `UserCacheExpiration` (the caller names the oldest time that counts). Rows
 * are deleted, in the shared database, for a resolver when it is saved or
 * deleted, for a user when it is changed or deleted through Tessera, and all
 * of them by `DELETE /system/user-cache`; so the next lookup on any node
 * misses. Lookups read the table every time: no process keeps its rows.
 *
 * The generation moves with every flush of users (a user changed or deleted
 * through Tessera, `DELETE /system/user-cache`). What processes keep of user
 * stores themselves (the LDAP resolver's lookups) is used only while the
 * generation it was read under is current. {@link userStoreGeneration} is kept
 * under the cache epoch, which the generation's table moves (its trigger on
 * PostgreSQL, any write on SQLite): a move on any node counts for every
 * node's next request.
 *
 * @module
 */
import { sql } from "kysely";
import type { Db } from "../../db/schema.ts";
import { EpochCache } from "../../db/direct.ts";

/** One user cache row. */
export interface UserCacheRow {
  /** The user's login as the resolver has it. */
  username: string;
  /** The login the request used. */
  usedLogin: string;
  resolver: string;
  uid: string;
  /** Milliseconds since the epoch. */
  timestamp: number;
}

/** What a lookup found: the newest row that still counts. */
export interface CachedUser {
  username: string;
  resolver: string;
  uid: string;
}

/** The newest row of `usedLogin` in `resolver` (and of `uid`, when given) written since `since`. */
export async function findByLogin(
  db: Db,
  key: { usedLogin: string; resolver: string; uid?: string },
  since: number,
): Promise<CachedUser | undefined> {
  let query = db.selectFrom("usercache").select(["username", "resolver", "user_id"])
    .where("used_login", "=", key.usedLogin).where("resolver", "=", key.resolver)
    .where("timestamp", ">=", since);
  if (key.uid !== undefined) query = query.where("user_id", "=", key.uid);
  const row = await query.orderBy("timestamp", "desc").orderBy("id", "desc").limit(1)
    .executeTakeFirst();
  return row ? { username: row.username, resolver: row.resolver, uid: row.user_id } : undefined;
}

/** The newest row of `uid` in `resolver` written since `since`. */
export async function findByUid(
  db: Db,
  key: { uid: string; resolver: string },
  since: number,
): Promise<CachedUser | undefined> {
  const row = await db.selectFrom("usercache").select(["username", "resolver", "user_id"])
    .where("user_id", "=", key.uid).where("resolver", "=", key.resolver)
    .where("timestamp", ">=", since)
    .orderBy("timestamp", "desc").orderBy("id", "desc").limit(1).executeTakeFirst();
  return row ? { username: row.username, resolver: row.resolver, uid: row.user_id } : undefined;
}

/** Adds a row. */
export async function insertRow(db: Db, row: UserCacheRow): Promise<void> {
  await db.insertInto("usercache").values({
    username: row.username,
    used_login: row.usedLogin,
    resolver: row.resolver,
    user_id: row.uid,
    timestamp: row.timestamp,
  }).execute();
}

/**
 * Deletes the rows of `resolver` (and of its user `username`, when given), or
 * every row without a filter; returns how many. `bumps`: the user store
 * generation moves in the same transaction.
 */
export async function deleteRows(
  db: Db,
  filter: { resolver?: string; username?: string },
  options: { bumps: boolean },
): Promise<number> {
  return await db.transaction().execute(async (trx) => {
    let query = trx.deleteFrom("usercache");
    if (filter.resolver !== undefined) query = query.where("resolver", "=", filter.resolver);
    if (filter.username !== undefined) query = query.where("username", "=", filter.username);
    const res = await query.executeTakeFirst();
    if (options.bumps) {
      await trx.updateTable("user_cache_generation").set({ n: sql`n + 1` }).where("id", "=", 1)
        .execute();
    }
    return Number(res.numDeletedRows);
  });
}

// see the module doc: the generation is read once per epoch
const generations = new EpochCache<"generation", number>();

/** The user store generation (see the module doc). */
export function userStoreGeneration(db: Db): Promise<number> {
  return generations.get(db, "generation", async () => {
    const row = await db.selectFrom("user_cache_generation").select("n").where("id", "=", 1)
      .executeTakeFirst();
    return Number(row?.n ?? 0);
  });
}
