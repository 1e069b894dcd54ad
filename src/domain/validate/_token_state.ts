/**
 * What a token's stored state says about a check before anything is
 * written (spec 02 §6.2 step 3): whether it may authenticate now, whether
 * its previous success is too long ago (`last_auth`), and whether its PIN
 * change is due.
 *
 * @module
 */
import { parseValidityDate, type TokenWithInfo } from "../token/mod.ts";
import type { CheckContext, CheckResult } from "./_context.ts";

/** Reasons a token may not authenticate now (spec 02 §6.2 step 3). */
export function stateProblems(ctx: CheckContext, t: TokenWithInfo): string[] {
  const info = t.info;
  const num = (k: string) => Number(info[k]?.value ?? "0") || 0;
  const countAuthMax = num("count_auth_max");
  const successMax = num("count_auth_success_max");
  if (
    (countAuthMax > 0 && num("count_auth") >= countAuthMax) ||
    (successMax > 0 && num("count_auth_success") >= successMax)
  ) return ["Authentication counter exceeded"];
  if (!t.active) return ["Token is disabled"];
  if (t.failcount >= t.maxfail) return ["Failcounter exceeded"];
  const start = info.validity_period_start?.value;
  const end = info.validity_period_end?.value;
  if (start) {
    const ms = parseValidityDate(start);
    if (ms !== undefined && ctx.now < ms) return ["Outside validity period"];
  }
  if (end) {
    const ms = parseValidityDate(end);
    if (ms !== undefined && ctx.now > ms) return ["Outside validity period"];
  }
  if (t.rolloutState === "clientwait" || t.rolloutState === "verify") {
    return ["Token is not yet enrolled"];
  }
  return [];
}

/**
 * `next_pin_change` and `pin_change` of a token whose PIN has a due date
 * (`change_pin_on_first_use`, `change_pin_every`): the date as stored and
 * whether it has passed. Empty for other tokens.
 */
export function pinChangeInfo(t: TokenWithInfo, now: number): Record<string, unknown> {
  const due = t.info.next_pin_change?.value;
  if (!due) return {};
  const ms = parseValidityDate(due);
  return { next_pin_change: due, pin_change: ms !== undefined && now > ms };
}

const PERIOD_REGEXP = /^\s*(\d+)\s*([smhdy])\s*$/i;
const PERIOD_MS: Record<string, number> = {
  s: 1000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
  y: 365 * 86_400_000,
};

/**
 * `last_auth` policy: a failure result when the previous successful
 * authentication of an authenticating token is older than the policy allows.
 * Every token is checked: privacyIDEA skips the check when several tokens
 * matched, so a second token with the same PIN would get past it.
 */
export function lastAuthProblem(
  ctx: CheckContext,
  tokens: TokenWithInfo[],
): CheckResult | undefined {
  const limitText = ctx.policies.lastAuth;
  const m = limitText?.match(PERIOD_REGEXP);
  if (!m) return undefined;
  const limit = Number(m[1]) * PERIOD_MS[m[2].toLowerCase()];
  for (const t of tokens) {
    const previous = t.info.last_auth?.value;
    const prevMs = previous ? parseLastAuth(previous) : undefined;
    if (prevMs === undefined || ctx.now - prevMs <= limit) continue;
    return {
      value: false,
      detail: {
        message: `The last successful authentication was ${previous}. It is too long ago.`,
      },
      serial: t.serial,
      tokenType: t.type,
    };
  }
  return undefined;
}

/** Parses `YYYY-MM-DD hh:mm:ss.ffffff+zzzz` (also ISO-8601) to ms. */
function parseLastAuth(text: string): number | undefined {
  const m = text.trim().match(
    /^(\d{4}-\d{2}-\d{2})[T ](\d{2}:\d{2}(?::\d{2})?)(\.\d+)?\s*(Z|[+-]\d{2}:?\d{2})?$/,
  );
  if (!m) return undefined;
  const frac = m[3] ? m[3].slice(0, 4) : "";
  let zone = m[4] ?? "Z";
  if (zone !== "Z" && !zone.includes(":")) zone = `${zone.slice(0, 3)}:${zone.slice(3)}`;
  const ms = Date.parse(`${m[1]}T${m[2]}${frac}${zone}`);
  return Number.isFinite(ms) ? ms : undefined;
}
