/**
 * Writes of the check path (validate): counters, fail counters, authentication counts,
 * tokeninfo, used registration tokens. With `pending`, a write's commit joins the
 * request's write group (see `runCached`).
 *
 * @module
 */
import type { Deps } from "../../deps.ts";
import type { PendingCommits } from "../../db/direct.ts";
import type { Token } from "./model.ts";
import * as store from "./token_store.ts";
import { plainInfo } from "./_common.ts";
import { validityStamp } from "./dates.ts";

/**
 * Sets plain tokeninfo values of a token (used by validate and event
 * handlers). With `pending`, the write's commit is added there.
 */
export async function updateTokenInfo(
  deps: Deps,
  tokenId: number,
  values: Record<string, string>,
  pending?: PendingCommits,
): Promise<void> {
  await store.setInfoOnCheck(deps.db, tokenId, plainInfo(values), pending);
}

/**
 * Moves a token's OTP counter to `counter` if still below it (compare-and-set).
 * With `pending`, the write's commit is added there (see runCached).
 */
export async function advanceTokenCounter(
  deps: Deps,
  tokenId: number,
  counter: number,
  pending?: PendingCommits,
): Promise<boolean> {
  return await store.advanceCounter(deps.db, tokenId, counter, pending);
}

/**
 * Deletes the tokeninfo `key` of a token if it is still there (a one-time
 * code); false when a parallel request used it first.
 */
export async function consumeTokenInfo(
  deps: Deps,
  tokenId: number,
  key: string,
  pending?: PendingCommits,
): Promise<boolean> {
  return await store.consumeInfo(deps.db, tokenId, key, pending);
}

/** Raises the fail counters (capped at maxfail); writes `failcounter_exceeded` when reached. */
export async function increaseFailcount(
  deps: Deps,
  tokens: Token[],
  pending?: PendingCommits,
): Promise<void> {
  const maxed = await store.incrementFailcount(deps.db, tokens.map((t) => t.id), pending);
  if (maxed.length === 0) return;
  const stamp = validityStamp(deps.clock.now());
  for (const t of tokens) {
    // only the request whose increment reached the limit writes the time stamp
    if (maxed.includes(t.id)) {
      await store.setInfo(deps.db, t.id, { failcounter_exceeded: { value: stamp, type: "" } });
    }
  }
}

/** Resets the fail counters of tokens that authenticated. */
export async function clearFailcount(deps: Deps, tokens: Token[]): Promise<void> {
  await store.resetFailcount(deps.db, tokens.filter((t) => t.failcount !== 0).map((t) => t.id));
}

/** Counts an authentication attempt (`count_auth`, `count_auth_success`, `last_auth`). */
export async function recordAuthentication(
  deps: Deps,
  tokens: Token[],
  options: { isSuccess: boolean; countAuth: boolean; lastAuth?: string },
  pending?: PendingCommits,
): Promise<void> {
  await store.recordAuth(deps.db, tokens.map((t) => t.id), options, pending);
}

/** Deletes a token by id (registration tokens after their one use). */
export async function deleteTokenById(deps: Deps, tokenId: number): Promise<void> {
  await store.deleteTokens(deps.db, [tokenId]);
}
