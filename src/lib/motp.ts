/**
 * mOTP (mobile OTP): `MD5(decimal(t) ‖ key ‖ pin)` in lower hex, cut to the
 * OTP length, where `t` is the Unix time in 10-second steps and `key` the
 * secret as its text (not decoded). Knows nothing of tokens or storage.
 *
 * @module
 */
import { createHash } from "node:crypto";
import { otpEqual } from "./otp.ts";

/** The mOTP value at time step `step` (Unix seconds / 10). */
export function motpAt(key: string, pin: string, step: number, digits = 6): string {
  return createHash("md5").update(`${step}${key}${pin}`, "utf8").digest("hex").slice(0, digits);
}

/**
 * The step in `center − window … center + window − 1` whose value equals `otp`
 * (the first one, as privacyIDEA searches), or −1. Every candidate is compared.
 */
export function findMotpStep(
  key: string,
  pin: string,
  otp: string,
  center: number,
  window: number,
  digits = 6,
): number {
  let found = -1;
  for (let step = center - window; step < center + window; step++) {
    if (otpEqual(motpAt(key, pin, step, digits), otp) && found === -1) found = step;
  }
  return found;
}
