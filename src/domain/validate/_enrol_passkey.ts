/**
 * Enrolment of a passkey via multichallenge (spec 11 §5.4, policy
 * `enroll_via_multichallenge=passkey`): after a successful `/validate/check`
 * of a user without a passkey, step 1 of the passkey enrolment answers as a
 * challenge; `/validate/check` with the registration (step 2) completes it,
 * or `cancel_enrollment` drops it when the policy makes it optional.
 *
 * The token of such an enrolment carries the tokeninfo
 * {@link ENROLL_VIA_MULTICHALLENGE}: only its transactions can be completed
 * or cancelled through `/validate/check`, never the transaction of an
 * enrolment an administrator started at `/token/init`.
 *
 * @module
 */
import type { Deps } from "../../deps.ts";
import { EnrollmentError, PolicyError } from "../../errors.ts";
import { checkTokenLimits } from "../token/token_limits.ts";
import {
  deleteTokenInfo,
  findTokenBySerial,
  getTokensOfUser,
  initToken,
  plainInfo,
  type TokenWithInfo,
  type UserRef,
} from "../token/mod.ts";
import { deleteTokens, setInfoOnCheck } from "../token/token_store.ts";
import { challengesOfTransaction, consumeTransaction } from "../challenge/mod.ts";
import { PASSKEY_ENROLL_TEXT } from "../token/types/passkey.ts";
import { infoValue } from "../token/types/mod.ts";

/** {@link startPasskeyEnrolment} refused: a token limit allows the user no further passkey. */
export class TokenLimitError extends Error {}

/** Tokeninfo marking a passkey enrolled via multichallenge until it is complete. */
export const ENROLL_VIA_MULTICHALLENGE = "enroll_via_multichallenge";

/** The registration of step 2 as `/validate/check` carries it. */
export interface PasskeyRegistration {
  credentialId?: string;
  rawId?: string;
  clientDataJSON?: string;
  attestationObject: string;
  authenticatorAttachment?: string;
  /** The request's Origin header. */
  origin?: string;
}

/** True while `t` is a passkey of a multichallenge enrolment waiting for step 2. */
export function isPendingEnrolment(t: TokenWithInfo | undefined): t is TokenWithInfo {
  return t !== undefined && t.type === "passkey" && t.rolloutState === "clientwait" &&
    infoValue(t.info, ENROLL_VIA_MULTICHALLENGE) === "True";
}

/**
 * Step 1 for `user` unless they already have an enrolled passkey: the
 * challenge `detail` of the response, or undefined. A waiting token of an
 * earlier, unfinished enrolment is enrolled again instead of a second one.
 */
export async function startPasskeyEnrolment(
  deps: Deps,
  user: UserRef,
  options: { text?: string; isOptional: boolean },
): Promise<{ serial: string; detail: Record<string, unknown> } | undefined> {
  const passkeys = (await getTokensOfUser(deps, user, { withRealms: false }))
    .filter((t) => t.type === "passkey");
  if (passkeys.some((t) => !isPendingEnrolment(t))) return undefined;
  if (passkeys.length === 0) {
    // one more token must be allowed by the token limits; a refusal is the caller's to report
    try {
      await checkTokenLimits(deps, { user, type: "passkey" });
    } catch (err) {
      if (err instanceof PolicyError) throw new TokenLimitError(err.message);
      throw err;
    }
  }
  const init = await initToken(deps, {
    type: "passkey",
    ...(passkeys.length > 0 ? { serial: passkeys[0].serial } : {}),
  }, { user });
  const token = await findTokenBySerial(deps, init.serial, { withRealms: false });
  await setInfoOnCheck(deps.db, token!.id, plainInfo({ [ENROLL_VIA_MULTICHALLENGE]: "True" }));
  const tid = String(init.detail.transaction_id);
  const message = options.text ?? PASSKEY_ENROLL_TEXT;
  const entry = {
    ...init.detail,
    transaction_id: tid,
    serial: init.serial,
    type: "passkey",
    client_mode: "webauthn",
    message,
  };
  return {
    serial: init.serial,
    detail: {
      multi_challenge: [entry],
      transaction_id: tid,
      transaction_ids: [tid],
      serial: init.serial,
      type: "passkey",
      client_mode: "webauthn",
      message,
      messages: [message],
      enroll_via_multichallenge: true,
      enroll_via_multichallenge_optional: options.isOptional,
    },
  };
}

/**
 * Step 2 through `/validate/check`: the registration checks of `/token/init`
 * (challenge of `transactionId` for the token, origin, RP id; the challenge
 * is consumed once). True when the passkey is enrolled; false when the
 * registration was refused (the reason is logged).
 */
export async function completePasskeyEnrolment(
  deps: Deps,
  token: TokenWithInfo,
  input: { transactionId: string; registration: PasskeyRegistration },
): Promise<boolean> {
  const r = input.registration;
  const params: Record<string, string> = {
    type: "passkey",
    serial: token.serial,
    transaction_id: input.transactionId,
    attestationObject: r.attestationObject,
  };
  if (r.clientDataJSON !== undefined) params.clientDataJSON = r.clientDataJSON;
  const credentialId = r.credentialId ?? r.rawId;
  if (credentialId !== undefined) params.credential_id = credentialId;
  try {
    await initToken(deps, params, { user: token.owner, origin: r.origin });
  } catch (err) {
    // a refused registration is a failed authentication, not a fault; so is
    // a registration that lost the race to a concurrent one for this token
    // (the token left clientwait between our check and our write)
    if (
      !(err instanceof EnrollmentError) &&
      isPendingEnrolment(await findTokenBySerial(deps, token.serial, { withRealms: false }))
    ) throw err;
    deps.log.info("A passkey registration via multichallenge was refused", {
      serial: token.serial,
      reason: err instanceof Error ? err.message : String(err),
    });
    return false;
  }
  await deleteTokenInfo(deps, token, ENROLL_VIA_MULTICHALLENGE);
  return true;
}

/**
 * `cancel_enrollment`: the waiting passkey of the transaction, if any. The
 * caller decides whether the user may cancel, then calls {@link dropEnrolment}.
 */
export async function pendingEnrolmentOf(
  deps: Deps,
  transactionId: string,
): Promise<TokenWithInfo | undefined> {
  const now = deps.clock.now();
  for (const c of await challengesOfTransaction(deps, transactionId)) {
    if (c.serial === "" || c.expiresAt < now) continue;
    const t = await findTokenBySerial(deps, c.serial, { withRealms: false });
    if (isPendingEnrolment(t) && t.owner) return t;
  }
  return undefined;
}

/**
 * Deletes the waiting passkey once its transaction is consumed (one
 * statement: of parallel cancels one succeeds). False when another request
 * consumed the transaction first.
 */
export async function dropEnrolment(
  deps: Deps,
  transactionId: string,
  token: TokenWithInfo,
): Promise<boolean> {
  const consumed = await consumeTransaction(deps, transactionId);
  if (!consumed.includes(token.serial)) return false;
  await deleteTokens(deps.db, [token.id]);
  return true;
}
