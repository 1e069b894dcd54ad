/**
 * `totp`: time-based OTP (RFC 6238).
 *
 * @module
 */
import { hotpAt, otpEqual, searchHotp } from "../../../lib/otp.ts";
import { ParameterError } from "../../../errors.ts";
import { hashOf, oathDetail, otpKeyOf, otplenOf, param } from "./_oath.ts";
import { tokenHash, withCallerDefaults } from "./hotp.ts";
import { infoValue, type OtpCheck, type TokenType, type TypeCheckContext } from "./token_type.ts";

function settings(ctx: TypeCheckContext): { step: number; window: number; shift: number } {
  const info = ctx.token.info;
  const step = Number(infoValue(info, "timeStep", "30")) || 30;
  const window = Number(infoValue(info, "timeWindow", "180"));
  const shift = Number(infoValue(info, "timeShift", "0")) || 0;
  return { step, window: Number.isFinite(window) ? window : 180, shift };
}

/** Finds the step in `from … to−1` whose OTP equals `otp`, or −1 (all candidates compared). */
async function findStep(ctx: TypeCheckContext, otp: string, from: number, to: number) {
  const t = ctx.token;
  return await searchHotp(ctx.secret, otp, from, to - from, t.otplen, tokenHash(ctx));
}

/** The `totp` type. */
export const TOTP: TokenType = {
  type: "totp",
  prefix: "TOTP",
  authenticates: true,
  challenge: true,
  init(given) {
    const ctx = withCallerDefaults(given, "totp");
    const hash = hashOf(ctx, "totp.hashlib");
    const otplen = otplenOf(ctx);
    const stepParam = param(ctx, "timeStep") ?? ctx.existing?.info.timeStep?.value ??
      ctx.system.get("totp.timeStep", "30");
    if (stepParam !== "30" && stepParam !== "60") {
      throw new ParameterError(
        `Cannot parse parameter "timeStep": expected 30 or 60, got "${stepParam}"`,
      );
    }
    const windowParam = param(ctx, "timeWindow") ?? ctx.system.get("totp.timeWindow", "180");
    if (!/^\d+$/.test(windowParam)) {
      throw new ParameterError(
        `Cannot parse parameter "timeWindow": expected seconds, got "${windowParam}"`,
      );
    }
    const { key } = otpKeyOf(ctx, hash);
    return {
      secret: key,
      otplen,
      info: {
        hashlib: hash,
        tokenkind: "software",
        timeStep: stepParam,
        timeWindow: windowParam,
        timeShift: "0",
      },
      detail: oathDetail(ctx, { type: "totp", key, hash, otplen, period: Number(stepParam) }),
    };
  },
  async checkOtp(ctx, otp): Promise<OtpCheck> {
    const t = ctx.token;
    if (otp.length !== t.otplen || !/^\d+$/.test(otp)) return { isValid: false };
    const { step, window, shift } = settings(ctx);
    const now = ctx.nowMs / 1000;
    const current = Math.floor((now + shift) / step);
    const w = Math.floor(window / step);
    const matched = await findStep(ctx, otp, current - w, current + w);
    // a step at or before the last used one is a replay
    if (matched < 0 || (t.count !== 0 && matched <= t.count)) return { isValid: false };
    return {
      isValid: true,
      counter: matched,
      info: { timeShift: String(Math.trunc(matched * step - now)) },
    };
  },
  async resync(ctx, otp1, otp2): Promise<OtpCheck> {
    const t = ctx.token;
    if (otp1.length !== t.otplen || otp2.length !== t.otplen) return { isValid: false };
    const { step, shift } = settings(ctx);
    const now = ctx.nowMs / 1000;
    const current = Math.floor((now + shift) / step);
    const w = Math.max(1, Math.floor(t.syncWindow / 2));
    const s2 = await findStep(ctx, otp2, current - w, current + w);
    if (s2 < 1 || (t.count !== 0 && s2 - 1 <= t.count)) return { isValid: false };
    if (!otpEqual(hotpAt(ctx.secret, s2 - 1, t.otplen, tokenHash(ctx)), otp1)) {
      return { isValid: false };
    }
    return {
      isValid: true,
      counter: s2,
      info: { timeShift: String(Math.trunc(s2 * step - now)) },
    };
  },
};
