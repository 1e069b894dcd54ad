/**
 * The policies applied to a check's outcome (spec 02 §6.1 step 5): the
 * authorization rules on the tokens that authenticated (`serial`,
 * `tokentype`, `tokeninfo`, `authorized`), the user and resolver in the
 * answer, the detail hidden on success or failure, and the header of a
 * reply with challenges.
 *
 * @module
 */
import { PolicyError, ValidateError } from "../../errors.ts";
import type { TokenWithInfo } from "../token/mod.ts";
import { infoValue } from "../token/types/mod.ts";
import { getUserAttributes } from "../user/mod.ts";
import type { CheckContext, CheckResult } from "./_context.ts";
import type { ValidatePolicies } from "./policy.ts";

/** Authorization-scope policies applied to the outcome (spec 02 §6.1 step 5). */
export async function postPolicies(ctx: CheckContext, result: CheckResult): Promise<CheckResult> {
  const p = ctx.policies;
  if (p.matched.length > 0) {
    result.policies = [...new Set([...(result.policies ?? []), ...p.matched])];
  }
  if (result.value) {
    // privacyIDEA's order: serial, tokentype, tokeninfo, and `authorized` last
    authorizeTokens(ctx, result.tokens ?? []);
    if (p.isAccessDenied) {
      throw new ValidateError("User is not authorized to authenticate under these conditions.");
    }
    if (p.addUserInResponse && result.user) {
      const info = await getUserAttributes(ctx.deps, result.user);
      result.detail.user = { ...info, password: "" };
    }
    if (p.addResolverInResponse && result.user) {
      result.detail["user-resolver"] = result.user.resolver;
      result.detail["user-realm"] = result.user.realm;
    }
    if (p.noDetailOnSuccess) result.detail = {};
  } else if (p.noDetailOnFail && !result.detail.multi_challenge) {
    result.detail = {};
  }
  withChallengeTextHeader(p, result.detail);
  const challenges = result.detail.multi_challenge;
  const isChallenge = Array.isArray(challenges) && challenges.length > 0;
  if (!result.value && !isChallenge && p.hideSpecificErrorMessage) {
    // privacyIDEA 3.13: a rejection says nothing about why (the audit still does)
    result.auditInfo ??= String(result.detail.message ?? "");
    result.detail = { message: AUTHENTICATION_FAILED };
  }
  return result;
}

/** The one message of a rejection under `hide_specific_error_message`. */
export const AUTHENTICATION_FAILED = "Authentication failed.";

/**
 * `challenge_text_header` (and `_footer`, only with a header): a reply with
 * challenges gets `detail.message` = header, the distinct messages sorted,
 * footer; as `<li>` items when the header ends in `<ol>` or `<ul>`.
 */
export function withChallengeTextHeader(
  p: ValidatePolicies,
  detail: Record<string, unknown>,
): void {
  const header = p.challengeTextHeader;
  const challenges = detail.multi_challenge;
  if (header === undefined || !Array.isArray(challenges) || challenges.length === 0) return;
  const all = Array.isArray(detail.messages) ? detail.messages.map(String) : [];
  const messages = [...new Set(all)].sort();
  const isList = ["<ol>", "<ul>"].includes(header.slice(-4).toLowerCase());
  const body = isList
    ? messages.map((m) => `<li>${m}</li>\n`).join("")
    : `\n${messages.join(", ")}\n`;
  detail.message = header + body + (p.challengeTextFooter ?? "");
}

/**
 * The authorization rules on the tokens that authenticated (`serial`,
 * `tokentype`, `tokeninfo`): each token must pass them, also when several
 * matched. Like privacyIDEA, several tokens of different types have the type
 * "undetermined", which a list of token types does not allow. privacyIDEA
 * skips the serial and tokeninfo rules when several tokens matched; Tessera
 * does not, or a second token with the same PIN would get past them.
 */
function authorizeTokens(ctx: CheckContext, tokens: TokenWithInfo[]): void {
  const p = ctx.policies;
  if (tokens.length === 0) return;
  const serials = p.serials;
  if (serials && !tokens.every((t) => serials.some((re) => searches(ctx, re, t.serial)))) {
    throw new PolicyError("Serial is not allowed for authentication!");
  }
  if (p.tokentype) {
    const type = tokens.every((t) => t.type === tokens[0].type) ? tokens[0].type : "undetermined";
    if (!p.tokentype.includes(type)) {
      throw new PolicyError("Tokentype not allowed for authentication!");
    }
  }
  for (const rule of p.tokeninfo ?? []) {
    const parts = rule.split("/");
    if (parts.length !== 3) {
      // privacyIDEA ignores a value that is not key/regexp/ (and logs it)
      ctx.deps.log.warn("Invalid tokeninfo policy", { value: rule.slice(0, 200) });
      continue;
    }
    const [key, re] = parts;
    if (!tokens.every((t) => searches(ctx, re, infoValue(t.info, key)))) {
      throw new PolicyError(
        `Tokeninfo field ${key} with contents does not match regular expression.`,
      );
    }
  }
}

/** Whether regexp `re` (a policy value) matches anywhere in `text`; a broken one never does. */
function searches(ctx: CheckContext, re: string, text: string): boolean {
  try {
    return new RegExp(re).test(text);
  } catch {
    // an authorization rule that cannot be read admits nothing (and is not a 500)
    ctx.deps.log.warn("Invalid regular expression in an authorization policy", {
      value: re.slice(0, 200),
    });
    return false;
  }
}

// ---------------------------------------------------------------------------
// FIDO branch (spec 11 §4.4, §5.3): WebAuthn and passkey assertions
