/**
 * SQL of the admin dashboard: token counts by type and state in one grouped count. It reads the
 * token tables (written by the token store) and caches nothing: every call counts afresh.
 *
 * @module
 */
import { sql } from "kysely";
import type { Db } from "../../db/schema.ts";

/** One group of the count: tokens of a type in a state. */
export interface TokenCountRow {
  type: string;
  state: "active" | "locked" | "disabled" | "revoked";
  count: number;
}

// each token in one state, as the token list's sortby=state orders them (revoked, then
// disabled, then locked at the maximum fail counter, else active); literals only, so the
// same text works in the select and the group by on SQLite and PostgreSQL
const STATE = sql<
  string
>`case when token.revoked = 1 then 'revoked' when token.active = 0 then 'disabled' when token.failcount >= token.maxfail then 'locked' else 'active' end`;

/**
 * Tokens by type and state; with `realms`, only the tokens whose owner is in one of them or
 * that have one of them as a token realm (the token list's rule for realm-limited admins).
 */
export async function countTokens(db: Db, realms?: readonly string[]): Promise<TokenCountRow[]> {
  let query = db.selectFrom("token").select([
    "token.tokentype as type",
    STATE.as("state"),
    (eb) => eb.fn.countAll<number>().as("n"),
  ]);
  if (realms) {
    const list = realms.length > 0 ? [...realms] : [""];
    query = query.where((eb) =>
      eb.or([
        eb("token.user_realm", "in", list),
        eb.exists(
          eb.selectFrom("token_realm").select("token_realm.token_id")
            .whereRef("token_realm.token_id", "=", "token.id")
            .where("token_realm.realm", "in", list),
        ),
      ])
    );
  }
  const rows = await query.groupBy(["token.tokentype", STATE]).execute();
  return rows.map((r) => ({
    type: r.type,
    state: r.state as TokenCountRow["state"],
    count: Number(r.n),
  }));
}
