/**
 * What the `webauthn` and `passkey` types share (spec 11 §4, §5): base64url
 * values, the relying-party and user-verification policies, the origin rule,
 * and the registration and assertion checks, which `@simplewebauthn/server`
 * does (CBOR, COSE keys, attestation statements, signatures, rpIdHash, flags
 * and the sign counter). Both types answer challenges only through the
 * FIDO branch of `/validate/check` ({@link FidoTokenType.checkAssertion}).
 *
 * @module
 */
import type { AuthenticationResponseJSON, RegistrationResponseJSON } from "@simplewebauthn/server";
import { Buffer } from "node:buffer";
import { EnrollmentError, ParameterError, PolicyError } from "../../../errors.ts";
import { decryptSecret } from "../../../lib/crypto.ts";
import { fromHex, toHex } from "../../../lib/random.ts";
import { consumeTransaction, createChallenges, openChallenges } from "../../challenge/mod.ts";
import { findByCredentialIdHash, findByOwner } from "../token_store.ts";
import { param } from "./_oath.ts";
import type { OtpCheck, TokenType, TypeCheckContext, TypeInitContext } from "./token_type.ts";

/** The user-verification levels a policy may name. */
export const UV_LEVELS = ["required", "preferred", "discouraged"] as const;
/** A user-verification level. */
export type UvLevel = typeof UV_LEVELS[number];

/** Default transports of `allowCredentials` (`webauthn_allowed_transports`). */
export const DEFAULT_TRANSPORTS = ["usb", "ble", "nfc", "internal"];

/** COSE algorithm ids of the `webauthn_public_key_credential_algorithms` names, in emitted order. */
const ALGORITHMS: readonly [string, number][] = [
  ["ecdsa", -7],
  ["rsassa-pss", -37],
  ["rsassa-pkcs1v1_5", -257],
];

// longest accepted encoded field: an attestation object with a certificate chain
// fits easily; anything longer is refused before it is decoded
const MAX_FIELD = 65_536;
const B64URL_REGEXP = /^[A-Za-z0-9_-]*$/;
// one DNS name (labels of letters, digits and inner hyphens), as an RP id must be
const DOMAIN_REGEXP =
  /^(?=.{1,253}$)[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$/i;

/** The WebAuthn library and its helpers, loaded together on first use. */
interface WebAuthnLibraries {
  server: typeof import("@simplewebauthn/server");
  helpers: typeof import("@simplewebauthn/server/helpers");
}

let librariesLoading: Promise<WebAuthnLibraries> | undefined;

// @simplewebauthn/server and its ASN.1 and COSE dependencies hold about 8 MB resident and only
// FIDO enrolments and answers use them: loaded on first use, not with the server
function libraries(): Promise<WebAuthnLibraries> {
  return librariesLoading ??= Promise.all([
    import("@simplewebauthn/server"),
    import("@simplewebauthn/server/helpers"),
  ]).then(([server, helpers]) => ({ server, helpers }));
}

/** Base64url without padding of `bytes`. */
export function b64url(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("base64url");
}

/**
 * The canonical base64url form (no padding) of a client's value, which may
 * come padded or in standard base64; undefined when it is not base64 at all.
 */
export function canonicalB64url(text: string): string | undefined {
  if (text.length > MAX_FIELD) return undefined;
  const t = text.trim().replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
  if (!B64URL_REGEXP.test(t) || t.length % 4 === 1) return undefined;
  return t;
}

/** Decodes a client's base64url value (padded or standard base64 accepted); undefined if bad. */
export function fromB64url(text: string): Uint8Array | undefined {
  const t = canonicalB64url(text);
  // canonicalB64url let only base64url characters through: nothing is skipped in decoding
  return t === undefined ? undefined : new Uint8Array(Buffer.from(t, "base64url"));
}

/**
 * The check of a client data `challenge` against the nonce of a challenge
 * (base64url text). Two forms answer it, both bound to exactly that nonce:
 * the nonce's bytes (a client that decodes the base64url text, as WebAuthn
 * libraries and privacyIDEA's `webauthn` clients do) and the bytes of the
 * nonce's text (privacyIDEA's passkey clients pass
 * `Uint8Array.from(challenge, c => c.charCodeAt(0))`, and privacyIDEA
 * verifies passkeys against `challenge.encode("utf-8")`). The two forms
 * differ in length (32 bytes or 43), so neither can stand for another nonce.
 */
export function challengeCheck(nonce: string): (received: string) => boolean {
  const asBytes = canonicalB64url(nonce);
  const asText = b64url(new TextEncoder().encode(nonce));
  return (received) => {
    const c = canonicalB64url(received);
    return c !== undefined && c !== "" && (c === asBytes || c === asText);
  };
}

/** The options of a library check that compares the client data's challenge with `nonce`. */
function expectChallenge(nonce: string) {
  const matches = challengeCheck(nonce);
  const outcome = { isOther: false };
  return {
    outcome,
    expectedChallenge: (received: string) => {
      outcome.isOther = !matches(received);
      return !outcome.isOther;
    },
  };
}

// the log's reason when the client data carries another challenge
const OTHER_CHALLENGE = "the client data's challenge is not the nonce of the transaction";

/** Hex SHA-256 of `bytes` (`credential_id_hash`). */
export async function sha256Hex(bytes: Uint8Array): Promise<string> {
  return toHex(
    new Uint8Array(await crypto.subtle.digest("SHA-256", bytes as Uint8Array<ArrayBuffer>)),
  );
}

/** The relying party of an enrolment from the policies; PolicyError when missing or not a domain. */
export function relyingParty(
  policies: Readonly<Record<string, string>>,
  tokenClass: string,
): { id: string; name: string } {
  const id = policies.webauthn_relying_party_id?.trim();
  if (!id) {
    throw new PolicyError(
      `Missing enrollment policy for ${tokenClass}: webauthn_relying_party_id`,
    );
  }
  if (!DOMAIN_REGEXP.test(id)) {
    throw new PolicyError(
      `Illegal value for webauthn_relying_party_id (must be a domain name): ${id}`,
    );
  }
  const name = policies.webauthn_relying_party_name?.trim();
  if (!name) {
    throw new PolicyError(
      `Missing enrollment policy for ${tokenClass}: webauthn_relying_party_name`,
    );
  }
  return { id: id.toLowerCase(), name };
}

/** True if `id` can be a relying party id (a domain name). */
export function isDomainName(id: string): boolean {
  return DOMAIN_REGEXP.test(id);
}

/** The `webauthn_user_verification_requirement` level (default `preferred`). */
export function uvLevel(value: string | undefined): UvLevel {
  if (value === undefined || value.trim() === "") return "preferred";
  const v = value.trim().toLowerCase();
  if (!(UV_LEVELS as readonly string[]).includes(v)) {
    throw new PolicyError(
      "webauthn_user_verification_requirement must be one of required, preferred, discouraged",
    );
  }
  return v as UvLevel;
}

/** `webauthn_timeout` (seconds, default 60) in milliseconds. */
export function timeoutMs(value: string | undefined): number {
  const n = Number.parseInt(value ?? "", 10);
  return (Number.isInteger(n) && n > 0 && n <= 3600 ? n : 60) * 1000;
}

/** The COSE ids of `webauthn_public_key_credential_algorithms` (default all three), in fixed order. */
export function algorithmIds(value: string | undefined): number[] {
  const names = (value ?? "").toLowerCase().split(/[\s,]+/).filter((n) => n !== "");
  if (names.length === 0) return ALGORITHMS.map(([, id]) => id);
  const unknown = names.filter((n) => !ALGORITHMS.some(([name]) => name === n));
  if (unknown.length > 0) {
    throw new PolicyError(
      `Unknown value for webauthn_public_key_credential_algorithms: ${unknown.join(" ")}`,
    );
  }
  return ALGORITHMS.filter(([name]) => names.includes(name)).map(([, id]) => id);
}

/** AAGUIDs of `webauthn_authenticator_selection_list` (lower-case hex, no dashes); undefined: all. */
export function aaguidList(value: string | undefined): string[] | undefined {
  const list = (value ?? "").toLowerCase().split(/[\s,]+/).map((a) => a.replaceAll("-", ""))
    .filter((a) => a !== "");
  return list.length > 0 ? list : undefined;
}

/** The request's Origin header, required for every WebAuthn ceremony. */
export function requireOrigin(origin: string | undefined): string {
  if (origin === undefined || origin.trim() === "") {
    throw new ParameterError("Missing parameter: HTTP_ORIGIN");
  }
  return origin.trim();
}

/**
 * True if `origin` may use `rpId` (WebAuthn §5.1.4.1): a bare origin whose
 * host is the RP id or a subdomain of it, over https (http only for
 * localhost, as browsers allow).
 */
export function originFitsRp(origin: string, rpId: string): boolean {
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return false;
  }
  if (url.origin !== origin) return false;
  const host = url.hostname.toLowerCase();
  const isLocal = host === "localhost" || host.endsWith(".localhost");
  if (url.protocol !== "https:" && !(url.protocol === "http:" && isLocal)) return false;
  return host === rpId || host.endsWith(`.${rpId}`);
}

/** A registration the authenticator made, as the checks left it. */
export interface Registration {
  credentialId: Uint8Array;
  /** COSE public key. */
  publicKey: Uint8Array;
  signCount: number;
  /** AAGUID with dashes. */
  aaguid: string;
  fmt: string;
  isUserVerified: boolean;
  deviceType: "single_device" | "multi_device";
  isBackedUp: boolean;
  /** The attestation certificate chain (DER), leaf first; empty without one. */
  x5c: Uint8Array[];
}

/** A registration or assertion the checks refused; `reason` is for the log only. */
export class FidoCheckError extends Error {}

/**
 * Checks a registration (`navigator.credentials.create()` result) against
 * the enrolment challenge, the request's origin and the RP id: client data
 * type and challenge, origin, rpIdHash, user presence (and verification when
 * `requireUv`), the key algorithm, and the attestation statement.
 */
export async function verifyRegistration(input: {
  clientDataJSON: string;
  attestationObject: string;
  /** base64url of the challenge nonce (answered in either form of {@link challengeCheck}). */
  challenge: string;
  origin: string;
  rpId: string;
  requireUv: boolean;
  algorithms: number[];
}): Promise<Registration> {
  const clientDataJSON = canonicalB64url(input.clientDataJSON);
  const attestationObject = canonicalB64url(input.attestationObject);
  if (!clientDataJSON || !attestationObject) throw new FidoCheckError("not base64url");
  if (!originFitsRp(input.origin, input.rpId)) {
    throw new FidoCheckError(`origin "${input.origin}" does not belong to "${input.rpId}"`);
  }
  const challenge = expectChallenge(input.challenge);
  const { server, helpers } = await libraries();
  let result;
  try {
    result = await server.verifyRegistrationResponse({
      // the credential id is taken from the authenticator data, not from the client
      response: {
        id: "-",
        rawId: "-",
        type: "public-key",
        clientExtensionResults: {},
        response: { clientDataJSON, attestationObject },
      } satisfies RegistrationResponseJSON,
      expectedChallenge: challenge.expectedChallenge,
      expectedOrigin: input.origin,
      expectedRPID: input.rpId,
      expectedType: "webauthn.create",
      requireUserPresence: true,
      requireUserVerification: input.requireUv,
      supportedAlgorithmIDs: input.algorithms,
    });
  } catch (err) {
    throw new FidoCheckError(challenge.outcome.isOther ? OTHER_CHALLENGE : (err as Error).message);
  }
  if (!result.verified) throw new FidoCheckError("the attestation signature does not verify");
  const info = result.registrationInfo;
  const statement = helpers.decodeAttestationObject(info.attestationObject).get("attStmt");
  const x5c = (statement.get("x5c") ?? []) as Uint8Array[];
  return {
    credentialId: helpers.isoBase64URL.toBuffer(info.credential.id),
    publicKey: info.credential.publicKey,
    signCount: info.credential.counter,
    aaguid: info.aaguid,
    fmt: info.fmt,
    isUserVerified: info.userVerified,
    deviceType: info.credentialDeviceType === "multiDevice" ? "multi_device" : "single_device",
    isBackedUp: info.credentialBackedUp,
    x5c,
  };
}

/** The fields of an assertion (`navigator.credentials.get()` result) as `/validate/check` carries them. */
export interface FidoAnswer {
  /** base64url credential id (`credentialid` / `credential_id`). */
  credentialId: string;
  clientDataJSON: string;
  authenticatorData: string;
  signature: string;
  /** base64url user handle, if the authenticator returned one. */
  userHandle?: string;
  /** The request's Origin header. */
  origin?: string;
}

/** The challenge an assertion answers. */
export interface FidoChallenge {
  /** base64url of the nonce. */
  nonce: string;
  userVerification: UvLevel;
}

/**
 * Checks an assertion with the stored credential: client data type and
 * challenge, origin, rpIdHash, user presence (and verification when
 * required), the signature, and a sign count that grows (unless it stays 0
 * on both sides). Returns the new sign count.
 */
export async function verifyAssertion(input: {
  answer: FidoAnswer;
  challenge: FidoChallenge;
  rpId: string;
  credentialId: Uint8Array;
  publicKey: Uint8Array;
  storedCount: number;
}): Promise<{ signCount: number }> {
  const { answer } = input;
  const origin = requireOrigin(answer.origin);
  const fields = {
    id: canonicalB64url(answer.credentialId),
    clientDataJSON: canonicalB64url(answer.clientDataJSON),
    authenticatorData: canonicalB64url(answer.authenticatorData),
    signature: canonicalB64url(answer.signature),
  };
  if (Object.values(fields).some((v) => !v)) throw new FidoCheckError("not base64url");
  if (fields.id !== b64url(input.credentialId)) throw new FidoCheckError("other credential id");
  if (!originFitsRp(origin, input.rpId)) {
    throw new FidoCheckError(`origin "${origin}" does not belong to "${input.rpId}"`);
  }
  const challenge = expectChallenge(input.challenge.nonce);
  const { server } = await libraries();
  let result;
  try {
    result = await server.verifyAuthenticationResponse({
      response: {
        id: fields.id!,
        rawId: fields.id!,
        type: "public-key",
        clientExtensionResults: {},
        response: {
          clientDataJSON: fields.clientDataJSON!,
          authenticatorData: fields.authenticatorData!,
          signature: fields.signature!,
        },
      } satisfies AuthenticationResponseJSON,
      expectedChallenge: challenge.expectedChallenge,
      expectedOrigin: origin,
      expectedRPID: input.rpId,
      expectedType: "webauthn.get",
      credential: {
        id: fields.id!,
        publicKey: input.publicKey as Uint8Array<ArrayBuffer>,
        counter: input.storedCount,
      },
      requireUserVerification: input.challenge.userVerification === "required",
    });
  } catch (err) {
    throw new FidoCheckError(challenge.outcome.isOther ? OTHER_CHALLENGE : (err as Error).message);
  }
  if (!result.verified) throw new FidoCheckError("the signature does not verify");
  return { signCount: result.authenticationInfo.newCounter };
}

/** Subject and issuer (RFC 4514 form), serial (decimal) and CN of an attestation certificate. */
export async function certificateFacts(
  der: Uint8Array,
): Promise<{ subject: string; issuer: string; serial: string; cn: string }> {
  const { helpers } = await libraries();
  const info = helpers.getCertificateInfo(der as Uint8Array<ArrayBuffer>);
  const rfc4514 = (n: Record<string, string | undefined>) =>
    (["CN", "OU", "O", "C"] as const).filter((k) => n[k] !== undefined)
      .map((k) => `${k}=${n[k]!.replace(/([,+"\\<>;])/g, "\\$1")}`).join(",");
  const serialBytes = new Uint8Array(info.parsedCertificate.tbsCertificate.serialNumber);
  return {
    subject: rfc4514(info.subject as Record<string, string | undefined>),
    issuer: rfc4514(info.issuer as Record<string, string | undefined>),
    serial: serialBytes.length > 0 ? BigInt(`0x${toHex(serialBytes)}`).toString() : "0",
    cn: (info.subject as { CN?: string }).CN ?? "",
  };
}

/** PEM of a DER certificate without newlines (passkey `attestation_certificate`). */
export function pemWithoutNewlines(der: Uint8Array): string {
  return `-----BEGIN CERTIFICATE-----${
    Buffer.from(der.buffer, der.byteOffset, der.byteLength).toString("base64")
  }-----END CERTIFICATE-----`;
}

/** The nonce of a stored challenge as base64url (webauthn stores hex, passkey base64url). */
export function nonceOfChallenge(stored: string): string {
  if (/^[0-9a-f]{64}$/.test(stored)) return b64url(fromHex(stored));
  return stored;
}

/** The user-verification level stored with a challenge (`{"user_verification": …}`). */
export function uvOfChallengeData(data: string): UvLevel {
  try {
    const level = JSON.parse(data)?.user_verification;
    if ((UV_LEVELS as readonly string[]).includes(level)) return level;
  } catch { /* no data: the default */ }
  return "preferred";
}

/** A token type whose answers come through the FIDO branch of `/validate/check`. */
export interface FidoTokenType extends TokenType {
  /**
   * True if the type answers a challenge made without a user or serial
   * (`/validate/initialize`): a discoverable credential names its user. A
   * type without it answers only its own challenges (after its PIN).
   */
  answersUserlessChallenge: boolean;
  /** The raw credential id of an enrolled token (empty while `clientwait`). */
  credentialIdOf(ctx: TypeCheckContext): Uint8Array;
  /**
   * Checks an assertion against one of its challenges. Valid results carry
   * the sign count to store (a compare-and-set with the counter, so one
   * assertion succeeds once) and the tokeninfo to update.
   */
  checkAssertion(
    ctx: TypeCheckContext,
    answer: FidoAnswer,
    challenge: FidoChallenge,
  ): Promise<OtpCheck & { reason?: string }>;
}

/** True for the types answered through the FIDO branch. */
export function isFidoType(module: TokenType | undefined): module is FidoTokenType {
  return module !== undefined && "checkAssertion" in module;
}

/** An OTP never authenticates a FIDO token (`pass` is not its answer). */
export function noOtp(): OtpCheck {
  return { isValid: false };
}

/**
 * The sign-count part of a valid assertion: a counter to move with a
 * compare-and-set when it grew; none when it stays 0 (authenticators
 * without a counter), where the consumed challenge alone prevents replay.
 */
export function counterCheck(signCount: number): Pick<OtpCheck, "counter"> {
  return signCount > 0 ? { counter: signCount } : {};
}

// ---------------------------------------------------------------------------
// Enrolment challenges (step 1 stores one, step 2 answers and consumes it)

/** The message when step 2 finds no open enrolment challenge. */
export function noEnrolChallenge(serial: string): EnrollmentError {
  return new EnrollmentError(
    `The enrollment challenge does not exist or has timed out for ${serial}`,
  );
}

/**
 * Stores the enrolment challenge of step 1 (nonce in the challenge column,
 * the user-verification level in its data) and returns its transaction id.
 */
export async function storeEnrolChallenge(
  ctx: TypeInitContext,
  input: { type: string; nonce: string; message: string; userVerification: UvLevel },
): Promise<string> {
  const { transactionId } = await createChallenges(ctx.deps, ctx.system, [{
    serial: ctx.serial,
    type: input.type,
    message: input.message,
    challenge: input.nonce,
    data: JSON.stringify({ user_verification: input.userVerification }),
  }]);
  return transactionId;
}

/** The open enrolment challenge of step 2 (`transaction_id` + serial), or EnrollmentError. */
export async function openEnrolChallenge(
  ctx: TypeInitContext,
  transactionId: string | undefined,
): Promise<{ nonce: string; userVerification: UvLevel }> {
  const serial = ctx.serial;
  if (!transactionId) throw noEnrolChallenge(serial);
  const open = await openChallenges(ctx.deps, transactionId, [serial]);
  if (open.length === 0) throw noEnrolChallenge(serial);
  return {
    nonce: nonceOfChallenge(open[0].challenge),
    userVerification: uvOfChallengeData(open[0].data),
  };
}

/**
 * Uses up the enrolment challenge once the registration checked out: one
 * statement removes it, so of two parallel completions only one goes on.
 */
export async function consumeEnrolChallenge(
  ctx: TypeInitContext,
  transactionId: string,
): Promise<void> {
  const removed = await consumeTransaction(ctx.deps, transactionId);
  if (!removed.includes(ctx.serial)) throw noEnrolChallenge(ctx.serial);
}

/** Raw credential ids of the user's enrolled tokens of `type` (`excludeCredentials`). */
export async function credentialsOfOwner(
  ctx: TypeInitContext,
  type: string,
  idOf: (secret: Uint8Array) => Uint8Array,
): Promise<Uint8Array[]> {
  if (!ctx.owner) return [];
  const tokens = await findByOwner(ctx.deps.db, ctx.owner);
  return tokens.filter((t) =>
    t.type === type && t.serial !== ctx.serial && t.rolloutState === "enrolled" && t.keyEnc !== ""
  ).map((t) => idOf(decryptSecret(ctx.deps.keys.token, t.keyEnc)))
    .filter((id) => id.length > 0);
}

/** True if another token holds the credential with this `credential_id_hash`. */
export async function isCredentialTaken(ctx: TypeInitContext, hash: string): Promise<boolean> {
  const holder = await findByCredentialIdHash(ctx.deps.db, hash);
  return holder !== undefined && holder.serial !== ctx.serial;
}

/** Reads a string parameter of one of several names (aliases), or undefined. */
export function aliasParam(ctx: TypeInitContext, ...names: string[]): string | undefined {
  for (const name of names) {
    const v = param(ctx, name);
    if (v !== undefined && v !== "") return v;
  }
  return undefined;
}
