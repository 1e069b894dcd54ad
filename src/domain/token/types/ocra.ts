/**
 * `ocra`: challenge-response by RFC 6287 (spec 14 §3). The token PIN alone starts a
 * challenge (no `challenge_response` policy needed, as privacyIDEA); the server draws a
 * random question of the suite's type and length, the device answers with the OCRA
 * response, and `/validate/check` with the transaction id checks it once.
 *
 * Only suites whose data input is the question alone are enrolled: a counter, PIN hash,
 * timestamp or session input cannot be given through `/validate/check` (privacyIDEA
 * enrols them but fails every check with HTTP 500).
 *
 * The client may choose the question (spec 14 §3.3): `challenge` (a text to sign, e.g. a
 * bank transfer), `addrandomchallenge=<n>` (n random letters and digits appended) and
 * `hashchallenge` (`sha256`, `sha512`, any other non-empty value SHA-1: the question is
 * the hex digest of the text). The reply then also shows the text and its QR code.
 *
 * @module
 */
import { ParameterError } from "../../../errors.ts";
import { otpEqual } from "../../../lib/otp.ts";
import {
  hashedQuestion,
  ocraDataInput,
  ocraResponse,
  type OcraSuite,
  parseOcraSuite,
  randomAlphanumeric,
  randomOcraQuestion,
} from "../../../lib/ocra.ts";
import { qrPngDataUri } from "../../../lib/qr_png.ts";
import { toHex } from "../../../lib/random.ts";
import { otpKeyOf, param } from "./_oath.ts";
import {
  type ClientQuestion,
  infoValue,
  type OtpCheck,
  type TokenType,
  type TypeChallengeContext,
  type TypeInitContext,
} from "./token_type.ts";

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

/**
 * The longest question text a client may give, random suffix included: its QR code stays
 * readable (and far below the QR code's capacity), and a longer text is hashed anyway.
 */
export const OCRA_MAX_CHALLENGE_TEXT = 1024;

/** The client's question in checked form; ParameterError for a bad count or a text too long. */
function parsedQuestion(chosen: ClientQuestion) {
  let count = 0;
  const addRandom = chosen.addRandom?.trim();
  if (addRandom) {
    count = /^\d{1,6}$/.test(addRandom) ? Number(addRandom) : -1;
    if (count < 0 || count > OCRA_MAX_CHALLENGE_TEXT) {
      throw new ParameterError(
        `Parameter "addrandomchallenge" must be a whole number from 0 to ${OCRA_MAX_CHALLENGE_TEXT}.`,
      );
    }
  }
  if (chosen.text.length + count > OCRA_MAX_CHALLENGE_TEXT) {
    throw new ParameterError(
      `Parameter "challenge" with its random characters may have at most ` +
        `${OCRA_MAX_CHALLENGE_TEXT} characters.`,
    );
  }
  const kind = chosen.hash?.toLowerCase();
  // privacyIDEA: sha256 and sha512 by name, any other non-empty value means SHA-1
  const digest: "sha1" | "sha256" | "sha512" | undefined = !kind
    ? undefined
    : kind === "sha256" || kind === "sha512"
    ? kind
    : "sha1";
  return { count, digest };
}

/** The question and reply attributes of the client's question; ParameterError if unusable. */
function chosenQuestion(ctx: TypeChallengeContext, suite: OcraSuite, chosen: ClientQuestion) {
  const { count, digest } = parsedQuestion(chosen);
  const original = chosen.text + randomAlphanumeric(count, (n) => ctx.deps.random.bytes(n));
  const question = digest ? hashedQuestion(original, digest) : original;
  try {
    // the question must be one the suite can answer, or the challenge could never be solved
    ocraDataInput(suite, question);
  } catch (e) {
    throw new ParameterError(
      `The challenge cannot be a question of the OCRA suite ${suite.text}: ` +
        `${(e as Error).message}.`,
    );
  }
  return {
    question,
    attributes: { original_challenge: original, qrcode: qrPngDataUri(original) },
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
    let question: string;
    let attributes: Record<string, string> = {};
    if (ctx.clientQuestion) {
      ({ question, attributes } = chosenQuestion(ctx, suite, ctx.clientQuestion));
    } else {
      question = randomOcraQuestion(suite, (n) => ctx.deps.random.bytes(n));
    }
    return Promise.resolve({
      message: OCRA_CHALLENGE_MESSAGE,
      challenge: question,
      data: { question },
      extras: { attributes: { ...attributes, challenge: question } },
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
