/**
 * Triggered challenges (spec 02 §7): each token's challenge (the type's own,
 * or the challenge text with its tags), stored under one transaction.
 *
 * @module
 */
import { checkContext, tokenTypeOf, type TokenWithInfo } from "../token/mod.ts";
import { createChallenges, DEFAULT_CHALLENGE_TEXT, newTransactionId } from "../challenge/mod.ts";
import type { TypeChallenge, TypeChallengeContext } from "../token/types/mod.ts";
import { type CheckContext, type CheckResult, typePolicy } from "./_context.ts";
import { raiseFailcounters } from "./_check_writes.ts";
import { pinChangeInfo } from "./_token_state.ts";

/** Creates challenges for `tokens` and returns the §7 result. */
export async function triggerChallenges(
  ctx: CheckContext,
  tokens: TokenWithInfo[],
  options: {
    increaseFailcount?: boolean;
    /** Per-serial message and challenge data (e.g. an upstream RADIUS State). */
    overrides?: Record<string, { message: string; data: string }>;
    /** Per-serial data of the previous round of a multi-round type. */
    rounds?: Record<string, Record<string, unknown>>;
    /** The request waits for the answer (`push_wait`), see {@link TypeChallengeContext.isWaiting}. */
    isWaiting?: boolean;
  } = {},
): Promise<CheckResult & { count: number }> {
  const { deps, system, policies } = ctx;
  const message = policies.challengeText ?? DEFAULT_CHALLENGE_TEXT;
  const extras: Record<string, Record<string, unknown>> = {};
  const typed: Record<string, TypeChallenge> = {};
  const failures: string[] = [];
  const challenged: TokenWithInfo[] = [];
  // values the challenges of this request share (one WebAuthn nonce)
  const shared = new Map<string, unknown>();
  // drawn before the types' challenges, which may name it (the tiqr app's URL)
  const transactionId = newTransactionId(deps);
  for (const t of tokens) {
    const module = tokenTypeOf(t.type);
    if (module?.createChallenge && !options.overrides?.[t.serial]) {
      // the type makes its own challenge (sends the code, draws positions, picks a question)
      const made = await module.createChallenge({
        ...challengeContext(ctx, t, options.rounds?.[t.serial]),
        shared,
        transactionId,
        isWaiting: options.isWaiting,
      });
      if ("failed" in made) {
        failures.push(made.failed);
        continue;
      }
      typed[t.serial] = made;
      if (made.extras) extras[t.serial] = made.extras;
    } else {
      const more = module?.challengeExtras?.(checkContext(deps, system, t));
      if (more && !options.overrides?.[t.serial]) extras[t.serial] = more;
    }
    const pinChange = pinChangeInfo(t, ctx.now);
    if ("pin_change" in pinChange) extras[t.serial] = { ...extras[t.serial], ...pinChange };
    challenged.push(t);
  }
  const one = (list: TokenWithInfo[]) => ({
    serial: list.length === 1 ? list[0].serial : undefined,
    tokenType: list.length === 1 ? list[0].type : undefined,
  });
  if (challenged.length === 0) {
    // e.g. "The PIN was correct, but the EMail could not be sent!": no challenge stored
    return { value: false, detail: { message: failures.join(", ") }, count: 0, ...one(tokens) };
  }
  const preferred = policies.preferredClientMode[0] ?? "interactive";
  const { detail } = await createChallenges(
    deps,
    system,
    challenged.map((t) => ({
      serial: t.serial,
      type: t.type,
      message: options.overrides?.[t.serial]?.message ?? typed[t.serial]?.message ??
        fillTags(message, ctx, t),
      data: options.overrides?.[t.serial]?.data ??
        (typed[t.serial]?.data ? JSON.stringify(typed[t.serial].data) : undefined),
      challenge: typed[t.serial]?.challenge,
      validity: typed[t.serial]?.validity,
    })),
    { extras, preferredClientMode: preferred, transactionId },
  );
  if (options.increaseFailcount) await raiseFailcounters(ctx, challenged);
  return { value: false, detail, count: challenged.length, ...one(challenged) };
}

/** The context a type module gets to create its own challenge. */
function challengeContext(
  ctx: CheckContext,
  t: TokenWithInfo,
  round: Record<string, unknown> | undefined,
): TypeChallengeContext {
  return {
    ...checkContext(ctx.deps, ctx.system, t),
    user: ctx.user ?? t.owner,
    round,
    policy: typePolicy(ctx.policies),
    clientQuestion: ctx.request.clientQuestion,
  };
}

/** A challenge's stored data as an object; undefined when empty or no JSON object. */
export function parseData(data: string | undefined): Record<string, unknown> | undefined {
  if (!data) return undefined;
  try {
    const v = JSON.parse(data);
    return v && typeof v === "object" ? v as Record<string, unknown> : undefined;
  } catch {
    return undefined;
  }
}

function fillTags(text: string, ctx: CheckContext, t: TokenWithInfo): string {
  return text.replaceAll("\\,", ",")
    .replaceAll("{user}", ctx.user?.login ?? t.owner?.login ?? "")
    .replaceAll("{realm}", ctx.user?.realm ?? t.owner?.realm ?? "")
    .replaceAll("{serial}", t.serial)
    .replaceAll("{tokentype}", t.type);
}
