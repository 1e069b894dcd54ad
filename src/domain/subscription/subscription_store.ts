/**
 * SQL for subscriptions and the token counts they are measured against.
 *
 * Cache rule ({@link activeTokenUsers}, read by every metered request): the
 * number of users with active tokens is used while the database's epoch and
 * token epoch are the ones it was counted under (db/direct.ts: on SQLite every
 * write to the token tables but the check path's counter and info writes, and
 * every commit of another process, read at the start of each request, moves
 * them). On PostgreSQL the token tables move no epoch but for a token added
 * or deleted or its owner or active flag changed (migration 0028's trigger),
 * which is all the count reads: there it is kept while the epoch is current.
 * The subscriptions of an application ({@link meteredSubscriptions}, read by
 * every metered request too) are used while the epoch is the one they were
 * read under: every write to `subscription` moves it, on any process or node
 * (SQLite: any write but the hot path's, and other connections' commits;
 * PostgreSQL: the table's `cache_epoch` trigger).
 *
 * @module
 */
import { sql } from "kysely";
import { EpochCache } from "../../db/direct.ts";
import type { Db } from "../../db/schema.ts";
import type { SubscriptionData } from "./file.ts";
import { SIGNED_FIELDS } from "./signature.ts";

/** A stored subscription with its id. */
export interface StoredSubscription extends SubscriptionData {
  id: number;
}

const COLUMNS = ["id", ...SIGNED_FIELDS, "signature"] as const;

function toStored(row: Record<(typeof COLUMNS)[number], unknown>): StoredSubscription {
  return {
    ...(row as unknown as StoredSubscription),
    id: Number(row.id),
    date_from: Number(row.date_from),
    date_till: Number(row.date_till),
    num_users: Number(row.num_users),
    num_tokens: Number(row.num_tokens),
    num_clients: Number(row.num_clients),
  };
}

/** All subscriptions, or those whose application equals `application` ignoring case; by id. */
export async function findSubscriptions(
  db: Db,
  application?: string,
): Promise<StoredSubscription[]> {
  let q = db.selectFrom("subscription").select(COLUMNS).orderBy("id");
  if (application !== undefined) {
    q = q.where(sql<string>`lower(application)`, "=", application.toLowerCase());
  }
  return (await q.execute()).map(toStored);
}

// see the module doc; the lists are shared between requests and never changed
const byApplication = new EpochCache<string, readonly StoredSubscription[]>();

/** The subscriptions of `application` (ignoring case), by id, kept as the module doc says. */
export function meteredSubscriptions(
  db: Db,
  application: string,
): Promise<readonly StoredSubscription[]> {
  const key = application.toLowerCase();
  return byApplication.get(db, key, () => findSubscriptions(db, key));
}

/**
 * Creates the subscription, or replaces every column of the row whose
 * application equals exactly (one statement, so parallel uploads cannot
 * create duplicates). Returns the row id.
 */
export async function upsertSubscription(
  db: Db,
  data: SubscriptionData,
  nowMs: number,
): Promise<number> {
  const row = { ...data, updated_at: nowMs };
  const { application: _application, ...update } = row;
  return await db.transaction().execute(async (trx) => {
    await trx.insertInto("subscription").values(row)
      .onConflict((oc) => oc.column("application").doUpdateSet(update))
      .execute();
    const stored = await trx.selectFrom("subscription").select("id")
      .where("application", "=", data.application).executeTakeFirstOrThrow();
    return Number(stored.id);
  });
}

/** Deletes the row whose application equals exactly; returns its id, or -1 when none. */
export async function deleteSubscription(db: Db, application: string): Promise<number> {
  return await db.transaction().execute(async (trx) => {
    const row = await trx.selectFrom("subscription").select("id")
      .where("application", "=", application).executeTakeFirst();
    if (!row) return -1;
    await trx.deleteFrom("subscription").where("id", "=", row.id).execute();
    return Number(row.id);
  });
}

/** Number of distinct owners (resolver, user id) with at least one active, assigned token. */
export async function countActiveTokenUsers(db: Db): Promise<number> {
  const owners = db.selectFrom("token")
    .select(["resolver", "user_id"])
    .distinct()
    .where("active", "=", 1)
    .where("user_id", "<>", "")
    .as("owners");
  const row = await db.selectFrom(owners)
    .select((eb) => eb.fn.countAll<number>().as("n"))
    .executeTakeFirst();
  return Number(row?.n ?? 0);
}

// see the module doc for when the count is used
const activeUsers = new EpochCache<"activeUsers", number>({ readsTokenOwners: true });

/** Users with active tokens, kept while no token's owner or active flag changed (module doc). */
export function activeTokenUsers(db: Db): Promise<number> {
  return activeUsers.get(db, "activeUsers", () => countActiveTokenUsers(db));
}

/** Number of active, assigned tokens, optionally of one type. */
export async function countActiveAssignedTokens(db: Db, tokenType?: string): Promise<number> {
  let q = db.selectFrom("token")
    .select((eb) => eb.fn.countAll<number>().as("n"))
    .where("active", "=", 1)
    .where("user_id", "<>", "");
  if (tokenType !== undefined) {
    q = q.where(sql<string>`lower(tokentype)`, "=", tokenType.toLowerCase());
  }
  const row = await q.executeTakeFirst();
  return Number(row?.n ?? 0);
}
