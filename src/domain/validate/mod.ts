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
import { loadSystemConfig, type SystemConfig } from "../system/mod.ts";
import {
  advanceTokenCounter,
  checkContext,
  checkPin,
  clearFailcount,
  deleteTokenById,
  findTokenBySerial,
  getTokensOfUser,
  increaseFailcount,
  isOwner,
  lastAuthStamp,
  parseValidityDate,
  recordAuthentication,
  splitPinPass,
  TOKEN_LOCKED_MESSAGE,
  TOKEN_NOT_FOUND_MESSAGE,
  tokenTypeOf,
  type TokenWithInfo,
  updateTokenInfo,
  USER_NOT_FOUND_MESSAGE,
  type UserRef,
} from "../token/mod.ts";
import {
  challengeDetail,
  challengesOfTransaction,
  closeTransaction,
  createChallenges,
  DEFAULT_CHALLENGE_TEXT,
  deleteChallengesOf,
  type MultiChallengeEntry,
} from "../challenge/mod.ts";
import { checkUserPassword, getUserInfo, resolveUser, splitUser } from "../token/_users.ts";
import { type ValidatePolicies, validatePolicies } from "./policy.ts";
import type { OtpCheck, TypeCheckContext } from "../token/types/mod.ts";
import { countAuthAttempts } from "./validate_store.ts";
import { PendingCommits } from "../../db/direct.ts";
import type { RadiusTokenExtras } from "../token/types/radius.ts";
import { radiusPassthru } from "../radius/mod.ts";

export type { UserRef } from "../token/mod.ts";
export {
  DEFAULT_VALIDATE_POLICIES,
  setValidatePolicyOverride,
  type ValidatePolicies,
  validatePolicies,
  type ValidatePolicyContext,
} from "./policy.ts";

/** Input of {@link validateCheck}. */
export interface CheckRequest {
  user?: string;
  realm?: string;
  resolver?: string;
  serial?: string;
  pass: string;
  /** `transaction_id` or its alias `state`. */
  transactionId?: string;
  otponly?: boolean;
  type?: string;
  clientIp: string;
  userAgent: string;
}

/** Outcome of {@link validateCheck}: `result.value` and `detail`. */
export interface CheckResult {
  value: boolean;
  detail: Record<string, unknown>;
  /** Serial of the token that decided (audit). */
  serial?: string;
  tokenType?: string;
  /** The user the request was about (resolved), for audit and attributes. */
  user?: UserRef;
  /** Login and realm as requested (also when the user is unknown). */
  login?: string;
  realm?: string;
  /** Names of the authentication/authorization policies that applied (audit). */
  policies?: string[];
}

/** Everything one check request needs, loaded once. */
interface CheckEnv {
  deps: Deps;
  system: SystemConfig;
  policies: ValidatePolicies;
  user?: UserRef;
  now: number;
  /** Commits of this check's hot-path writes, settled before it answers. */
  pending: PendingCommits;
}

/**
 * Authenticates a user or a serial with `pass` (PIN+OTP, or OTP for a
 * challenge answer). Failed authentications are results, not errors.
 */
export async function validateCheck(deps: Deps, req: CheckRequest): Promise<CheckResult> {
  const serial = req.serial ?? "";
  const userParam = req.user ?? "";
  if (serial === "" && userParam === "") {
    throw new ParameterError("You need to specify a serial, user or credential_id.");
  }
  if (serial.includes("*")) throw new ParameterError("Invalid serial number.");
  if (userParam.includes("%")) throw new ParameterError("Invalid user.");

  const system = await loadSystemConfig(deps);
  let login = "";
  let realm = "";
  let user: UserRef | undefined;
  if (userParam !== "") {
    ({ login, realm } = await splitUser(deps, userParam, req.realm || undefined));
    user = await resolveUser(deps, login, realm, req.resolver || undefined);
  }
  // loaded once: the policies of a serial-only request match on the token owner
  const serialToken = serial !== ""
    ? await findTokenBySerial(deps, serial, { withRealms: false })
    : undefined;
  if (serial !== "" && !serialToken) throw new ResourceNotFoundError(TOKEN_NOT_FOUND_MESSAGE);
  // reads realm and user at call time: setrealm below changes both
  const policiesOfRequest = () =>
    validatePolicies(deps, {
      login,
      realm,
      user,
      resolver: user?.resolver ?? req.resolver,
      serial: serial || undefined,
      token: serialToken,
      clientIp: req.clientIp,
      userAgent: req.userAgent,
    });
  let policies = await policiesOfRequest();
  if (policies.setrealm && userParam !== "" && policies.setrealm !== realm) {
    realm = policies.setrealm;
    user = await resolveUser(deps, login, realm, req.resolver || undefined);
    policies = await policiesOfRequest();
  }
  const env: CheckEnv = {
    deps,
    system,
    policies,
    user,
    now: deps.clock.now(),
    pending: new PendingCommits(),
  };
  try {
    return await checkAndPost(env, req, serialToken, login, realm, userParam);
  } finally {
    // the counter, fail counter and auth-count writes share one commit; none is answered before it
    await env.pending.settle();
  }
}

/** The check itself, once user, policies and a serial's token are known; then the post-policies. */
async function checkAndPost(
  env: CheckEnv,
  req: CheckRequest,
  serialToken: TokenWithInfo | undefined,
  login: string,
  realm: string,
  userParam: string,
): Promise<CheckResult> {
  const user = env.user;
  let result: CheckResult;
  if (serialToken) {
    const token = serialToken;
    if (userParam !== "" && !(user && isOwner(token, user))) {
      throw new ParameterError("Given serial does not belong to given user!");
    }
    env.user = user ?? token.owner;
    result = req.otponly
      ? await checkOtpOnly(env, token, req.pass)
      : await checkTokenList(env, [token], req.pass, req.transactionId);
  } else {
    result = await checkUser(env, login, realm, req);
  }
  result.user ??= env.user;
  result.login = login || env.user?.login;
  result.realm = realm || env.user?.realm;
  return await postPolicies(env, result);
}

async function checkUser(
  env: CheckEnv,
  login: string,
  realm: string,
  req: CheckRequest,
): Promise<CheckResult> {
  const { deps, policies, user } = env;
  if (!user) {
    if (policies.passOnNoUser) {
      return ok(`user does not exist, accepted due to '${policies.passOnNoUser}'`);
    }
    const who = req.resolver ? `${login}.${req.resolver}@${realm}` : `${login}@${realm}`;
    throw new UserError(`User ${who} does not exist.`);
  }
  let tokens = await getTokensOfUser(deps, user, { withRealms: false });
  if (policies.applicationTokentype && req.type) {
    const type = req.type.toLowerCase();
    tokens = tokens.filter((t) => t.type === type);
  }
  if (tokens.length === 0 && policies.passOnNoToken) {
    return ok(`user has no token, accepted due to '${policies.passOnNoToken}'`);
  }
  const limited = await authLimitProblem(env, user);
  if (limited) return limited;
  if (tokens.length === 0) {
    if (policies.passthru?.value === "userstore") {
      const isValid = await checkUserPassword(deps, user, req.pass);
      return {
        value: isValid,
        detail: { message: `against userstore due to '${policies.passthru.policy}'` },
      };
    }
    if (policies.passthru && policies.passthru.value !== "userstore") {
      // passthru=<RADIUS server definition>: anything but Access-Accept falls through
      const id = policies.passthru.value;
      if (await radiusPassthru(deps, id, { login: user.login, pass: req.pass })) {
        return ok(`against RADIUS server ${id} due to '${policies.passthru.policy}'`);
      }
    }
    return { value: false, detail: { message: "The user has no tokens assigned" } };
  }
  return await checkTokenList(env, tokens, req.pass, req.transactionId);
}

function ok(message: string): CheckResult {
  return { value: true, detail: { message } };
}

/** `otponly=1` with a serial: only the OTP is checked; no PIN, no fail counter. */
async function checkOtpOnly(
  env: CheckEnv,
  token: TokenWithInfo,
  pass: string,
): Promise<CheckResult> {
  const module = tokenTypeOf(token.type);
  const fail = {
    value: false,
    detail: { message: "OTP verification failed." },
    serial: token.serial,
    tokenType: token.type,
  };
  if (!module || !module.authenticates || stateProblems(env, token).length > 0) return fail;
  const res = await module.checkOtp(checkContext(env.deps, env.system, token), pass);
  if (!res.isValid) return fail;
  if (
    res.counter !== undefined &&
    !(await advanceTokenCounter(env.deps, token.id, res.counter, env.pending))
  ) {
    return fail;
  }
  if (res.info) await updateTokenInfo(env.deps, token.id, res.info, env.pending);
  const tooOld = lastAuthProblem(env, [token]);
  if (tooOld) return tooOld;
  await recordAuthentication(env.deps, [token], {
    isSuccess: true,
    countAuth: false,
    lastAuth: lastAuthStamp(env.now),
  }, env.pending);
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
  };
}

/** Reasons a token may not authenticate now (spec 02 §6.2 step 3). */
function stateProblems(env: CheckEnv, t: TokenWithInfo): string[] {
  const info = t.info;
  const num = (k: string) => Number(info[k]?.value ?? "0") || 0;
  const countAuthMax = num("count_auth_max");
  const successMax = num("count_auth_success_max");
  if (
    (countAuthMax > 0 && num("count_auth") >= countAuthMax) ||
    (successMax > 0 && num("count_auth_success") >= successMax)
  ) return ["Authentication counter exceeded"];
  if (!t.active) return ["Token is disabled"];
  if (t.failcount >= t.maxfail) return ["Failcounter exceeded"];
  const start = info.validity_period_start?.value;
  const end = info.validity_period_end?.value;
  if (start) {
    const ms = parseValidityDate(start);
    if (ms !== undefined && env.now < ms) return ["Outside validity period"];
  }
  if (end) {
    const ms = parseValidityDate(end);
    if (ms !== undefined && env.now > ms) return ["Outside validity period"];
  }
  if (t.rolloutState === "clientwait" || t.rolloutState === "verify") {
    return ["Token is not yet enrolled"];
  }
  return [];
}

/** Clears a maxed fail counter after `failcounter_clear_timeout` minutes. */
async function maybeClearFailcounter(env: CheckEnv, t: TokenWithInfo): Promise<void> {
  const minutes = env.system.int("failcounter_clear_timeout");
  if (minutes <= 0 || t.failcount < t.maxfail) return;
  const since = parseValidityDate(t.info.failcounter_exceeded?.value ?? "");
  if (since === undefined || env.now - since < minutes * 60_000) return;
  await clearFailcount(env.deps, [t]);
  t.failcount = 0;
}

/** PIN check under the `otppin` policy. */
async function pinMatches(env: CheckEnv, t: TokenWithInfo, pin: string): Promise<boolean> {
  switch (env.policies.otppin) {
    case "none":
      return pin === "";
    case "userstore": {
      const owner = t.owner ?? env.user;
      return owner ? await checkUserPassword(env.deps, owner, pin) : false;
    }
    default:
      return checkPin(env.deps, t.pinHash, pin);
  }
}

function typeOrder(type: string): number {
  return type === "push" ? 1 : 0;
}

/** Spec 02 §6.2: checks `pass` against a list of tokens. */
export async function checkTokenList(
  env: CheckEnv,
  all: TokenWithInfo[],
  pass: string,
  transactionId?: string,
): Promise<CheckResult> {
  const { deps, system, policies } = env;
  let tokens = all.filter((t) => !t.revoked);
  if (tokens.length === 0) throw new TokenAdminError(TOKEN_LOCKED_MESSAGE, 1007);
  tokens = tokens.filter((t) => !policies.disabledTokenTypes.includes(t.type));
  tokens.sort((a, b) =>
    typeOrder(a.type) - typeOrder(b.type) || a.type.charAt(0).localeCompare(b.type.charAt(0))
  );

  const prependPin = system.bool("PrependPin");
  const stateMessages = new Set<string>();
  const valid: TokenWithInfo[] = [];
  const responses: TokenWithInfo[] = [];
  const challengeRequests: TokenWithInfo[] = [];
  const challengeOverrides: Record<string, { message: string; data: string }> = {};
  // radius tokens whose upstream server challenged again while answering (spec 08 §3.3)
  const reChallenged: TokenWithInfo[] = [];
  const pinMatching: TokenWithInfo[] = [];
  const invalid: TokenWithInfo[] = [];
  // expired challenges still classify the request as a response (expiry is checked later)
  const stored = transactionId
    ? await challengesOfTransaction(deps, transactionId, tokens.map((t) => t.serial))
    : [];
  const open = stored.filter((c) => c.expiresAt >= env.now);
  const responded: TokenWithInfo[] = [];
  let previousOtp = false;

  for (const t of tokens) {
    await maybeClearFailcounter(env, t);
    const problems = stateProblems(env, t);
    if (problems.length > 0) {
      problems.forEach((p) => stateMessages.add(p));
      continue;
    }
    const module = tokenTypeOf(t.type);
    if (!module) {
      invalid.push(t);
      continue;
    }
    if (transactionId) {
      // second step of challenge-response: pass is the OTP only
      const hasChallenge = open.some((c) => c.serial === t.serial);
      if (!stored.some((c) => c.serial === t.serial)) {
        invalid.push(t);
        continue;
      }
      responded.push(t);
      const ctx = checkContext(deps, system, t);
      const remote = module as Partial<RadiusTokenExtras>;
      let res: OtpCheck = { isValid: false };
      if (hasChallenge && remote.authenticate && remote.pinCheckedRemotely?.(t)) {
        // the upstream server checks the answer; its State travels in the challenge data
        const data = parseData(open.find((c) => c.serial === t.serial)?.data);
        const out = await remote.authenticate(ctx, pass, {
          challengeData: data,
          challengeAllowed: true,
        });
        if (out.result === "challenge") {
          reChallenged.push(t);
          challengeOverrides[t.serial] = { message: out.message, data: JSON.stringify(out.data) };
        }
        res = { isValid: out.result === "accept" };
      } else if (hasChallenge) res = await module.checkOtp(ctx, pass);
      if (
        res.isValid &&
        (res.counter === undefined ||
          await advanceTokenCounter(deps, t.id, res.counter, env.pending))
      ) {
        if (res.info) await updateTokenInfo(deps, t.id, res.info, env.pending);
        responses.push(t);
      }
      continue;
    }
    const remote = module as Partial<RadiusTokenExtras>;
    if (remote.authenticate && remote.pinCheckedRemotely?.(t)) {
      // remote PIN: the whole pass goes upstream, no local PIN check
      const out = await remote.authenticate(checkContext(deps, system, t), pass, {
        challengeAllowed: policies.challengeResponse.includes(t.type),
      });
      if (out.result === "accept") valid.push(t);
      else if (out.result === "challenge") {
        challengeRequests.push(t);
        challengeOverrides[t.serial] = { message: out.message, data: JSON.stringify(out.data) };
      } else invalid.push(t);
      continue;
    }
    const canChallenge = module.challenge &&
      (module.challengeOnly || policies.challengeResponse.includes(t.type));
    if (canChallenge && await pinMatches(env, t, pass)) {
      challengeRequests.push(t);
      continue;
    }
    const split = module.pinOnly
      ? { pin: pass, otp: "" }
      : splitPinPass(pass, t.otplen, prependPin);
    if (!split || !(await pinMatches(env, t, split.pin))) {
      invalid.push(t);
      continue;
    }
    if (policies.forceChallengeResponse && module.challenge && !module.pinOnly) {
      invalid.push(t);
      continue;
    }
    const ctx = checkContext(deps, system, t);
    const res = await module.checkOtp(ctx, split.otp);
    if (
      res.isValid &&
      (res.counter === undefined || await advanceTokenCounter(deps, t.id, res.counter, env.pending))
    ) {
      if (res.info) await updateTokenInfo(deps, t.id, res.info, env.pending);
      valid.push(t);
    } else if (!res.isValid && await autoResync(env, t, ctx, split.otp)) {
      valid.push(t);
    } else {
      if (await module.isPreviousOtp?.(ctx, split.otp)) previousOtp = true;
      pinMatching.push(t);
    }
  }

  const countAuth = !system.bool("no_auth_counter");
  if (valid.length > 0) {
    const tooOld = lastAuthProblem(env, valid);
    if (tooOld) return tooOld;
    await clearFailcount(deps, valid);
    await recordAuthentication(deps, valid, {
      isSuccess: true,
      countAuth,
      lastAuth: lastAuthStamp(env.now),
    }, env.pending);
    const detail: Record<string, unknown> = { message: `matching ${valid.length} tokens` };
    const result: CheckResult = { value: true, detail };
    if (valid.length === 1) {
      Object.assign(detail, {
        serial: valid[0].serial,
        type: valid[0].type,
        otplen: valid[0].otplen,
      });
      result.serial = valid[0].serial;
      result.tokenType = valid[0].type;
    } else if (new Set(valid.map((t) => t.type)).size > 1) {
      detail.type = "undetermined";
    } else {
      detail.type = valid[0].type;
    }
    for (const t of valid) {
      if (tokenTypeOf(t.type)?.deleteAfterSuccess) await deleteTokenById(deps, t.id);
    }
    return result;
  }
  if (responded.length > 0 || responses.length > 0) {
    if (responses.length > 0) {
      const t = responses[0];
      const tooOld = lastAuthProblem(env, responses);
      if (tooOld) return tooOld;
      await clearFailcount(deps, responses);
      await recordAuthentication(deps, responses, {
        isSuccess: true,
        countAuth,
        lastAuth: lastAuthStamp(env.now),
      }, env.pending);
      await closeTransaction(deps, transactionId!);
      for (const r of responses) {
        if (tokenTypeOf(r.type)?.deleteAfterSuccess) await deleteTokenById(deps, r.id);
      }
      return {
        value: true,
        detail: {
          message: "Found matching challenge",
          serial: t.serial,
          type: t.type,
          otplen: t.otplen,
        },
        serial: t.serial,
        tokenType: t.type,
      };
    }
    await increaseFailcount(deps, responded, env.pending);
    if (reChallenged.length > 0) {
      // this attempt failed; a new challenge (new transaction, State, message) replaces the old
      await deleteChallengesOf(deps, reChallenged.map((t) => t.serial));
      return await triggerChallenges(env, reChallenged, { overrides: challengeOverrides });
    }
    if (responded.length === 1) {
      const t = responded[0];
      return {
        value: false,
        detail: {
          message: "Response did not match the challenge.",
          serial: t.serial,
          type: t.type,
        },
        serial: t.serial,
        tokenType: t.type,
      };
    }
    return {
      value: false,
      detail: { message: `Response did not match for ${responded.length} tokens.` },
    };
  }
  if (challengeRequests.length > 0) {
    return await triggerChallenges(env, challengeRequests, {
      increaseFailcount: policies.increaseFailcounterOnChallenge,
      overrides: challengeOverrides,
    });
  }
  if (pinMatching.length > 0) {
    await increaseFailcount(deps, pinMatching, env.pending);
    await recordAuthentication(deps, pinMatching, { isSuccess: false, countAuth }, env.pending);
    let message = "wrong otp value";
    const detail: Record<string, unknown> = { message };
    const result: CheckResult = { value: false, detail };
    if (pinMatching.length === 1) {
      const t = pinMatching[0];
      if (previousOtp) message += ". previous otp used again";
      detail.message = message;
      Object.assign(detail, { serial: t.serial, type: t.type, otplen: t.otplen });
      result.serial = t.serial;
      result.tokenType = t.type;
    }
    return result;
  }
  if (invalid.length > 0) {
    if (system.bool("IncFailCountOnFalsePin")) await increaseFailcount(deps, invalid, env.pending);
    const result: CheckResult = { value: false, detail: { message: "wrong otp pin" } };
    if (invalid.length === 1) {
      result.serial = invalid[0].serial;
      result.tokenType = invalid[0].type;
    }
    return result;
  }
  if (stateMessages.size > 0) {
    return { value: false, detail: { message: [...stateMessages].join(", ") } };
  }
  return { value: false, detail: { message: "No suitable token found for authentication." } };
}

/**
 * Auto-resync (system config `AutoResync`, spec 02 §4): an OTP found in the
 * sync window is remembered (`otp1c`, `dueDate`); the directly following OTP
 * before the due date resyncs the token and authenticates.
 */
async function autoResync(
  env: CheckEnv,
  t: TokenWithInfo,
  ctx: TypeCheckContext,
  otp: string,
): Promise<boolean> {
  const module = tokenTypeOf(t.type);
  if (!module?.findInSyncWindow || !env.system.bool("AutoResync")) return false;
  const counter = await module.findInSyncWindow(ctx, otp);
  if (counter < 0) return false;
  const first = Number(t.info.otp1c?.value ?? "NaN");
  const due = Number(t.info.dueDate?.value ?? "0");
  if (first + 1 === counter && env.now <= due * 1000) {
    if (!(await advanceTokenCounter(env.deps, t.id, counter + 1, env.pending))) return false;
    await updateTokenInfo(env.deps, t.id, { otp1c: "", dueDate: "" }, env.pending);
    return true;
  }
  const timeout = env.system.int("AutoResyncTimeout");
  await updateTokenInfo(env.deps, t.id, {
    otp1c: String(counter),
    dueDate: String(Math.floor(env.now / 1000) + timeout),
  }, env.pending);
  return false;
}

/** Creates challenges for `tokens` and returns the §7 result. */
export async function triggerChallenges(
  env: CheckEnv,
  tokens: TokenWithInfo[],
  options: {
    increaseFailcount?: boolean;
    /** Per-serial message and challenge data (e.g. an upstream RADIUS State). */
    overrides?: Record<string, { message: string; data: string }>;
  } = {},
): Promise<CheckResult & { count: number }> {
  const { deps, system, policies } = env;
  const message = policies.challengeText ?? DEFAULT_CHALLENGE_TEXT;
  const extras: Record<string, Record<string, unknown>> = {};
  for (const t of tokens) {
    const more = tokenTypeOf(t.type)?.challengeExtras?.(checkContext(deps, system, t));
    if (more && !options.overrides?.[t.serial]) extras[t.serial] = more;
  }
  const preferred = policies.preferredClientMode[0] ?? "interactive";
  const { detail } = await createChallenges(
    deps,
    system,
    tokens.map((t) => ({
      serial: t.serial,
      type: t.type,
      message: options.overrides?.[t.serial]?.message ?? fillTags(message, env, t),
      data: options.overrides?.[t.serial]?.data,
    })),
    { extras, preferredClientMode: preferred },
  );
  if (options.increaseFailcount) await increaseFailcount(deps, tokens, env.pending);
  return {
    value: false,
    detail,
    count: tokens.length,
    serial: tokens.length === 1 ? tokens[0].serial : undefined,
    tokenType: tokens.length === 1 ? tokens[0].type : undefined,
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

function fillTags(text: string, env: CheckEnv, t: TokenWithInfo): string {
  return text.replaceAll("\\,", ",")
    .replaceAll("{user}", env.user?.login ?? t.owner?.login ?? "")
    .replaceAll("{realm}", env.user?.realm ?? t.owner?.realm ?? "")
    .replaceAll("{serial}", t.serial)
    .replaceAll("{tokentype}", t.type);
}

const PERIOD_REGEXP = /^\s*(\d+)\s*([smhdy])\s*$/i;
const PERIOD_MS: Record<string, number> = {
  s: 1000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
  y: 365 * 86_400_000,
};

/**
 * `last_auth` policy: a failure result when the single authenticating token's
 * previous successful authentication is older than the policy allows.
 */
function lastAuthProblem(env: CheckEnv, tokens: TokenWithInfo[]): CheckResult | undefined {
  const limitText = env.policies.lastAuth;
  if (!limitText || tokens.length !== 1) return undefined;
  const t = tokens[0];
  const m = limitText.match(PERIOD_REGEXP);
  const previous = t.info.last_auth?.value;
  if (!m || !previous) return undefined;
  const prevMs = parseLastAuth(previous);
  const limit = Number(m[1]) * PERIOD_MS[m[2].toLowerCase()];
  if (prevMs === undefined || env.now - prevMs <= limit) return undefined;
  return {
    value: false,
    detail: { message: `The last successful authentication was ${previous}. It is too long ago.` },
    serial: t.serial,
    tokenType: t.type,
  };
}

/** Parses `YYYY-MM-DD hh:mm:ss.ffffff+zzzz` (also ISO-8601) to ms. */
function parseLastAuth(text: string): number | undefined {
  const m = text.trim().match(
    /^(\d{4}-\d{2}-\d{2})[T ](\d{2}:\d{2}(?::\d{2})?)(\.\d+)?\s*(Z|[+-]\d{2}:?\d{2})?$/,
  );
  if (!m) return undefined;
  const frac = m[3] ? m[3].slice(0, 4) : "";
  let zone = m[4] ?? "Z";
  if (zone !== "Z" && !zone.includes(":")) zone = `${zone.slice(0, 3)}:${zone.slice(3)}`;
  const ms = Date.parse(`${m[1]}T${m[2]}${frac}${zone}`);
  return Number.isFinite(ms) ? ms : undefined;
}

const AUTH_MAX_REGEXP = /^\s*(\d+)\s*\/\s*(\d+)\s*([smhd])\s*$/i;

/**
 * `auth_max_success` / `auth_max_fail` (`count/period`, e.g. `3/5m`): counted
 * from the audit log, so the limit holds across nodes sharing one database.
 */
async function authLimitProblem(env: CheckEnv, user: UserRef): Promise<CheckResult | undefined> {
  const limits: [string | undefined, boolean, string][] = [
    [env.policies.authMaxSuccess, true, "successful"],
    [env.policies.authMaxFail, false, "failed"],
  ];
  for (const [text, isSuccess, word] of limits) {
    const m = text?.match(AUTH_MAX_REGEXP);
    if (!m) continue;
    const max = Number(m[1]);
    const periodMs = Number(m[2]) * PERIOD_MS[m[3].toLowerCase()];
    const n = await countAuthAttempts(env.deps.db, {
      user: user.login,
      realm: user.realm,
      since: env.now - periodMs,
      isSuccess,
    });
    if (n >= max) {
      return {
        value: false,
        detail: { message: `Only ${max} ${word} authentications per ${m[2]}${m[3]} allowed.` },
      };
    }
  }
  return undefined;
}

/** Authorization-scope policies applied to the outcome (spec 02 §6.1 step 5). */
async function postPolicies(env: CheckEnv, result: CheckResult): Promise<CheckResult> {
  const p = env.policies;
  if (p.matched.length > 0) result.policies = p.matched;
  if (result.value) {
    if (p.isAccessDenied) {
      throw new ValidateError("User is not authorized to authenticate under these conditions.");
    }
    if (p.tokentype && result.tokenType && !p.tokentype.includes(result.tokenType)) {
      throw new PolicyError("Tokentype not allowed for authentication!");
    }
    if (p.serial && result.serial && !new RegExp(p.serial).test(result.serial)) {
      throw new PolicyError("Serial is not allowed for authentication!");
    }
    if (p.addUserInResponse && result.user) {
      const info = await getUserInfo(env.deps, result.user);
      result.detail.user = { ...info, password: "" };
    }
    if (p.addResolverInResponse && result.user) {
      result.detail["user-resolver"] = result.user.resolver;
      result.detail["user-realm"] = result.user.realm;
    }
    if (p.noDetailOnSuccess) result.detail = {};
  } else if (p.noDetailOnFail && !result.detail.multi_challenge) {
    result.detail = {};
  }
  return result;
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
  const policies = await validatePolicies(deps, {
    login,
    realm,
    user,
    serial: serial || undefined,
    clientIp: req.clientIp,
    userAgent: req.userAgent,
  });
  let tokens: TokenWithInfo[];
  if (serial !== "") {
    const t = await findTokenBySerial(deps, serial);
    if (!t || (user && !isOwner(t, user))) throw new ResourceNotFoundError(TOKEN_NOT_FOUND_MESSAGE);
    tokens = [t];
  } else {
    tokens = await getTokensOfUser(deps, user!);
  }
  if (req.type) tokens = tokens.filter((t) => t.type === req.type!.toLowerCase());
  tokens = tokens.filter((t) =>
    t.active && !t.revoked && !t.locked && t.failcount < t.maxfail &&
    tokenTypeOf(t.type)?.challenge === true
  );
  if (tokens.length === 0) {
    return { count: 0, detail: { messages: [], multi_challenge: [], transaction_ids: [] }, user };
  }
  const env: CheckEnv = {
    deps,
    system,
    policies,
    user,
    now: deps.clock.now(),
    pending: new PendingCommits(),
  };
  const res = await triggerChallenges(env, tokens).finally(() => env.pending.settle());
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
