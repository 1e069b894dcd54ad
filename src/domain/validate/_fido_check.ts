/**
 * The FIDO branch of a check (spec 11 §4.4): a WebAuthn or passkey assertion
 * answers a challenge, found by credential id or serial; also the passkey
 * login of the WebUI.
 *
 * @module
 */
import type { Deps } from "../../deps.ts";
import { ParameterError, PolicyError, ResourceNotFoundError, ValidateError } from "../../errors.ts";
import { loadSystemConfig, type SystemConfig } from "../system_config/mod.ts";
import {
  checkContext,
  findTokenByCredentialIdHash,
  findTokenBySerial,
  getTokensOfUser,
  isOwner,
  tokenTypeOf,
  type TokenWithInfo,
} from "../token/mod.ts";
import { challengesOfTransaction, consumeTransaction } from "../challenge/mod.ts";
import { currentUser, resolveUser, splitUser } from "../token/_users.ts";
import { infoValue, type OtpCheck } from "../token/types/mod.ts";
import { hasDirectAccess } from "../../db/direct.ts";
import { toHex } from "../../lib/random.ts";
import {
  type FidoAnswer,
  type FidoTokenType,
  fromB64url,
  isFidoType,
  nonceOfChallenge,
  requireOrigin,
  sha256Hex,
  uvOfChallengeData,
} from "../token/types/_fido.ts";
import type { CheckContext, CheckRequest, CheckResult } from "./_context.ts";
import { authLimitProblem } from "./_limits.ts";
import {
  applyOtpCheck,
  maybeClearFailcounter,
  resetAllTokens,
  settleSuccess,
} from "./_check_writes.ts";
import { lastAuthProblem, stateProblems } from "./_token_state.ts";
import { rememberLastUsedToken } from "./_client_mode.ts";
import { postPolicies } from "./_post_policies.ts";
import { loadSerialToken, logOwnerGone, ownerContext } from "./_resolve.ts";

/** The answer of a refused assertion: value false, no detail (spec 11 §4.4 step 5). */
export function fidoRefused(t: TokenWithInfo | undefined, message?: string): CheckResult {
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
export async function checkFido(
  deps: Deps,
  req: CheckRequest,
  answer: FidoAnswer,
): Promise<CheckResult> {
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
