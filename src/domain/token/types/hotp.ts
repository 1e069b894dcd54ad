/**
 * `hotp`: event-based OTP (RFC 4226).
 *
 * @module
 */
import { hotpAt, otpEqual, type OtpHash, searchHotp } from "../../../lib/otp.ts";
import { hashOf, oathDetail, otpKeyOf, otplenOf } from "./_oath.ts";
import {
  infoValue,
  type OtpCheck,
  type TokenType,
  type TypeCheckContext,
  type TypeInitContext,
  type TypeInitResult,
} from "./token_type.ts";

/** The hash of a stored token. */
export function tokenHash(ctx: TypeCheckContext): OtpHash {
  return infoValue(ctx.token.info, "hashlib", "sha1") as OtpHash;
}

/**
 * The init parameters under the caller's `<type>_hashlib`, `_otplen`, `_timestep` and
 * `_force_server_generate` (admin or user scope): their values replace the client's, as
 * privacyIDEA's init_token_defaults writes them into the request.
 */
export function withCallerDefaults(ctx: TypeInitContext, type: "hotp" | "totp"): TypeInitContext {
  const pol = ctx.policies ?? {};
  const params = { ...ctx.params };
  if (pol[`${type}_hashlib`]) params.hashlib = pol[`${type}_hashlib`];
  if (pol[`${type}_otplen`]) params.otplen = pol[`${type}_otplen`];
  if (pol[`${type}_timestep`]) params.timeStep = pol[`${type}_timestep`];
  if (pol[`${type}_force_server_generate`]) {
    // the server makes the key; a key the client sent is ignored
    params.otpkey = undefined;
    params.genkey = "1";
  }
  return { ...ctx, params };
}

/** Enrols an HOTP-like token (shared with paper). */
export function initHotp(ctx: TypeInitContext): TypeInitResult {
  const hash = hashOf(ctx, "hotp.hashlib");
  const otplen = otplenOf(ctx);
  const { key } = otpKeyOf(ctx, hash);
  return {
    secret: key,
    otplen,
    info: { hashlib: hash, tokenkind: "software" },
    detail: oathDetail(ctx, { type: "hotp", key, hash, otplen }),
  };
}

/** HOTP check: counters `count … count+count_window−1`; stores matched+1. */
export async function checkHotp(ctx: TypeCheckContext, otp: string): Promise<OtpCheck> {
  const t = ctx.token;
  if (otp.length !== t.otplen || !/^\d+$/.test(otp)) return { isValid: false };
  const c = await searchHotp(ctx.secret, otp, t.count, t.countWindow, t.otplen, tokenHash(ctx));
  return c < 0 ? { isValid: false } : { isValid: true, counter: c + 1 };
}

/** HOTP resync: otp1 within the sync window and otp2 the next value. */
export async function resyncHotp(
  ctx: TypeCheckContext,
  otp1: string,
  otp2: string,
): Promise<OtpCheck> {
  const t = ctx.token;
  const hash = tokenHash(ctx);
  if (otp1.length !== t.otplen || otp2.length !== t.otplen) return { isValid: false };
  const c1 = await searchHotp(ctx.secret, otp1, t.count, t.syncWindow, t.otplen, hash);
  if (c1 < 0) return { isValid: false };
  if (!otpEqual(hotpAt(ctx.secret, c1 + 1, t.otplen, hash), otp2)) return { isValid: false };
  return { isValid: true, counter: c1 + 2 };
}

/** The counter of `otp` in `count … count+sync_window−1`, or −1. */
export async function findHotpInSyncWindow(ctx: TypeCheckContext, otp: string): Promise<number> {
  const t = ctx.token;
  if (otp.length !== t.otplen || !/^\d+$/.test(otp)) return -1;
  return await searchHotp(ctx.secret, otp, t.count, t.syncWindow, t.otplen, tokenHash(ctx));
}

/** The `hotp` type. */
export const HOTP: TokenType = {
  type: "hotp",
  prefix: "OATH",
  authenticates: true,
  challenge: true,
  init: (ctx) => initHotp(withCallerDefaults(ctx, "hotp")),
  checkOtp: checkHotp,
  resync: resyncHotp,
  findInSyncWindow: findHotpInSyncWindow,
  isPreviousOtp(ctx, otp) {
    const t = ctx.token;
    if (t.count < 1 || otp.length !== t.otplen) return false;
    return otpEqual(hotpAt(ctx.secret, t.count - 1, t.otplen, tokenHash(ctx)), otp);
  },
};
