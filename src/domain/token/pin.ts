/**
 * Token PINs: keyed hashes (DESIGN.md); an empty stored PIN matches only an
 * empty PIN.
 *
 * @module
 */
import type { Deps } from "../../deps.ts";
import { hashPin, verifyPin } from "../../lib/crypto.ts";

/** The stored form of `pin` ("" for an empty PIN). */
export function pinHashOf(deps: Deps, pin: string): string {
  return pin === "" ? "" : hashPin(deps.keys.pinPepper, pin, deps.random);
}

/** True if `pin` matches the stored hash. */
export function checkPin(deps: Deps, stored: string, pin: string): boolean {
  if (stored === "") return pin === "";
  return verifyPin(deps.keys.pinPepper, stored, pin);
}

/**
 * Splits `pass` into PIN and OTP (spec 02 §3): with PrependPin the OTP is the
 * last `otplen` characters, else the first. Undefined when `pass` is too short.
 */
export function splitPinPass(
  pass: string,
  otplen: number,
  prependPin: boolean,
): { pin: string; otp: string } | undefined {
  if (pass.length < otplen) return undefined;
  return prependPin
    ? { pin: pass.slice(0, pass.length - otplen), otp: pass.slice(pass.length - otplen) }
    : { pin: pass.slice(otplen), otp: pass.slice(0, otplen) };
}
