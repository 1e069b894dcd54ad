/**
 * `email`: an HOTP token whose code is mailed on demand (spec 11 §1). A
 * correct PIN alone always triggers a challenge: the next code goes out
 * through an `/smtpserver/` definition (tokeninfo `email.identifier`, else
 * system config `email.identifier`) to the token's address or, with
 * `dynamic_email`, to the owner's `email` attribute. Subject and body come
 * from the authentication policies `emailsubject` and `emailtext`.
 *
 * @module
 */
import { ParameterError } from "../../../errors.ts";
import { sendMail } from "../../smtp/mod.ts";
import { param } from "./_oath.ts";
import { firstValue, messageTags, ownerInfo, renderMessage, validUntil } from "./_challenge.ts";
import { checkSentCode, isTrueValue, nextCode, validitySeconds } from "./_sent_code.ts";
import { checkHotp, HOTP, initHotp } from "./hotp.ts";
import { infoValue, type TokenType, type TypeChallengeContext } from "./token_type.ts";

/** Default challenge message (policy `email_challenge_text` replaces it). */
export const EMAIL_CHALLENGE_TEXT = "Enter the OTP from the Email";
/** The message when the mail could not be sent (no challenge is stored). */
export const EMAIL_SEND_FAILED = "The PIN was correct, but the EMail could not be sent!";

const MAX_ADDRESS = 254;
// one address, no display name, nothing a mail header or SMTP command could be bent with
const ADDRESS_REGEXP = /^[^\s@<>,;:"()[\]\\]+@[^\s@<>,;:"()[\]\\]+$/;

/** True for a single plain mail address. */
export function isMailAddress(text: string): boolean {
  return text.length <= MAX_ADDRESS && ADDRESS_REGEXP.test(text);
}

function recipientOf(ctx: TypeChallengeContext, info: Record<string, string>): string {
  if (isTrueValue(infoValue(ctx.token.info, "dynamic_email"))) return firstValue(info.email);
  return infoValue(ctx.token.info, "email");
}

async function sendCode(ctx: TypeChallengeContext) {
  const serial = ctx.token.serial;
  try {
    const identifier = infoValue(ctx.token.info, "email.identifier") ||
      ctx.system.get("email.identifier");
    if (identifier === "") throw new Error("no SMTP server definition configured");
    const info = await ownerInfo(ctx);
    const to = recipientOf(ctx, info);
    if (!isMailAddress(to)) throw new Error("no valid recipient address");
    const subjectText = ctx.policy("emailsubject") ?? "Your OTP";
    const bodyText = ctx.policy("emailtext") ?? "<otp>";
    if (bodyText.startsWith("file:") || subjectText.startsWith("file:")) {
      throw new Error("mail templates from files are not supported");
    }
    const { counter, otp } = await nextCode(ctx);
    const tags = messageTags(ctx, info, otp);
    await sendMail(ctx.deps, identifier, {
      to: [to],
      subject: renderMessage(subjectText, tags),
      body: renderMessage(bodyText, tags),
    });
    return { counter };
  } catch (err) {
    // the reason goes to the log (never the code); the client learns only that it failed
    ctx.deps.log.warn("Cannot send the email of a challenge", {
      serial,
      error: (err as Error).message,
    });
    return undefined;
  }
}

/** The `email` type. */
export const EMAIL: TokenType = {
  type: "email",
  prefix: "PIEM",
  authenticates: true,
  challenge: true,
  challengeOnly: true,
  init(ctx) {
    const isDynamic = isTrueValue(param(ctx, "dynamic_email"));
    const address = (param(ctx, "email") ?? "").trim();
    if (!isDynamic && address === "") throw new ParameterError("Missing parameter: 'email'");
    if (address !== "" && !isMailAddress(address)) {
      throw new ParameterError(`Cannot parse parameter "email": invalid address "${address}"`);
    }
    const res = initHotp(ctx);
    const info: Record<string, string> = { ...res.info, email: address };
    if (isDynamic) info.dynamic_email = "True";
    // a re-enrolment without dynamic_email drops the old flag
    return { ...res, info, ownsInfo: (key) => key === "dynamic_email" };
  },
  checkOtp: checkHotp,
  isPreviousOtp: HOTP.isPreviousOtp,
  async createChallenge(ctx) {
    const sent = await sendCode(ctx);
    if (!sent) return { failed: EMAIL_SEND_FAILED };
    const validity = validitySeconds(ctx, "email.validtime", 120);
    return {
      message: (ctx.policy("email_challenge_text") ?? EMAIL_CHALLENGE_TEXT).replaceAll("\\,", ","),
      data: { counter: sent.counter },
      extras: { attributes: { state: null, valid_until: validUntil(ctx.nowMs, validity) } },
      validity,
    };
  },
  checkAnswer(ctx, answer, data) {
    return checkSentCode(ctx, answer, data, "email.concurrent_challenges");
  },
};
