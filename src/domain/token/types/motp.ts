/**
 * `motp`: mobile OTP (spec 14 §2). The OTP is `MD5(t ‖ key ‖ motppin)` cut to
 * `otplen`, `t` the time in 10-second steps; the check searches
 * ±2·count_window steps and stores the matched step as the counter, so a value
 * is accepted once. The mOTP PIN (`motppin`) is kept encrypted as tokeninfo
 * and never listed; the token PIN stays separate and is prepended in `pass`.
 * A client-sent `initTime` is ignored (privacyIDEA lets it move the reference
 * time).
 *
 * @module
 */
import { findMotpStep } from "../../../lib/motp.ts";
import { decryptSecretText } from "../../../lib/crypto.ts";
import { toHex } from "../../../lib/random.ts";
import { missingParameter, ParameterError } from "../../../errors.ts";
import { otplenOf, param, qrImg } from "./_oath.ts";
import type { OtpCheck, TokenType, TypeCheckContext, TypeInitContext } from "./token_type.ts";

const MAX_KEY = 256;

function initMotp(ctx: TypeInitContext) {
  const pol = ctx.policies ?? {};
  const given = pol.motp_force_server_generate ? undefined : param(ctx, "otpkey");
  let key = given ?? "";
  if (key === "") {
    const size = Number(param(ctx, "keysize") || "16");
    if (!Number.isInteger(size) || size < 1 || size > 128) {
      throw new ParameterError('Cannot parse parameter "keysize": expected 1 to 128 bytes');
    }
    key = toHex(ctx.deps.random.bytes(size));
  }
  if (key.length > MAX_KEY) {
    throw new ParameterError(`Cannot parse parameter "otpkey": longer than ${MAX_KEY}`);
  }
  const motppin = param(ctx, "motppin");
  if (motppin === undefined || motppin === "") throw missingParameter("motppin");
  const detail: Record<string, unknown> = {
    otpkey: { description: "OTP seed", value: `seed://${key}`, img: "" },
  };
  if (ctx.owner) {
    // privacyIDEA's URL names the label literally "mylabel"
    const url = `motp://privacyidea:mylabel?secret=${key}`;
    detail.motpurl = { description: "URL for mOTP token", value: url, img: qrImg(url) };
  }
  return {
    // the key is used as its text (privacyIDEA hashes the hex text, not the bytes)
    secret: new TextEncoder().encode(key),
    otplen: otplenOf(ctx),
    secretInfo: { motppin },
    info: { tokenkind: "software" },
    detail,
  };
}

function checkMotp(ctx: TypeCheckContext, otp: string): OtpCheck {
  const t = ctx.token;
  const stored = t.info.motppin;
  if (!stored || otp.length !== t.otplen) return { isValid: false };
  const pin = stored.type === "password"
    ? decryptSecretText(ctx.deps.keys.token, stored.value)
    : stored.value;
  const key = new TextDecoder().decode(ctx.secret);
  const now = Math.floor(ctx.nowMs / 10_000);
  const step = findMotpStep(key, pin, otp.toLowerCase(), now, 2 * t.countWindow, t.otplen);
  // the matched step is the new counter (compare-and-set count < step): a value works once
  return step > t.count ? { isValid: true, counter: step } : { isValid: false };
}

/** The `motp` type. */
export const MOTP: TokenType = {
  type: "motp",
  prefix: "PIMO",
  authenticates: true,
  challenge: true,
  init: initMotp,
  checkOtp: checkMotp,
  /** The mOTP PIN is not listed, not even as ciphertext. */
  listInfo(info) {
    const { motppin: _pin, "motppin.type": _type, ...rest } = info;
    return rest;
  },
};
