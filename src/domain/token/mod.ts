/**
 * The token domain (spec 02 §1–§5): enrolment, listing and administration of
 * tokens. Secrets are encrypted with AES-256-GCM under `deps.keys.token`; PINs
 * are keyed hashes. One file per concern; this module is their public surface:
 *
 * - `lookup.ts`: tokens by serial(s), owner, tokeninfo or credential;
 * - `secrets.ts`: decrypted keys, plain tokeninfo, a type module's check context;
 * - `enrol.ts`: `POST /token/init` (new tokens, re-init, two-step, verify_enrollment);
 * - `list.ts`, `csv.ts`: the token list and its CSV form;
 * - `admin.ts`: administration of the token objects a caller checked;
 * - `check_writes.ts`: the check path's counter, fail-counter and tokeninfo writes;
 * - `lost.ts`, `getserial.ts`: lost tokens, the serial of an OTP;
 * - `dates.ts`, `_common.ts`: date texts, and rules the writers share.
 *
 * @module
 */
export type { InfoEntry, Token, TokenInfo, TokenWithInfo, UserRef } from "./model.ts";
export { TOKEN_TYPE_MODULES, TOKEN_TYPES, tokenTypeOf } from "./types/mod.ts";
export type { TokenType } from "./types/mod.ts";
export { type TrustedFacets, u2fFacets } from "./u2f_facets.ts";
export {
  checkImportedPin,
  checkPin,
  importedPinHash,
  isImportedPinHash,
  pinHashOf,
  splitPinPass,
} from "./pin.ts";
export {
  checkPinPolicy,
  type PinPolicyOptions,
  type PinPolicyScope,
  pinRules,
  randomPin,
} from "./pin_policy.ts";
export { type ImportedToken, type ImportOutcome, writeImportedToken } from "./imported.ts";
export { checkSerial, generateSerial } from "./serial.ts";
export {
  DEFAULT_ENROLL_POLICIES,
  type EnrollPolicies,
  enrollPolicies,
  type EnrollPolicyContext,
} from "./enroll_policy.ts";
export { isUniqueViolation, plainInfo, TOKEN_LOCKED_MESSAGE } from "./_common.ts";
export { lastAuthStamp, parseValidityDate, validityStamp } from "./dates.ts";
export {
  findTokenByCredentialIdHash,
  findTokenBySerial,
  findTokensByInfo,
  findTokensBySerials,
  getTokenBySerial,
  getTokensOfUser,
  isOwner,
  reloadTokens,
  TOKEN_NOT_FOUND_MESSAGE,
  USER_NOT_FOUND_MESSAGE,
} from "./lookup.ts";
export { checkContext, infoPlain, tokenSecret } from "./secrets.ts";
export { type InitResult, initToken, PIN_HANDLERS } from "./enrol.ts";
export {
  listTokens,
  parseTokenState,
  tokenConditionData,
  type TokenListQuery,
  type TokenView,
  tokenView,
} from "./list.ts";
export { tokensCsv } from "./csv.ts";
export {
  assignToken,
  type BulkResult,
  deleteTokenInfo,
  deleteTokens,
  disableTokens,
  enableTokens,
  forEachToken,
  type PinSetBy,
  resetTokens,
  resyncToken,
  revokeTokens,
  setDescription,
  setFailcount,
  setPin,
  setRandomPin,
  setTokenFields,
  setTokenInfo,
  setTokenRealms,
  type TokenSettings,
  unassignTokens,
} from "./admin.ts";
export {
  advanceTokenCounter,
  clearFailcount,
  consumeTokenInfo,
  deleteTokenById,
  increaseFailcount,
  recordAuthentication,
  updateTokenInfo,
} from "./check_writes.ts";
export { lostToken } from "./lost.ts";
export { copyTokenPin, copyTokenUser } from "./copy.ts";
export { getSerialByOtp, type SerialSearch } from "./getserial.ts";
