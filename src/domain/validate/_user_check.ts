/**
 * The check of the user a request names: the `auth_cache` in front, their
 * tokens, else the pass-on rules, `passthru` (with `passthru_assign`) and
 * autoassignment.
 *
 * @module
 */
import { PolicyError, TokenAdminError, UserError } from "../../errors.ts";
import {
  assignToken,
  checkContext,
  findTokenBySerial,
  getTokensOfUser,
  tokenTypeOf,
  type UserRef,
} from "../token/mod.ts";
import { checkUserPassword } from "../token/_users.ts";
import { unassignedSerialsInRealm } from "../token/token_store.ts";
import {
  AUTH_CACHE_MESSAGE,
  isInAuthCache,
  parseAuthCache,
  rememberInAuthCache,
} from "./_auth_cache.ts";
import { radiusPassthru } from "../radius_server/mod.ts";
import { type CheckContext, type CheckResult, ok } from "./_context.ts";
import { autoAssignToken } from "../token/autoassign.ts";
import { authLimitProblem } from "./_limits.ts";
import { applyOtpCheck } from "./_check_writes.ts";
import { stateProblems } from "./_token_state.ts";
import { checkTokenList } from "./_token_list.ts";

/**
 * The user chain behind `auth_cache` (spec 15 §3.1): a `pass` that
 * authenticated the user recently is accepted from the cache before
 * anything else is looked at; a success of the chain is remembered. Without
 * a matching policy the cache is not read.
 */
export async function checkUserCached(ctx: CheckContext): Promise<CheckResult> {
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
