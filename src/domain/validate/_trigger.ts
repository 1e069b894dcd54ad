/**
 * Challenges asked for without a pass: `/validate/initialize` (a passkey
 * challenge without a user) and `/validate/triggerchallenge` (admin).
 *
 * @module
 */
import type { Deps } from "../../deps.ts";
import { ParameterError, PolicyError, ResourceNotFoundError, UserError } from "../../errors.ts";
import { loadSystemConfig } from "../system_config/mod.ts";
import {
  enrollPolicies,
  getTokensOfUser,
  isOwner,
  TOKEN_NOT_FOUND_MESSAGE,
  tokenTypeOf,
  USER_NOT_FOUND_MESSAGE,
  type UserRef,
} from "../token/mod.ts";
import { createChallenges } from "../challenge/mod.ts";
import { resolveUser, splitUser } from "../token/_users.ts";
import { validatePolicies } from "./policy.ts";
import { b64url, uvLevel } from "../token/types/_fido.ts";
import { PASSKEY_AUTH_TEXT } from "../token/types/passkey.ts";
import { newCheckContext, typePolicy } from "./_context.ts";
import { withPreferredClientMode } from "./_client_mode.ts";
import { withChallengeTextHeader } from "./_post_policies.ts";
import { loadSerialToken } from "./_resolve.ts";
import { triggerChallenges } from "./_challenges.ts";
import type { ClientQuestion } from "../token/types/mod.ts";
import type { ConditionData } from "../policy/mod.ts";

/** Input of {@link initializeAuthentication}. */
export interface InitializeRequest {
  type: string;
  clientIp: string;
  userAgent: string;
  /** The request's own policy condition data (headers, environment, parameters). */
  conditions?: ConditionData;
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
    request: req.conditions,
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
  /** The question the client chose for an OCRA challenge (`challenge`, spec 14 §3.3). */
  clientQuestion?: ClientQuestion;
  clientIp: string;
  userAgent: string;
  /** The request's own policy condition data (headers, environment, parameters). */
  conditions?: ConditionData;
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
    request: req.conditions,
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
    request: {
      pass: "",
      clientIp: req.clientIp,
      userAgent: req.userAgent,
      clientQuestion: req.clientQuestion,
      conditions: req.conditions,
    },
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
