/**
 * The enrolment steps on the check path: `enroll_via_multichallenge` after a
 * success, step 2 of a passkey enrolment and `cancel_enrollment` (the
 * enrolments themselves are in `_enrol_passkey.ts` and `_enrol_token.ts`).
 *
 * @module
 */
import type { Deps } from "../../deps.ts";
import { ParameterError, PolicyError } from "../../errors.ts";
import { loadSystemConfig } from "../system_config/mod.ts";
import { findTokenBySerial, type TokenWithInfo } from "../token/mod.ts";
import { attachToken, computerNameOf } from "../machine/mod.ts";
import {
  completePasskeyEnrolment,
  dropEnrolment,
  isPendingEnrolment,
  type PasskeyRegistration,
  pendingEnrolmentOf,
  startPasskeyEnrolment,
  TokenLimitError,
} from "./_enrol_passkey.ts";
import { enrolTokenViaMultichallenge, optionalTokenEnrolmentOf } from "./_enrol_token.ts";
import type { CheckContext, CheckRequest, CheckResult } from "./_context.ts";
import { postPolicies } from "./_post_policies.ts";
import { liveOwnerOf, ownerContext } from "./_resolve.ts";
import { fidoRefused } from "./_fido_check.ts";
import { consumeContainerEnrolment, startContainerEnrolment } from "../container/multichallenge.ts";

/**
 * `enroll_via_multichallenge` (spec 11 §5.4, spec 15 §3.8): a user who just
 * authenticated and has no token of the type gets step 1 of its enrolment as
 * a challenge instead of the success (passkey here, the OTP types in
 * `_enrol_token.ts`).
 */
export async function enrolAfterSuccess(
  ctx: CheckContext,
  result: CheckResult,
): Promise<CheckResult> {
  const user = result.user;
  const p = ctx.policies;
  if (!result.value || !ctx.request.user || !user || ctx.request.isWebuiLogin) return result;
  if (p.enrollViaMultichallenge === undefined) return result;
  if (p.enrollViaMultichallenge === "smartphone") return await enrolContainer(ctx, result);
  if (p.enrollViaMultichallenge !== "passkey") {
    return await enrolTokenViaMultichallenge(ctx.deps, user, result, {
      type: p.enrollViaMultichallenge,
      text: p.enrollViaMultichallengeText,
      isOptional: p.isEnrollViaMultichallengeOptional,
    });
  }
  let started;
  try {
    started = await startPasskeyEnrolment(ctx.deps, user, {
      text: p.enrollViaMultichallengeText,
      isOptional: p.isEnrollViaMultichallengeOptional,
    });
  } catch (err) {
    if (!(err instanceof TokenLimitError)) throw err;
    // privacyIDEA writes the reason to the audit and keeps the success (as for the OTP types)
    const info = `${result.auditInfo ?? String(result.detail.message ?? "")} (${err.message})`;
    return { ...result, auditInfo: info };
  }
  if (!started) return result;
  return {
    ...result,
    value: false,
    detail: started.detail,
    serial: started.serial,
    tokenType: "passkey",
  };
}

/**
 * `enroll_via_multichallenge=smartphone` (spec 13 §2.12): the registration QR
 * code of the user's smartphone container as a challenge (`client_mode`
 * `poll`), the success's detail kept beside it as privacyIDEA keeps it.
 */
async function enrolContainer(ctx: CheckContext, result: CheckResult): Promise<CheckResult> {
  const p = ctx.policies;
  const entry = await startContainerEnrolment(ctx.deps, result.user!, {
    text: p.enrollViaMultichallengeText,
    templateName: p.enrollViaMultichallengeTemplate,
    client: ctx.request.clientIp,
    userAgent: ctx.request.userAgent,
  });
  if (!entry) return result;
  const detail = { ...result.detail, multi_challenge: [entry], ...entry };
  return { ...result, value: false, detail, serial: String(entry.serial), tokenType: undefined };
}

/**
 * The last check of a login that registered a smartphone container (user
 * path, `transaction_id`): the app answered the registration challenge, so
 * the user is authenticated. Only asked when `enroll_via_multichallenge` is
 * `smartphone` for the user; undefined when the transaction is no such
 * challenge of theirs (the check goes on with the user's tokens).
 */
export async function answerContainerEnrolment(
  ctx: CheckContext,
): Promise<CheckResult | undefined> {
  const tid = ctx.request.transactionId;
  if (!tid || ctx.policies.enrollViaMultichallenge !== "smartphone" || !ctx.user) return undefined;
  const serial = await consumeContainerEnrolment(ctx.deps, ctx.user, tid);
  if (!serial) return undefined;
  return { value: true, detail: { serial, message: "Found matching challenge" }, serial };
}

/**
 * Step 2 of a passkey enrolment via multichallenge: `serial` (the new
 * credential is not indexed yet), `transaction_id` and the registration.
 * Only a passkey that this flow created can be completed here; success
 * authenticates its owner.
 */
export async function completeEnrolment(
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
export async function cancelEnrolment(deps: Deps, req: CheckRequest): Promise<CheckResult> {
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
