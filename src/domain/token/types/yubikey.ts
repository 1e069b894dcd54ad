/**
 * `yubikey`: a YubiKey in Yubico OTP (AES) mode checked locally (spec 11
 * §6). The OTP is the public id (modhex, tokeninfo `yubikey.prefix`) and 32
 * modhex characters: one AES-128-ECB block under the token key holding the
 * private uid (tokeninfo `yubikey.tokenid`, bound on first use), the usage
 * and session counters and a CRC. The OTP counter `usage·256 + session` must
 * not go back: a success stores `counter + 1` through the validate engine's
 * compare-and-set, so one OTP succeeds once, also in parallel.
 *
 * @module
 */
import { EnrollmentError, missingParameter, ParameterError } from "../../../errors.ts";
import { fromHex, toHex } from "../../../lib/random.ts";
import { decryptYubicoOtp, MODHEX_REGEXP } from "../../../lib/yubico_otp.ts";
import { param } from "./_oath.ts";
import {
  infoValue,
  type OtpCheck,
  type TokenType,
  type TypeCheckContext,
  type TypeInitContext,
  type TypeInitResult,
} from "./token_type.ts";

/** Modhex characters of the encrypted block at the end of every Yubico OTP. */
export const YUBICO_BLOCK_LENGTH = 32;
/** The longest public id a YubiKey sends (and what `/ttype/yubikey` looks tokens up by). */
export const MAX_PUBLIC_ID = 16;

const KEY_HEX_REGEXP = /^[0-9a-fA-F]{32}$/;
const UID_REGEXP = /^[0-9a-f]{12}$/;
const TRUE = new Set(["1", "true", "yes", "on"]);

function prefixOf(ctx: TypeInitContext): string | undefined {
  const given = param(ctx, "yubikey.prefix");
  if (given === undefined || given === "") return undefined;
  const prefix = given.trim().toLowerCase();
  if (prefix.length > MAX_PUBLIC_ID || !MODHEX_REGEXP.test(prefix)) {
    throw new ParameterError(
      `Cannot parse parameter "yubikey.prefix": expected up to ${MAX_PUBLIC_ID} modhex characters, got "${
        given.slice(0, 40)
      }"`,
    );
  }
  return prefix;
}

function otplenOf(ctx: TypeInitContext, prefix: string | undefined): number {
  const given = param(ctx, "otplen");
  if (given === undefined || given === "") {
    if (prefix !== undefined) return YUBICO_BLOCK_LENGTH + prefix.length;
    return ctx.existing?.otplen ?? YUBICO_BLOCK_LENGTH + 12;
  }
  const otplen = Number(given);
  const max = YUBICO_BLOCK_LENGTH + MAX_PUBLIC_ID;
  if (!/^\d+$/.test(given) || otplen < YUBICO_BLOCK_LENGTH || otplen > max) {
    throw new ParameterError(
      `Cannot parse parameter "otplen": expected the length of the whole OTP, ${YUBICO_BLOCK_LENGTH} to ${max}, got "${given}"`,
    );
  }
  // the check requires the exact length: a mismatch would make a token that never authenticates
  if (prefix !== undefined && otplen !== YUBICO_BLOCK_LENGTH + prefix.length) {
    throw new ParameterError(
      `Cannot parse parameter "otplen": ${otplen} does not fit the ${prefix.length} characters of "yubikey.prefix" and ${YUBICO_BLOCK_LENGTH} of the OTP`,
    );
  }
  return otplen;
}

function initYubikey(ctx: TypeInitContext): TypeInitResult {
  const prefix = prefixOf(ctx);
  const otplen = otplenOf(ctx, prefix);
  const otpkey = (param(ctx, "otpkey") ?? "").replace(/\s/g, "");
  const genkey = TRUE.has((param(ctx, "genkey") ?? "").toLowerCase());
  const info: Record<string, string> = { tokenkind: "hardware" };
  if (prefix !== undefined) info["yubikey.prefix"] = prefix;
  const uid = (param(ctx, "yubikey.tokenid") ?? "").trim().toLowerCase();
  if (uid !== "") {
    // a known private uid (from the programming log) is bound from the start
    if (!UID_REGEXP.test(uid)) {
      throw new ParameterError(
        `Cannot parse parameter "yubikey.tokenid": expected the private uid, 12 hex characters`,
      );
    }
    info["yubikey.tokenid"] = uid;
  }
  // a new key is a new device (or a reprogrammed one): its private uid is bound again on first use
  const ownsInfo = (key: string) => key === "yubikey.tokenid";
  if (otpkey === "") {
    if (!genkey) throw missingParameter("otpkey");
    const key = ctx.deps.random.bytes(16);
    const hex = toHex(key);
    return {
      secret: key,
      otplen,
      info,
      ownsInfo,
      detail: { otpkey: { description: "OTP seed", value: `seed://${hex}`, img: "" } },
    };
  }
  if (genkey) {
    throw new ParameterError("Only one of the parameters otpkey or genkey is allowed.", 344);
  }
  if (!KEY_HEX_REGEXP.test(otpkey)) {
    throw new EnrollmentError(
      "The otpkey must be 32 characters long for yubikey token in AES mode",
    );
  }
  return { secret: fromHex(otpkey), otplen, info, ownsInfo };
}

/** Checks a Yubico OTP (spec 11 §6.3); a success moves the counter past it. */
export function checkYubikeyOtp(ctx: TypeCheckContext, otp: string): OtpCheck {
  const t = ctx.token;
  const text = otp.toLowerCase();
  if (text.length !== t.otplen || text.length < YUBICO_BLOCK_LENGTH) return { isValid: false };
  const publicId = text.slice(0, -YUBICO_BLOCK_LENGTH);
  const block = decryptYubicoOtp(ctx.secret, text.slice(-YUBICO_BLOCK_LENGTH));
  if (!block) return { isValid: false };
  const tokenid = infoValue(t.info, "yubikey.tokenid").toLowerCase();
  // another device with the same key (or a cloned configuration) is not this token
  if (tokenid !== "" && tokenid !== block.uid) return { isValid: false };
  if (block.counter < t.count) return { isValid: false };
  const info: Record<string, string> = {};
  if (tokenid === "") info["yubikey.tokenid"] = block.uid;
  if (infoValue(t.info, "yubikey.prefix") === "" && publicId !== "") {
    info["yubikey.prefix"] = publicId;
  }
  return {
    isValid: true,
    // compare-and-set `count < counter + 1`: of two requests with this OTP one wins
    counter: block.counter + 1,
    info: Object.keys(info).length > 0 ? info : undefined,
  };
}

/** The `yubikey` type. */
export const YUBIKEY: TokenType = {
  type: "yubikey",
  prefix: "UBAM",
  authenticates: true,
  challenge: true,
  defaultOtplen: YUBICO_BLOCK_LENGTH + 12,
  init: initYubikey,
  checkOtp: checkYubikeyOtp,
};
