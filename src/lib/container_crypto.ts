/**
 * The cryptography between the server and a smartphone authenticator app that
 * registers a token container: the app signs its messages with ECDSA (a PEM
 * SubjectPublicKeyInfo key, DER `ECDSA-Sig-Value` signatures), and the server
 * encrypts what it sends back with AES-256-GCM under the raw X25519 shared
 * secret of a fresh server key pair and the app's per-request key (no KDF, a
 * 16-byte IV: the privacyIDEA Authenticator's wire format).
 *
 * Nothing here throws on hostile input: a malformed key or signature reads as
 * "does not verify" (undefined or false), so callers answer one signature error.
 *
 * @module
 */
import {
  createCipheriv,
  createPrivateKey,
  createPublicKey,
  diffieHellman,
  type KeyObject,
  verify,
} from "node:crypto";
import { Buffer } from "node:buffer";

/** Bytes of an X25519 key (private or public) and of the shared secret. */
export const X25519_KEY_BYTES = 32;
/** Bytes of the AES-GCM IV the app expects (not the usual 12). */
export const GCM_IV_BYTES = 16;

// DER prefixes that wrap a raw 32-byte X25519 key as PKCS#8 / SPKI (RFC 8410).
const X25519_PKCS8_PREFIX = Buffer.from("302e020100300506032b656e04220420", "hex");
const X25519_SPKI_PREFIX = Buffer.from("302a300506032b656e032100", "hex");

const B64_REGEXP = /^[A-Za-z0-9+/_-]*={0,2}$/;
const PEM_PUBLIC_REGEXP =
  /^\s*-----BEGIN PUBLIC KEY-----[A-Za-z0-9+/=\s]+-----END PUBLIC KEY-----\s*$/;
const MAX_PEM_CHARS = 4096;

/** Base64 with the URL-safe alphabet and `=` padding (Python's `urlsafe_b64encode`). */
export function b64urlPadded(bytes: Uint8Array): string {
  return Buffer.from(bytes).toString("base64").replaceAll("+", "-").replaceAll("/", "_");
}

/**
 * Bytes of a base64 text in either alphabet, padding optional (Python's
 * `urlsafe_b64decode` accepts both alphabets); undefined when it is not base64.
 */
export function decodeBase64Any(text: string): Uint8Array | undefined {
  if (!B64_REGEXP.test(text)) return undefined;
  const body = text.replace(/=+$/, "");
  if (body.length % 4 === 1) return undefined;
  if (text.length !== body.length && text.length % 4 !== 0) return undefined;
  return new Uint8Array(Buffer.from(body.replaceAll("-", "+").replaceAll("_", "/"), "base64"));
}

/** The elliptic-curve public key of a PEM SubjectPublicKeyInfo text; undefined if it is none. */
export function parseEcPublicKeyPem(pem: string): KeyObject | undefined {
  if (pem.length > MAX_PEM_CHARS || !PEM_PUBLIC_REGEXP.test(pem)) return undefined;
  try {
    const key = createPublicKey({ key: pem, format: "pem" });
    return key.asymmetricKeyType === "ec" ? key : undefined;
  } catch {
    return undefined;
  }
}

const HASHES: Record<string, string> = {
  SHA1: "sha1",
  SHA224: "sha224",
  SHA256: "sha256",
  SHA384: "sha384",
  SHA512: "sha512",
};

/** Node's digest name for a hash algorithm name (case-insensitive); SHA-256 for unknown names. */
export function digestNameOf(hashAlgorithm: string | undefined): string {
  return HASHES[(hashAlgorithm ?? "").toUpperCase()] ?? "sha256";
}

/**
 * True when `signature` (DER `ECDSA-Sig-Value`) is `key`'s signature of the
 * UTF-8 bytes of `message` with the hash `hashAlgorithm` (e.g. `SHA256`).
 */
export function verifyEcdsaDer(
  key: KeyObject,
  message: string,
  signature: Uint8Array,
  hashAlgorithm = "SHA256",
): boolean {
  try {
    return verify(
      digestNameOf(hashAlgorithm),
      new TextEncoder().encode(message),
      { key, dsaEncoding: "der" },
      signature,
    );
  } catch {
    return false;
  }
}

/** An X25519 private key object of 32 raw bytes. */
function x25519Private(raw: Uint8Array): KeyObject {
  return createPrivateKey({
    key: Buffer.concat([X25519_PKCS8_PREFIX, raw]),
    format: "der",
    type: "pkcs8",
  });
}

/** The raw 32-byte X25519 public key of a raw 32-byte private key. */
export function x25519PublicOf(privateRaw: Uint8Array): Uint8Array {
  const spki = createPublicKey(x25519Private(privateRaw)).export({ format: "der", type: "spki" });
  return new Uint8Array(spki.subarray(spki.length - X25519_KEY_BYTES));
}

/** The raw X25519 shared secret of our private key and a peer's raw public key; undefined if the peer key is bad. */
export function x25519Shared(
  privateRaw: Uint8Array,
  peerPublicRaw: Uint8Array,
): Uint8Array | undefined {
  if (peerPublicRaw.length !== X25519_KEY_BYTES) return undefined;
  try {
    const publicKey = createPublicKey({
      key: Buffer.concat([X25519_SPKI_PREFIX, peerPublicRaw]),
      format: "der",
      type: "spki",
    });
    const shared = new Uint8Array(
      diffieHellman({ privateKey: x25519Private(privateRaw), publicKey }),
    );
    // an all-zero secret means a low-order peer key: the "encryption" would be under a known key
    return shared.some((b) => b !== 0) ? shared : undefined;
  } catch {
    return undefined;
  }
}

/** What the server sends the app for one encrypted message (all b64url with padding). */
export interface SealedForApp {
  /** The server's fresh X25519 public key (`public_server_key`). */
  publicServerKey: string;
  /** The ciphertext without its tag (`container_dict_server`). */
  ciphertext: string;
  /** `encryption_params.init_vector`. */
  initVector: string;
  /** `encryption_params.tag`. */
  tag: string;
}

/**
 * Encrypts `plaintext` to the app whose X25519 public key is `appPublicKey`
 * (raw, b64/b64url): AES-256-GCM under the raw shared secret with our
 * `serverPrivate` (32 fresh random bytes) and a 16-byte `iv`. Undefined when
 * the app's key is not a usable X25519 key.
 */
export function sealForApp(
  appPublicKey: string,
  plaintext: string,
  serverPrivate: Uint8Array,
  iv: Uint8Array,
): SealedForApp | undefined {
  const appRaw = decodeBase64Any(appPublicKey);
  if (!appRaw) return undefined;
  const key = x25519Shared(serverPrivate, appRaw);
  if (!key) return undefined;
  const cipher = createCipheriv("aes-256-gcm", key, iv);
  const ct = Buffer.concat([cipher.update(new TextEncoder().encode(plaintext)), cipher.final()]);
  return {
    publicServerKey: b64urlPadded(x25519PublicOf(serverPrivate)),
    ciphertext: b64urlPadded(ct),
    initVector: b64urlPadded(iv),
    tag: b64urlPadded(cipher.getAuthTag()),
  };
}

/** The parts of a message the app signs; empty optional parts are left out. */
export interface ContainerMessageParts {
  /** The challenge's nonce (40 hex characters). */
  nonce: string;
  /** The challenge's creation time as the server rendered it (see {@link pyIsoUtc}). */
  timeStamp: string;
  /** The container serial as stored (exact case). */
  serial: string;
  /** The endpoint URL the challenge is for (see {@link endpointUrl}). */
  scope: string;
  deviceBrand?: string;
  deviceModel?: string;
  /** The registration passphrase, when the registration asked for one. */
  passphrase?: string;
  /** The app's X25519 key for this synchronisation (`public_enc_key_client`, as sent). */
  encKey?: string;
  /** The app's container JSON (`container_dict_client`, the raw string as sent). */
  containerDict?: string;
}

/**
 * The text the app signs for a container challenge:
 * `nonce|time_stamp|serial|scope[|brand][|model][|passphrase][|key][|container]`.
 */
export function containerMessage(p: ContainerMessageParts): string {
  let text = `${p.nonce}|${p.timeStamp}|${p.serial}|${p.scope}`;
  for (const part of [p.deviceBrand, p.deviceModel, p.passphrase, p.encKey, p.containerDict]) {
    if (part) text += `|${part}`;
  }
  return text;
}

/**
 * The URL of `endpoint` under `baseUrl`: unchanged when it already contains the
 * endpoint, else joined with exactly one `/` (privacyIDEA's `create_endpoint_url`).
 */
export function endpointUrl(baseUrl: string, endpoint: string): string {
  if (baseUrl.includes(endpoint)) return baseUrl;
  return baseUrl.endsWith("/") ? baseUrl + endpoint : `${baseUrl}/${endpoint}`;
}

/**
 * Python's `datetime.isoformat()` of a UTC instant given in ms:
 * `2024-12-20T09:53:40.158000+00:00`, the fraction left out when it is zero.
 */
export function pyIsoUtc(ms: number): string {
  const iso = new Date(ms).toISOString(); // 2024-12-20T09:53:40.158Z
  const frac = iso.slice(20, 23);
  return frac === "000" ? `${iso.slice(0, 19)}+00:00` : `${iso.slice(0, 19)}.${frac}000+00:00`;
}

/**
 * Python's `urllib.parse.quote` (safe `/`) of the UTF-8 bytes of `text`
 * (the encoding the app's URL parser expects; `encodeURIComponent` differs in
 * `!'()*` and `/`).
 */
export function pyQuote(text: string): string {
  return encodeURIComponent(text)
    .replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)
    .replaceAll("%2F", "/");
}

/** What the registration QR code carries. */
export interface RegistrationUrlParts {
  serial: string;
  nonce: string;
  timeStamp: string;
  /** The base URL the app talks to (policy `privacyIDEA_server_url`). */
  serverUrl: string;
  /** Minutes the registration stays open. */
  ttl: number;
  keyAlgorithm: string;
  hashAlgorithm: string;
  /** `True` or `False`. */
  sslVerify: string;
  /** The prompt the app shows for a passphrase, or "". */
  passphrasePrompt: string;
  /** `True`, `False` (Python's `str()` of the request value). */
  sendPassphrase: string;
  /** Extra `&key=value` pairs, in order. */
  extra?: ReadonlyArray<readonly [string, string]>;
  issuer?: string;
}

/** The `pia://container/…` registration URL in privacyIDEA's exact parameter order. */
export function registrationUrl(p: RegistrationUrlParts): string {
  const extra = (p.extra ?? []).map(([k, v]) => `&${pyQuote(k)}=${pyQuote(v)}`).join("");
  return `pia://container/${pyQuote(p.serial)}?issuer=${pyQuote(p.issuer ?? "privacyIDEA")}` +
    `&ttl=${p.ttl}&nonce=${pyQuote(p.nonce)}&time=${pyQuote(p.timeStamp)}` +
    `&url=${pyQuote(p.serverUrl)}&serial=${p.serial}&key_algorithm=${pyQuote(p.keyAlgorithm)}` +
    `&hash_algorithm=${pyQuote(p.hashAlgorithm)}&ssl_verify=${pyQuote(p.sslVerify)}` +
    `&passphrase=${pyQuote(p.passphrasePrompt)}&send_passphrase=${pyQuote(p.sendPassphrase)}` +
    extra;
}
