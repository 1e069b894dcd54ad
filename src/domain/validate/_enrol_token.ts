/**
 * Enrolment via multichallenge of the OTP types (spec 15 §3.8, spec 11 §1.4;
 * policy `enroll_via_multichallenge` = `hotp`, `totp`, `daypassword`,
 * `email` or `sms`, passkeys in `_enrol_passkey.ts`): after a successful
 * `/validate/check` of a user who has no token of the type, privacyIDEA's
 * plain `init_token` makes one for them and the success becomes a challenge.
 *
 * - HOTP, TOTP, daypassword: the challenge carries the enrolment QR code
 *   (`image`, a PNG) and its URL (`link`); the OTP of the new token answers it.
 * - email, SMS: the token takes the owner's address for now (`dynamic_email`,
 *   `dynamic_phone`) and nothing is sent; the answer is the new address (an
 *   email address checked by the validator enrollment policy `email_validation`
 *   names). It replaces the owner's, and the type's own challenge (code sent
 *   to it) follows under a new transaction; its code completes the login.
 *
 * - push: the challenge carries the push enrolment URL; the app's registration
 *   at `/ttype/push` answers it (src/domain/push/mod.ts), `client_mode` poll.
 *
 * The challenge data carries `enroll_via_multichallenge` and
 * `enroll_via_multichallenge_optional` (as privacyIDEA writes them), so
 * `cancel_enrollment` can drop exactly these tokens while their first
 * challenge is open.
 *
 * @module
 */
import type { Deps } from "../../deps.ts";
import { PolicyError, ValidateError } from "../../errors.ts";
import { loadSystemConfig } from "../system_config/mod.ts";
import {
  findTokenBySerial,
  getTokensOfUser,
  initToken,
  type TokenWithInfo,
  type UserRef,
} from "../token/mod.ts";
import { checkTokenLimits } from "../token/token_limits.ts";
import { deleteTokens } from "../token/token_store.ts";
import { enrollmentMatcher } from "../token/enroll_policy.ts";
import { challengesOfTransaction, createChallenges, deleteChallengesOf } from "../challenge/mod.ts";
import type { OtpCheck } from "../token/types/mod.ts";
import { isMailAddress } from "../token/types/email.ts";
import { isPhoneNumber } from "../smsgateway/mod.ts";
import { qrPngDataUri } from "../../lib/qr_png.ts";
import { base32Encode } from "../../lib/otp.ts";

/** The types this module enrols, with privacyIDEA's default message of each. */
const ENROLMENT_TEXT: Readonly<Record<string, string>> = {
  hotp: "Please scan the QR code and enter the OTP value!",
  totp: "Please scan the QR code and enter the OTP value!",
  daypassword: "Please scan the QR code and enter the OTP value!",
  email: "Please enter your new email address!",
  sms: "Please enter your new phone number!",
  push: "Please scan the QR code!",
};

/** privacyIDEA's challenge session of an enrolment (the answer is an address, not a code). */
const ENROLLMENT_SESSION = "enrollment";

/** The one email validator privacyIDEA ships (the value of `email_validation`). */
export const BUILTIN_EMAIL_VALIDATOR = "privacyidea.lib.utils.emailvalidation";

// privacyIDEA's validate_email: r'^[-\w\.]+@([\w-]+\.)+[\w-]{2,4}$' (\w is Unicode there)
const PY_EMAIL_REGEXP = /^[-\p{L}\p{N}_.]+@(?:[\p{L}\p{N}_-]+\.)+[\p{L}\p{N}_-]{2,4}$/u;

/** The parts of a check result an enrolment changes (validate's `CheckResult`). */
export interface EnrolOutcome {
  value: boolean;
  detail: Record<string, unknown>;
  serial?: string;
  tokenType?: string;
  auditInfo?: string;
}

/** The authentication policies of the enrolment, matched on the user who logged in. */
export interface EnrolPolicy {
  /** `enroll_via_multichallenge`, lower case. */
  type: string;
  /** `enroll_via_multichallenge_text`. */
  text?: string;
  /** `enroll_via_multichallenge_optional`. */
  isOptional: boolean;
}

/**
 * Turns the success `result` of `user` into the enrolment challenge of
 * `policy.type` (see the module doc); the result as it was when the type is
 * none of this module's, the user has a token of the type, or a token limit
 * refuses one more (the reason goes to the audit, the success stays).
 */
export async function enrolTokenViaMultichallenge<R extends EnrolOutcome>(
  deps: Deps,
  user: UserRef,
  result: R,
  policy: EnrolPolicy,
): Promise<R> {
  const type = policy.type;
  if (!Object.hasOwn(ENROLMENT_TEXT, type)) {
    deps.log.warn("enroll_via_multichallenge names a type Tessera does not enrol this way", {
      value: type,
    });
    return result;
  }
  const tokens = await getTokensOfUser(deps, user, { withRealms: false });
  if (tokens.some((t) => t.type === type)) return result;
  try {
    await checkTokenLimits(deps, { user, type });
  } catch (err) {
    if (!(err instanceof PolicyError)) throw err;
    // privacyIDEA writes the reason to the audit and keeps the success
    const info = `${result.auditInfo ?? String(result.detail.message ?? "")} (${err.message})`;
    return { ...result, auditInfo: info };
  }
  const message = policy.text ?? ENROLMENT_TEXT[type];
  const isAddress = type === "email" || type === "sms";
  const made = isAddress
    ? await initToken(deps, { type, [type === "email" ? "dynamic_email" : "dynamic_phone"]: "1" }, {
      user,
      isViaMultichallenge: true,
    })
    : await initToken(deps, { type, genkey: "1" }, {
      user,
      // the user-scope hashlib, otplen and time step apply, as for a user's own enrolment
      caller: { role: "user", username: user.login, realm: user.realm },
      isViaMultichallenge: true,
    });
  const isPush = type === "push";
  const link = ((isPush ? made.detail.pushurl : made.detail.googleurl) as
    | { value?: string }
    | undefined)?.value;
  if (!isAddress && link === undefined) {
    // a tokenlabel or tokenissuer with an unknown tag: no URL to scan (privacyIDEA fails here)
    await dropToken(deps, made.serial);
    deps.log.warn("Cannot enrol via multichallenge: the enrolment URL could not be built", {
      serial: made.serial,
      type,
    });
    return result;
  }
  const system = await loadSystemConfig(deps);
  // a push enrolment is answered by the app's registration, which marks the challenge with this
  // nonce answered; the type's checkAnswer then accepts the empty pass
  const nonce = isPush ? pushEnrolmentNonce(deps) : undefined;
  const data = {
    ...(isAddress ? { session: ENROLLMENT_SESSION } : {}),
    ...(nonce ? { nonce, push_enrollment: true } : {}),
    enroll_via_multichallenge: true,
    enroll_via_multichallenge_optional: policy.isOptional,
    type,
  };
  const { transactionId } = await createChallenges(deps, system, [{
    serial: made.serial,
    type,
    message,
    data: JSON.stringify(data),
    challenge: nonce,
    // the type's own validity: email.validtime, sms.providerTimeout, else <Type>ChallengeValidity
    validity: type === "email"
      ? positiveInt(system.get("email.validtime", "120"), 120)
      : type === "sms"
      ? positiveInt(system.get("sms.providerTimeout", "300"), 300)
      : undefined,
  }]);
  const entry: Record<string, unknown> = isAddress
    ? { transaction_id: transactionId, image: null }
    : { transaction_id: transactionId, image: qrPngDataUri(link!), link };
  Object.assign(entry, {
    client_mode: isPush ? "poll" : "interactive",
    serial: made.serial,
    type,
    message,
  });
  const detail: Record<string, unknown> = {
    ...result.detail,
    transaction_ids: [transactionId],
    ...(isAddress ? {} : { messages: [message] }),
    multi_challenge: [entry],
    ...entry,
    enroll_via_multichallenge: true,
    enroll_via_multichallenge_optional: policy.isOptional,
  };
  return { ...result, value: false, detail, serial: made.serial, tokenType: type };
}

/** A random nonce (b32 of 20 bytes, as a push challenge's). */
function pushEnrolmentNonce(deps: Deps): string {
  return base32Encode(deps.random.bytes(20), true);
}

function positiveInt(text: string, fallback: number): number {
  const n = Number.parseInt(text, 10);
  return Number.isInteger(n) && n > 0 ? n : fallback;
}

async function dropToken(deps: Deps, serial: string): Promise<void> {
  const t = await findTokenBySerial(deps, serial, { withRealms: false });
  if (!t) return;
  await deleteChallengesOf(deps, [serial]);
  await deleteTokens(deps.db, [t.id]);
}

/** True for the data of an email or SMS enrolment's first challenge (answered by an address). */
export function isAddressChallenge(data: Record<string, unknown> | undefined): boolean {
  return data?.session === ENROLLMENT_SESSION;
}

/**
 * The answer to an email or SMS enrolment's first challenge: the new
 * address. A valid one is the token's from now on (it replaces the owner's,
 * `dynamic_*` is used up with the transaction, so of parallel answers one
 * wins) and another round follows: the type's own challenge to it. An
 * invalid one deletes the token and is refused with privacyIDEA's
 * `The email address is not valid!` (SMS: `The phone number is not valid!`).
 */
export async function answerAddressChallenge(
  deps: Deps,
  token: TokenWithInfo,
  answer: string,
  ctx: { user?: UserRef; clientIp?: string },
): Promise<OtpCheck> {
  const isEmail = token.type === "email";
  const isValid = isEmail
    ? await isValidEmail(deps, answer, ctx)
    : token.type === "sms" && isPhoneNumber(answer);
  if (!isValid) {
    await dropToken(deps, token.serial);
    throw new ValidateError(
      isEmail ? "The email address is not valid!" : "The phone number is not valid!",
    );
  }
  const key = isEmail ? "email" : "phone";
  const dynamic = isEmail ? "dynamic_email" : "dynamic_phone";
  // the next round's challenge is sent to the new address
  const { [dynamic]: _used, ...info } = token.info;
  token.info = { ...info, [key]: { value: answer, type: "" } };
  return { isValid: true, consumeInfo: dynamic, info: { [key]: answer }, nextRound: {} };
}

/** The address under the validator of `email_validation` (privacyIDEA's own when none is set). */
async function isValidEmail(
  deps: Deps,
  address: string,
  ctx: { user?: UserRef; clientIp?: string },
): Promise<boolean> {
  const m = await enrollmentMatcher(deps, { user: ctx.user, client: ctx.clientIp });
  const validator = m === undefined
    ? undefined
    : (await m.values("email_validation", { unique: true })).values[0];
  if (validator !== undefined && validator !== BUILTIN_EMAIL_VALIDATOR) {
    throw new PolicyError(
      `The policy action "email_validation" names an unknown validator: "${validator}"`,
    );
  }
  return isMailAddress(address) && PY_EMAIL_REGEXP.test(address);
}

/**
 * `cancel_enrollment`: the token of an OTP-type enrolment via multichallenge
 * whose open challenge of `transactionId` says the enrolment is optional,
 * if any (the caller drops it with `dropEnrolment`).
 */
export async function optionalTokenEnrolmentOf(
  deps: Deps,
  transactionId: string,
): Promise<TokenWithInfo | undefined> {
  const now = deps.clock.now();
  for (const c of await challengesOfTransaction(deps, transactionId)) {
    if (c.serial === "" || c.expiresAt < now) continue;
    const data = parseObject(c.data);
    if (data?.enroll_via_multichallenge !== true) continue;
    if (data.enroll_via_multichallenge_optional !== true) continue;
    const t = await findTokenBySerial(deps, c.serial, { withRealms: false });
    if (t?.owner && Object.hasOwn(ENROLMENT_TEXT, t.type)) return t;
  }
  return undefined;
}

function parseObject(text: string): Record<string, unknown> | undefined {
  try {
    const v = JSON.parse(text);
    return v && typeof v === "object" && !Array.isArray(v) ? v : undefined;
  } catch {
    return undefined;
  }
}
