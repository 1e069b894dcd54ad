/**
 * Challenge answers: a transaction is answered once. The right answers
 * consume it with one conditional statement and only the winner's counter
 * moves, in the same commit.
 *
 * @module
 */
import type { TokenWithInfo } from "../token/mod.ts";
import { consumeTransaction, deleteChallengesOf } from "../challenge/mod.ts";
import { hasDirectAccess } from "../../db/direct.ts";
import type { CheckContext, CheckResult } from "./_context.ts";
import { applyOtpCheck, raiseFailcounters, settleSuccess } from "./_check_writes.ts";
import { lastAuthProblem, pinChangeInfo } from "./_token_state.ts";
import type { Groups, RightAnswer, Transaction } from "./_groups.ts";
import { triggerChallenges } from "./_challenges.ts";

/**
 * The `response` outcome. A transaction is answered once: the right answers
 * consume it with one conditional statement, and only a token whose open
 * challenge this request's statement removed has answered it (a parallel
 * answer that lost gets a failed authentication). Only the winner's OTP
 * counter moves, in the same commit as the consumption.
 */
export async function answerTransaction(ctx: CheckContext, groups: Groups): Promise<CheckResult> {
  const candidates = groups.rightAnswers.map((a) => a.token);
  // decided before anything is written: a refused answer leaves the transaction open
  const tooOld = lastAuthProblem(ctx, candidates);
  if (tooOld) return tooOld;
  const answered = await consumeAnswers(ctx, groups.tx!, groups.rightAnswers);
  const nextRound = (t: TokenWithInfo) =>
    groups.rightAnswers.find((a) => a.token === t)?.check.nextRound;
  const final = answered.filter((t) => nextRound(t) === undefined);
  if (final.length === 0 && answered.length > 0) {
    // a right answer of a multi-round type: the next round is a new challenge (new transaction)
    return await triggerChallenges(ctx, answered, {
      rounds: Object.fromEntries(answered.map((t) => [t.serial, nextRound(t)!])),
    });
  }
  const accepted = final.length > 0
    ? await settleSuccess(ctx, final, { countAuth: !ctx.system.bool("no_auth_counter") })
    : [];
  if (accepted.length > 0) {
    const t = accepted[0];
    return {
      value: true,
      // privacyIDEA answers a challenge with the message and the serial only (no type, no otplen)
      detail: {
        message: "Found matching challenge",
        serial: t.serial,
        ...pinChangeInfo(t, ctx.now),
      },
      serial: t.serial,
      tokenType: t.type,
      tokens: accepted,
    };
  }
  return await rejectAnswer(ctx, groups);
}

/** A `response` that did not answer the transaction (wrong, expired, or a parallel one won). */
async function rejectAnswer(ctx: CheckContext, groups: Groups): Promise<CheckResult> {
  await raiseFailcounters(ctx, groups.responded);
  if (groups.reChallenged.length > 0) {
    // this attempt failed; a new challenge (new transaction, State, message) replaces the old
    await deleteChallengesOf(ctx.deps, groups.reChallenged.map((t) => t.serial));
    return await triggerChallenges(ctx, groups.reChallenged, {
      overrides: groups.challengeOverrides,
    });
  }
  if (groups.responded.length === 1) {
    const t = groups.responded[0];
    return {
      value: false,
      detail: { message: "Response did not match the challenge.", serial: t.serial, type: t.type },
      serial: t.serial,
      tokenType: t.type,
    };
  }
  return {
    value: false,
    detail: { message: `Response did not match for ${groups.responded.length} tokens.` },
  };
}

/**
 * Consumes the transaction for the right answers and returns the tokens that
 * answered it: those whose open challenge this request removed, and whose
 * OTP counter then moved (it moves for no one else). None when a parallel
 * answer consumed the transaction first.
 */
async function consumeAnswers(
  ctx: CheckContext,
  tx: Transaction,
  answers: RightAnswer[],
): Promise<TokenWithInfo[]> {
  if (answers.length === 0) return [];
  if (!hasDirectAccess(ctx.deps.db)) {
    // no write group (PostgreSQL): the consumption and the counter writes share
    // one database transaction, so they land together or not at all
    return await ctx.deps.db.transaction().execute(async (trx) =>
      await consumeWith({ ...ctx, deps: { ...ctx.deps, db: trx } }, tx, answers)
    );
  }
  return await consumeWith(ctx, tx, answers);
}

async function consumeWith(
  ctx: CheckContext,
  tx: Transaction,
  answers: RightAnswer[],
): Promise<TokenWithInfo[]> {
  const consumed = await consumeTransaction(ctx.deps, tx.id, ctx.pending);
  const answered: TokenWithInfo[] = [];
  for (const { token, check } of answers) {
    if (consumed.includes(token.serial) && await applyOtpCheck(ctx, token, check)) {
      answered.push(token);
    }
  }
  return answered;
}
