/**
 * The writes a check decides (spec 02 §6.2): the OTP counter and the info a
 * right OTP moves (compare-and-set, so an OTP is accepted once), the fail
 * counters, the bookkeeping of a success and `reset_all_user_tokens`. Each
 * is one token_store statement; with the check's pending commits they share
 * one commit on SQLite.
 *
 * @module
 */
import { hasDirectAccess } from "../../db/direct.ts";
import { isTransientDbError } from "../../db/transient_error.ts";
import {
  lastAuthStamp,
  parseValidityDate,
  plainInfo,
  tokenTypeOf,
  type TokenWithInfo,
  validityStamp,
} from "../token/mod.ts";
import {
  advanceCounter,
  consumeInfo,
  deleteUsedToken,
  incrementFailcount,
  recordAuth,
  resetFailcount,
  setInfo,
  setInfoOnCheck,
} from "../token/token_store.ts";
import type { OtpCheck } from "../token/types/mod.ts";
import { markContainerAuthenticated } from "../container/mod.ts";
import type { CheckContext } from "./_context.ts";

/** Clears a maxed fail counter after `failcounter_clear_timeout` minutes. */
export async function maybeClearFailcounter(ctx: CheckContext, t: TokenWithInfo): Promise<void> {
  const minutes = ctx.system.int("failcounter_clear_timeout");
  if (minutes <= 0 || t.failcount < t.maxfail) return;
  const since = parseValidityDate(t.info.failcounter_exceeded?.value ?? "");
  if (since === undefined || ctx.now - since < minutes * 60_000) return;
  await clearFailcounters(ctx, [t]);
  t.failcount = 0;
}

/**
 * `reset_all_user_tokens`: after a success every token that was checked
 * (for a user, all of them) gets its fail counter reset; revoked (locked)
 * tokens and one-time registration codes stay as they are.
 */
export async function resetAllTokens(ctx: CheckContext, tokens: TokenWithInfo[]): Promise<void> {
  await clearFailcounters(ctx, tokens.filter((t) => !t.revoked && t.type !== "registration"));
}

/**
 * Stores what a right OTP moves: the counter (compare-and-set) and then the
 * info it carries. False when a parallel request used this or a later OTP first.
 */
export async function applyOtpCheck(
  ctx: CheckContext,
  t: TokenWithInfo,
  check: OtpCheck,
): Promise<boolean> {
  const db = ctx.deps.db;
  if (
    check.counter !== undefined && !(await advanceCounter(db, t.id, check.counter, ctx.pending))
  ) return false;
  if (
    check.consumeInfo !== undefined &&
    !(await consumeInfo(db, t.id, check.consumeInfo, ctx.pending))
  ) return false;
  if (check.info) await setInfoOnCheck(db, t.id, plainInfo(check.info), ctx.pending);
  return true;
}

/**
 * Raises the fail counters of tokens that failed (one statement, never beyond
 * maxfail); the request whose increment reached maxfail writes the time
 * `failcounter_clear_timeout` counts from (`failcounter_exceeded`).
 */
export async function raiseFailcounters(ctx: CheckContext, tokens: TokenWithInfo[]): Promise<void> {
  const { db } = ctx.deps;
  const maxed = await incrementFailcount(db, tokens.map((t) => t.id), ctx.pending);
  if (maxed.length === 0) return;
  const stamp = validityStamp(ctx.deps.clock.now());
  for (const t of tokens) {
    if (maxed.includes(t.id)) {
      await setInfo(db, t.id, { failcounter_exceeded: { value: stamp, type: "" } });
    }
  }
}

/** Resets the fail counters of the tokens that have one (a success, or its timeout passed). */
async function clearFailcounters(ctx: CheckContext, tokens: TokenWithInfo[]): Promise<void> {
  await resetFailcount(
    ctx.deps.db,
    tokens.filter((t) => t.failcount !== 0).map((t) => t.id),
    ctx.pending,
  );
}

/**
 * The bookkeeping of a success. A one-time token (registration) is deleted,
 * and only the request whose delete removed it keeps it: of parallel uses of
 * one code exactly one authenticates. The others get their fail counter
 * reset and the authentication counted. Returns the tokens that authenticated.
 */
export async function settleSuccess(
  ctx: CheckContext,
  tokens: TokenWithInfo[],
  options: { countAuth: boolean },
): Promise<TokenWithInfo[]> {
  const used: TokenWithInfo[] = [];
  const lasting: TokenWithInfo[] = [];
  for (const t of tokens) {
    if (!tokenTypeOf(t.type)?.deleteAfterSuccess) lasting.push(t);
    else if (!(await deleteUsedToken(ctx.deps.db, t.id))) continue;
    used.push(t);
  }
  if (lasting.length > 0) {
    try {
      await clearFailcounters(ctx, lasting);
      await recordAuth(ctx.deps.db, lasting.map((t) => t.id), {
        isSuccess: true,
        countAuth: options.countAuth,
        lastAuth: lastAuthStamp(ctx.now),
      }, ctx.pending);
      // spec 13 §2.12: the containers of the tokens record the authentication
      await markContainerAuthenticated(ctx.deps, lasting.map((t) => t.id), ctx.pending);
    } catch (err) {
      // Without a write group (PostgreSQL) the OTP counter or the consumed challenge is
      // committed by now: the success stands, and a failure of this bookkeeping is logged, not
      // answered (a 503 would make the client retry an OTP that is used up). On SQLite these
      // writes share the counter's commit, which fails as a whole (pending.settle).
      if (hasDirectAccess(ctx.deps.db) || !isTransientDbError(err)) throw err;
      ctx.deps.log.warn("Cannot record a successful authentication; answering it", {
        serials: lasting.map((t) => t.serial).join(","),
        error: err as Error,
      });
    }
  }
  return used;
}
