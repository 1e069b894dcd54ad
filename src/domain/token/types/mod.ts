/**
 * The one registry of token types. A new type is one module implementing
 * {@link TokenType}, one line in {@link TOKEN_TYPE_MODULES} and its name and
 * description in catalogue.ts.
 *
 * @module
 */
import type { TokenType } from "./token_type.ts";
import { HOTP } from "./hotp.ts";
import { TOTP } from "./totp.ts";
import { SPASS } from "./spass.ts";
import { PW, REGISTRATION } from "./pw.ts";
import { SSHKEY } from "./sshkey.ts";
import { PAPER } from "./paper.ts";
import { RADIUS } from "./radius.ts";
import { EMAIL } from "./email.ts";
import { SMS } from "./sms.ts";
import { TAN } from "./tan.ts";
import { INDEXEDSECRET } from "./indexedsecret.ts";
import { QUESTION } from "./question.ts";
import { DAYPASSWORD } from "./daypassword.ts";
import { WEBAUTHN } from "./webauthn.ts";
import { PASSKEY } from "./passkey.ts";
import { YUBIKEY } from "./yubikey.ts";
import { YUBICO } from "./yubico.ts";
import { CERTIFICATE } from "./certificate.ts";
import { MOTP } from "./motp.ts";
import { PUSH } from "./push.ts";
import { OCRA } from "./ocra.ts";
import { REMOTE } from "./remote.ts";
import { APPLSPEC } from "./applspec.ts";
import { FOUREYES } from "./foureyes.ts";
import { U2F } from "./u2f.ts";
import { TIQR } from "./tiqr.ts";

export type {
  CandidateRequest,
  ClientQuestion,
  InitParams,
  OtpCheck,
  SignedAnswer,
  TokenType,
  TypeAnswerContext,
  TypeChallenge,
  TypeChallengeContext,
  TypeChallengeFailure,
  TypeCheckContext,
  TypeInitContext,
  TypeInitResult,
} from "./token_type.ts";
export { infoValue } from "./token_type.ts";
export { ADMIN_ENROLLED_TYPES, NOT_ENROLLED_TYPES, TOKEN_TYPES } from "./catalogue.ts";

/** Every registered token type module. */
export const TOKEN_TYPE_MODULES: readonly TokenType[] = [
  HOTP,
  TOTP,
  SPASS,
  PW,
  REGISTRATION,
  SSHKEY,
  PAPER,
  RADIUS,
  EMAIL,
  SMS,
  TAN,
  INDEXEDSECRET,
  QUESTION,
  DAYPASSWORD,
  WEBAUTHN,
  PASSKEY,
  YUBIKEY,
  YUBICO,
  CERTIFICATE,
  MOTP,
  PUSH,
  OCRA,
  REMOTE,
  APPLSPEC,
  FOUREYES,
  TIQR,
  U2F,
];

const BY_NAME = new Map<string, TokenType>(TOKEN_TYPE_MODULES.map((t) => [t.type, t]));

/** The module of `type` (lower-case), or undefined. */
export function tokenTypeOf(type: string): TokenType | undefined {
  return BY_NAME.get(type.toLowerCase());
}
