/**
 * `/validate/check` (spec 02 §6): the product's hot path. One system-config
 * read, one policy read, the user's tokens with their info, then only the
 * writes the outcome needs. Counters change through compare-and-set updates.
 *
 * @module
 */
import type { Deps } from "../../deps.ts";
import {
  ParameterError,
  PolicyError,
  ResourceNotFoundError,
  TokenAdminError,
  UserError,
  ValidateError,
} from "../../errors.ts";
import { loadSystemConfig, type SystemConfig } from "../system_config/mod.ts";
import {
  assignToken,
  checkContext,
  checkImportedPin,
  checkPin,
  checkPinPolicy,
  enrollPolicies,
  findTokenByCredentialIdHash,
  findTokenBySerial,
  getTokensOfUser,
  isImportedPinHash,
  isOwner,
  plainInfo,
  setPin,
  splitPinPass,
  TOKEN_LOCKED_MESSAGE,
  TOKEN_NOT_FOUND_MESSAGE,
  tokenConditionData,
  tokenTypeOf,
  type TokenWithInfo,
  USER_NOT_FOUND_MESSAGE,
  type UserRef,
} from "../token/mod.ts";
import {
  challengeDetail,
  type ChallengeRow,
  challengesOfTransaction,
  consumeTransaction,
  createChallenges,
  DEFAULT_CHALLENGE_TEXT,
  deleteChallengesOf,
  type MultiChallengeEntry,
} from "../challenge/mod.ts";
import {
  checkUserPassword,
  currentUser,
  getUserInfo,
  resolveUser,
  splitUser,
} from "../token/_users.ts";
import { mayRequireApiKey, type ValidatePolicies, validatePolicies } from "./policy.ts";
import { getUserAttributes } from "../user/mod.ts";
import { mangleParams } from "../machine/mangle.ts";
import { attachToken, computerNameOf } from "../machine/mod.ts";
import { userAgentName } from "../policy/mod.ts";
import {
  infoValue,
  type OtpCheck,
  type TokenType,
  type TypeChallenge,
  type TypeChallengeContext,
  type TypeCheckContext,
} from "../token/types/mod.ts";
import {
  advanceCounter,
  realmsOfToken,
  recordAuth,
  setInfoOnCheck,
  unassignedSerialsInRealm,
} from "../token/token_store.ts";

import {
  AUTH_CACHE_MESSAGE,
  isInAuthCache,
  parseAuthCache,
  rememberInAuthCache,
} from "./_auth_cache.ts";
import { hasDirectAccess } from "../../db/direct.ts";
import { isTransientDbError } from "../../db/transient_error.ts";
import { toHex } from "../../lib/random.ts";
import { hashPin, verifyPin } from "../../lib/crypto.ts";
import type { RadiusTokenExtras } from "../token/types/radius.ts";
import {
  b64url,
  type FidoAnswer,
  type FidoTokenType,
  fromB64url,
  isFidoType,
  nonceOfChallenge,
  requireOrigin,
  sha256Hex,
  uvLevel,
  uvOfChallengeData,
} from "../token/types/_fido.ts";
import { PASSKEY_AUTH_TEXT } from "../token/types/passkey.ts";
import { radiusPassthru } from "../radius_server/mod.ts";
import {
  completePasskeyEnrolment,
  dropEnrolment,
  isPendingEnrolment,
  type PasskeyRegistration,
  pendingEnrolmentOf,
  startPasskeyEnrolment,
} from "./_enrol_passkey.ts";
import {
  answerAddressChallenge,
  enrolTokenViaMultichallenge,
  isAddressChallenge,
  optionalTokenEnrolmentOf,
} from "./_enrol_token.ts";

import {
  type ApiKeyCheck,
  type CheckContext,
  type CheckObjects,
  type CheckRequest,
  type CheckResult,
  newCheckContext,
  ok,
  typePolicy,
} from "./_context.ts";

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
import { autoAssignToken } from "../token/autoassign.ts";
import { authLimitProblem } from "./_limits.ts";
import {
  applyOtpCheck,
  maybeClearFailcounter,
  raiseFailcounters,
  resetAllTokens,
  settleSuccess,
} from "./_check_writes.ts";
import { lastAuthProblem, pinChangeInfo, stateProblems } from "./_token_state.ts";
import { rememberLastUsedToken, withPreferredClientMode } from "./_client_mode.ts";
import { postPolicies, withChallengeTextHeader } from "./_post_policies.ts";
export { AUTHENTICATION_FAILED } from "./_post_policies.ts";
export { authLimitReached } from "./_limits.ts";

/**
 * `api_key_required` (authorization): refuses a request without a valid
 * validate JWT with privacyIDEA's messages.
 */
async function requireApiKey(policies: ValidatePolicies, apiKey?: ApiKeyCheck): Promise<void> {
  if (!policies.isApiKeyRequired || !apiKey) return;
  const status = await apiKey();
  if (status === "invalid") throw new PolicyError("No valid API key was passed.");
  if (status === "not-api-key") {
    throw new PolicyError("A correct JWT was passed, but it was no API key.");
  }
}

/**
 * `api_key_required` for a validate request that names no user (e.g.
 * `/validate/polltransaction`): the policies are matched without a user.
 */
export async function requireValidateApiKey(
  deps: Deps,
  req: { clientIp: string; userAgent: string; apiKey: ApiKeyCheck },
): Promise<void> {
  if (!(await mayRequireApiKey(deps))) return;
  const policies = await validatePolicies(deps, {
    login: "",
    realm: "",
    clientIp: req.clientIp,
    userAgent: req.userAgent,
  });
  await requireApiKey(policies, req.apiKey);
}

/**
 * `api_key_required` for the requests that go the FIDO way (an assertion, a
 * passkey registration, a cancelled enrolment): matched on the user they
 * name, if any, before anything is looked up or changed.
 */
async function requireApiKeyOfFidoRequest(deps: Deps, req: CheckRequest): Promise<void> {
  if (!req.apiKey || !(await mayRequireApiKey(deps))) return;
  let login = "";
  let realm = "";
  let user: UserRef | undefined;
  if (req.user) {
    ({ login, realm } = await splitUser(deps, req.user, req.realm || undefined));
    user = await resolveUser(deps, login, realm, req.resolver || undefined);
  }
  const policies = await validatePolicies(deps, {
    login,
    realm,
    user,
    resolver: user?.resolver ?? req.resolver,
    clientIp: req.clientIp,
    userAgent: req.userAgent,
    request: req.conditions,
  });
  await requireApiKey(policies, req.apiKey);
}

/**
 * Authenticates a user or a serial with `pass` (PIN+OTP, or OTP for a
 * challenge answer). Failed authentications are results, not errors.
 */
export async function validateCheck(deps: Deps, req: CheckRequest): Promise<CheckResult> {
  if (req.isCancelEnrolment || req.passkeyRegistration || req.fido) {
    await requireApiKeyOfFidoRequest(deps, req);
  }
  if (req.isCancelEnrolment) return await cancelEnrolment(deps, req);
  if (req.passkeyRegistration) {
    return await completeEnrolment(deps, req, req.passkeyRegistration);
  }
  // an assertion names its token by credential id: neither user nor serial needed
  if (req.fido) return await checkFido(deps, req, req.fido);
  const mangled = await mangleRequest(deps, req);
  req = mangled.req;
  const serial = req.serial ?? "";
  const userParam = req.user ?? "";
  if (serial === "" && userParam === "") {
    throw new ParameterError("You need to specify a serial, user or credential_id.");
  }
  if (serial.includes("*")) throw new ParameterError("Invalid serial number.");
  if (userParam.includes("%")) throw new ParameterError("Invalid user.");

  const system = await loadSystemConfig(deps);
  const resolved = await resolveCheck(deps, req);
  // the last pre-step: before the user chain (and the auth cache) looks at anything
  await requireApiKey(resolved.policies, req.apiKey);
  const ctx = newCheckContext(deps, { system, request: req, ...resolved });
  let result: CheckResult;
  try {
    result = await checkAndPost(ctx);
    if (mangled.policies.length > 0) {
      result.policies = [...new Set([...mangled.policies, ...(result.policies ?? [])])];
    }
  } finally {
    // the counter, fail counter and auth-count writes share one commit; none is answered before it
    await ctx.pending.settle();
  }
  try {
    return await enrolAfterSuccess(ctx, result);
  } catch (err) {
    // the check's writes are committed: a database failure now is logged, not answered
    if (!isTransientDbError(err)) throw err;
    deps.log.warn("Cannot start the enrolment via multichallenge; answering the check", {
      error: err as Error,
    });
    return result;
  }
}

/**
 * Authentication policy `mangle` (`<param>/<regexp>/<replacement>/`, e.g.
 * `user/.*\\(.*)/\1/` turns `DOMAIN\alice` into `alice`): rewrites `user`,
 * `realm` or `pass` before anything is looked up. Returns the request and the
 * names of the policies when one changed something.
 */
async function mangleRequest(
  deps: Deps,
  req: CheckRequest,
): Promise<{ req: CheckRequest; policies: string[] }> {
  const params: Record<string, string> = {};
  for (const key of ["user", "realm", "pass"] as const) {
    const value = req[key];
    if (value !== undefined && value !== "") params[key] = value;
  }
  const out = await mangleParams(deps, params, {
    client: req.clientIp,
    userAgent: userAgentName(req.userAgent),
    conditions: {
      ...req.conditions,
      // the user as the request names them, looked up only when a condition needs it
      userinfo: async () => {
        if (!req.user) return undefined;
        const { login, realm } = await splitUser(deps, req.user, req.realm || undefined);
        const user = await resolveUser(deps, login, realm, req.resolver || undefined);
        return user ? await getUserAttributes(deps, user) : undefined;
      },
      ...tokenConditionData(async () =>
        req.serial ? await findTokenBySerial(deps, req.serial, { withRealms: false }) : undefined
      ),
    },
  });
  if (!Object.keys(params).some((k) => out.params[k] !== params[k])) return { req, policies: [] };
  return {
    req: { ...req, user: out.params.user, realm: out.params.realm, pass: out.params.pass ?? "" },
    policies: out.policies,
  };
}

/**
 * `enroll_via_multichallenge` (spec 11 §5.4, spec 15 §3.8): a user who just
 * authenticated and has no token of the type gets step 1 of its enrolment as
 * a challenge instead of the success (passkey here, the OTP types in
 * `_enrol_token.ts`).
 */
async function enrolAfterSuccess(ctx: CheckContext, result: CheckResult): Promise<CheckResult> {
  const user = result.user;
  const p = ctx.policies;
  if (!result.value || !ctx.request.user || !user || ctx.request.isWebuiLogin) return result;
  if (p.enrollViaMultichallenge === undefined) return result;
  if (p.enrollViaMultichallenge !== "passkey") {
    return await enrolTokenViaMultichallenge(ctx.deps, user, result, {
      type: p.enrollViaMultichallenge,
      text: p.enrollViaMultichallengeText,
      isOptional: p.isEnrollViaMultichallengeOptional,
    });
  }
  const started = await startPasskeyEnrolment(ctx.deps, user, {
    text: p.enrollViaMultichallengeText,
    isOptional: p.isEnrollViaMultichallengeOptional,
  });
  if (!started) return result;
  return {
    ...result,
    value: false,
    detail: started.detail,
    serial: started.serial,
    tokenType: "passkey",
  };
}

/** The context of a request that acts for `token`'s owner (policies matched on both). */
async function ownerContext(
  deps: Deps,
  system: SystemConfig,
  req: CheckRequest,
  token: TokenWithInfo,
): Promise<CheckContext> {
  const owner = token.owner;
  const policies = await validatePolicies(deps, {
    login: owner?.login ?? "",
    realm: owner?.realm ?? "",
    user: owner,
    resolver: owner?.resolver,
    serial: token.serial,
    token,
    clientIp: req.clientIp,
    userAgent: req.userAgent,
    request: req.conditions,
  });
  return newCheckContext(deps, {
    system,
    request: req,
    login: owner?.login ?? "",
    realm: owner?.realm ?? "",
    user: owner,
    token,
    policies,
  });
}

/**
 * The owner of a token a request names by serial or transaction, as the user
 * store has it now (one lookup): the user the request names, who must own
 * the token (else ParameterError), or else the stored owner found again.
 * Undefined when the owner is gone from the user store (or its resolver left
 * the realm): offboarding there ends the logins of the token too.
 */
async function liveOwnerOf(
  deps: Deps,
  req: CheckRequest,
  token: TokenWithInfo,
): Promise<UserRef | undefined> {
  if (req.user) {
    const { login, realm } = await splitUser(deps, req.user, req.realm || undefined);
    const user = await resolveUser(deps, login, realm, req.resolver || undefined);
    if (!user || !isOwner(token, user)) {
      throw new ParameterError("Given serial does not belong to given user!");
    }
    return user;
  }
  const owner = token.owner && await currentUser(deps, token.owner);
  if (!owner) logOwnerGone(deps, token);
  return owner;
}

/** Logs why a token whose owner left the user store was refused (the client sees a plain failure). */
function logOwnerGone(deps: Deps, token: TokenWithInfo): void {
  deps.log.info("The token's owner is no longer in the user store; the request is refused", {
    serial: token.serial,
    user: token.owner?.login,
    realm: token.owner?.realm,
    resolver: token.owner?.resolver,
  });
}

/**
 * Step 2 of a passkey enrolment via multichallenge: `serial` (the new
 * credential is not indexed yet), `transaction_id` and the registration.
 * Only a passkey that this flow created can be completed here; success
 * authenticates its owner.
 */
async function completeEnrolment(
  deps: Deps,
  req: CheckRequest,
  registration: PasskeyRegistration,
): Promise<CheckResult> {
  const tid = req.transactionId;
  if (!tid) throw new ParameterError("Missing parameter: transaction_id");
  if (!req.serial) throw new ParameterError("Missing parameter: serial");
  const token = await findTokenBySerial(deps, req.serial, { withRealms: false });
  if (!isPendingEnrolment(token) || !token.owner) {
    return fidoRefused(undefined, "No token found for the given credential ID or transaction ID!");
  }
  const owner = await liveOwnerOf(deps, req, token);
  if (!owner) return { ...fidoRefused(token), login: token.owner.login, realm: token.owner.realm };
  const ctx = await ownerContext(deps, await loadSystemConfig(deps), req, { ...token, owner });
  if (ctx.policies.disabledTokenTypes.includes(token.type)) {
    throw new PolicyError("The authentication method is not available.");
  }
  const isEnrolled = await completePasskeyEnrolment(deps, { ...token, owner }, {
    transactionId: tid,
    registration,
  });
  if (isEnrolled && ctx.policies.isEnrolledPasskeyOffline) {
    await attachOffline(deps, token, req.userAgent);
  }
  const result: CheckResult = isEnrolled
    ? {
      value: true,
      detail: { username: owner.login, message: "Found matching challenge", serial: token.serial },
      serial: token.serial,
      tokenType: token.type,
      tokens: [token],
    }
    : fidoRefused(token);
  result.user = owner;
  result.login = owner.login;
  result.realm = owner.realm;
  return await postPolicies(ctx, result);
}

/**
 * `enroll_via_multichallenge_passkey_offline` (privacyIDEA 3.13): the passkey
 * just enrolled is attached to the `offline` application, so the answer
 * carries its offline data (`auth_items`, added by the route as for any
 * offline token). The offline data names the computer from the User-Agent;
 * without one the passkey stays online only (logged).
 */
async function attachOffline(
  deps: Deps,
  token: TokenWithInfo,
  userAgent: string,
): Promise<void> {
  if (computerNameOf(userAgent) === undefined) {
    deps.log.info("The new passkey is not attached offline: no computer name in the User-Agent", {
      serial: token.serial,
    });
    return;
  }
  await attachToken(deps, { serial: token.serial, application: "offline" });
}

/**
 * `cancel_enrollment=true` with the transaction of an enrolment via
 * multichallenge: with `enroll_via_multichallenge_optional` the waiting
 * passkey is deleted and the login succeeds without it.
 */
async function cancelEnrolment(deps: Deps, req: CheckRequest): Promise<CheckResult> {
  const tid = req.transactionId;
  if (!tid) throw new ParameterError("Missing parameter: transaction_id");
  const failed: CheckResult = {
    value: false,
    detail: { message: "Failed to cancel enrollment via multichallenge" },
  };
  const token = await pendingEnrolmentOf(deps, tid) ?? await optionalTokenEnrolmentOf(deps, tid);
  if (!token) return failed;
  const owner = await liveOwnerOf(deps, req, token);
  if (!owner) return { ...failed, serial: token.serial, tokenType: token.type };
  const ctx = await ownerContext(deps, await loadSystemConfig(deps), req, { ...token, owner });
  const who = { serial: token.serial, tokenType: token.type, user: owner };
  if (!ctx.policies.isEnrollViaMultichallengeOptional) {
    deps.log.info("Cannot cancel the enrolment: enroll_via_multichallenge_optional is not set", {
      serial: token.serial,
    });
    return { ...failed, ...who, login: owner.login, realm: owner.realm };
  }
  // a parallel cancel or completion that consumed the transaction first wins
  if (!(await dropEnrolment(deps, tid, token))) return { ...failed, ...who };
  return await postPolicies(ctx, {
    value: true,
    detail: { message: "Cancelled enrollment via multichallenge" },
    ...who,
    login: owner.login,
    realm: owner.realm,
  });
}

/**
 * Checks `pass` against `tokens` found by the caller (not by user or serial)
 * as `/validate/check` checks a serial: the same states, PIN, counters, fail
 * counters and post-policies, the policies matched on the first token (its
 * owner and realm). `/ttype/yubikey` uses it: an OTP oracle like
 * `/validate/check` must count and lock like it.
 */
export async function validateTokens(
  deps: Deps,
  tokens: TokenWithInfo[],
  req: { pass: string; clientIp: string; userAgent: string },
): Promise<CheckResult> {
  if (tokens.length === 0) throw new ResourceNotFoundError(TOKEN_NOT_FOUND_MESSAGE);
  const first = tokens[0];
  const system = await loadSystemConfig(deps);
  const policies = await validatePolicies(deps, {
    login: "",
    realm: "",
    user: undefined,
    resolver: undefined,
    serial: first.serial,
    token: first,
    clientIp: req.clientIp,
    userAgent: req.userAgent,
  });
  const ctx = newCheckContext(deps, {
    system,
    request: req,
    login: "",
    realm: "",
    user: first.owner,
    token: first,
    policies,
  });
  try {
    const result = await checkTokenList(ctx, tokens);
    result.user ??= ctx.user;
    result.login = ctx.user?.login;
    result.realm = ctx.user?.realm;
    return await postPolicies(ctx, result);
  } finally {
    await ctx.pending.settle();
  }
}

/**
 * The objects of a check request, resolved once before anything is decided:
 * the user (after `user@realm` splitting, default realm and `setrealm`), the
 * token of `serial`, and the policies matched on exactly these.
 */
async function resolveCheck(
  deps: Deps,
  req: CheckRequest,
): Promise<Omit<CheckObjects, "system" | "request">> {
  const serial = req.serial ?? "";
  const userParam = req.user ?? "";
  let login = "";
  let realm = "";
  let user: UserRef | undefined;
  if (userParam !== "") {
    ({ login, realm } = await splitUser(deps, userParam, req.realm || undefined));
    user = await resolveUser(deps, login, realm, req.resolver || undefined);
  }
  // loaded once: the policies of a serial-only request match on the token owner
  const token = serial !== "" ? await loadSerialToken(deps, serial) : undefined;
  // reads realm and user at call time: setrealm below changes both
  const policiesOfRequest = () =>
    validatePolicies(deps, {
      login,
      realm,
      user,
      resolver: user?.resolver ?? req.resolver,
      serial: serial || undefined,
      token,
      clientIp: req.clientIp,
      userAgent: req.userAgent,
      request: req.conditions,
    });
  let policies = await policiesOfRequest();
  if (policies.setrealm && userParam !== "" && policies.setrealm !== realm) {
    realm = policies.setrealm;
    user = await resolveUser(deps, login, realm, req.resolver || undefined);
    policies = await policiesOfRequest();
  }
  return { login, realm, user, token, policies };
}

/**
 * The token of `serial` (info, no realms); 404 when unknown. An ownerless
 * token comes with its realms: policies of a serial-only request match on
 * its first realm, and they read it from here instead of loading it again.
 */
async function loadSerialToken(deps: Deps, serial: string): Promise<TokenWithInfo> {
  const token = await findTokenBySerial(deps, serial, { withRealms: false });
  if (!token) throw new ResourceNotFoundError(TOKEN_NOT_FOUND_MESSAGE);
  if (token.owner) return token;
  return { ...token, realms: await realmsOfToken(deps.db, token.id) };
}

/** The check itself, once user, policies and a serial's token are known; then the post-policies. */
async function checkAndPost(ctx: CheckContext): Promise<CheckResult> {
  const { login, realm, token, request: req } = ctx;
  let result: CheckResult;
  if (token) {
    if ((req.user ?? "") !== "" && !(ctx.user && isOwner(token, ctx.user))) {
      throw new ParameterError("Given serial does not belong to given user!");
    }
    ctx.user ??= token.owner;
    result = req.otponly ? await checkOtpOnly(ctx, token) : await checkTokenList(ctx, [token]);
  } else {
    result = await checkUserCached(ctx);
  }
  result.user ??= ctx.user;
  result.login = login || ctx.user?.login;
  result.realm = realm || ctx.user?.realm;
  // the user the request names (privacyIDEA's request.User): none for a serial-only request
  const requestUser = login !== "" ? ctx.user : undefined;
  if (result.value && requestUser && !req.isWebuiLogin) {
    await rememberLastUsedToken(ctx, requestUser, result);
  }
  const out = await postPolicies(ctx, result);
  await withPreferredClientMode(ctx, out.detail, requestUser);
  return out;
}

/**
 * The user chain behind `auth_cache` (spec 15 §3.1): a `pass` that
 * authenticated the user recently is accepted from the cache before
 * anything else is looked at; a success of the chain is remembered. Without
 * a matching policy the cache is not read.
 */
async function checkUserCached(ctx: CheckContext): Promise<CheckResult> {
  const policy = ctx.policies.authCache;
  if (!policy) return await checkUser(ctx);
  const rule = parseAuthCache(policy.value);
  const who = {
    login: ctx.user?.login ?? ctx.login,
    realm: ctx.user?.realm ?? ctx.realm,
    resolver: ctx.user?.resolver ?? "",
  };
  const pass = ctx.request.pass;
  if (await isInAuthCache(ctx.deps, who, pass, rule)) {
    return { value: true, detail: { message: AUTH_CACHE_MESSAGE }, policies: [policy.policy] };
  }
  const result = await checkUser(ctx);
  if (result.value) await rememberInAuthCache(ctx.deps, who, pass, rule);
  return result;
}

/** The check of the user the request names: their tokens, else the pass-on and passthru rules. */
async function checkUser(ctx: CheckContext): Promise<CheckResult> {
  const { deps, policies, user, login, realm, request: req } = ctx;
  if (!user) {
    if (policies.passOnNoUser) {
      return ok(`user does not exist, accepted due to '${policies.passOnNoUser}'`);
    }
    const who = req.resolver ? `${login}.${req.resolver}@${realm}` : `${login}@${realm}`;
    throw new UserError(`User <${who}> does not exist.`);
  }
  let tokens = await getTokensOfUser(deps, user, { withRealms: false });
  if (policies.applicationTokentype && req.type) {
    const type = req.type.toLowerCase();
    tokens = tokens.filter((t) => t.type === type);
  }
  req.onTokens?.(tokens.map((t) => t.serial));
  if (tokens.length === 0 && policies.passOnNoToken) {
    return ok(`user has no token, accepted due to '${policies.passOnNoToken}'`);
  }
  const limited = await authLimitProblem(ctx, user);
  if (limited) return limited;
  if (tokens.length === 0) {
    // passthru accepts a right password; a wrong one falls through to the answer without it
    // (privacyIDEA: "against userstore" would read as acceptance where a module shows the message)
    const passthru = policies.passthru;
    if (passthru?.value === "userstore") {
      if (await checkUserPassword(deps, user, req.pass)) {
        return ok(`against userstore due to '${passthru.policy}'`);
      }
    } else if (passthru) {
      // passthru=<RADIUS server definition>: anything but Access-Accept falls through
      if (await radiusPassthru(deps, passthru.value, { login: user.login, pass: req.pass })) {
        const assigned = await passthruAssign(ctx, user);
        const against = `against RADIUS server ${passthru.value} due to '${passthru.policy}'`;
        return ok(assigned ? `auto-assigned ${assigned},${against}` : against);
      }
    }
    // enrollment policy autoassignment: a matching unassigned token of the realm becomes theirs
    const assigned = await autoAssignToken(deps, user, req.pass, { client: req.clientIp });
    if (assigned) return assigned;
    return { value: false, detail: { message: "The user has no tokens assigned" } };
  }
  return await checkTokenList(ctx, tokens);
}

/**
 * `passthru_assign` after the RADIUS server accepted a user without tokens:
 * `pass` is split into PIN and OTP (`pin:<length>[:<window>]`: the OTP is
 * the last `<length>` characters; `<length>:pin[:<window>]`: the first), and
 * the first unassigned token of the user's realm whose OTP check (within
 * `<window>` steps, default 100) succeeds becomes the user's, with that PIN.
 * Returns its serial.
 */
async function passthruAssign(ctx: CheckContext, user: UserRef): Promise<string | undefined> {
  const value = ctx.policies.passthruAssign;
  const pass = ctx.request.pass;
  if (value === undefined) return undefined;
  const parts = value.split(":");
  if (parts.length < 2) {
    ctx.deps.log.warn("passthru_assign needs pin:<length>[:<window>] or <length>:pin[:<window>]", {
      value: value.slice(0, 100),
    });
    return undefined;
  }
  const isPinFirst = parts[0] === "pin";
  const length = policyInteger(value, isPinFirst ? parts[1] : parts[0]);
  const window = parts.length === 3 ? policyInteger(value, parts[2]) : 100;
  const otp = isPinFirst ? pass.slice(-length) : pass.slice(0, length);
  const pin = isPinFirst ? pass.slice(0, Math.max(0, pass.length - length)) : pass.slice(length);
  for (const serial of await unassignedSerialsInRealm(ctx.deps.db, user.realm)) {
    const found = await findTokenBySerial(ctx.deps, serial, { withRealms: false });
    const module = found && tokenTypeOf(found.type);
    if (!found || found.owner || !module?.authenticates || module.pinOnly) continue;
    if (stateProblems(ctx, found).length > 0) continue;
    const t = { ...found, countWindow: window };
    const check = await module.checkOtp(checkContext(ctx.deps, ctx.system, t), otp);
    if (!check.isValid || !(await applyOtpCheck(ctx, t, check))) continue;
    try {
      await assignToken(ctx.deps, found, user, { pin });
    } catch (err) {
      // a token limit (or a parallel assignment) keeps the token; the RADIUS answer stands
      if (!(err instanceof PolicyError || err instanceof TokenAdminError)) throw err;
      ctx.deps.log.info("passthru_assign did not assign the token", {
        serial,
        reason: (err as Error).message,
      });
      return undefined;
    }
    return serial;
  }
  return undefined;
}

/** A whole positive number of a policy value; PolicyError (403) naming the value otherwise. */
function policyInteger(value: string, text: string | undefined): number {
  if (text === undefined || !/^\d{1,6}$/.test(text) || Number(text) === 0) {
    // privacyIDEA fails with an unexpected error here
    throw new PolicyError(
      `Cannot parse the passthru_assign value "${value}": expected pin:<length>[:<window>] ` +
        "or <length>:pin[:<window>]",
    );
  }
  return Number(text);
}

/**
 * `otponly=1` with a serial: only the OTP is checked, no PIN. Failures count
 * and lock like any check (otherwise whoever knows a serial could guess OTPs
 * without limit), and a one-time token is used up as on the full check.
 */
async function checkOtpOnly(ctx: CheckContext, token: TokenWithInfo): Promise<CheckResult> {
  const module = tokenTypeOf(token.type);
  const fail = {
    value: false,
    detail: { message: "OTP verification failed." },
    serial: token.serial,
    tokenType: token.type,
  };
  // a PIN-only type (spass) has no OTP: without the PIN nothing would be checked
  if (!module || !module.authenticates || module.pinOnly) return fail;
  await maybeClearFailcounter(ctx, token);
  if (stateProblems(ctx, token).length > 0) return fail;
  const res = await module.checkOtp(checkContext(ctx.deps, ctx.system, token), ctx.request.pass);
  if (!res.isValid || !(await applyOtpCheck(ctx, token, res))) {
    await raiseFailcounters(ctx, [token]);
    return fail;
  }
  const tooOld = lastAuthProblem(ctx, [token]);
  if (tooOld) return tooOld;
  const used = await settleSuccess(ctx, [token], { countAuth: false });
  if (used.length === 0) return fail;
  return {
    value: true,
    detail: {
      message: "matching 1 tokens",
      serial: token.serial,
      type: token.type,
      otplen: token.otplen,
    },
    serial: token.serial,
    tokenType: token.type,
    tokens: [token],
  };
}

/** PIN check under the `otppin` policy. */
async function pinMatches(ctx: CheckContext, t: TokenWithInfo, pin: string): Promise<boolean> {
  switch (ctx.policies.otppin) {
    case "none":
      return pin === "";
    case "userstore": {
      const owner = t.owner ?? ctx.user;
      return owner ? await checkUserPassword(ctx.deps, owner, pin) : false;
    }
    default:
      // a PIN imported from privacyIDEA is checked once with its own scheme, then re-hashed
      return checkPin(ctx.deps, t.pinHash, pin) ||
        (isImportedPinHash(t.pinHash) && await checkImportedPin(ctx.deps, t, pin));
  }
}

function typeOrder(type: string): number {
  return type === "push" ? 1 : 0;
}

/** The challenges stored under the request's `transaction_id` (spec 02 §6.2 step 3). */
interface Transaction {
  id: string;
  /** Every challenge of the transaction for the tokens checked, expired ones included. */
  stored: ChallengeRow[];
}

/** A right answer to a challenge, not yet accepted: the transaction decides. */
interface RightAnswer {
  token: TokenWithInfo;
  check: OtpCheck;
}

/**
 * The groups of spec 02 §6.2 step 4, filled while classifying the tokens,
 * and the transaction the pass answers (if the request names one).
 */
interface Groups {
  readonly tx?: Transaction;
  stateMessages: Set<string>;
  valid: TokenWithInfo[];
  /** Tokens with a challenge in the transaction, whether the answer was right or not. */
  responded: TokenWithInfo[];
  rightAnswers: RightAnswer[];
  challengeRequests: TokenWithInfo[];
  challengeOverrides: Record<string, { message: string; data: string }>;
  /** Radius tokens whose upstream server challenged again while answering (spec 08 §3.3). */
  reChallenged: TokenWithInfo[];
  pinMatching: TokenWithInfo[];
  invalid: TokenWithInfo[];
  /** The OTP of a single PIN-matching token was its previous one. */
  isPreviousOtp: boolean;
}

/**
 * Spec 02 §6.2: checks `pass` against a list of tokens, wrapped as in
 * privacyIDEA by `reset_all_user_tokens`.
 */
async function checkTokenList(ctx: CheckContext, all: TokenWithInfo[]): Promise<CheckResult> {
  // privacyIDEA's order: reset_all_user_tokens(PIN change(resync(the check)))
  let result = ctx.request.transactionId ? await answerPinChange(ctx, all) : undefined;
  if (!result) {
    result = await checkTokens(ctx, all);
    if (!result.value && ctx.policies.resyncViaMultichallenge) {
      result = await resyncChallenge(ctx, all, result);
    }
    if (result.value && result.detail.pin_change === true && ctx.policies.changePinViaValidate) {
      result = await askForNewPin(ctx, all, result);
    }
  }
  if (result.value && ctx.policies.resetAllUserTokens) await resetAllTokens(ctx, all);
  return result;
}

/** The challenge kind of the PIN change dialogue (privacyIDEA's). */
const GENERIC_PIN_RESET = "generic_pin_reset";

/** Seconds a PIN change challenge is valid: `PinResetChallengeValidityTime`, else the default. */
function pinResetValidity(system: SystemConfig): number {
  const own = Number.parseInt(system.get("PinResetChallengeValidityTime", ""), 10);
  return Number.isFinite(own) && own > 0 ? own : system.int("DefaultChallengeValidityTime");
}

/**
 * `change_pin_via_validate`: a success of one token whose PIN change is due
 * becomes a challenge asking for a new PIN (the OTP is used up all the same).
 */
async function askForNewPin(
  ctx: CheckContext,
  tokens: TokenWithInfo[],
  success: CheckResult,
): Promise<CheckResult> {
  const t = tokens.find((x) => x.serial === success.detail.serial);
  if (!t) return success;
  return await genericChallenge(ctx, t, {
    kind: GENERIC_PIN_RESET,
    message: "Please enter a new PIN",
    validity: pinResetValidity(ctx.system),
  });
}

/**
 * An answer to the PIN change dialogue (whatever the policies say now): the
 * first answer is the new PIN, checked against the user's PIN rules and
 * asked again; the second sets it if both agree. Undefined when the
 * transaction is no open PIN change of one of `tokens`.
 */
async function answerPinChange(
  ctx: CheckContext,
  tokens: TokenWithInfo[],
): Promise<CheckResult | undefined> {
  const { deps } = ctx;
  const { pass, transactionId } = ctx.request as { pass: string; transactionId: string };
  const stored = (await challengesOfTransaction(deps, transactionId))
    .filter((c) => c.challenge === GENERIC_PIN_RESET && c.expiresAt >= ctx.now);
  if (stored.length !== 1) return undefined;
  const challenge = stored[0];
  const t = tokens.find((x) => x.serial === challenge.serial);
  if (!t) return undefined;
  const pepper = deps.keys.pinPepper;
  if (challenge.data === "") {
    // the new PIN, checked as if the owner set it (user scope)
    const owner = t.owner ?? ctx.user;
    await checkPinPolicy(deps, pass, {
      caller: {
        role: "user",
        username: owner?.login ?? "",
        realm: owner?.realm ?? "",
        resolver: owner?.resolver,
      },
      type: t.type,
      context: { client: ctx.request.clientIp || null },
    });
    // one answer per challenge: a parallel one that consumed it first gets the plain failure
    if (!(await consumeTransaction(deps, transactionId)).includes(t.serial)) return undefined;
    return await genericChallenge(ctx, t, {
      kind: GENERIC_PIN_RESET,
      message: "Please enter the new PIN again",
      data: hashPin(pepper, pass, deps.random),
      validity: pinResetValidity(ctx.system),
    });
  }
  if (!verifyPin(pepper, challenge.data, pass)) {
    // the challenge stays open for another try
    return {
      value: false,
      detail: { serial: t.serial, message: "PINs do not match" },
      serial: t.serial,
      tokenType: t.type,
    };
  }
  if (!(await consumeTransaction(deps, transactionId)).includes(t.serial)) return undefined;
  // as a user setting the PIN: encrypt_pin, and change_pin_every sets the next due date
  await setPin(deps, [t], pass, {
    pinChange: { role: "user", client: ctx.request.clientIp },
  });
  return {
    value: true,
    detail: { message: "PIN successfully set.", serial: t.serial },
    serial: t.serial,
    tokenType: t.type,
    tokens: [t],
  };
}

/** Challenge kinds of the generic challenges (the `challenge` column), as privacyIDEA's. */
const GENERIC_RESYNC = "generic_resync";

/** The message of the resync challenge. */
const RESYNC_MESSAGE = "To resync your token, please enter the next OTP value";

/**
 * `resync_via_multichallenge`: a failure naming one token whose OTP lay in
 * the sync window (auto-resync remembered it: `otp1c`) becomes a challenge
 * asking for the next OTP; its answer resyncs the token (see
 * {@link classifyAnswer}). Needs the system config `AutoResync`.
 */
async function resyncChallenge(
  ctx: CheckContext,
  tokens: TokenWithInfo[],
  failure: CheckResult,
): Promise<CheckResult> {
  const serial = failure.detail.serial;
  const t = typeof serial === "string" ? tokens.find((x) => x.serial === serial) : undefined;
  if (!t || infoValue(t.info, "otp1c") === "") return failure;
  return await genericChallenge(ctx, t, { kind: GENERIC_RESYNC, message: RESYNC_MESSAGE });
}

/**
 * A challenge of one token that Tessera asks itself (a resync, a new PIN),
 * answered in the same way as the token's own, with privacyIDEA's reply.
 */
async function genericChallenge(
  ctx: CheckContext,
  t: TokenWithInfo,
  challenge: { kind: string; message: string; data?: string; validity?: number },
): Promise<CheckResult> {
  const { transactionId } = await createChallenges(ctx.deps, ctx.system, [{
    serial: t.serial,
    type: t.type,
    message: challenge.message,
    challenge: challenge.kind,
    data: challenge.data,
    validity: challenge.validity ?? ctx.system.int("DefaultChallengeValidityTime"),
  }]);
  return {
    value: false,
    detail: {
      multi_challenge: [{
        transaction_id: transactionId,
        client_mode: "interactive",
        message: challenge.message,
        attributes: null,
        serial: t.serial,
        type: t.type,
      }],
      message: challenge.message,
      messages: [challenge.message],
      transaction_id: transactionId,
      transaction_ids: [transactionId],
    },
    serial: t.serial,
    tokenType: t.type,
  };
}

/** The token-list check itself (spec 02 §6.2 steps 1–4). */
async function checkTokens(ctx: CheckContext, all: TokenWithInfo[]): Promise<CheckResult> {
  const tokens = usableTokens(ctx, all);
  const transactionId = ctx.request.transactionId;
  const groups: Groups = {
    // expired challenges still classify the request as a response (expiry is checked later)
    tx: transactionId
      ? {
        id: transactionId,
        stored: await challengesOfTransaction(ctx.deps, transactionId, tokens.map((t) => t.serial)),
      }
      : undefined,
    stateMessages: new Set(),
    valid: [],
    responded: [],
    rightAnswers: [],
    challengeRequests: [],
    challengeOverrides: {},
    reChallenged: [],
    pinMatching: [],
    invalid: [],
    isPreviousOtp: false,
  };
  for (const t of tokens) await classifyToken(ctx, groups, t);
  return await decide(ctx, groups);
}

/** Step 1 and 2: without revoked tokens (none left: locked) and disabled types, push last. */
function usableTokens(ctx: CheckContext, all: TokenWithInfo[]): TokenWithInfo[] {
  const tokens = all.filter((t) => !t.revoked);
  if (tokens.length === 0) throw new TokenAdminError(TOKEN_LOCKED_MESSAGE, 1007);
  return tokens.filter((t) => !ctx.policies.disabledTokenTypes.includes(t.type)).sort((a, b) =>
    typeOrder(a.type) - typeOrder(b.type) || a.type.charAt(0).localeCompare(b.type.charAt(0))
  );
}

/** Step 3: puts one token into its group. */
async function classifyToken(ctx: CheckContext, groups: Groups, t: TokenWithInfo): Promise<void> {
  await maybeClearFailcounter(ctx, t);
  const problems = stateProblems(ctx, t);
  if (problems.length > 0) {
    problems.forEach((p) => groups.stateMessages.add(p));
    return;
  }
  const module = tokenTypeOf(t.type);
  if (!module) groups.invalid.push(t);
  else if (groups.tx) await classifyAnswer(ctx, groups, t, module);
  else if (isRemotePin(module, t)) await classifyRemote(ctx, groups, t, module);
  else await classifyPinOtp(ctx, groups, t, module);
}

/** A radius token whose PIN the upstream server checks (the whole pass goes there). */
function isRemotePin(module: TokenType, t: TokenWithInfo): boolean {
  const remote = module as Partial<RadiusTokenExtras>;
  return remote.authenticate !== undefined && remote.pinCheckedRemotely?.(t) === true;
}

/**
 * Second step of challenge-response: `pass` is the OTP only. A right answer
 * is only a candidate; the transaction's consumption decides (see {@link decide}).
 */
async function classifyAnswer(
  ctx: CheckContext,
  groups: Groups,
  t: TokenWithInfo,
  module: TokenType,
): Promise<void> {
  const tx = groups.tx!;
  const pass = ctx.request.pass;
  if (!tx.stored.some((c) => c.serial === t.serial)) {
    groups.invalid.push(t);
    return;
  }
  groups.responded.push(t);
  const challenge = tx.stored.find((c) => c.serial === t.serial && c.expiresAt >= ctx.now);
  if (!challenge) return;
  const typeCtx = checkContext(ctx.deps, ctx.system, t);
  let check: OtpCheck;
  if (isAddressChallenge(parseData(challenge.data))) {
    // the first answer of an email or SMS enrolment via multichallenge is the new address
    check = await answerAddressChallenge(ctx.deps, t, pass, {
      user: ctx.user ?? t.owner,
      clientIp: ctx.request.clientIp,
    });
  } else if (isRemotePin(module, t)) {
    // the upstream server checks the answer; its State travels in the challenge data
    const out = await (module as TokenType & RadiusTokenExtras).authenticate(typeCtx, pass, {
      challengeData: parseData(challenge.data),
      challengeAllowed: true,
    });
    if (out.result === "challenge") {
      groups.reChallenged.push(t);
      groups.challengeOverrides[t.serial] = {
        message: out.message,
        data: JSON.stringify(out.data),
      };
    }
    check = { isValid: out.result === "accept" };
  } else if (module.checkAnswer) {
    // the type's own challenge (positions, question, sent code) is in its data
    check = await module.checkAnswer(typeCtx, pass, parseData(challenge.data) ?? {});
  } else check = await module.checkOtp(typeCtx, pass);
  if (!check.isValid && challenge.challenge === GENERIC_RESYNC) {
    // the answer to a resync challenge is the OTP after the remembered one
    check = { isValid: await autoResync(ctx, t, typeCtx, pass) };
  }
  if (check.isValid) groups.rightAnswers.push({ token: t, check });
}

/** Remote PIN: the whole pass goes upstream, no local PIN check. */
async function classifyRemote(
  ctx: CheckContext,
  groups: Groups,
  t: TokenWithInfo,
  module: TokenType,
): Promise<void> {
  const out = await (module as TokenType & RadiusTokenExtras).authenticate(
    checkContext(ctx.deps, ctx.system, t),
    ctx.request.pass,
    { challengeAllowed: ctx.policies.challengeResponse.includes(t.type) },
  );
  if (out.result === "accept") groups.valid.push(t);
  else if (out.result === "challenge") {
    groups.challengeRequests.push(t);
    groups.challengeOverrides[t.serial] = { message: out.message, data: JSON.stringify(out.data) };
  } else groups.invalid.push(t);
}

/** PIN (alone: a challenge request) or PIN+OTP checked here. */
async function classifyPinOtp(
  ctx: CheckContext,
  groups: Groups,
  t: TokenWithInfo,
  module: TokenType,
): Promise<void> {
  const pass = ctx.request.pass;
  if (module.mayTrigger && !module.mayTrigger(typePolicy(ctx.policies))) {
    // answered only through the FIDO branch (a passkey without passkey_trigger_by_pin)
    return;
  }
  const canChallenge = module.challenge &&
    (module.challengeOnly || ctx.policies.challengeResponse.includes(t.type));
  if (canChallenge && await pinMatches(ctx, t, pass)) {
    groups.challengeRequests.push(t);
    return;
  }
  const split = module.pinOnly
    ? { pin: pass, otp: "" }
    : splitPinPass(pass, t.otplen, ctx.system.bool("PrependPin"));
  if (!split || !(await pinMatches(ctx, t, split.pin))) {
    groups.invalid.push(t);
    return;
  }
  if (ctx.policies.forceChallengeResponse && module.challenge && !module.pinOnly) {
    groups.invalid.push(t);
    return;
  }
  const typeCtx = checkContext(ctx.deps, ctx.system, t);
  const res = await module.checkOtp(typeCtx, split.otp);
  if (res.isValid && await applyOtpCheck(ctx, t, res)) groups.valid.push(t);
  else if (!res.isValid && await autoResync(ctx, t, typeCtx, split.otp)) groups.valid.push(t);
  else {
    if (await module.isPreviousOtp?.(typeCtx, split.otp)) groups.isPreviousOtp = true;
    groups.pinMatching.push(t);
  }
}

/** Step 4: the first non-empty group decides the outcome. */
async function decide(ctx: CheckContext, groups: Groups): Promise<CheckResult> {
  if (groups.valid.length > 0) {
    const tooOld = lastAuthProblem(ctx, groups.valid);
    if (tooOld) return tooOld;
    const used = await settleSuccess(ctx, groups.valid, {
      countAuth: !ctx.system.bool("no_auth_counter"),
    });
    if (used.length > 0) return acceptValid(used, ctx.now);
    // one-time tokens a parallel request used up first: as if the pass were wrong
    groups.invalid.push(...groups.valid);
  }
  if (groups.responded.length > 0) return await answerTransaction(ctx, groups);
  if (groups.challengeRequests.length > 0) {
    return await triggerChallenges(ctx, groups.challengeRequests, {
      increaseFailcount: ctx.policies.increaseFailcounterOnChallenge,
      overrides: groups.challengeOverrides,
    });
  }
  if (groups.pinMatching.length > 0) return await rejectPinMatch(ctx, groups);
  if (groups.invalid.length > 0) return await rejectInvalid(ctx, groups.invalid);
  if (groups.stateMessages.size > 0) {
    return { value: false, detail: { message: [...groups.stateMessages].join(", ") } };
  }
  return { value: false, detail: { message: "No suitable token found for authentication." } };
}

/** The `valid` outcome: `matching N tokens`. */
function acceptValid(valid: TokenWithInfo[], now: number): CheckResult {
  const detail: Record<string, unknown> = { message: `matching ${valid.length} tokens` };
  const result: CheckResult = { value: true, detail, tokens: valid };
  if (valid.length === 1) {
    const t = valid[0];
    Object.assign(detail, { serial: t.serial, type: t.type, otplen: t.otplen });
    Object.assign(detail, pinChangeInfo(t, now));
    result.serial = t.serial;
    result.tokenType = t.type;
  } else if (new Set(valid.map((t) => t.type)).size > 1) {
    detail.type = "undetermined";
  } else {
    detail.type = valid[0].type;
  }
  return result;
}

/**
 * The `response` outcome. A transaction is answered once: the right answers
 * consume it with one conditional statement, and only a token whose open
 * challenge this request's statement removed has answered it (a parallel
 * answer that lost gets a failed authentication). Only the winner's OTP
 * counter moves, in the same commit as the consumption.
 */
async function answerTransaction(ctx: CheckContext, groups: Groups): Promise<CheckResult> {
  const candidates = groups.rightAnswers.map((a) => a.token);
  // decided before anything is written: a refused answer leaves the transaction open
  const tooOld = lastAuthProblem(ctx, candidates);
  if (tooOld) return tooOld;
  const answered = await consumeAnswers(ctx, groups.tx!, groups.rightAnswers);
  const nextRound = (t: TokenWithInfo) =>
    groups.rightAnswers.find((a) => a.token === t)?.check.nextRound;
  const final = answered.filter((t) => nextRound(t) === undefined);
  if (final.length === 0 && answered.length > 0) {
    // a right answer of a multi-round type: the next round is a new challenge (new transaction)
    return await triggerChallenges(ctx, answered, {
      rounds: Object.fromEntries(answered.map((t) => [t.serial, nextRound(t)!])),
    });
  }
  const accepted = final.length > 0
    ? await settleSuccess(ctx, final, { countAuth: !ctx.system.bool("no_auth_counter") })
    : [];
  if (accepted.length > 0) {
    const t = accepted[0];
    return {
      value: true,
      // privacyIDEA answers a challenge with the message and the serial only (no type, no otplen)
      detail: {
        message: "Found matching challenge",
        serial: t.serial,
        ...pinChangeInfo(t, ctx.now),
      },
      serial: t.serial,
      tokenType: t.type,
      tokens: accepted,
    };
  }
  return await rejectAnswer(ctx, groups);
}

/** A `response` that did not answer the transaction (wrong, expired, or a parallel one won). */
async function rejectAnswer(ctx: CheckContext, groups: Groups): Promise<CheckResult> {
  await raiseFailcounters(ctx, groups.responded);
  if (groups.reChallenged.length > 0) {
    // this attempt failed; a new challenge (new transaction, State, message) replaces the old
    await deleteChallengesOf(ctx.deps, groups.reChallenged.map((t) => t.serial));
    return await triggerChallenges(ctx, groups.reChallenged, {
      overrides: groups.challengeOverrides,
    });
  }
  if (groups.responded.length === 1) {
    const t = groups.responded[0];
    return {
      value: false,
      detail: { message: "Response did not match the challenge.", serial: t.serial, type: t.type },
      serial: t.serial,
      tokenType: t.type,
    };
  }
  return {
    value: false,
    detail: { message: `Response did not match for ${groups.responded.length} tokens.` },
  };
}

/**
 * Consumes the transaction for the right answers and returns the tokens that
 * answered it: those whose open challenge this request removed, and whose
 * OTP counter then moved (it moves for no one else). None when a parallel
 * answer consumed the transaction first.
 */
async function consumeAnswers(
  ctx: CheckContext,
  tx: Transaction,
  answers: RightAnswer[],
): Promise<TokenWithInfo[]> {
  if (answers.length === 0) return [];
  if (!hasDirectAccess(ctx.deps.db)) {
    // no write group (PostgreSQL): the consumption and the counter writes share
    // one database transaction, so they land together or not at all
    return await ctx.deps.db.transaction().execute(async (trx) =>
      await consumeWith({ ...ctx, deps: { ...ctx.deps, db: trx } }, tx, answers)
    );
  }
  return await consumeWith(ctx, tx, answers);
}

async function consumeWith(
  ctx: CheckContext,
  tx: Transaction,
  answers: RightAnswer[],
): Promise<TokenWithInfo[]> {
  const consumed = await consumeTransaction(ctx.deps, tx.id, ctx.pending);
  const answered: TokenWithInfo[] = [];
  for (const { token, check } of answers) {
    if (consumed.includes(token.serial) && await applyOtpCheck(ctx, token, check)) {
      answered.push(token);
    }
  }
  return answered;
}

/** The `pin-match` outcome: right PIN, wrong OTP. */
async function rejectPinMatch(ctx: CheckContext, groups: Groups): Promise<CheckResult> {
  const tokens = groups.pinMatching;
  await raiseFailcounters(ctx, tokens);
  await recordAuth(ctx.deps.db, tokens.map((t) => t.id), {
    isSuccess: false,
    countAuth: !ctx.system.bool("no_auth_counter"),
  }, ctx.pending);
  const result: CheckResult = { value: false, detail: { message: "wrong otp value" } };
  if (tokens.length === 1) {
    const t = tokens[0];
    const message = groups.isPreviousOtp
      ? "wrong otp value. previous otp used again"
      : "wrong otp value";
    Object.assign(result.detail, { message, serial: t.serial, type: t.type, otplen: t.otplen });
    result.serial = t.serial;
    result.tokenType = t.type;
  }
  return result;
}

/** The `invalid` outcome: wrong PIN (or no such challenge). */
async function rejectInvalid(ctx: CheckContext, invalid: TokenWithInfo[]): Promise<CheckResult> {
  if (ctx.system.bool("IncFailCountOnFalsePin")) {
    await raiseFailcounters(ctx, invalid);
  }
  const result: CheckResult = { value: false, detail: { message: "wrong otp pin" } };
  if (invalid.length === 1) {
    result.serial = invalid[0].serial;
    result.tokenType = invalid[0].type;
  }
  return result;
}

/**
 * Auto-resync (system config `AutoResync`, spec 02 §4): an OTP found in the
 * sync window is remembered (`otp1c`, `dueDate`); the directly following OTP
 * before the due date resyncs the token and authenticates.
 */
async function autoResync(
  ctx: CheckContext,
  t: TokenWithInfo,
  typeCtx: TypeCheckContext,
  otp: string,
): Promise<boolean> {
  const module = tokenTypeOf(t.type);
  if (!module?.findInSyncWindow || !ctx.system.bool("AutoResync")) return false;
  const counter = await module.findInSyncWindow(typeCtx, otp);
  if (counter < 0) return false;
  const first = Number(t.info.otp1c?.value ?? "NaN");
  const due = Number(t.info.dueDate?.value ?? "0");
  if (first + 1 === counter && ctx.now <= due * 1000) {
    if (!(await advanceCounter(ctx.deps.db, t.id, counter + 1, ctx.pending))) return false;
    await setInfoOnCheck(ctx.deps.db, t.id, plainInfo({ otp1c: "", dueDate: "" }), ctx.pending);
    t.info = { ...t.info, otp1c: { value: "", type: "" } };
    return true;
  }
  const timeout = ctx.system.int("AutoResyncTimeout");
  const remembered = {
    otp1c: String(counter),
    dueDate: String(Math.floor(ctx.now / 1000) + timeout),
  };
  await setInfoOnCheck(ctx.deps.db, t.id, plainInfo(remembered), ctx.pending);
  // what this request remembered is what resync_via_multichallenge reads
  t.info = { ...t.info, otp1c: { value: remembered.otp1c, type: "" } };
  return false;
}

/** Creates challenges for `tokens` and returns the §7 result. */
export async function triggerChallenges(
  ctx: CheckContext,
  tokens: TokenWithInfo[],
  options: {
    increaseFailcount?: boolean;
    /** Per-serial message and challenge data (e.g. an upstream RADIUS State). */
    overrides?: Record<string, { message: string; data: string }>;
    /** Per-serial data of the previous round of a multi-round type. */
    rounds?: Record<string, Record<string, unknown>>;
  } = {},
): Promise<CheckResult & { count: number }> {
  const { deps, system, policies } = ctx;
  const message = policies.challengeText ?? DEFAULT_CHALLENGE_TEXT;
  const extras: Record<string, Record<string, unknown>> = {};
  const typed: Record<string, TypeChallenge> = {};
  const failures: string[] = [];
  const challenged: TokenWithInfo[] = [];
  // values the challenges of this request share (one WebAuthn nonce)
  const shared = new Map<string, unknown>();
  for (const t of tokens) {
    const module = tokenTypeOf(t.type);
    if (module?.createChallenge && !options.overrides?.[t.serial]) {
      // the type makes its own challenge (sends the code, draws positions, picks a question)
      const made = await module.createChallenge({
        ...challengeContext(ctx, t, options.rounds?.[t.serial]),
        shared,
      });
      if ("failed" in made) {
        failures.push(made.failed);
        continue;
      }
      typed[t.serial] = made;
      if (made.extras) extras[t.serial] = made.extras;
    } else {
      const more = module?.challengeExtras?.(checkContext(deps, system, t));
      if (more && !options.overrides?.[t.serial]) extras[t.serial] = more;
    }
    const pinChange = pinChangeInfo(t, ctx.now);
    if ("pin_change" in pinChange) extras[t.serial] = { ...extras[t.serial], ...pinChange };
    challenged.push(t);
  }
  const one = (list: TokenWithInfo[]) => ({
    serial: list.length === 1 ? list[0].serial : undefined,
    tokenType: list.length === 1 ? list[0].type : undefined,
  });
  if (challenged.length === 0) {
    // e.g. "The PIN was correct, but the EMail could not be sent!": no challenge stored
    return { value: false, detail: { message: failures.join(", ") }, count: 0, ...one(tokens) };
  }
  const preferred = policies.preferredClientMode[0] ?? "interactive";
  const { detail } = await createChallenges(
    deps,
    system,
    challenged.map((t) => ({
      serial: t.serial,
      type: t.type,
      message: options.overrides?.[t.serial]?.message ?? typed[t.serial]?.message ??
        fillTags(message, ctx, t),
      data: options.overrides?.[t.serial]?.data ??
        (typed[t.serial]?.data ? JSON.stringify(typed[t.serial].data) : undefined),
      challenge: typed[t.serial]?.challenge,
      validity: typed[t.serial]?.validity,
    })),
    { extras, preferredClientMode: preferred },
  );
  if (options.increaseFailcount) await raiseFailcounters(ctx, challenged);
  return { value: false, detail, count: challenged.length, ...one(challenged) };
}

/** The context a type module gets to create its own challenge. */
function challengeContext(
  ctx: CheckContext,
  t: TokenWithInfo,
  round: Record<string, unknown> | undefined,
): TypeChallengeContext {
  return {
    ...checkContext(ctx.deps, ctx.system, t),
    user: ctx.user ?? t.owner,
    round,
    policy: typePolicy(ctx.policies),
  };
}

function parseData(data: string | undefined): Record<string, unknown> | undefined {
  if (!data) return undefined;
  try {
    const v = JSON.parse(data);
    return v && typeof v === "object" ? v as Record<string, unknown> : undefined;
  } catch {
    return undefined;
  }
}

function fillTags(text: string, ctx: CheckContext, t: TokenWithInfo): string {
  return text.replaceAll("\\,", ",")
    .replaceAll("{user}", ctx.user?.login ?? t.owner?.login ?? "")
    .replaceAll("{realm}", ctx.user?.realm ?? t.owner?.realm ?? "")
    .replaceAll("{serial}", t.serial)
    .replaceAll("{tokentype}", t.type);
}

/** The answer of a refused assertion: value false, no detail (spec 11 §4.4 step 5). */
function fidoRefused(t: TokenWithInfo | undefined, message?: string): CheckResult {
  return {
    value: false,
    detail: message === undefined ? {} : { message },
    serial: t?.serial,
    tokenType: t?.type,
  };
}

/**
 * The token an assertion names: `serial`, else the one holding the
 * credential (`credential_id_hash`), else among the transaction's
 * challenges a FIDO token whose credential id is the one sent (tokens
 * enrolled before the hash existed).
 */
async function fidoToken(
  deps: Deps,
  system: SystemConfig,
  req: CheckRequest,
  credentialId: Uint8Array,
): Promise<{ token: TokenWithInfo; module: FidoTokenType } | undefined> {
  const fit = (t: TokenWithInfo | undefined) => {
    const module = t && tokenTypeOf(t.type);
    return t && isFidoType(module) ? { token: t, module } : undefined;
  };
  if (req.serial) return fit(await loadSerialToken(deps, req.serial));
  const byHash = fit(await findTokenByCredentialIdHash(deps, await sha256Hex(credentialId)));
  if (byHash || !req.transactionId) return byHash;
  for (const c of await challengesOfTransaction(deps, req.transactionId)) {
    if (c.serial === "") continue;
    const found = fit(await findTokenBySerial(deps, c.serial, { withRealms: false }));
    if (!found) continue;
    const id = found.module.credentialIdOf(checkContext(deps, system, found.token));
    if (id.length > 0 && toHex(id) === toHex(credentialId)) return found;
  }
  return undefined;
}

/**
 * `/validate/check` with a credential id: the assertion of a WebAuthn or
 * passkey token answers one of its challenges (or a serial-less passkey
 * challenge of `/validate/initialize`). The transaction is consumed and the
 * sign count moved (compare-and-set) in one commit, so an assertion
 * succeeds once; a refused one changes nothing.
 */
async function checkFido(deps: Deps, req: CheckRequest, answer: FidoAnswer): Promise<CheckResult> {
  const tid = req.transactionId;
  if (!tid) throw new ParameterError("Missing parameter: transaction_id");
  const credentialId = credentialIdOfAnswer(answer);
  const system = await loadSystemConfig(deps);
  const found = await fidoToken(deps, system, req, credentialId);
  if (!found) {
    return fidoRefused(undefined, "No token found for the given credential ID or transaction ID!");
  }
  return await runFido(deps, system, req, found, { tid, answer });
}

/** The raw credential id of an assertion; ParameterError when it is not base64url. */
function credentialIdOfAnswer(answer: FidoAnswer): Uint8Array {
  const credentialId = fromB64url(answer.credentialId);
  if (!credentialId || credentialId.length === 0 || credentialId.length > 1023) {
    throw new ParameterError('Cannot parse parameter "credential_id": expected base64url');
  }
  return credentialId;
}

/** The FIDO branch once the token is known: its policies, the checks, the post-policies. */
async function runFido(
  deps: Deps,
  system: SystemConfig,
  req: CheckRequest,
  found: { token: TokenWithInfo; module: FidoTokenType },
  input: { tid: string; answer: FidoAnswer; isUvRequired?: boolean },
): Promise<CheckResult> {
  const held = await fidoHolder(deps, req, found.token);
  if ("refusal" in held) return held.refusal;
  const { token } = held;
  const owner = token.owner;
  const ctx = await ownerContext(deps, system, req, token);
  try {
    const result = await answerFido(ctx, token, found.module, input);
    result.user ??= owner;
    result.login = owner?.login;
    result.realm = owner?.realm;
    // a request that names its user (a WebAuthn login) remembers the type, as privacyIDEA's
    if (result.value && req.user && owner && !req.isWebuiLogin) {
      await rememberLastUsedToken(ctx, owner, result);
    }
    return await postPolicies(ctx, result);
  } finally {
    await ctx.pending.settle();
  }
}

/**
 * The token of an assertion with its owner as the user store has it now
 * (one lookup): the user the request names, who must own the token, or
 * else the stored owner found again. A user deleted from the user store (or
 * whose resolver left the realm) no longer authenticates with the token, by
 * credential id or serial alike, and one renamed there is answered under the
 * new name. The refusal is a plain failed assertion; the log says why.
 */
async function fidoHolder(
  deps: Deps,
  req: CheckRequest,
  token: TokenWithInfo,
): Promise<{ token: TokenWithInfo } | { refusal: CheckResult }> {
  // an ownerless token is refused by answerFido, with privacyIDEA's message
  if (!token.owner) return { token };
  if (req.user) {
    // a named user must own the token the credential belongs to
    const { login, realm } = await splitUser(deps, req.user, req.realm || undefined);
    const user = await resolveUser(deps, login, realm, req.resolver || undefined);
    if (!user || !isOwner(token, user)) {
      return {
        refusal: fidoRefused(
          undefined,
          "No token found for the given credential ID or transaction ID!",
        ),
      };
    }
    return { token: { ...token, owner: user } };
  }
  const owner = await currentUser(deps, token.owner);
  if (!owner) {
    logOwnerGone(deps, token);
    return {
      refusal: { ...fidoRefused(token), login: token.owner.login, realm: token.owner.realm },
    };
  }
  return { token: { ...token, owner } };
}

/** Input of {@link checkPasskeyLogin}. */
export interface PasskeyLoginRequest {
  transactionId: string;
  answer: FidoAnswer;
  clientIp: string;
  userAgent: string;
}

/**
 * The passkey assertion of a WebUI login (`POST /auth`, spec 11 §5.3 point
 * 4): the FIDO branch of `/validate/check` with user verification required
 * whatever the challenge asked for. `undefined` when no passkey holds the
 * credential; otherwise the check's result (value true: the owner logged in).
 */
export async function checkPasskeyLogin(
  deps: Deps,
  req: PasskeyLoginRequest,
): Promise<CheckResult | undefined> {
  // checked first: a missing Origin answered only after the token checks would tell their outcome
  requireOrigin(req.answer.origin);
  const credentialId = credentialIdOfAnswer(req.answer);
  const system = await loadSystemConfig(deps);
  const check: CheckRequest = {
    pass: "",
    transactionId: req.transactionId,
    clientIp: req.clientIp,
    userAgent: req.userAgent,
    fido: req.answer,
  };
  const found = await fidoToken(deps, system, check, credentialId);
  // a WebAuthn token is no passkey: it does not log in without a user name
  if (!found || found.token.type !== "passkey") return undefined;
  return await runFido(deps, system, check, found, {
    tid: req.transactionId,
    answer: req.answer,
    isUvRequired: true,
  });
}

async function answerFido(
  ctx: CheckContext,
  token: TokenWithInfo,
  module: FidoTokenType,
  input: { tid: string; answer: FidoAnswer; isUvRequired?: boolean },
): Promise<CheckResult> {
  const { deps } = ctx;
  const { tid, answer } = input;
  if (ctx.policies.disabledTokenTypes.includes(token.type)) {
    throw new PolicyError("The authentication method is not available.");
  }
  const owner = token.owner;
  if (!owner) {
    return fidoRefused(token, "No user found for the token with the given credential ID!");
  }
  if (lastAuthProblem(ctx, [token])) {
    return fidoRefused(token, `Last authentication policy check failed for token ${token.serial}`);
  }
  if (token.revoked) return fidoRefused(token, "Token is disabled");
  await maybeClearFailcounter(ctx, token);
  const problems = stateProblems(ctx, token);
  if (problems.length > 0) return fidoRefused(token, problems.join(", "));
  const limited = await authLimitProblem(ctx, owner);
  if (limited) return { ...limited, serial: token.serial, tokenType: token.type };

  const stored = await challengesOfTransaction(deps, tid);
  if (stored.length === 0) {
    throw new ResourceNotFoundError(`Challenge with transaction_id ${tid} not found.`);
  }
  // the token's own challenge, or a serial-less one (/validate/initialize) if its type answers those
  const challenge = stored.find((c) => c.serial === token.serial) ??
    (module.answersUserlessChallenge ? stored.find((c) => c.serial === "") : undefined);
  if (!challenge) {
    throw new ValidateError(
      `The challenge ${tid} is not meant for the token ${token.serial}.`,
      403,
    );
  }
  if (challenge.expiresAt < ctx.now) {
    throw new ValidateError(`The challenge ${tid} has timed out.`, 403);
  }
  const aaguids = ctx.policies.fidoAaguids;
  if (
    aaguids && !aaguids.includes(infoValue(token.info, "aaguid").toLowerCase().replaceAll("-", ""))
  ) {
    throw new PolicyError(
      "The WebAuthn token is not allowed to authenticate due to a policy restriction.",
    );
  }
  const check = await module.checkAssertion(checkContext(deps, ctx.system, token), answer, {
    nonce: nonceOfChallenge(challenge.challenge),
    userVerification: input.isUvRequired ? "required" : uvOfChallengeData(challenge.data),
  });
  if (!check.isValid) {
    // the client gets a plain failure; the reason is for the administrator
    deps.log.info("A FIDO assertion was refused", { serial: token.serial, reason: check.reason });
    return fidoRefused(token);
  }
  const { reason: _reason, ...otpCheck } = check;
  if (!(await consumeFido(ctx, tid, challenge.serial, token, otpCheck))) {
    deps.log.info("A FIDO assertion was refused", {
      serial: token.serial,
      reason: "a parallel request answered the challenge or moved the sign count first",
    });
    return fidoRefused(token);
  }
  await settleSuccess(ctx, [token], { countAuth: !ctx.system.bool("no_auth_counter") });
  // privacyIDEA 3.13: a FIDO login, which checks no token list, resets the owner's tokens too
  if (ctx.policies.resetAllUserTokens) {
    await resetAllTokens(ctx, await getTokensOfUser(deps, owner, { withRealms: false }));
  }
  return {
    value: true,
    detail: { username: owner.login, message: "Found matching challenge", serial: token.serial },
    serial: token.serial,
    tokenType: token.type,
    tokens: [token],
  };
}

/**
 * Consumes the transaction (one statement; only the request that removed
 * the challenge goes on) and moves the sign count (compare-and-set), both in
 * one commit. False when a parallel request was first at either.
 */
async function consumeFido(
  ctx: CheckContext,
  tid: string,
  challengeSerial: string,
  token: TokenWithInfo,
  check: OtpCheck,
): Promise<boolean> {
  const run = async (e: CheckContext) => {
    const consumed = await consumeTransaction(e.deps, tid, e.pending);
    return consumed.includes(challengeSerial) && await applyOtpCheck(e, token, check);
  };
  if (!hasDirectAccess(ctx.deps.db)) {
    // no write group (PostgreSQL): one database transaction carries both writes
    return await ctx.deps.db.transaction().execute(async (trx) =>
      await run({ ...ctx, deps: { ...ctx.deps, db: trx } })
    );
  }
  return await run(ctx);
}

/** Input of {@link initializeAuthentication}. */
export interface InitializeRequest {
  type: string;
  clientIp: string;
  userAgent: string;
}

/**
 * `/validate/initialize?type=passkey` (spec 11 §5.3): a challenge without a
 * serial for a login without a user name; the relying party comes from the
 * enrolment policy, the user verification from the authentication policy.
 */
export async function initializeAuthentication(
  deps: Deps,
  req: InitializeRequest,
): Promise<Record<string, unknown>> {
  const type = req.type.toLowerCase();
  if (type !== "passkey") {
    throw new ParameterError(
      `Unsupported token type '${req.type}' for authentication initialization!`,
    );
  }
  const system = await loadSystemConfig(deps);
  const policies = await validatePolicies(deps, {
    login: "",
    realm: "",
    clientIp: req.clientIp,
    userAgent: req.userAgent,
  });
  if (policies.disabledTokenTypes.includes(type)) {
    throw new PolicyError("The authentication method is not available.");
  }
  const enroll = await enrollPolicies(deps, { type });
  const rpId = enroll.typeActions.webauthn_relying_party_id?.trim().toLowerCase();
  if (!rpId) {
    throw new PolicyError(
      "Missing policy for webauthn_relying_party_id, unable to create challenge!",
    );
  }
  const policy = typePolicy(policies);
  const userVerification = uvLevel(policy("webauthn_user_verification_requirement"));
  const message = (policy("passkey_challenge_text") ?? PASSKEY_AUTH_TEXT).replaceAll("\\,", ",");
  const challenge = b64url(deps.random.bytes(32));
  const { transactionId } = await createChallenges(deps, system, [{
    serial: "",
    type,
    message,
    challenge,
    data: JSON.stringify({ user_verification: userVerification }),
  }]);
  return {
    transaction_id: transactionId,
    passkey: {
      transaction_id: transactionId,
      challenge,
      message,
      rpId,
      user_verification: userVerification,
    },
  };
}

/** Input of {@link triggerChallenge}. */
export interface TriggerRequest {
  user?: string;
  realm?: string;
  resolver?: string;
  serial?: string;
  type?: string;
  clientIp: string;
  userAgent: string;
}

/**
 * `/validate/triggerchallenge` (admin): challenges for every active,
 * challenge-capable token of the user or serial; no policy needed.
 */
export async function triggerChallenge(
  deps: Deps,
  req: TriggerRequest,
): Promise<
  {
    count: number;
    detail: Record<string, unknown>;
    serial?: string;
    tokenType?: string;
    user?: UserRef;
  }
> {
  const serial = req.serial ?? "";
  if (serial === "" && !req.user) {
    throw new ParameterError("You need to specify a serial or a user.");
  }
  const system = await loadSystemConfig(deps);
  let user: UserRef | undefined;
  let login = "";
  let realm = "";
  if (req.user) {
    ({ login, realm } = await splitUser(deps, req.user, req.realm || undefined));
    user = await resolveUser(deps, login, realm, req.resolver || undefined);
    if (!user) throw new UserError(USER_NOT_FOUND_MESSAGE);
  }
  // loaded once: the policies match on its owner, the challenge goes to it
  const serialToken = serial !== "" ? await loadSerialToken(deps, serial) : undefined;
  if (serialToken && user && !isOwner(serialToken, user)) {
    throw new ResourceNotFoundError(TOKEN_NOT_FOUND_MESSAGE);
  }
  const policies = await validatePolicies(deps, {
    login,
    realm,
    user,
    serial: serial || undefined,
    token: serialToken,
    clientIp: req.clientIp,
    userAgent: req.userAgent,
  });
  let tokens = serialToken ? [serialToken] : await getTokensOfUser(deps, user!);
  if (req.type) tokens = tokens.filter((t) => t.type === req.type!.toLowerCase());
  const policy = typePolicy(policies);
  tokens = tokens.filter((t) => {
    const module = tokenTypeOf(t.type);
    return t.active && !t.revoked && !t.locked && t.failcount < t.maxfail &&
      module?.challenge === true && (module.mayTrigger?.(policy) ?? true);
  });
  if (tokens.length === 0) {
    return { count: 0, detail: { messages: [], multi_challenge: [], transaction_ids: [] }, user };
  }
  const ctx = newCheckContext(deps, {
    system,
    // a trigger sends no pass: the challenges are the answer
    request: { pass: "", clientIp: req.clientIp, userAgent: req.userAgent },
    login,
    realm,
    user,
    token: serialToken,
    policies,
  });
  const res = await triggerChallenges(ctx, tokens, {
    increaseFailcount: policies.increaseFailcounterOnChallenge,
  }).finally(() => ctx.pending.settle());
  await withPreferredClientMode(ctx, res.detail, user);
  withChallengeTextHeader(policies, res.detail);
  return {
    count: res.count,
    detail: res.detail,
    serial: res.serial,
    tokenType: res.tokenType,
    user,
  };
}

/** `/validate/samlcheck`: `{auth, attributes}` (spec 02 §8). */
export async function samlCheck(
  deps: Deps,
  req: CheckRequest,
): Promise<{ value: { auth: boolean; attributes: Record<string, unknown> }; result: CheckResult }> {
  const result = await validateCheck(deps, req);
  const system = await loadSystemConfig(deps);
  let attributes: Record<string, unknown> = {};
  const wants = system.bool("ReturnSamlAttributes") &&
    (result.value || system.bool("ReturnSamlAttributesOnFail"));
  if (wants && result.user) {
    const info = await getUserInfo(deps, result.user);
    const { password: _pw, ...rest } = info;
    attributes = {
      ...rest,
      username: result.user.login,
      realm: result.user.realm,
      resolver: result.user.resolver,
      email: info.email ?? "",
      surname: info.surname ?? "",
      givenname: info.givenname ?? "",
      mobile: info.mobile ?? "",
      phone: info.phone ?? "",
    };
  }
  return { value: { auth: result.value, attributes }, result };
}

export { challengeDetail, type MultiChallengeEntry };
