/**
 * The admin dashboard's figures that no list endpoint gives without reading every row: token
 * counts by type and state.
 *
 * @module
 */
import type { Db } from "../../db/schema.ts";
import { countTokens } from "./dashboard_store.ts";

/** Counts of tokens per state. */
export interface StateCounts {
  count: number;
  active: number;
  locked: number;
  disabled: number;
  revoked: number;
}

/** `GET /dashboard/tokens`: all tokens and each type, by state. */
export interface TokenCounts extends StateCounts {
  types: Record<string, StateCounts>;
}

function empty(): StateCounts {
  return { count: 0, active: 0, locked: 0, disabled: 0, revoked: 0 };
}

/**
 * Token counts by type and state (each token in one state: revoked, disabled, locked at its
 * maximum fail counter, or active); `realms` limits them to those realms' tokens.
 */
export async function tokenCounts(
  deps: { db: Db },
  options: { realms?: readonly string[] } = {},
): Promise<TokenCounts> {
  const out: TokenCounts = { ...empty(), types: {} };
  for (const row of await countTokens(deps.db, options.realms)) {
    const perType = out.types[row.type] ??= empty();
    perType[row.state] += row.count;
    perType.count += row.count;
    out[row.state] += row.count;
    out.count += row.count;
  }
  return out;
}
