/**
 * `tiqr`: an OCRA token (RFC 6287) held by the TiQR smartphone app (spec 14 §7).
 * Enrolment has two steps: `/token/init` (an owner is required) stores the suite and a
 * one-time enrolment session and answers with the `tiqrenroll://` URL; the app then
 * fetches its metadata and posts the secret it chose to `/ttype/tiqr`
 * (src/domain/tiqr/mod.ts), which consumes the session. A correct PIN creates a
 * challenge with a random question of the suite; the app posts its OCRA response to
 * `/ttype/tiqr`, which marks the challenge answered, and the client's
 * `/validate/check` with the transaction id and an empty pass then succeeds once.
 *
 * System config (privacyIDEA's keys and defaults): `tiqr.regServer`, `tiqr.authServer`
 * (default: regServer), `tiqr.serviceIdentifier`, `tiqr.serviceDisplayname`,
 * `tiqr.logoUrl`, `tiqr.infoUrl`, `tiqr.ocrasuite`.
 *
 * @module
 */
import { ParameterError } from "../../../errors.ts";
import { type OcraSuite, parseOcraSuite, randomOcraQuestion } from "../../../lib/ocra.ts";
import { qrPngDataUri } from "../../../lib/qr_png.ts";
import { toHex } from "../../../lib/random.ts";
import type { SystemConfig } from "../../system_config/mod.ts";
import { challengesOfTransaction } from "../../challenge/mod.ts";
import { pyQuote } from "./_oath.ts";
import {
  infoValue,
  type OtpCheck,
  type TokenType,
  type TypeChallenge,
  type TypeChallengeContext,
  type TypeChallengeFailure,
  type TypeInitContext,
  type TypeInitResult,
} from "./token_type.ts";

/** privacyIDEA's default suite of tiqr tokens. */
export const TIQR_DEFAULT_SUITE = "OCRA-1:HOTP-SHA1-6:QN10";
/** The challenge message. */
export const TIQR_CHALLENGE_MESSAGE = "Please scan the QR Code";
/** Tokeninfo key of the one-time enrolment session (stored encrypted). */
export const TIQR_SESSION = "session";

/** The defaults privacyIDEA applies when a `tiqr.*` key is unset or empty. */
const DEFAULTS: Readonly<Record<string, string>> = {
  "tiqr.serviceIdentifier": "org.privacyidea",
  "tiqr.serviceDisplayname": "privacyIDEA",
  "tiqr.infoUrl": "https://www.privacyidea.org",
  "tiqr.ocrasuite": TIQR_DEFAULT_SUITE,
};

/** A `tiqr.*` system config value; an empty one counts as unset (privacyIDEA's `or`). */
export function tiqrSetting(system: SystemConfig, key: string): string {
  const value = system.get(key, "");
  if (value !== "") return value;
  if (key === "tiqr.authServer") return system.get("tiqr.regServer", "");
  return DEFAULTS[key] ?? "";
}

/**
 * Parses a tiqr suite; an Error naming the problem for a bad one or one whose data input
 * is more than the question (the app computes the question-only response).
 */
export function tiqrSuite(text: string): OcraSuite {
  const suite = parseOcraSuite(text);
  if (suite.counter || suite.signature) {
    throw new Error(
      `${text} needs a counter, PIN, session or time input; tiqr answers the question only`,
    );
  }
  return suite;
}

/** Python's `quote_plus`: like `quote` with nothing safe, spaces as `+`. */
function quotePlus(text: string): string {
  return encodeURIComponent(text)
    .replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)
    .replaceAll("%20", "+");
}

function initTiqr(ctx: TypeInitContext): TypeInitResult {
  // the app shows the user, so the token needs one from the start (privacyIDEA's check)
  if (!ctx.owner) throw new ParameterError("Missing parameter: 'user'");
  const text = tiqrSetting(ctx.system, "tiqr.ocrasuite");
  let suite: OcraSuite;
  try {
    suite = tiqrSuite(text);
  } catch (e) {
    throw new ParameterError(
      `Cannot enroll a tiqr token: system config "tiqr.ocrasuite": ${(e as Error).message}`,
    );
  }
  const regServer = tiqrSetting(ctx.system, "tiqr.regServer");
  if (regServer === "") {
    // privacyIDEA writes "None" into the URL, which no app can use
    throw new ParameterError(
      'Cannot enroll a tiqr token: system config "tiqr.regServer" (the URL of this ' +
        "server's /ttype/tiqr) is not set",
    );
  }
  const session = toHex(ctx.deps.random.bytes(20));
  const value = `tiqrenroll://${regServer}?action=metadata&session=${session}&serial=${ctx.serial}`;
  return {
    otplen: suite.digits,
    info: { ocrasuite: text, tokenkind: "software" },
    secretInfo: { [TIQR_SESSION]: session },
    detail: {
      tiqrenroll: { description: "URL for TiQR enrollment", value, img: qrPngDataUri(value) },
    },
  };
}

/** The suite of a tiqr token (its tokeninfo, else the default); undefined when unusable. */
export function tiqrSuiteOf(info: Parameters<typeof infoValue>[0]): OcraSuite | undefined {
  try {
    return tiqrSuite(infoValue(info, "ocrasuite", TIQR_DEFAULT_SUITE));
  } catch {
    return undefined;
  }
}

function tiqrChallenge(ctx: TypeChallengeContext): Promise<TypeChallenge | TypeChallengeFailure> {
  const suite = tiqrSuiteOf(ctx.token.info);
  if (!suite) return Promise.resolve({ failed: "The OCRA suite of the token is invalid." });
  const transactionId = ctx.transactionId;
  if (transactionId === undefined) {
    return Promise.resolve({ failed: "The TiQR challenge needs a transaction." });
  }
  const question = randomOcraQuestion(suite, (n) => ctx.deps.random.bytes(n));
  const owner = ctx.token.owner ?? ctx.user;
  const identifier = `${owner?.login ?? ""}_${owner?.realm ?? ""}`;
  const service = tiqrSetting(ctx.system, "tiqr.serviceIdentifier");
  const name = tiqrSetting(ctx.system, "tiqr.serviceDisplayname");
  const url = `tiqrauth://${quotePlus(identifier)}@${service}/${transactionId}/${question}/` +
    pyQuote(name);
  const img = qrPngDataUri(url);
  return Promise.resolve({
    message: TIQR_CHALLENGE_MESSAGE,
    challenge: question,
    data: { question, transaction_id: transactionId },
    extras: {
      client_mode: "poll",
      attributes: { img, value: url, poll: true, hideResponseInput: true },
      image: img,
    },
  });
}

/** The `tiqr` type. */
export const TIQR: TokenType = {
  type: "tiqr",
  prefix: "TiQR",
  authenticates: true,
  challenge: true,
  challengeOnly: true,
  init: initTiqr,
  checkOtp(): OtpCheck {
    // the app answers challenges only: PIN+OTP without a challenge never matches
    return { isValid: false };
  },
  createChallenge: tiqrChallenge,
  async checkAnswer(ctx, _answer, data) {
    // the app's OCRA response at /ttype/tiqr, not the pass, answers the challenge
    const tid = typeof data.transaction_id === "string" ? data.transaction_id : "";
    if (tid === "") return { isValid: false };
    const rows = await challengesOfTransaction(ctx.deps, tid, [ctx.token.serial]);
    return { isValid: rows.some((c) => c.isAnswered && c.expiresAt >= ctx.nowMs) };
  },
};
