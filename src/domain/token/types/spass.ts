/**
 * `spass`: simple pass token; authenticates with the PIN alone.
 *
 * @module
 */
import type { TokenType } from "./token_type.ts";

/** The `spass` type. */
export const SPASS: TokenType = {
  type: "spass",
  prefix: "PISP",
  authenticates: true,
  challenge: false,
  pinOnly: true,
  init() {
    return { otplen: 6, info: { tokenkind: "software" } };
  },
  checkOtp(_ctx, otp) {
    return { isValid: otp === "" };
  },
};
