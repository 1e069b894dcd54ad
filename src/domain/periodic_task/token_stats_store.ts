/**
 * Counts of tokens and token owners for the `SimpleStats` task (reads the
 * token tables; no cache).
 *
 * @module
 */
import type { Db } from "../../db/schema.ts";

/** Which tokens a count takes. */
export interface TokenCountFilter {
  /** Tokeninfo `tokenkind` (`hardware`, `software`). */
  kind?: string;
  /** Only tokens with (true) or without (false) an owner. */
  isAssigned?: boolean;
}

/** Number of tokens that match the filter. */
export async function countTokens(db: Db, filter: TokenCountFilter = {}): Promise<number> {
  let q = db.selectFrom("token").select((eb) => eb.fn.countAll<number>().as("n"));
  if (filter.isAssigned !== undefined) {
    q = q.where("user_id", filter.isAssigned ? "<>" : "=", "");
  }
  const kind = filter.kind;
  if (kind !== undefined) {
    q = q.where((eb) =>
      eb.exists(
        eb.selectFrom("tokeninfo").select("tokeninfo.id")
          .whereRef("tokeninfo.token_id", "=", "token.id")
          .where("tokeninfo.key", "=", "tokenkind").where("tokeninfo.value", "=", kind),
      )
    );
  }
  const row = await q.executeTakeFirst();
  return Number(row?.n ?? 0);
}

/** Number of distinct owners (resolver, user id) with at least one active token. */
export async function countUsersWithActiveTokens(db: Db): Promise<number> {
  const owners = db.selectFrom("token").select(["resolver", "user_id"]).distinct()
    .where("active", "=", 1).where("user_id", "<>", "").as("owners");
  const row = await db.selectFrom(owners).select((eb) => eb.fn.countAll<number>().as("n"))
    .executeTakeFirst();
  return Number(row?.n ?? 0);
}
