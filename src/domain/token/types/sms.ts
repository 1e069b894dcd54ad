/**
 * `sms`: an HOTP token whose code is sent as an SMS on demand (spec 11 §2).
 * Like `email`, a correct PIN alone triggers a challenge; the text (policy
 * `smstext`, default `<otp>`) goes through the `/smsgateway/` definition of
 * tokeninfo `sms.identifier` (else system config `sms.identifier`) to the
 * token's `phone` or, with `dynamic_phone`, the owner's `mobile` attribute.
 *
 * @module
 */
import { ParameterError, PolicyError } from "../../../errors.ts";
import { isPhoneNumber, sendSms } from "../../smsgateway/mod.ts";
import { param } from "./_oath.ts";
import { firstValue, messageTags, ownerInfo, renderMessage, validUntil } from "./_challenge.ts";
import { checkSentCode, isTrueValue, nextCode, validitySeconds } from "./_sent_code.ts";
import { checkHotp, HOTP, initHotp } from "./hotp.ts";
import { infoValue, type TokenType, type TypeChallengeContext } from "./token_type.ts";

/** Default challenge message (policy `sms_challenge_text` replaces it). */
export const SMS_CHALLENGE_TEXT = "Enter the OTP from the SMS:";
/** The message when the SMS could not be sent (no challenge is stored). */
export const SMS_SEND_FAILED = "The PIN was correct, but the SMS could not be sent!";

async function sendCode(ctx: TypeChallengeContext) {
  try {
    const identifier = infoValue(ctx.token.info, "sms.identifier") ||
      ctx.system.get("sms.identifier");
    if (identifier === "") throw new Error("no SMS gateway configured");
    const info = await ownerInfo(ctx);
    const phone = isTrueValue(infoValue(ctx.token.info, "dynamic_phone"))
      ? firstValue(info.mobile)
      : infoValue(ctx.token.info, "phone");
    if (!isPhoneNumber(phone)) throw new Error("no valid phone number");
    const textTemplate = ctx.policy("smstext") ?? "<otp>";
    const { counter, otp } = await nextCode(ctx);
    await sendSms(
      ctx.deps,
      identifier,
      phone,
      renderMessage(textTemplate, messageTags(ctx, info, otp)),
    );
    return { counter };
  } catch (err) {
    // the reason goes to the log (never the code); the client learns only that it failed
    ctx.deps.log.warn("Cannot send the SMS of a challenge", {
      serial: ctx.token.serial,
      error: (err as Error).message,
    });
    return undefined;
  }
}

/** The `sms` type. */
export const SMS: TokenType = {
  type: "sms",
  prefix: "PISM",
  authenticates: true,
  challenge: true,
  challengeOnly: true,
  init(ctx) {
    const isDynamic = isTrueValue(param(ctx, "dynamic_phone"));
    const phone = (param(ctx, "phone") ?? "").trim();
    if (!isDynamic && phone === "") throw new ParameterError("Missing parameter: 'phone'");
    if (phone !== "" && !isPhoneNumber(phone)) {
      throw new ParameterError(`Cannot parse parameter "phone": invalid phone number "${phone}"`);
    }
    const gateway = param(ctx, "sms.identifier");
    if (gateway !== undefined && gateway !== "") {
      // only gateways an admin or user policy `sms_gateways` names may be chosen
      const allowed = (ctx.policies?.sms_gateways ?? "").split(/\s+/).filter((g) => g !== "");
      if (!allowed.includes(gateway)) {
        throw new PolicyError("The requested sms.identifier is not allowed to be enrolled.");
      }
    }
    const res = initHotp(ctx);
    const info: Record<string, string> = { ...res.info, phone };
    if (isDynamic) info.dynamic_phone = "True";
    return { ...res, info, ownsInfo: (key) => key === "dynamic_phone" };
  },
  checkOtp: checkHotp,
  isPreviousOtp: HOTP.isPreviousOtp,
  async createChallenge(ctx) {
    const sent = await sendCode(ctx);
    if (!sent) return { failed: SMS_SEND_FAILED };
    const validity = validitySeconds(ctx, "sms.providerTimeout", 300);
    return {
      message: (ctx.policy("sms_challenge_text") ?? SMS_CHALLENGE_TEXT).replaceAll("\\,", ","),
      data: { counter: sent.counter },
      extras: { attributes: { state: null, valid_until: validUntil(ctx.nowMs, validity) } },
      validity,
    };
  },
  checkAnswer(ctx, answer, data) {
    return checkSentCode(ctx, answer, data, "sms.concurrent_challenges");
  },
};
