/**
 * The enrollment policy `autoassignment` (spec 15 §5.1, privacyIDEA's post-policy
 * `autoassign`): when `/validate/check` fails for a user who has no token at all,
 * the first unassigned token of the user's realm whose OTP matches the OTP part of
 * `pass` becomes the user's, with the PIN part as its PIN. `any_pin` takes any PIN
 * part; `userstore` only the user's password. The token limits apply.
 *
 * @module
 */
import type { Deps } from "../../deps.ts";
import type { TokenWithInfo, UserRef } from "./model.ts";
import { enrollmentMatcher } from "./enroll_policy.ts";
import { splitPinPass } from "./pin.ts";
import * as store from "./token_store.ts";
import { tokenTypeOf } from "./types/mod.ts";
import { checkUserPassword } from "./_users.ts";
import { loadSystemConfig } from "../system_config/mod.ts";
import { assignToken } from "./admin.ts";
import { parseValidityDate } from "./dates.ts";
import { checkContext, tokenSecret } from "./secrets.ts";

/** Unassigned tokens of a realm tried per request (privacyIDEA tries all). */
const MAX_CANDIDATES = 1000;

/** The answer of a check that assigned a token (a successful `CheckResult`). */
export interface AutoAssigned {
  value: true;
  detail: { message: string; serial: string; otplen: number; type: string };
  serial: string;
  tokenType: string;
  auditInfo: string;
  policies: string[];
}

/** True when `t` may authenticate now (enabled, not locked, enrolled, inside its validity). */
function isUsable(t: TokenWithInfo, nowMs: number): boolean {
  if (!t.active || t.locked || t.failcount >= t.maxfail) return false;
  if (t.rolloutState === "clientwait" || t.rolloutState === "verify") return false;
  const start = t.info.validity_period_start?.value;
  const end = t.info.validity_period_end?.value;
  const startMs = start ? parseValidityDate(start) : undefined;
  const endMs = end ? parseValidityDate(end) : undefined;
  return !(startMs !== undefined && nowMs < startMs) && !(endMs !== undefined && nowMs > endMs);
}

/**
 * After a failed check of `user` with `pass`: assigns a matching unassigned token
 * of the user's realm under `autoassignment` and returns the successful answer;
 * undefined when the policy is off, the user has a token, or nothing matched.
 * A token limit that the assignment would break is refused (PolicyError 403).
 */
export async function autoAssignToken(
  deps: Deps,
  user: UserRef,
  pass: string,
  options: { client?: string } = {},
): Promise<AutoAssigned | undefined> {
  if (!user.login || !user.realm) return undefined;
  const m = await enrollmentMatcher(deps, { user, client: options.client });
  if (m === undefined) return undefined;
  const { values, policies } = await m.values("autoassignment", { unique: true });
  const mode = values[0];
  if (mode === undefined) return undefined;
  if ((await store.findByOwner(deps.db, user)).length > 0) return undefined;
  const system = await loadSystemConfig(deps);
  const prependPin = system.bool("PrependPin");
  const { tokens } = await store.listTokens(deps.db, { assigned: false, tokenrealm: user.realm }, {
    sortby: "id",
    desc: false,
    offset: 0,
    limit: MAX_CANDIDATES,
  });
  const now = deps.clock.now();
  // user-store answers per PIN part (tokens of one OTP length split alike)
  const passwordChecks = new Map<string, boolean>();
  for (const t of await store.withInfo(deps.db, tokens, false)) {
    const module = tokenTypeOf(t.type);
    if (!module || !module.authenticates || module.pinOnly || module.challengeOnly) continue;
    if (t.owner || !isUsable(t, now) || tokenSecret(deps, t).length === 0) continue;
    const split = splitPinPass(pass, t.otplen, prependPin);
    if (!split) continue;
    if (mode === "userstore") {
      // the PIN part must be the user's password
      let isRight = passwordChecks.get(split.pin);
      if (isRight === undefined) {
        isRight = await checkUserPassword(deps, user, split.pin);
        passwordChecks.set(split.pin, isRight);
      }
      if (!isRight) continue;
    } else if (mode !== "any_pin") {
      deps.log.warn("autoassignment needs any_pin or userstore", { value: mode.slice(0, 50) });
      return undefined;
    }
    const check = await module.checkOtp(checkContext(deps, system, t), split.otp);
    if (!check.isValid) continue;
    // the OTP is used up, as a successful authentication would use it
    if (
      check.counter !== undefined && !(await store.advanceCounter(deps.db, t.id, check.counter))
    ) {
      continue;
    }
    if (
      check.consumeInfo !== undefined &&
      !(await store.consumeInfo(deps.db, t.id, check.consumeInfo))
    ) {
      continue;
    }
    await assignToken(deps, t, user, { pin: split.pin, client: options.client });
    deps.log.info("Token assigned via auto assignment", {
      serial: t.serial,
      user: `${user.login}@${user.realm}`,
    });
    return {
      value: true,
      detail: {
        message: "Token assigned to user via Autoassignment",
        serial: t.serial,
        otplen: t.otplen,
        type: t.type,
      },
      serial: t.serial,
      tokenType: t.type,
      auditInfo: "Token assigned via auto assignment",
      policies: policies.slice(0, 1),
    };
  }
  return undefined;
}
