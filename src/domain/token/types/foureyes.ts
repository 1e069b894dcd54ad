/**
 * `4eyes` (spec 14 §4): a virtual token that authenticates when tokens of other
 * users in the required realms do (`realm1:2,realm2:1`: two tokens of realm1,
 * one of realm2). `pass` is their `PIN+OTP` values joined by the token's
 * separator; each part is checked by the engine as a check of those tokens
 * (counters, fail counters), through {@link TypeCheckContext.checkRealmPass}.
 * Only the one-request form: the challenge-response collection of privacyIDEA
 * is not built (the type offers no challenge).
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

/** The `4eyes` type. */
export const FOUREYES: TokenType = {
  type: "4eyes",
  prefix: "PI4E",
  authenticates: true,
  challenge: false,
  checksOtherTokens: true,
  init: initFourEyes,
  checkOtp: checkParts,
};
