/**
 * The challenges Tessera asks itself: the PIN change dialogue of
 * `change_pin_via_validate` and the resync challenge of
 * `resync_via_multichallenge`.
 *
 * @module
 */
import type { SystemConfig } from "../system_config/mod.ts";
import { checkPinPolicy, setPin, type TokenWithInfo } from "../token/mod.ts";
import { challengesOfTransaction, consumeTransaction, createChallenges } from "../challenge/mod.ts";
import { infoValue } from "../token/types/mod.ts";
import { hashPin, verifyPin } from "../../lib/crypto.ts";
import type { CheckContext, CheckResult } from "./_context.ts";

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
export async function askForNewPin(
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
export async function answerPinChange(
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
export const GENERIC_RESYNC = "generic_resync";

/** The message of the resync challenge. */
const RESYNC_MESSAGE = "To resync your token, please enter the next OTP value";

/**
 * `resync_via_multichallenge`: a failure naming one token whose OTP lay in
 * the sync window (auto-resync remembered it: `otp1c`) becomes a challenge
 * asking for the next OTP; its answer resyncs the token (see
 * {@link classifyAnswer}). Needs the system config `AutoResync`.
 */
export async function resyncChallenge(
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
