/**
 * `auth_max_fail` and `auth_max_success` (spec 15 §4.2): a user who reached
 * a limit is refused, counted from the audit log so the limit holds across
 * nodes sharing one database.
 *
 * @module
 */
import type { Deps } from "../../deps.ts";
import { PolicyError } from "../../errors.ts";
import type { UserRef } from "../token/mod.ts";
import { countAuthAttempts } from "../audit/audit_store.ts";
import type { CheckContext, CheckResult } from "./_context.ts";
import type { ValidatePolicies } from "./policy.ts";

const AUTH_MAX_REGEXP = /^(\d{1,9})\/(\d{1,9})([smh])$/;
const AUTH_MAX_UNIT_S: Record<string, number> = { s: 1, m: 60, h: 3600 };

/** A period as Python prints a `timedelta`: `0:00:20`, `1:00:00`, `1 day, 0:00:00`. */
function pythonTimedelta(seconds: number): string {
  const days = Math.floor(seconds / 86_400);
  const rest = seconds % 86_400;
  const hms = `${Math.floor(rest / 3600)}:${String(Math.floor(rest / 60) % 60).padStart(2, "0")}:${
    String(rest % 60).padStart(2, "0")
  }`;
  return days === 0 ? hms : `${days} ${days === 1 ? "day" : "days"}, ${hms}`;
}

/** Parses `<N>/<n><s|m|h>` (spaces ignored); PolicyError (403) naming the action otherwise. */
function authMaxValue(action: string, text: string): { max: number; seconds: number } {
  const m = text.replace(/\s+/g, "").match(AUTH_MAX_REGEXP);
  if (!m) {
    // privacyIDEA fails with an unexpected error here; a limit that cannot be read is no limit
    throw new PolicyError(
      `Cannot parse the ${action} value "${text}": expected <count>/<period>, e.g. 3/5m (s, m, h)`,
    );
  }
  return { max: Number(m[1]), seconds: Number(m[2]) * AUTH_MAX_UNIT_S[m[3]] };
}

/**
 * `auth_max_fail`, then `auth_max_success` (`<N>/<n><s|m|h>`): the message
 * when `user` reached a limit, counted from the audit log (failed or
 * successful `/validate/check` and `/auth` requests of that user and realm
 * in the period), so the limit holds across nodes sharing one database.
 */
export async function authLimitReached(
  deps: Deps,
  user: { login: string; realm: string },
  policies: Pick<ValidatePolicies, "authMaxFail" | "authMaxSuccess">,
): Promise<string | undefined> {
  const limits: [string, string | undefined, boolean, string][] = [
    ["auth_max_fail", policies.authMaxFail, false, "failed"],
    ["auth_max_success", policies.authMaxSuccess, true, "successful"],
  ];
  for (const [action, text, isSuccess, word] of limits) {
    if (text === undefined) continue;
    const { max, seconds } = authMaxValue(action, text);
    const n = await countAuthAttempts(deps.db, {
      user: user.login,
      realm: user.realm,
      since: deps.clock.now() - seconds * 1000,
      isSuccess,
    });
    if (n >= max) {
      return `Only ${max} ${word} authentications per ${pythonTimedelta(seconds)} allowed.`;
    }
  }
  return undefined;
}

/** {@link authLimitReached} as the failed result of a check. */
export async function authLimitProblem(
  ctx: CheckContext,
  user: UserRef,
): Promise<CheckResult | undefined> {
  const message = await authLimitReached(ctx.deps, user, ctx.policies);
  return message === undefined ? undefined : { value: false, detail: { message } };
}
