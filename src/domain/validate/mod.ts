/**
 * The validate room's public surface (spec 02 §6–§8, spec 11): `/validate/check`
 * and its variants, the challenges asked for without a pass, the SAML answer
 * and the policies of the authentication scope. The parts live in the room's
 * `_*.ts` files, one concern each.
 *
 * @module
 */
export type { ApiKeyCheck, ApiKeyStatus, CheckRequest, CheckResult } from "./_context.ts";
export type { UserRef } from "../token/mod.ts";
export type { FidoAnswer } from "../token/types/_fido.ts";
export type { PasskeyRegistration } from "./_enrol_passkey.ts";
export {
  DEFAULT_VALIDATE_POLICIES,
  type FlagContext,
  isPolicyFlagSet,
  loginLimitPolicies,
  type ValidatePolicies,
  validatePolicies,
  type ValidatePolicyContext,
} from "./policy.ts";
export { AUTHENTICATION_FAILED } from "./_post_policies.ts";
export { authLimitReached } from "./_limits.ts";
export { requireValidateApiKey } from "./_api_key.ts";
export { validateCheck, validateTokens } from "./_check.ts";
export { triggerChallenges } from "./_challenges.ts";
export { checkPasskeyLogin, type PasskeyLoginRequest } from "./_fido_check.ts";
export {
  initializeAuthentication,
  type InitializeRequest,
  triggerChallenge,
  type TriggerRequest,
} from "./_trigger.ts";
export { samlCheck } from "./_saml.ts";
export { challengeDetail, type MultiChallengeEntry } from "../challenge/mod.ts";
