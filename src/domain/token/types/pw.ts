/**
 * `pw` (static password as the OTP part) and `registration` (one-time code).
 *
 * @module
 */
import { otpEqual } from "../../../lib/otp.ts";
import { randomString } from "../../../lib/random.ts";
import { ParameterError, PolicyError } from "../../../errors.ts";
import { passwordFromContents } from "../../../lib/char_policy.ts";
import { param } from "./_oath.ts";
import type { TokenType, TypeCheckContext, TypeInitContext } from "./token_type.ts";

const LETTERS_DIGITS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
const MAX_PASSWORD = 200;

function checkStatic(ctx: TypeCheckContext, otp: string) {
  const stored = new TextDecoder().decode(ctx.secret);
  return { isValid: stored !== "" && otpEqual(stored, otp) };
}

/**
 * A generated password or registration code: length and contents from the
 * enrollment policies `<type>.length` and `<type>.contents` (privacyIDEA's
 * contents grammar), else `defaultLength` letters and digits. Client-sent
 * `<type>.length`/`<type>.contents` are ignored, as privacyIDEA overwrites them.
 */
function generated(ctx: TypeInitContext, type: string, defaultLength: number): string {
  const length = Number(ctx.policies?.[`${type}.length`] ?? defaultLength);
  const contents = ctx.policies?.[`${type}.contents`];
  if (contents === undefined) return randomString(ctx.deps.random, length, LETTERS_DIGITS);
  const out = passwordFromContents(ctx.deps.random, contents, length);
  if (out === undefined) {
    throw new PolicyError(
      `The policy action "${type}.contents" has an unknown character specifier: "${contents}"`,
    );
  }
  return out;
}

function initPw(ctx: TypeInitContext) {
  let password = param(ctx, "otpkey") ?? "";
  if (password === "") password = generated(ctx, "pw", 12);
  if (password.length > MAX_PASSWORD) {
    throw new ParameterError(`Cannot parse parameter "otpkey": longer than ${MAX_PASSWORD}`);
  }
  return {
    secret: new TextEncoder().encode(password),
    otplen: password.length,
    info: { tokenkind: "software" },
    detail: { password },
  };
}

/** The `pw` type. */
export const PW: TokenType = {
  type: "pw",
  prefix: "PW",
  authenticates: true,
  challenge: false,
  init: initPw,
  checkOtp: checkStatic,
};

/** The `registration` type: deletes itself after one successful authentication. */
export const REGISTRATION: TokenType = {
  type: "registration",
  prefix: "REG",
  authenticates: true,
  challenge: false,
  deleteAfterSuccess: true,
  init(ctx) {
    // always generated, never given
    const code = generated(ctx, "registration", 24);
    return {
      secret: new TextEncoder().encode(code),
      otplen: code.length,
      info: { tokenkind: "software" },
      detail: { registrationcode: code },
    };
  },
  checkOtp: checkStatic,
};
