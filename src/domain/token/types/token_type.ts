/**
 * The interface every token type module implements. Modules are registered in
 * `types/mod.ts`, the one registry.
 *
 * @module
 */
import type { Deps } from "../../../deps.ts";
import type { SystemConfig } from "../../system_config/mod.ts";
import type { Token, TokenInfo, TokenWithInfo, UserRef } from "../model.ts";

/** Init parameters as received (flat map, typed JSON values or strings). */
export type InitParams = Record<string, unknown>;

/** What a type module gets to enrol (or re-enrol) a token. */
export interface TypeInitContext {
  deps: Deps;
  system: SystemConfig;
  serial: string;
  params: InitParams;
  /** The token being re-initialised, if the serial exists. */
  existing: TokenWithInfo | undefined;
  /** The owner of the token after enrolment, if any. */
  owner?: UserRef;
  /**
   * The owner's user attributes, when the enrolment URL's label or issuer
   * names `{givenname}` or `{surname}`.
   */
  ownerInfo?: Readonly<Record<string, string>>;
  /**
   * Type-specific enrolment policy values that apply (`tantoken_count`,
   * `daypassword_timestep`, `sms_gateways`, …): action → value.
   */
  policies?: Readonly<Record<string, string>>;
  /** The request's `Origin` header (WebAuthn registration), if any. */
  origin?: string;
}

/** What a type module decides at enrolment. */
export interface TypeInitResult {
  /** The secret to store encrypted (OTP key bytes, password bytes); undefined keeps the old one. */
  secret?: Uint8Array;
  otplen?: number;
  /** Plain tokeninfo to set. */
  info?: Record<string, string>;
  /** Tokeninfo to store encrypted (`type` "password"). */
  secretInfo?: Record<string, string>;
  /** Enrolment data for the response `detail` (beside serial/rollout_state). */
  detail?: Record<string, unknown>;
  rolloutState?: string;
  active?: boolean;
  /** Counter to store with a new secret (a WebAuthn sign count); default 0. */
  counter?: number;
  /** Description to store when the request gives none (e.g. from an attestation certificate). */
  description?: string;
  /**
   * The error to answer when the write hits a unique constraint of the
   * tokeninfo (a WebAuthn credential id another token holds).
   */
  conflictError?: Error;
  /**
   * On re-enrolment: the existing tokeninfo keys this type owns (e.g. the old
   * TAN list) are deleted unless set again.
   */
  ownsInfo?: (key: string, entry: { value: string; type: string }) => boolean;
}

/** What a type module gets to check an OTP. */
export interface TypeCheckContext {
  deps: Deps;
  system: SystemConfig;
  token: TokenWithInfo;
  /** The decrypted secret (empty when the type has none). */
  secret: Uint8Array;
  nowMs: number;
  /**
   * Checks `pass` (PIN+OTP) against the active, assigned tokens of `realm` other
   * than this token's type, as a check of those tokens (counters, fail counters,
   * lock) would: the serial of the one token it authenticates, else undefined.
   * Given by the check only to types with {@link TokenType.checksOtherTokens}.
   */
  checkRealmPass?(realm: string, pass: string): Promise<string | undefined>;
}

/** Result of an OTP check. */
export interface OtpCheck {
  isValid: boolean;
  /**
   * Counter to store on success, written as a compare-and-set (`count < counter`)
   * so one OTP value never succeeds twice; undefined = no counter.
   */
  counter?: number;
  /** Tokeninfo to update on success (e.g. TOTP timeShift). */
  info?: Record<string, string>;
  /**
   * A tokeninfo key the success uses up (a TAN): deleted with one conditional
   * statement, and only the request whose delete removed it succeeds.
   */
  consumeInfo?: string;
  /**
   * Multi-round challenges (question_number, indexedsecret multichallenge):
   * the answer was right but another round follows; the data is handed to
   * {@link TokenType.createChallenge} for the next challenge.
   */
  nextRound?: Record<string, unknown>;
}

/** A security key's signed answer to a challenge (U2F `clientdata`, `signaturedata`, as sent). */
export interface SignedAnswer {
  clientData?: string;
  signatureData?: string;
}

/** What a type module gets to check an answer to one of its challenges. */
export interface TypeAnswerContext extends TypeCheckContext {
  /** The challenge value stored in its own column (a U2F nonce, hex); "" when none. */
  challenge?: string;
  /** The signed answer the request carries besides `pass`, if any. */
  signedAnswer?: SignedAnswer;
  /** The authorization values of a type action for this request (`u2f_req`); none: empty. */
  authzValues?(action: string): readonly string[];
}

/**
 * A question the client chose for a challenge: OCRA's `challenge`, `addrandomchallenge` and
 * `hashchallenge` request parameters as sent. The type that takes them checks them; other
 * types ignore them, as in privacyIDEA.
 */
export interface ClientQuestion {
  /** The text to answer (`challenge`, e.g. a bank transfer), not empty. */
  text: string;
  /** `addrandomchallenge`: how many random letters and digits to append. */
  addRandom?: string;
  /** `hashchallenge`: the digest of the text that becomes the question. */
  hash?: string;
}

/** What a type module gets to create a challenge of its own. */
export interface TypeChallengeContext extends TypeCheckContext {
  /** The question the request chose (OCRA); absent: the type makes its own. */
  clientQuestion?: ClientQuestion;
  /**
   * The authentication policy value of a type-specific action (`emailtext`,
   * `question_number`, …) for this request; throws the PolicyError of a
   * conflict.
   */
  policy(action: string): string | undefined;
  /** The user the request is about (the token owner when only a serial was given). */
  user?: UserRef;
  /** The previous round's data when a multi-round challenge continues. */
  round?: Record<string, unknown>;
  /**
   * Values shared by the challenges of one request (WebAuthn tokens
   * challenged together share one nonce).
   */
  shared?: Map<string, unknown>;
  /**
   * The transaction id the challenge is stored under (a type that names it in
   * its challenge, e.g. the tiqr app's URL); absent outside a challenge trigger.
   */
  transactionId?: string;
  /**
   * The request waits for this challenge's answer ({@link TokenType.waitSeconds}):
   * nothing the user would have to type or press at the client.
   */
  isWaiting?: boolean;
}

/** A challenge a type module made (message, data to store, extras for `multi_challenge`). */
export interface TypeChallenge {
  /** The challenge message; undefined uses `challenge_text` or the default. */
  message?: string;
  /** Stored with the challenge (JSON), given back to {@link TokenType.checkAnswer}. */
  data?: Record<string, unknown>;
  /** The challenge value stored in its own column (a WebAuthn nonce). */
  challenge?: string;
  /** Extra keys of the `multi_challenge` entry (`attributes`, …). */
  extras?: Record<string, unknown>;
  /** Seconds the challenge stays valid; undefined uses `<Type>ChallengeValidityTime`. */
  validity?: number;
}

/** A challenge that could not be made (mail or SMS not sent): the message says so. */
export interface TypeChallengeFailure {
  failed: string;
}

/** What of a check request decides whether a token takes part ({@link TokenType.isCandidate}). */
export interface CandidateRequest {
  /** The request's `service_id` parameter. */
  serviceId?: string;
}

/** A token type module. */
export interface TokenType {
  /** Lower-case type name (`hotp`). */
  readonly type: string;
  /** Serial prefix (`OATH`). */
  readonly prefix: string;
  /** Can answer `/validate/check` (false for sshkey). */
  readonly authenticates: boolean;
  /** Supports challenge-response (triggerchallenge, policy `challenge_response`). */
  readonly challenge: boolean;
  /** Challenge-only types (email, sms): a correct PIN always triggers a challenge. */
  readonly challengeOnly?: boolean;
  /**
   * Whether a PIN (or `/validate/triggerchallenge`) may trigger a challenge of
   * this type under the request's authentication policies (`policy` reads a
   * type action); absent: always (passkey needs `passkey_trigger_by_pin`).
   */
  mayTrigger?(policy: (action: string) => string | undefined): boolean;
  /**
   * Whether the token takes part in a check at all (privacyIDEA's
   * `use_for_authentication`): false drops it before any PIN or OTP check, as if
   * the user did not have it (applspec without the request's `service_id`).
   * Absent: always.
   */
  isCandidate?(token: TokenWithInfo, request: CandidateRequest): boolean;
  /**
   * The type checks the whole `pass` itself against other tokens through
   * {@link TypeCheckContext.checkRealmPass}, with no PIN of its own (4eyes).
   */
  readonly checksOtherTokens?: boolean;
  /** `pass` is the PIN only, no OTP part (spass). */
  readonly pinOnly?: boolean;
  /** The token deletes itself after one successful authentication (registration). */
  readonly deleteAfterSuccess?: boolean;
  /** Default `otplen` when the type does not set it. */
  readonly defaultOtplen?: number;
  /** Enrolment. */
  init(ctx: TypeInitContext): TypeInitResult | Promise<TypeInitResult>;
  /** Checks the OTP part of `pass`. */
  checkOtp(ctx: TypeCheckContext, otp: string): OtpCheck | Promise<OtpCheck>;
  /** True if `otp` is the value just before the current counter (message suffix). */
  isPreviousOtp?(ctx: TypeCheckContext, otp: string): boolean | Promise<boolean>;
  /** Resync with two consecutive OTPs; returns the counter to store or undefined. */
  resync?(ctx: TypeCheckContext, otp1: string, otp2: string): OtpCheck | Promise<OtpCheck>;
  /** The counter of `otp` inside the sync window, or −1 (auto-resync). */
  findInSyncWindow?(ctx: TypeCheckContext, otp: string): Promise<number>;
  /** Extra per-challenge data (message override, extras for multi_challenge). */
  challengeExtras?(ctx: TypeCheckContext): Record<string, unknown>;
  /**
   * Creates the challenge of this type (sends the code, draws positions,
   * picks a question); replaces the generic message and extras.
   */
  createChallenge?(
    ctx: TypeChallengeContext,
  ): Promise<TypeChallenge | TypeChallengeFailure>;
  /**
   * Checks the answer to one of this type's challenges with the data stored
   * with it; replaces {@link checkOtp} for answers.
   */
  checkAnswer?(
    ctx: TypeAnswerContext,
    answer: string,
    data: Record<string, unknown>,
  ): OtpCheck | Promise<OtpCheck>;
  /**
   * Single-shot check (`push_wait`): the seconds a `/validate/check` with the
   * right PIN waits for the answer to the challenge it makes (answered in time:
   * success), instead of answering with the challenge. Undefined: no waiting.
   */
  waitSeconds?(policy: (action: string) => string | undefined): number | undefined;
  /** The tokeninfo as `GET /token/` shows it (hides stored codes, adds counts). */
  listInfo?(info: Record<string, string>): Record<string, unknown>;
  /**
   * Called for each token `POST /token/revoke` revokes, before it is marked revoked
   * (a certificate is revoked at its CA); a throw leaves the token unchanged.
   */
  revoke?(deps: Deps, token: Token): Promise<void>;
  /** Tokeninfo keys this type hides from list output (never secrets, those are ciphertext). */
  readonly hiddenInfo?: readonly string[];
}

/** Reads tokeninfo value `key` or `fallback`. */
export function infoValue(info: TokenInfo, key: string, fallback = ""): string {
  return info[key]?.value ?? fallback;
}
