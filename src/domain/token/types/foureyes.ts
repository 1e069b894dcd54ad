/**
 * `4eyes` (spec 14 §4): a virtual token that authenticates when tokens of other
 * users in the required realms do (`realm1:2,realm2:1`: two tokens of realm1,
 * one of realm2). `pass` is their `PIN+OTP` values joined by the token's
 * separator; each part is checked by the engine as a check of those tokens
 * (counters, fail counters), through {@link TypeCheckContext.checkRealmPass}.
 * Or collected one per request: the token's own PIN makes a challenge naming the
 * realms that still need tokens, each answer (one PIN+OTP) is recorded in the
 * next challenge's data `{realm: [serials]}` until every count is met.
 *
 * @module
 */
import { missingParameter, ParameterError } from "../../../errors.ts";
import { param } from "./_oath.ts";
import {
  infoValue,
  type TokenType,
  type TypeCheckContext,
  type TypeInitContext,
} from "./token_type.ts";

const REQUIREMENT = "4eyes";
const SEPARATOR = "separator";

/** The required realms and counts of `realm1:2,realm2:1`; entries without one `:` are ignored. */
export function parseRequirement(text: string): [string, number][] {
  const out: [string, number][] = [];
  for (const entry of text.split(",")) {
    const pieces = entry.split(":");
    if (pieces.length !== 2) continue;
    const realm = pieces[0].trim().toLowerCase();
    const count = pieces[1].trim();
    if (realm === "" || !/^\d+$/.test(count)) {
      throw new ParameterError(
        `Cannot parse parameter "4eyes": expected realm:count entries, got "${entry}"`,
      );
    }
    out.push([realm, Number(count)]);
  }
  return out;
}

/** The `4eyes` parameter as text: the string form, or the WebUI's `{realm: {selected, count}}`. */
function requirementText(ctx: TypeInitContext): string {
  const raw = ctx.params[REQUIREMENT];
  if (raw !== null && typeof raw === "object" && !Array.isArray(raw)) {
    return Object.entries(raw as Record<string, unknown>).flatMap(([realm, v]) => {
      const sel = v as { selected?: unknown; count?: unknown } | null;
      return sel && sel.selected === true ? [`${realm}:${String(sel.count)}`] : [];
    }).join(",");
  }
  const text = param(ctx, REQUIREMENT);
  if (text === undefined || text.trim() === "") throw missingParameter(REQUIREMENT);
  return text;
}

function initFourEyes(ctx: TypeInitContext) {
  const text = requirementText(ctx);
  const required = parseRequirement(text);
  if (required.length === 0) throw missingParameter(REQUIREMENT);
  const separator = param(ctx, SEPARATOR) ?? " ";
  if (separator.length !== 1) {
    throw new ParameterError("The separator must only be one single character");
  }
  return {
    info: {
      tokenkind: "virtual",
      [REQUIREMENT]: required.map(([r, n]) => `${r}:${n}`).join(","),
      [SEPARATOR]: separator,
    },
  };
}

/**
 * Every required realm must have as many distinct tokens that one of the parts
 * authenticates as it requires. Empty parts are skipped (an empty pass would
 * otherwise count for a token with an empty PIN and no OTP).
 */
async function checkParts(ctx: TypeCheckContext, pass: string) {
  const check = ctx.checkRealmPass;
  const required = parseRequirement(infoValue(ctx.token.info, REQUIREMENT));
  if (!check || required.length === 0) return { isValid: false };
  const parts = pass.split(infoValue(ctx.token.info, SEPARATOR, " ") || " ").filter((p) =>
    p !== ""
  );
  for (const [realm, count] of required) {
    const found = new Set<string>();
    for (const part of parts) {
      const serial = await check(realm, part);
      if (serial !== undefined) found.add(serial);
    }
    if (found.size < count) return { isValid: false };
  }
  return { isValid: true };
}

type Used = Record<string, string[]>;

function usedOf(data: Record<string, unknown> | undefined): Used {
  const out: Used = {};
  for (const [realm, v] of Object.entries(data ?? {})) {
    if (Array.isArray(v)) out[realm] = v.filter((x): x is string => typeof x === "string");
  }
  return out;
}

/** The required realms that still need tokens, in tokeninfo order. */
function remainingRealms(ctx: TypeCheckContext, used: Used): string[] {
  return parseRequirement(infoValue(ctx.token.info, REQUIREMENT))
    .filter(([realm, count]) => (used[realm]?.length ?? 0) < count)
    .map(([realm]) => realm);
}

/**
 * One answer of the collection: a token of a remaining realm not used before in
 * this transaction; the next round follows while realms remain.
 */
async function checkCollected(
  ctx: TypeCheckContext,
  answer: string,
  data: Record<string, unknown>,
) {
  const check = ctx.checkRealmPass;
  const used = usedOf(data);
  if (!check || answer === "") return { isValid: false };
  for (const realm of remainingRealms(ctx, used)) {
    const serial = await check(realm, answer);
    if (serial === undefined || used[realm]?.includes(serial)) continue;
    used[realm] = [...(used[realm] ?? []), serial];
    const done = remainingRealms(ctx, used).length === 0;
    return done ? { isValid: true } : { isValid: true, nextRound: used };
  }
  return { isValid: false };
}

/** The `4eyes` type. */
export const FOUREYES: TokenType = {
  type: "4eyes",
  prefix: "PI4E",
  authenticates: true,
  challenge: true,
  // the token's PIN alone starts the collection without a challenge_response policy
  challengeOnly: true,
  checksOtherTokens: true,
  init: initFourEyes,
  checkOtp: checkParts,
  createChallenge(ctx) {
    const used = usedOf(ctx.round);
    const realms = remainingRealms(ctx, used);
    return Promise.resolve({
      message: `Please authenticate with another token from either realm: ${realms.join(", ")}.`,
      data: used,
    });
  },
  checkAnswer: checkCollected,
};
