/**
 * The record a token file parser yields for one token (spec 12 §1.3).
 *
 * @module
 */

/** One token read from an import file; values are strings as the file has them. */
export interface TokenRecord {
  serial: string;
  /** Lower-case token type. */
  type: string;
  /** The secret: lower-case hex for OTP types, the text itself for `pw`. */
  otpkey: string;
  otplen?: string;
  hashlib?: string;
  timeStep?: string;
  /** Stored verbatim as tokeninfo `timeShift`. */
  timeShift?: string;
  /** The counter to store in `count`. */
  counter?: string;
  description: string;
  /** The public id (modhex) of a `yubikey` record: tokeninfo `yubikey.prefix`. */
  publicId?: string;
  /** TAN list of a `tan` token. */
  tans?: string[];
  /** Owner named by the file (OATH CSV version 2). */
  owner?: { login: string; resolver: string; realm: string };
  /** Where in the file the record is ("line 3", "KeyPackage 2"), for messages. */
  where: string;
}
