/**
 * `ocra`: challenge-response by RFC 6287 (spec 14 §3). The token PIN alone starts a
 * challenge (no `challenge_response` policy needed, as privacyIDEA); the server draws a
 * random question of the suite's type and length, the device answers with the OCRA
 * response, and `/validate/check` with the transaction id checks it once.
 *
 * Only suites whose data input is the question alone are enrolled: a counter, PIN hash,
 * timestamp or session input cannot be given through `/validate/check` (privacyIDEA
 * enrols them but fails every check with HTTP 500). A question the client chooses
 * (`challenge`, `addrandomchallenge`, `hashchallenge`) is not taken: the type's
 * challenge hook does not see request parameters.
 *
 * @module
 */
import { ParameterError } from "../../../errors.ts";
import { otpEqual } from "../../../lib/otp.ts";
import {
  ocraResponse,
  type OcraSuite,
  parseOcraSuite,
  randomOcraQuestion,
} from "../../../lib/ocra.ts";
import { toHex } from "../../../lib/random.ts";
import { otpKeyOf, param } from "./_oath.ts";
import { infoValue, type OtpCheck, type TokenType, type TypeInitContext } from "./token_type.ts";

/** privacyIDEA's default suite. */
export const OCRA_DEFAULT_SUITE = "OCRA-1:HOTP-SHA1-8:QH40";
/** The challenge message. */
export const OCRA_CHALLENGE_MESSAGE = "Please answer the challenge";

/** Parses a suite for enrolment: a ParameterError for a bad or unusable one. */
function enrollableSuite(text: string): OcraSuite {
  let suite: OcraSuite;
  try {
    suite = parseOcraSuite(text);
  } catch (e) {
    throw new ParameterError(`Cannot parse parameter "ocrasuite": ${(e as Error).message}`);
  }
  if (suite.counter || suite.signature) {
    throw new ParameterError(
      `Cannot parse parameter "ocrasuite": ${text} needs a counter, PIN, session or time ` +
        "input, which /validate/check cannot give; use a suite with the question only",
    );
  }
  return suite;
}

function initOcra(ctx: TypeInitContext) {
  const text = param(ctx, "ocrasuite") || ctx.existing?.info.ocrasuite?.value ||
    OCRA_DEFAULT_SUITE;
  const suite = enrollableSuite(text);
  const { key, isGenerated } = otpKeyOf(ctx, suite.hash);
  const detail: Record<string, unknown> = {};
  if (isGenerated) {
    detail.otpkey = { description: "OTP seed", value: `seed://${toHex(key)}`, img: "" };
  }
  return {
    secret: key,
    otplen: suite.digits,
    info: { ocrasuite: text, tokenkind: "software" },
    detail,
  };
}

function suiteOf(info: Parameters<typeof infoValue>[0]): OcraSuite | undefined {
  try {
    return parseOcraSuite(infoValue(info, "ocrasuite", OCRA_DEFAULT_SUITE));
  } catch {
    return undefined;
  }
}

/** The `ocra` type. */
export const OCRA: TokenType = {
  type: "ocra",
  prefix: "OCRA",
  authenticates: true,
  challenge: true,
  challengeOnly: true,
  init: initOcra,
  checkOtp(): OtpCheck {
    // a response exists only for a question: PIN+OTP without a challenge never matches
    return { isValid: false };
  },
  createChallenge(ctx) {
    const suite = suiteOf(ctx.token.info);
    if (!suite) return Promise.resolve({ failed: "The OCRA suite of the token is invalid." });
    const question = randomOcraQuestion(suite, (n) => ctx.deps.random.bytes(n));
    return Promise.resolve({
      message: OCRA_CHALLENGE_MESSAGE,
      challenge: question,
      data: { question },
      extras: { attributes: { challenge: question } },
    });
  },
  checkAnswer(ctx, answer, data): OtpCheck {
    const suite = suiteOf(ctx.token.info);
    const question = data.question;
    if (!suite || typeof question !== "string" || answer.length !== suite.digits) {
      return { isValid: false };
    }
    let expected: string;
    try {
      expected = ocraResponse(ctx.secret, suite, question);
    } catch {
      return { isValid: false };
    }
    return { isValid: otpEqual(expected, answer) };
  },
};
