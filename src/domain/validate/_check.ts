/**
 * `/validate/check` (spec 02 §6): the product's hot path. One system-config
 * read, one policy read, the user's tokens with their info, then only the
 * writes the outcome needs. This file orchestrates: the request's pre-steps
 * (API key, mangle), its objects, the check of a serial (also `otponly`) or
 * of the user, the post-policies and the enrolment after a success.
 *
 * @module
 */
import type { Deps } from "../../deps.ts";
import { ParameterError, ResourceNotFoundError } from "../../errors.ts";
import { loadSystemConfig } from "../system_config/mod.ts";
import {
  checkContext,
  findTokenBySerial,
  isOwner,
  TOKEN_NOT_FOUND_MESSAGE,
  tokenConditionData,
  tokenTypeOf,
  type TokenWithInfo,
} from "../token/mod.ts";
import { resolveUser, splitUser } from "../token/_users.ts";
import { validatePolicies } from "./policy.ts";
import { getUserAttributes } from "../user/mod.ts";
import { mangleParams } from "../machine/mangle.ts";
import { userAgentName } from "../policy/mod.ts";
import { isTransientDbError } from "../../db/transient_error.ts";
import {
  type CheckContext,
  type CheckRequest,
  type CheckResult,
  newCheckContext,
} from "./_context.ts";
import {
  applyOtpCheck,
  maybeClearFailcounter,
  raiseFailcounters,
  settleSuccess,
} from "./_check_writes.ts";
import { lastAuthProblem, stateProblems } from "./_token_state.ts";
import { rememberLastUsedToken, withPreferredClientMode } from "./_client_mode.ts";
import { postPolicies } from "./_post_policies.ts";
import { requireApiKey, requireApiKeyOfFidoRequest } from "./_api_key.ts";
import { checkTokenList } from "./_token_list.ts";
import { resolveCheck } from "./_resolve.ts";
import { checkUserCached } from "./_user_check.ts";
import {
  answerContainerEnrolment,
  cancelEnrolment,
  completeEnrolment,
  enrolAfterSuccess,
} from "./_enrol_check.ts";
import { checkFido } from "./_fido_check.ts";

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
  const ctx = newCheckContext(deps, { system, request: req, ...resolved }, req.writes);
  let result: CheckResult;
  try {
    result = await checkAndPost(ctx);
    if (mangled.policies.length > 0) {
      result.policies = [...new Set([...mangled.policies, ...(result.policies ?? [])])];
    }
  } catch (err) {
    await ctx.pending.settle();
    throw err;
  }
  // the counter, fail counter and auth-count writes share one commit; none is answered before
  // it. A caller that gave its own pending commits settles them (with its audit row); an
  // enrolment after the success needs them committed first
  if (req.writes === undefined || ctx.policies.enrollViaMultichallenge !== undefined) {
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
    result = await answerContainerEnrolment(ctx) ?? await checkUserCached(ctx);
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
