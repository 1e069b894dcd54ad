/**
 * The life cycle the `email` and `sms` types share (spec 11 §1–§2): an HOTP
 * token whose code is sent when a challenge is made. Each challenge moves the
 * counter one up (one statement, so parallel challenges get distinct codes),
 * sends HOTP(key, counter) and keeps that counter in the challenge: an answer
 * is the code of its own challenge, and it moves the counter past it with a
 * compare-and-set, so each code is accepted once.
 *
 * @module
 */
import { hotpAt, otpEqual } from "../../../lib/otp.ts";
import { incrementCounter } from "../token_store.ts";
import { checkHotp, tokenHash } from "./hotp.ts";
import type { OtpCheck, TypeChallengeContext, TypeCheckContext } from "./token_type.ts";

/** Moves the counter one up and returns it with its code (the code to send). */
export async function nextCode(
  ctx: TypeChallengeContext,
): Promise<{ counter: number; otp: string }> {
  const counter = await incrementCounter(ctx.deps.db, ctx.token.id);
  if (counter === undefined) throw new Error("token vanished while its challenge was made");
  return { counter, otp: hotpAt(ctx.secret, counter, ctx.token.otplen, tokenHash(ctx)) };
}

/**
 * Checks the answer to a sent code: the code of the challenge's counter,
 * not yet passed by the token's counter. With `concurrentKey` set in the
 * system config (`email.concurrent_challenges`), the code of an older open
 * challenge stays valid; the transaction it answers is used up then.
 */
export function checkSentCode(
  ctx: TypeCheckContext,
  answer: string,
  data: Record<string, unknown>,
  concurrentKey: string,
): OtpCheck | Promise<OtpCheck> {
  const counter = data.counter;
  // a challenge without its counter (made elsewhere): the HOTP window decides
  if (typeof counter !== "number" || !Number.isSafeInteger(counter) || counter < 0) {
    return checkHotp(ctx, answer);
  }
  const t = ctx.token;
  if (answer.length !== t.otplen) return { isValid: false };
  if (!otpEqual(hotpAt(ctx.secret, counter, t.otplen, tokenHash(ctx)), answer)) {
    return { isValid: false };
  }
  if (counter >= t.count) return { isValid: true, counter: counter + 1 };
  // a newer code was sent (or used) since: only valid with concurrent challenges
  return { isValid: ctx.system.bool(concurrentKey) };
}

/** Seconds from a system config value, or `fallback`. */
export function validitySeconds(ctx: TypeCheckContext, key: string, fallback: number): number {
  const n = Number.parseInt(ctx.system.get(key, String(fallback)), 10);
  return Number.isInteger(n) && n > 0 ? n : fallback;
}

/** True for privacyIDEA's truthy parameter values. */
export function isTrueValue(value: string | undefined): boolean {
  return value !== undefined && ["1", "true", "yes", "on"].includes(value.trim().toLowerCase());
}
