/**
 * The one place where validate reads authentication and authorization policy
 * (through the policy engine, spec 04 §5). Without any active policy in those
 * scopes it returns privacyIDEA's defaults without matching anything.
 *
 * @module
 */
import type { Deps } from "../../deps.ts";
import type { TokenWithInfo, UserRef } from "../token/model.ts";
import { PolicyError } from "../../errors.ts";
import { type ConditionData, loadPolicySet, unescapeText, userAgentName } from "../policy/mod.ts";
import { orderedResolversOfRealm } from "../realm/mod.ts";
import { getUserAttributes } from "../user/mod.ts";
import { tokenConditionData } from "../token/mod.ts";

/** Who and what a validate request is about (policy match context). */
export interface ValidatePolicyContext {
  /** Login as given (after splitting), "" when only a serial was given. */
  login: string;
  realm: string;
  /** The resolved user, undefined when unknown or not given. */
  user?: UserRef;
  resolver?: string;
  serial?: string;
  /**
   * The token of `serial`, loaded once by the caller (an ownerless one with
   * its realms): policy matching and conditions read it, never load it.
   */
  token?: TokenWithInfo;
  clientIp: string;
  userAgent: string;
  /** The request's own condition data (headers, environment, parameters), if it has any. */
  request?: ConditionData;
}

/** Authentication/authorization policy values that change `/validate/check`. */
export interface ValidatePolicies {
  /** `otppin`: what the PIN part is checked against. */
  otppin: "tokenpin" | "userstore" | "none";
  /** `passthru`: policy name and value ("userstore" or a RADIUS server name). */
  passthru?: { policy: string; value: string };
  /** `passthru_assign`: `pin:<length>[:<window>]` or `<length>:pin[:<window>]`. */
  passthruAssign?: string;
  /**
   * `auth_cache`: the policy and its value (`4h`, `4h/5m`, `2d/3`); the name is
   * audited only when the cache decides.
   */
  authCache?: { policy: string; value: string };
  /** `passOnNoToken`: name of the matching policy. */
  passOnNoToken?: string;
  /** `passOnNoUser`: name of the matching policy. */
  passOnNoUser?: string;
  /** `challenge_response`: token types that may answer a PIN with a challenge. */
  challengeResponse: string[];
  /** `challenge_text`: replaces "please enter otp: ". */
  challengeText?: string;
  /** `challenge_text_header` / `challenge_text_footer`: rebuild `detail.message` of challenges. */
  challengeTextHeader?: string;
  challengeTextFooter?: string;
  /** `increase_failcounter_on_challenge`. */
  increaseFailcounterOnChallenge: boolean;
  /** `force_challenge_response`: OTP together with the PIN is refused. */
  forceChallengeResponse: boolean;
  /** `hide_specific_error_message`: a rejected authentication says only "Authentication failed.". */
  hideSpecificErrorMessage: boolean;
  /** `reset_all_user_tokens`: a success resets the fail counters of every token checked. */
  resetAllUserTokens: boolean;
  /** `resync_via_multichallenge`: an OTP in the sync window asks for the next one. */
  resyncViaMultichallenge: boolean;
  /** `change_pin_via_validate`: a success with a PIN change due asks for a new PIN. */
  changePinViaValidate: boolean;
  /** `last_auth` (e.g. `10h`, `7d`, `1y`). */
  lastAuth?: string;
  /** `tokentype` (authorization): allowed token types after success. */
  tokentype?: string[];
  /** `serial` (authorization): regexps; a successful token's serial must match one of them. */
  serials?: string[];
  /** `tokeninfo` (authorization): `key/regexp/` rules a successful token's info must match. */
  tokeninfo?: string[];
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
  /** `api_key_required` (authorization): the validate API needs an API key (a validate JWT). */
  isApiKeyRequired: boolean;
  /** `preferred_client_mode` order. */
  preferredClientMode: string[];
  /**
   * `client_mode_per_user`: remember the token type a user logs in with per user agent and
   * prefer its client mode. Only with a policy (privacyIDEA also without any authentication
   * policy, which would cost every successful check a write).
   */
  clientModePerUser: boolean;
  /** `enroll_via_multichallenge`: the token type (lower case) enrolled after a success. */
  enrollViaMultichallenge?: string;
  /** `enroll_via_multichallenge_template`: the template of a smartphone container made then. */
  enrollViaMultichallengeTemplate?: string;
  /** `enroll_via_multichallenge_text`. */
  enrollViaMultichallengeText?: string;
  /** `enroll_via_multichallenge_optional`: the user may cancel that enrolment. */
  isEnrollViaMultichallengeOptional: boolean;
  /** `enroll_via_multichallenge_passkey_offline`: the new passkey is attached for offline use. */
  isEnrolledPasskeyOffline: boolean;
  /**
   * `webauthn_authenticator_selection_list` (authorization): AAGUIDs (lower-case hex, no
   * dashes) of the FIDO tokens that may log in; undefined: all.
   */
  fidoAaguids?: string[];
  /**
   * Token-type authentication actions ({@link TYPE_AUTH_ACTIONS}): action →
   * its value, or the conflict message when policies of one priority disagree.
   */
  typeActions: Readonly<Record<string, { value: string } | { conflict: string }>>;
  /** Token-type authorization actions ({@link TYPE_AUTHZ_ACTIONS}): action → all its values. */
  typeAuthz: Readonly<Record<string, readonly string[]>>;
  /** Names of the policies that matched (audit). */
  matched: string[];
}

/** privacyIDEA's behaviour without any policy. */
export const DEFAULT_VALIDATE_POLICIES: Readonly<ValidatePolicies> = Object.freeze({
  otppin: "tokenpin",
  challengeResponse: [],
  increaseFailcounterOnChallenge: false,
  forceChallengeResponse: false,
  hideSpecificErrorMessage: false,
  resetAllUserTokens: false,
  resyncViaMultichallenge: false,
  changePinViaValidate: false,
  addUserInResponse: false,
  addResolverInResponse: false,
  applicationTokentype: false,
  disabledTokenTypes: [],
  noDetailOnSuccess: false,
  noDetailOnFail: false,
  isAccessDenied: false,
  isApiKeyRequired: false,
  preferredClientMode: ["interactive", "webauthn", "poll", "u2f"],
  clientModePerUser: false,
  isEnrollViaMultichallengeOptional: false,
  isEnrolledPasskeyOffline: false,
  typeActions: {},
  typeAuthz: {},
  matched: [],
});

/** Who a request outside `/validate/check` is about, for {@link isPolicyFlagSet}. */
export interface FlagContext {
  /** The user's login and realm when the request names one; none: policies of any user match. */
  user?: string;
  realm?: string;
  resolver?: string;
  clientIp: string;
  userAgent: string;
}

/**
 * Whether a matching active policy of `scope` sets the boolean `action`
 * (error paths: `hide_specific_error_message` and its token-scope variants).
 */
export async function isPolicyFlagSet(
  deps: Deps,
  scope: "authentication" | "token",
  action: string,
  ctx: FlagContext,
): Promise<boolean> {
  const set = await loadPolicySet(deps);
  if (!set.hasActivePolicies(scope)) return false;
  const names = await set.actionBool({
    scope,
    action,
    user: ctx.user || null,
    realm: ctx.realm || null,
    resolver: ctx.resolver || null,
    client: ctx.clientIp || null,
    userAgent: userAgentName(ctx.userAgent),
    conditions: {},
  });
  return names.length > 0;
}

/**
 * `auth_max_fail` and `auth_max_success` for a login (`/auth`): the
 * authorization scope matched on the user alone, nothing else read.
 */
export async function loginLimitPolicies(
  deps: Deps,
  ctx: { user: UserRef; clientIp: string; userAgent: string },
): Promise<Pick<ValidatePolicies, "authMaxFail" | "authMaxSuccess">> {
  const set = await loadPolicySet(deps);
  if (!set.hasActivePolicies("authorization")) return {};
  const m = set.matcher({
    scope: "authorization",
    user: ctx.user.login,
    realm: ctx.user.realm,
    resolver: ctx.user.resolver,
    client: ctx.clientIp || null,
    userAgent: userAgentName(ctx.userAgent),
    conditions: conditionData(deps, { login: ctx.user.login, realm: ctx.user.realm, ...ctx }),
  });
  return {
    authMaxFail: (await m.values("auth_max_fail", { unique: true })).values[0],
    authMaxSuccess: (await m.values("auth_max_success", { unique: true })).values[0],
  };
}

/**
 * Whether an `api_key_required` policy can match at all (only authorization
 * policies can set it): a cheap look at the policy snapshot.
 */
export async function mayRequireApiKey(deps: Deps): Promise<boolean> {
  return (await loadPolicySet(deps)).hasActivePolicies("authorization");
}

/**
 * The validate policies that apply to `ctx`: the authentication and
 * authorization scopes read for it (spec 04 §5).
 */
export async function validatePolicies(
  deps: Deps,
  ctx: ValidatePolicyContext,
): Promise<ValidatePolicies> {
  const set = await loadPolicySet(deps);
  const hasAuthn = set.hasActivePolicies("authentication");
  const hasAuthz = set.hasActivePolicies("authorization");
  // the common case on the hot path: nothing configured, nothing to match
  if (!hasAuthn && !hasAuthz) return DEFAULT_VALIDATE_POLICIES as ValidatePolicies;

  let user: UserRef | undefined = ctx.user;
  let realm = user?.realm ?? ctx.realm;
  if (!user && ctx.login === "" && ctx.token) {
    // a serial-only request acts for the token owner; an ownerless token uses its first realm
    user = ctx.token.owner;
    realm = user?.realm ?? ctx.token.realms[0] ?? "";
  }
  const needsResolvers = realm !== "" &&
    (set.usesCheckAllResolvers("authentication") || set.usesCheckAllResolvers("authorization"));
  // without conditions or realm-resolver lookups the outcome depends only on these values
  // (and on the minute, for time ranges): reuse it for the same policy version
  const depends = set.dependsOnRequestData(["authentication", "authorization"]);
  const memoKey = depends.conditions || needsResolvers ? undefined : JSON.stringify([
    user?.login ?? ctx.login,
    realm,
    user?.resolver ?? ctx.resolver ?? null,
    ctx.clientIp,
    userAgentName(ctx.userAgent),
    depends.time ? Math.floor(deps.clock.now() / 60_000) : 0,
  ]);
  let memo = resultMemo.get(set);
  if (memoKey !== undefined) {
    const hit = memo?.get(memoKey);
    if (hit) return hit;
  }
  const base = {
    user: user?.login ?? ctx.login,
    realm,
    resolver: user?.resolver ?? ctx.resolver ?? null,
    client: ctx.clientIp || null,
    userAgent: userAgentName(ctx.userAgent),
    realmResolvers: needsResolvers
      ? (await orderedResolversOfRealm(deps, realm)).map((r) => r.record.name)
      : null,
    conditions: conditionData(deps, { ...ctx, user }),
  };
  const out: ValidatePolicies = { ...DEFAULT_VALIDATE_POLICIES, typeActions: {}, matched: [] };
  const matched = new Set<string>();
  const note = (names: readonly string[]) => names.forEach((n) => matched.add(n));

  if (hasAuthn) {
    const m = set.matcher({ ...base, scope: "authentication" });
    await m.prefetch(AUTHENTICATION_ACTIONS);
    const unique = (action: string, freeText = false) => {
      const r = m.valuesNow(action, { unique: true, freeText });
      note(r.policies);
      return r.values[0];
    };
    const first = (action: string) => {
      const names = m.boolNow(action);
      note(names.slice(0, 1));
      return names[0];
    };
    const pin = unique("otppin");
    if (pin === "userstore" || pin === "none" || pin === "tokenpin") out.otppin = pin;

    const passthru = m.policiesNow("passthru");
    if (passthru.length > 0) {
      const top = passthru.filter((p) => p.priority === passthru[0].priority);
      const values = new Set(top.map((p) => {
        const v = p.policy.action.passthru;
        return typeof v === "string" && v !== "" ? v : "userstore";
      }));
      if (values.size > 1) throw new PolicyError("Contradicting passthru policies.");
      out.passthru = { policy: top[0].name, value: [...values][0] };
      note([top[0].name]);
    }
    const authCache = m.valuesNow("auth_cache", { unique: true, freeText: true });
    if (authCache.values.length > 0) {
      out.authCache = { policy: authCache.policies[0], value: authCache.values[0] };
    }
    out.passthruAssign = unique("passthru_assign");
    out.passOnNoToken = first("passOnNoToken");
    out.passOnNoUser = first("passOnNoUser");
    out.increaseFailcounterOnChallenge = first("increase_failcounter_on_challenge") !== undefined;
    out.forceChallengeResponse = first("force_challenge_response") !== undefined;
    out.hideSpecificErrorMessage = first("hide_specific_error_message") !== undefined;
    out.resetAllUserTokens = first("reset_all_user_tokens") !== undefined;
    out.resyncViaMultichallenge = first("resync_via_multichallenge") !== undefined;
    out.changePinViaValidate = first("change_pin_via_validate") !== undefined;
    out.clientModePerUser = first("client_mode_per_user") !== undefined;

    const cr = m.valuesNow("challenge_response");
    note(cr.policies);
    out.challengeResponse = cr.values.map((v) => v.toLowerCase());
    const disabled = m.valuesNow("disabled_token_types");
    note(disabled.policies);
    out.disabledTokenTypes = disabled.values.map((v) => v.toLowerCase());

    const text = unique("challenge_text", true);
    if (text !== undefined) out.challengeText = unescapeText(text);
    // taken as written (privacyIDEA unescapes nothing here)
    out.challengeTextHeader = unique("challenge_text_header", true);
    out.challengeTextFooter = unique("challenge_text_footer", true);
    const mode = unique("preferred_client_mode", true);
    if (mode !== undefined) out.preferredClientMode = mode.split(/\s+/).filter((x) => x !== "");
    out.enrollViaMultichallenge = unique("enroll_via_multichallenge")?.toLowerCase();
    if (out.enrollViaMultichallenge === "smartphone") {
      // not audited (privacyIDEA's write_to_audit_log=False): it only names a template
      out.enrollViaMultichallengeTemplate =
        m.valuesNow("enroll_via_multichallenge_template", { unique: true }).values[0];
    }
    const enrolText = unique("enroll_via_multichallenge_text", true);
    if (enrolText !== undefined) out.enrollViaMultichallengeText = unescapeText(enrolText);
    out.isEnrollViaMultichallengeOptional =
      first("enroll_via_multichallenge_optional") !== undefined;
    out.isEnrolledPasskeyOffline = first("enroll_via_multichallenge_passkey_offline") !== undefined;
    const setRealm = unique("set_realm");
    if (setRealm !== undefined) out.setrealm = setRealm.toLowerCase();
    const typeActions: Record<string, { value: string } | { conflict: string }> = {};
    for (const [action, freeText] of Object.entries(TYPE_AUTH_ACTIONS)) {
      try {
        // not noted as matched: they only matter to tokens of their type
        const value = m.valuesNow(action, { unique: true, freeText }).values[0];
        if (value !== undefined) typeActions[action] = { value };
      } catch (err) {
        // a conflict only fails the challenge of that type (e.g. the mail is not sent)
        if (!(err instanceof PolicyError)) throw err;
        typeActions[action] = { conflict: err.message };
      }
    }
    for (const action of TYPE_AUTH_BOOLS) {
      if (m.boolNow(action).length > 0) typeActions[action] = { value: "true" };
    }
    out.typeActions = typeActions;
  }

  if (hasAuthz) {
    const m = set.matcher({ ...base, scope: "authorization" });
    await m.prefetch(AUTHORIZATION_ACTIONS);
    const unique = (action: string) => {
      const r = m.valuesNow(action, { unique: true });
      note(r.policies);
      return r.values[0];
    };
    const bool = (action: string) => {
      const names = m.boolNow(action);
      note(names.slice(0, 1));
      return names.length > 0;
    };
    out.lastAuth = unique("last_auth");
    const types = m.valuesNow("tokentype");
    note(types.policies);
    if (types.values.length > 0) out.tokentype = types.values.map((v) => v.toLowerCase());
    // several values (and policies) add up: any one of the regexps admits a serial
    const serials = m.valuesNow("serial");
    note(serials.policies);
    if (serials.values.length > 0) out.serials = serials.values;
    const tokeninfo = m.valuesNow("tokeninfo", { freeText: true });
    note(tokeninfo.policies);
    if (tokeninfo.values.length > 0) out.tokeninfo = tokeninfo.values;
    if (out.setrealm === undefined) {
      let setrealm: string | undefined;
      try {
        setrealm = unique("setrealm");
      } catch (err) {
        if (!(err instanceof PolicyError)) throw err;
        throw new PolicyError(
          "I do not know, to which realm I should set the new realm. Conflicting policies exist.",
        );
      }
      if (setrealm !== undefined) out.setrealm = setrealm.toLowerCase();
    }
    out.addUserInResponse = bool("add_user_in_response");
    out.addResolverInResponse = bool("add_resolver_in_response");
    // privacyIDEA audits only the fail limit's policy
    out.authMaxSuccess = m.valuesNow("auth_max_success", { unique: true }).values[0];
    out.authMaxFail = unique("auth_max_fail");
    out.applicationTokentype = bool("application_tokentype");
    out.noDetailOnSuccess = bool("no_detail_on_success");
    out.noDetailOnFail = bool("no_detail_on_fail");
    out.isAccessDenied = unique("authorized") === "deny_access";
    out.isApiKeyRequired = bool("api_key_required");
    const aaguids = m.valuesNow("webauthn_authenticator_selection_list");
    note(aaguids.policies);
    if (aaguids.values.length > 0) {
      out.fidoAaguids = aaguids.values.map((v) => v.toLowerCase().replaceAll("-", ""));
    }
    const typeAuthz: Record<string, string[]> = {};
    for (const action of TYPE_AUTHZ_ACTIONS) {
      // not noted as matched: they only matter to tokens of their type
      const found = m.valuesNow(action);
      if (found.values.length > 0) typeAuthz[action] = found.values;
    }
    out.typeAuthz = typeAuthz;
  }
  out.matched = [...matched];
  const result = Object.freeze(out) as ValidatePolicies;
  if (memoKey !== undefined) {
    if (!memo || memo.size >= RESULT_MEMO_SIZE) {
      memo = new Map();
      resultMemo.set(set, memo);
    }
    memo.set(memoKey, result);
  }
  return result;
}

/**
 * Authentication actions of token types, read for their challenges (action →
 * whether the value is free text with spaces).
 */
export const TYPE_AUTH_ACTIONS: Readonly<Record<string, boolean>> = {
  emailtext: true,
  emailsubject: true,
  email_challenge_text: true,
  smstext: true,
  sms_challenge_text: true,
  indexedsecret_count: false,
  indexedsecret_challenge_text: true,
  question_number: false,
  webauthn_challenge_text: true,
  webauthn_user_verification_requirement: false,
  webauthn_timeout: false,
  webauthn_allowed_transports: true,
  passkey_challenge_text: true,
  push_challenge_text: true,
  push_text_on_mobile: true,
  push_title_on_mobile: true,
  push_ssl_verify: false,
  push_presence_options: false,
  push_presence_custom_options: true,
  push_presence_num_options: false,
  push_allow_polling: false,
  push_wait: false,
  u2f_challenge_text: true,
};

/** Authorization actions of token types, read for their answers (all values of each). */
export const TYPE_AUTHZ_ACTIONS: readonly string[] = ["u2f_req"];

/** Boolean authentication actions of token types (value "true" when a policy sets them). */
export const TYPE_AUTH_BOOLS: readonly string[] = [
  "passkey_trigger_by_pin",
  "push_require_presence",
  "push_code_to_phone",
];

/** The authentication actions validate reads. */
const AUTHENTICATION_ACTIONS = [
  "otppin",
  "auth_cache",
  "passthru",
  "passthru_assign",
  "passOnNoToken",
  "passOnNoUser",
  "increase_failcounter_on_challenge",
  "force_challenge_response",
  "hide_specific_error_message",
  "reset_all_user_tokens",
  "resync_via_multichallenge",
  "change_pin_via_validate",
  "client_mode_per_user",
  "challenge_response",
  "disabled_token_types",
  "challenge_text",
  "challenge_text_header",
  "challenge_text_footer",
  "preferred_client_mode",
  "set_realm",
  "enroll_via_multichallenge",
  "enroll_via_multichallenge_text",
  "enroll_via_multichallenge_template",
  "enroll_via_multichallenge_optional",
  "enroll_via_multichallenge_passkey_offline",
  ...Object.keys(TYPE_AUTH_ACTIONS),
  ...TYPE_AUTH_BOOLS,
];

/** The authorization actions validate reads. */
const AUTHORIZATION_ACTIONS = [
  "last_auth",
  "tokentype",
  "serial",
  "tokeninfo",
  "setrealm",
  "add_user_in_response",
  "add_resolver_in_response",
  "auth_max_success",
  "auth_max_fail",
  "application_tokentype",
  "no_detail_on_success",
  "no_detail_on_fail",
  "authorized",
  "api_key_required",
  "webauthn_authenticator_selection_list",
  ...TYPE_AUTHZ_ACTIONS,
];

/** Entries per policy version before the result memo starts over. */
const RESULT_MEMO_SIZE = 10_000;
// a pure memo: the outcome per immutable policy set (by identity) and request facts (the key)
const resultMemo = new WeakMap<object, Map<string, ValidatePolicies>>();

/** Condition data of validate: the request's own, the user's info and the token of `serial`. */
function conditionData(deps: Deps, ctx: ValidatePolicyContext): ConditionData {
  const user = ctx.user;
  const token = ctx.token;
  return {
    ...ctx.request,
    userinfo: user ? async () => await getUserAttributes(deps, user) : undefined,
    ...tokenConditionData(() => Promise.resolve(token)),
  };
}
