/**
 * `tan`: a list of one-time codes usable in any order, each once (spec 11
 * §8). Generated TANs are the HOTP values 0…n−1 of a fresh key (the key is
 * not kept); imported ones come as `tans`. Each TAN is stored as tokeninfo
 * `tan.tan<i>` = a salted keyed hash (`hmac256$<salt>$<mac>` under the PIN
 * pepper, so the database alone does not reveal the short codes); entries
 * imported from privacyIDEA (`<salt>:<sha256 hex>`) are verified too. A used
 * TAN's entry is deleted by one conditional statement: of parallel uses only
 * one succeeds.
 *
 * @module
 */
import { createHash } from "node:crypto";
import type { Deps } from "../../../deps.ts";
import { ParameterError } from "../../../errors.ts";
import { hotpAt } from "../../../lib/otp.ts";
import { safeEqual } from "../../../lib/crypto.ts";
import { checkPin, pinHashOf } from "../pin.ts";
import { param } from "./_oath.ts";
import { intPolicy } from "./_challenge.ts";
import { initHotp } from "./hotp.ts";
import type { OtpCheck, TokenType, TypeInitContext, TypeInitResult } from "./token_type.ts";

const TAN_KEY_REGEXP = /^tan\.tan\d+$/;
const PI_HASH_REGEXP = /^([0-9a-fA-F]{8}):([0-9a-fA-F]{64})$/;
const TAN_REGEXP = /^[0-9A-Za-z]{1,32}$/;
const MAX_TANS = 1000;

/** privacyIDEA's stored form of a TAN: `<salt>:<hex SHA-256(tan ‖ salt)>` (spec 11 §13). */
export function piTanHash(tan: string, salt: string): string {
  return `${salt}:${createHash("sha256").update(tan + salt).digest("hex")}`;
}

function matches(deps: Deps, stored: string, tan: string): boolean {
  const pi = stored.match(PI_HASH_REGEXP);
  if (pi) return safeEqual(piTanHash(tan, pi[1]).toLowerCase(), stored.toLowerCase());
  return checkPin(deps, stored, tan);
}

function tanCount(ctx: TypeInitContext): number {
  const fromPolicy = ctx.policies?.tantoken_count;
  const text = fromPolicy ?? param(ctx, "tantoken_count") ?? "100";
  const n = intPolicy(text, -1, 1, MAX_TANS);
  if (n < 0) {
    throw new ParameterError(
      `Cannot parse parameter "tantoken_count": expected an integer from 1 to ${MAX_TANS}, got "${text}"`,
    );
  }
  return n;
}

function initTan(ctx: TypeInitContext): TypeInitResult {
  const imported = (param(ctx, "tans") ?? "").trim();
  const info: Record<string, string> = { tokenkind: "software" };
  const store = (tans: string[]) => {
    tans.forEach((tan, i) => info[`tan.tan${i}`] = pinHashOf(ctx.deps, tan));
  };
  const ownsInfo = (key: string) => TAN_KEY_REGEXP.test(key);
  if (imported !== "") {
    const tans = imported.split(/\s+/);
    if (tans.length > MAX_TANS || tans.some((t) => !TAN_REGEXP.test(t))) {
      throw new ParameterError(
        `Cannot parse parameter "tans": up to ${MAX_TANS} codes of letters and digits`,
      );
    }
    const otplen = tans[0].length;
    if (tans.some((t) => t.length !== otplen)) {
      throw new ParameterError(
        'Cannot parse parameter "tans": every TAN must have the same length',
      );
    }
    store(tans);
    // an imported list has no key: none is kept, the old one (re-enrolment) goes
    return { secret: new Uint8Array(0), otplen, info, ownsInfo };
  }
  const count = tanCount(ctx);
  const res = initHotp(ctx);
  const hash = res.info!.hashlib as "sha1";
  const otps: Record<string, string> = {};
  for (let i = 0; i < count; i++) otps[String(i)] = hotpAt(res.secret!, i, res.otplen!, hash);
  store(Object.values(otps));
  info.hashlib = hash;
  return {
    // the list is all that authenticates: the key that made it is not kept
    secret: new Uint8Array(0),
    otplen: res.otplen,
    info,
    detail: { ...res.detail, otps },
    ownsInfo,
  };
}

/** The `tan` type. */
export const TAN: TokenType = {
  type: "tan",
  prefix: "PITN",
  authenticates: true,
  challenge: true,
  init: initTan,
  checkOtp(ctx, otp): OtpCheck {
    if (otp.length !== ctx.token.otplen) return { isValid: false };
    let found: string | undefined;
    // every entry is compared: the time does not tell which TAN matched
    for (const [key, entry] of Object.entries(ctx.token.info)) {
      if (!TAN_KEY_REGEXP.test(key)) continue;
      if (matches(ctx.deps, entry.value, otp) && found === undefined) found = key;
    }
    return found === undefined ? { isValid: false } : { isValid: true, consumeInfo: found };
  },
  listInfo(info) {
    const out: Record<string, unknown> = {};
    let count = 0;
    for (const [key, value] of Object.entries(info)) {
      if (TAN_KEY_REGEXP.test(key)) count++;
      else out[key] = value;
    }
    // the one non-string tokeninfo value (spec 11 §11a)
    out["tan.count"] = count;
    return out;
  },
};
