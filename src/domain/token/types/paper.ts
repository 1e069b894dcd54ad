/**
 * `paper`: an HOTP token whose next OTP values are printed at enrolment.
 *
 * @module
 */
import { hotpAt } from "../../../lib/otp.ts";
import { ParameterError } from "../../../errors.ts";
import { param } from "./_oath.ts";
import { checkHotp, findHotpInSyncWindow, initHotp, resyncHotp } from "./hotp.ts";
import type { TokenType } from "./token_type.ts";

/** The `paper` type. */
export const PAPER: TokenType = {
  type: "paper",
  prefix: "PPR",
  authenticates: true,
  challenge: false,
  init(ctx) {
    const res = initHotp(ctx);
    const sizeParam = param(ctx, "papertoken_count") ?? "100";
    const size = Number(sizeParam);
    if (!Number.isInteger(size) || size < 1 || size > 1000) {
      throw new ParameterError(
        `Cannot parse parameter "papertoken_count": expected an integer from 1 to 1000, got "${sizeParam}"`,
      );
    }
    const otps: Record<string, string> = {};
    const hash = res.info!.hashlib as "sha1";
    for (let i = 0; i < size; i++) otps[String(i)] = hotpAt(res.secret!, i, res.otplen, hash);
    return { ...res, detail: { otps } };
  },
  checkOtp: checkHotp,
  resync: resyncHotp,
  findInSyncWindow: findHotpInSyncWindow,
};
