/**
 * `pw` (static password as the OTP part) and `registration` (one-time code).
 *
 * @module
 */
import { otpEqual } from "../../../lib/otp.ts";
import { randomString } from "../../../lib/random.ts";
import { ParameterError } from "../../../errors.ts";
import { param } from "./_oath.ts";
import type { TokenType, TypeCheckContext, TypeInitContext } from "./token_type.ts";

const LETTERS_DIGITS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
const MAX_PASSWORD = 200;

function checkStatic(ctx: TypeCheckContext, otp: string) {
  const stored = new TextDecoder().decode(ctx.secret);
  return { isValid: stored !== "" && otpEqual(stored, otp) };
}

function contentsAlphabet(contents: string | undefined): string {
  if (!contents) return LETTERS_DIGITS;
  let out = "";
  if (contents.includes("c")) out += "abcdefghijklmnopqrstuvwxyz";
  if (contents.includes("C")) out += "ABCDEFGHIJKLMNOPQRSTUVWXYZ";
  if (contents.includes("n")) out += "0123456789";
  if (contents.includes("s")) out += "!#$%&()*+,-./:;<=>?@[]^_";
  return out || LETTERS_DIGITS;
}

function initPw(ctx: TypeInitContext) {
  let password = param(ctx, "otpkey") ?? "";
  if (password === "") {
    const lenParam = param(ctx, "pw.length") ?? "12";
    const len = Number(lenParam);
    if (!Number.isInteger(len) || len < 4 || len > 128) {
      throw new ParameterError(
        `Cannot parse parameter "pw.length": expected an integer from 4 to 128, got "${lenParam}"`,
      );
    }
    password = randomString(ctx.deps.random, len, contentsAlphabet(param(ctx, "pw.contents")));
  }
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
  description: "PW: A token with a fixed password",
  authenticates: true,
  challenge: false,
  init: initPw,
  checkOtp: checkStatic,
};

/** The `registration` type: deletes itself after one successful authentication. */
export const REGISTRATION: TokenType = {
  type: "registration",
  prefix: "REG",
  description:
    "Registration: A token that creates a registration code that can be used as a second factor once",
  authenticates: true,
  challenge: false,
  deleteAfterSuccess: true,
  init(ctx) {
    const code = randomString(ctx.deps.random, 24, LETTERS_DIGITS);
    return {
      secret: new TextEncoder().encode(code),
      otplen: code.length,
      info: { tokenkind: "software" },
      detail: { registrationcode: code },
    };
  },
  checkOtp: checkStatic,
};
