/**
 * `daypassword`: a TOTP variant with a long time step whose code stays valid
 * for the whole step (spec 11 §11): HOTP(key, ⌊unix time / step⌋), no window,
 * no time shift. By design the code is reusable within its step (a "password
 * of the day"); in challenge-response (policy `challenge_response`) each
 * transaction is answered once.
 *
 * @module
 */
import { ParameterError } from "../../../errors.ts";
import { hotpAt, otpEqual } from "../../../lib/otp.ts";
import { hashOf, oathDetail, otpKeyOf, otplenOf, param } from "./_oath.ts";
import { tokenHash } from "./hotp.ts";
import { infoValue, type OtpCheck, type TokenType } from "./token_type.ts";

const UNIT_SECONDS: Record<string, number> = {
  s: 1,
  m: 60,
  h: 3600,
  d: 86400,
  y: 365 * 86400,
};
const DURATION_REGEXP = /^\s*(\d{1,10})\s*([smhdy]?)\s*$/i;
const MAX_STEP = 10 * 365 * 86400;

/** Seconds of a time step `<n>s|m|h|d|y` or plain seconds; undefined when invalid. */
export function parseTimeStep(text: string): number | undefined {
  const m = text.match(DURATION_REGEXP);
  if (!m) return undefined;
  const seconds = Number(m[1]) * UNIT_SECONDS[(m[2] || "s").toLowerCase()];
  return seconds > 0 && seconds <= MAX_STEP ? seconds : undefined;
}

/** The `daypassword` type. */
export const DAYPASSWORD: TokenType = {
  type: "daypassword",
  prefix: "DYPW",
  authenticates: true,
  challenge: true,
  init(ctx) {
    // admin/user policies set hash, length and step; they win over the parameters
    const pol = ctx.policies ?? {};
    const params = { ...ctx.params };
    if (pol.daypassword_hashlib) params.hashlib = pol.daypassword_hashlib;
    if (pol.daypassword_otplen) params.otplen = pol.daypassword_otplen;
    if (pol.daypassword_timestep) params.timeStep = pol.daypassword_timestep;
    if (pol.daypassword_force_server_generate) {
      params.otpkey = undefined;
      params.genkey = "1";
    }
    const c = { ...ctx, params };
    const hash = hashOf(c, "daypassword.hashlib");
    const otplen = otplenOf(c);
    const stepText = param(c, "timeStep") ?? ctx.existing?.info.timeStep?.value ??
      ctx.system.get("daypassword.timeStep", "1d");
    const period = parseTimeStep(stepText);
    if (period === undefined) {
      throw new ParameterError(
        `Cannot parse parameter "timeStep": expected a duration like 1d, 24h or 3600, got "${stepText}"`,
      );
    }
    const { key } = otpKeyOf(c, hash);
    return {
      secret: key,
      otplen,
      info: { hashlib: hash, tokenkind: "software", timeStep: stepText.trim() },
      detail: oathDetail(c, { type: "daypassword", key, hash, otplen, period }),
    };
  },
  checkOtp(ctx, otp): OtpCheck {
    const t = ctx.token;
    if (otp.length !== t.otplen || !/^\d+$/.test(otp)) return { isValid: false };
    const period = parseTimeStep(infoValue(t.info, "timeStep", "1d")) ?? 86400;
    const step = Math.floor(ctx.nowMs / 1000 / period);
    // no counter: the code is the password of its whole step, reusable by design
    return { isValid: otpEqual(hotpAt(ctx.secret, step, t.otplen, tokenHash(ctx)), otp) };
  },
};
