/**
 * The one place where validate reads authentication and authorization policy.
 * Until the policy engine is wired (issue #5) it returns privacyIDEA's
 * defaults; tests (and the engine's own tests) can inject values per `deps`
 * with {@link setValidatePolicyOverride}.
 *
 * @module
 */
import type { Deps } from "../../deps.ts";
import type { UserRef } from "../token/model.ts";

/** Who and what a validate request is about (policy match context). */
export interface ValidatePolicyContext {
  /** Login as given (after splitting), "" when only a serial was given. */
  login: string;
  realm: string;
  /** The resolved user, undefined when unknown or not given. */
  user?: UserRef;
  resolver?: string;
  serial?: string;
  clientIp: string;
  userAgent: string;
}

/** Authentication/authorization policy values that change `/validate/check`. */
export interface ValidatePolicies {
  /** `otppin`: what the PIN part is checked against. */
  otppin: "tokenpin" | "userstore" | "none";
  /** `passthru`: policy name and value ("userstore" or a RADIUS server name). */
  passthru?: { policy: string; value: string };
  /** `passOnNoToken`: name of the matching policy. */
  passOnNoToken?: string;
  /** `passOnNoUser`: name of the matching policy. */
  passOnNoUser?: string;
  /** `challenge_response`: token types that may answer a PIN with a challenge. */
  challengeResponse: string[];
  /** `challenge_text`: replaces "please enter otp: ". */
  challengeText?: string;
  /** `increase_failcounter_on_challenge`. */
  increaseFailcounterOnChallenge: boolean;
  /** `force_challenge_response`: OTP together with the PIN is refused. */
  forceChallengeResponse: boolean;
  /** `last_auth` (e.g. `10h`, `7d`, `1y`). */
  lastAuth?: string;
  /** `tokentype` (authorization): allowed token types after success. */
  tokentype?: string[];
  /** `serial` (authorization): regexp a successful serial must match. */
  serial?: string;
  /** `setrealm`: rewrites the realm before the user is looked up. */
  setrealm?: string;
  /** `add_user_in_response`. */
  addUserInResponse: boolean;
  /** `add_resolver_in_response`. */
  addResolverInResponse: boolean;
  /** `auth_max_success` / `auth_max_fail` (`count/period`). */
  authMaxSuccess?: string;
  authMaxFail?: string;
  /** `application_tokentype`: honour the `type` parameter. */
  applicationTokentype: boolean;
  /** `disabled_token_types`. */
  disabledTokenTypes: string[];
  /** `no_detail_on_success` / `no_detail_on_fail`. */
  noDetailOnSuccess: boolean;
  noDetailOnFail: boolean;
  /** `authorized=deny_access`. */
  isAccessDenied: boolean;
  /** `preferred_client_mode` order. */
  preferredClientMode: string[];
  /** Names of the policies that matched (audit). */
  matched: string[];
}

/** privacyIDEA's behaviour without any policy. */
export const DEFAULT_VALIDATE_POLICIES: Readonly<ValidatePolicies> = Object.freeze({
  otppin: "tokenpin",
  challengeResponse: [],
  increaseFailcounterOnChallenge: false,
  forceChallengeResponse: false,
  addUserInResponse: false,
  addResolverInResponse: false,
  applicationTokentype: false,
  disabledTokenTypes: [],
  noDetailOnSuccess: false,
  noDetailOnFail: false,
  isAccessDenied: false,
  preferredClientMode: ["interactive", "webauthn", "poll"],
  matched: [],
});

/** An injected policy source (tests, or the engine before it is wired here). */
export type ValidatePolicyOverride =
  | Partial<ValidatePolicies>
  | ((
    ctx: ValidatePolicyContext,
  ) => Partial<ValidatePolicies> | Promise<Partial<ValidatePolicies>>);

const overrides = new WeakMap<Deps, ValidatePolicyOverride>();

/** Injects policy values for one `deps` (undefined removes them). */
export function setValidatePolicyOverride(
  deps: Deps,
  override: ValidatePolicyOverride | undefined,
): void {
  if (override === undefined) overrides.delete(deps);
  else overrides.set(deps, override);
}

/** The validate policies that apply to `ctx`. */
export async function validatePolicies(
  deps: Deps,
  ctx: ValidatePolicyContext,
): Promise<ValidatePolicies> {
  // TODO(#5): evaluate the authentication/authorization scopes of the policy engine here
  const override = overrides.get(deps);
  if (override === undefined) return DEFAULT_VALIDATE_POLICIES as ValidatePolicies;
  const values = typeof override === "function" ? await override(ctx) : override;
  return { ...DEFAULT_VALIDATE_POLICIES, ...values };
}
