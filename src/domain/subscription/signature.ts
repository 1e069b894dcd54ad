/**
 * Subscription signatures (spec 06 §3.2, §3.3): the signed message, the two
 * accepted formats (legacy textbook RSA as a decimal integer, and
 * `rsa_sha256_pss:<hex>`), vendor key lookup, and signing for the CLI.
 *
 * @module
 */
import { createHash, createPrivateKey, createPublicKey, generateKeyPairSync } from "node:crypto";

/** The 18 signed fields in signing order (spec 06 §3.2). */
export const SIGNED_FIELDS = [
  "application",
  "for_name",
  "for_address",
  "for_email",
  "for_phone",
  "for_url",
  "for_comment",
  "by_name",
  "by_email",
  "by_address",
  "by_phone",
  "by_url",
  "date_from",
  "date_till",
  "num_users",
  "num_tokens",
  "num_clients",
  "level",
] as const;

/** Name of one signed field. */
export type SignedField = typeof SIGNED_FIELDS[number];

/** The values a signature covers: strings, integers and dates as `YYYY-MM-DD`. */
export type SignedValues = Record<SignedField, string | number>;

/** Prefix of the current (RSASSA-PSS) signature format. */
export const PSS_PREFIX = "rsa_sha256_pss:";

/** Signature formats the CLI can produce. */
export type SignatureFormat = "pss" | "legacy";

const DAY_MS = 86_400_000;

/** `YYYY-MM-DD` of a midnight-UTC millisecond time. */
export function isoDay(ms: number): string {
  return new Date(Math.floor(ms / DAY_MS) * DAY_MS).toISOString().slice(0, 10);
}

/** The UTF-8 message of spec 06 §3.2: every value followed by a newline. */
export function signedMessage(values: SignedValues): string {
  return SIGNED_FIELDS.map((f) => `${values[f]}\n`).join("");
}

/** A vendor public key prepared for both verification formats. */
export interface VendorKey {
  /** Modulus and public exponent for the legacy format. */
  n: bigint;
  e: bigint;
  /** Web Crypto key for RSA-PSS. */
  pss: CryptoKey;
  /** Maximum PSS salt length for this modulus and SHA-256. */
  saltLength: number;
}

function b64urlToBigInt(b64url: string): bigint {
  const bin = atob(b64url.replace(/-/g, "+").replace(/_/g, "/"));
  let hex = "";
  for (let i = 0; i < bin.length; i++) hex += bin.charCodeAt(i).toString(16).padStart(2, "0");
  return hex === "" ? 0n : BigInt(`0x${hex}`);
}

function bitLength(n: bigint): number {
  return n.toString(2).length;
}

/** Parses a PEM RSA public key (SPKI or PKCS#1); throws on anything else. */
export async function parseVendorKey(pem: string): Promise<VendorKey> {
  const key = createPublicKey(pem);
  if (key.asymmetricKeyType !== "rsa") throw new Error("not an RSA public key");
  const jwk = key.export({ format: "jwk" });
  const n = b64urlToBigInt(jwk.n!);
  const e = b64urlToBigInt(jwk.e!);
  const der = key.export({ format: "der", type: "spki" });
  const pss = await crypto.subtle.importKey(
    "spki",
    new Uint8Array(der),
    { name: "RSA-PSS", hash: "SHA-256" },
    false,
    ["verify"],
  );
  const emLen = Math.ceil((bitLength(n) - 1) / 8);
  return { n, e, pss, saltLength: emLen - 32 - 2 };
}

/** `base^exp mod m` for non-negative BigInts. */
export function modPow(base: bigint, exp: bigint, m: bigint): bigint {
  let result = 1n;
  let b = base % m;
  let x = exp;
  while (x > 0n) {
    if (x & 1n) result = (result * b) % m;
    b = (b * b) % m;
    x >>= 1n;
  }
  return result;
}

function sha256Int(message: string): bigint {
  return BigInt(`0x${createHash("sha256").update(message, "utf8").digest("hex")}`);
}

function hexToBytes(hex: string): Uint8Array<ArrayBuffer> | undefined {
  if (hex.length === 0 || hex.length % 2 !== 0 || !/^[0-9a-fA-F]+$/.test(hex)) return undefined;
  const out = new Uint8Array(hex.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(hex.slice(2 * i, 2 * i + 2), 16);
  return out;
}

/** Outcome of {@link verifySignature}. */
export type VerifyResult = "ok" | "mismatch" | "malformed";

const MEMO_LIMIT = 256;
const verifyMemo = new WeakMap<VendorKey, Map<string, VerifyResult>>();

/**
 * Like {@link verifySignature}, but remembers outcomes per key object, so the
 * runtime check does not redo an RSA verification on every metered request.
 * A pure function of its inputs: a replaced key file gives a new key object
 * (the key cache lives a minute) and thus a fresh memo.
 */
export async function verifySignatureMemo(
  key: VendorKey,
  message: string,
  signature: string,
): Promise<VerifyResult> {
  let memo = verifyMemo.get(key);
  if (!memo) {
    memo = new Map();
    verifyMemo.set(key, memo);
  }
  const id = `${signature}\u0000${message}`;
  const hit = memo.get(id);
  if (hit) return hit;
  const result = await verifySignature(key, message, signature);
  if (memo.size >= MEMO_LIMIT) memo.clear();
  memo.set(id, result);
  return result;
}

/**
 * Checks `signature` over `message`. Returns "ok", "mismatch" (well-formed but
 * wrong), or "malformed" (not a signature in either format).
 */
export async function verifySignature(
  key: VendorKey,
  message: string,
  signature: string,
): Promise<VerifyResult> {
  if (signature.startsWith(PSS_PREFIX)) {
    const bytes = hexToBytes(signature.slice(PSS_PREFIX.length));
    if (!bytes) return "malformed";
    const valid = await crypto.subtle.verify(
      { name: "RSA-PSS", saltLength: key.saltLength },
      key.pss,
      bytes,
      new TextEncoder().encode(message),
    );
    return valid ? "ok" : "mismatch";
  }
  if (!/^\d{1,700}$/.test(signature)) return "malformed";
  const s = BigInt(signature);
  // textbook RSA without padding, as NetKnights' files are signed
  if (s >= key.n) return "mismatch";
  return modPow(s, key.e, key.n) === sha256Int(message) ? "ok" : "mismatch";
}

/** A new RSA key pair as PEM texts (SPKI public, PKCS#8 private). */
export function generateVendorKeyPair(bits = 2048): { publicPem: string; privatePem: string } {
  const { publicKey, privateKey } = generateKeyPairSync("rsa", {
    modulusLength: bits,
    publicExponent: 65537,
  });
  return {
    publicPem: publicKey.export({ format: "pem", type: "spki" }) as string,
    privatePem: privateKey.export({ format: "pem", type: "pkcs8" }) as string,
  };
}

/** Signs `message` with a PEM RSA private key in the given format. */
export async function signMessage(
  privatePem: string,
  message: string,
  format: SignatureFormat = "pss",
): Promise<string> {
  const key = createPrivateKey(privatePem);
  if (key.asymmetricKeyType !== "rsa") throw new Error("not an RSA private key");
  const jwk = key.export({ format: "jwk" });
  const n = b64urlToBigInt(jwk.n!);
  if (format === "legacy") {
    const d = b64urlToBigInt(jwk.d!);
    return modPow(sha256Int(message) % n, d, n).toString(10);
  }
  const der = key.export({ format: "der", type: "pkcs8" });
  const signer = await crypto.subtle.importKey(
    "pkcs8",
    new Uint8Array(der),
    { name: "RSA-PSS", hash: "SHA-256" },
    false,
    ["sign"],
  );
  const emLen = Math.ceil((bitLength(n) - 1) / 8);
  const sig = new Uint8Array(
    await crypto.subtle.sign(
      { name: "RSA-PSS", saltLength: emLen - 32 - 2 },
      signer,
      new TextEncoder().encode(message),
    ),
  );
  return PSS_PREFIX + Array.from(sig, (b) => b.toString(16).padStart(2, "0")).join("");
}

const VENDOR_REGEXP = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;

/**
 * The key file name for a `by_name` (its first whitespace-separated word plus
 * `.pem`), or undefined when that word could name a path outside the key dir.
 */
export function vendorKeyFileName(byName: string): string | undefined {
  const vendor = byName.trim().split(/\s+/)[0] ?? "";
  // names must not climb out of the key directory
  if (!VENDOR_REGEXP.test(vendor) || vendor.includes("..")) return undefined;
  return `${vendor}.pem`;
}

const KEY_CACHE_MS = 60_000;
const keyCache = new Map<string, { at: number; key: Promise<VendorKey | undefined> }>();

/**
 * Loads and caches (for a minute) the vendor key for `byName` from `keyDir`;
 * undefined when the name is unsafe or the file is missing or unreadable.
 */
export function loadVendorKey(
  keyDir: string,
  byName: string,
  nowMs: number,
): Promise<VendorKey | undefined> {
  const file = vendorKeyFileName(byName);
  if (!file) return Promise.resolve(undefined);
  const path = `${keyDir.replace(/\/+$/, "")}/${file}`;
  const hit = keyCache.get(path);
  if (hit && nowMs - hit.at >= 0 && nowMs - hit.at < KEY_CACHE_MS) return hit.key;
  const key = Deno.readTextFile(path).then(parseVendorKey).catch(() => {
    // a missing key is not cached: an operator may install it any moment
    keyCache.delete(path);
    return undefined;
  });
  keyCache.set(path, { at: nowMs, key });
  return key;
}
