/**
 * Small, domain-free crypto helpers: AES-256-GCM for secrets at rest, keyed PIN
 * hashes, scrypt password hashes and constant-time comparison.
 *
 * @module
 */
import {
  createCipheriv,
  createDecipheriv,
  createHmac,
  hkdfSync,
  scrypt as scryptCb,
  timingSafeEqual,
} from "node:crypto";
import type { Random } from "./random.ts";
import { BoundedQueue } from "./bounded_queue.ts";
import { KeyedHmacSha256 } from "./otp.ts";
import { fromHex, toHex } from "./random.ts";

const ENC_PREFIX = "g1:";

/**
 * What responses show for a stored secret (a resolver's BINDPW, an SMTP or
 * RADIUS password, a secret system config value); sent back in a request it
 * means "keep the stored secret".
 */
export const CENSORED = "__CENSORED__";

/** Encrypts `plaintext` with AES-256-GCM; returns `g1:<iv hex>:<ciphertext+tag hex>`. */
export function encryptSecret(
  key: Uint8Array,
  plaintext: string | Uint8Array,
  random: Random,
): string {
  const iv = random.bytes(12);
  const cipher = createCipheriv("aes-256-gcm", key, iv);
  const data = typeof plaintext === "string" ? new TextEncoder().encode(plaintext) : plaintext;
  const ct = new Uint8Array([...cipher.update(data), ...cipher.final(), ...cipher.getAuthTag()]);
  return `${ENC_PREFIX}${toHex(iv)}:${toHex(ct)}`;
}

/** Decrypts a value made by {@link encryptSecret}; throws if it was tampered with. */
export function decryptSecret(key: Uint8Array, value: string): Uint8Array {
  if (!value.startsWith(ENC_PREFIX)) throw new Error("not an encrypted value");
  const [ivHex, ctHex] = value.slice(ENC_PREFIX.length).split(":");
  const iv = fromHex(ivHex);
  const all = fromHex(ctHex);
  const decipher = createDecipheriv("aes-256-gcm", key, iv);
  decipher.setAuthTag(all.subarray(all.length - 16));
  const head = decipher.update(all.subarray(0, all.length - 16));
  const tail = decipher.final();
  const out = new Uint8Array(head.length + tail.length);
  out.set(head, 0);
  out.set(tail, head.length);
  return out;
}

/** Decrypts a value made by {@link encryptSecret} into a UTF-8 string. */
export function decryptSecretText(key: Uint8Array, value: string): string {
  return new TextDecoder().decode(decryptSecret(key, value));
}

/** True when `value` looks like an output of {@link encryptSecret}. */
export function isEncrypted(value: string): boolean {
  return value.startsWith(ENC_PREFIX);
}

/** HMAC-SHA-256 of `data` under `key`. */
export function hmacSha256(key: Uint8Array, data: string | Uint8Array): Uint8Array {
  return new Uint8Array(createHmac("sha256", key).update(data).digest());
}

/** Derives `length` bytes from `key` for the purpose named by `info` (HKDF-SHA-256). */
export function deriveKey(key: Uint8Array, info: string, length = 32): Uint8Array {
  return new Uint8Array(hkdfSync("sha256", key, new Uint8Array(0), info, length));
}

/** Constant-time equality of two strings (false for different lengths). */
export function safeEqual(a: string, b: string): boolean {
  const ab = new TextEncoder().encode(a);
  const bb = new TextEncoder().encode(b);
  if (ab.length !== bb.length) {
    // compare anyway so the time does not depend on where the strings differ
    timingSafeEqual(ab, ab);
    return false;
  }
  return timingSafeEqual(ab, bb);
}

const PIN_PREFIX = "hmac256$";

// the pepper is fixed for the process: its HMAC pad states are computed once
const pinMacs = new WeakMap<Uint8Array, KeyedHmacSha256>();
const utf8 = new TextEncoder();

function pinMac(pepper: Uint8Array, salt: string, pin: string): string {
  let mac = pinMacs.get(pepper);
  if (mac === undefined) pinMacs.set(pepper, mac = new KeyedHmacSha256(pepper));
  return toHex(mac.mac(utf8.encode(salt + ":" + pin)));
}

/** Keyed hash of a PIN: `hmac256$<salt hex>$<hmac hex>` (see DESIGN.md on why not a slow KDF). */
export function hashPin(pepper: Uint8Array, pin: string, random: Random): string {
  const salt = toHex(random.bytes(16));
  return `${PIN_PREFIX}${salt}$${pinMac(pepper, salt, pin)}`;
}

/** Checks `pin` against a {@link hashPin} value in constant time. */
export function verifyPin(pepper: Uint8Array, stored: string, pin: string): boolean {
  if (!stored.startsWith(PIN_PREFIX)) return false;
  const [salt, mac] = stored.slice(PIN_PREFIX.length).split("$");
  return safeEqual(pinMac(pepper, salt, pin), mac ?? "");
}

const SCRYPT = { N: 16384, r: 8, p: 1, keylen: 32 };

/**
 * How many scrypt hashes may run at once; each holds 16 MiB while it runs.
 * One: an unauthenticated login flood then uses at most one core and 16 MiB,
 * and the other core stays free for /validate/check.
 */
export const SCRYPT_CONCURRENCY = 1;

// Logins are unauthenticated: without a bound, N parallel POST /auth hold
// N × 16 MiB, and running them together is no faster than in turn. This line
// is a memory guard and has no end: callers that face the network put their
// own bounded line (BoundedQueue with maxWaiting) in front of it.
const scryptSlots = new BoundedQueue(SCRYPT_CONCURRENCY);

function scrypt(password: string, salt: Uint8Array, opts: typeof SCRYPT): Promise<Uint8Array> {
  return scryptSlots.run(() =>
    new Promise((resolve, reject) => {
      scryptCb(password, salt, opts.keylen, {
        N: opts.N,
        r: opts.r,
        p: opts.p,
        maxmem: 64 * 1024 * 1024,
      }, (err, key) => {
        if (err) reject(err);
        else resolve(new Uint8Array(key));
      });
    })
  );
}

/** Number of scrypt hashes running now (tests). */
export function scryptInFlight(): number {
  return scryptSlots.running;
}

/** Hashes a password with scrypt: `$scrypt$ln=14,r=8,p=1$<salt b64>$<hash b64>`. */
export async function hashPassword(password: string, random: Random): Promise<string> {
  const salt = random.bytes(16);
  const key = await scrypt(password, salt, SCRYPT);
  return `$scrypt$ln=${Math.log2(SCRYPT.N)},r=${SCRYPT.r},p=${SCRYPT.p}$${b64(salt)}$${b64(key)}`;
}

/** Verifies a password against a {@link hashPassword} hash; false for anything malformed. */
export async function verifyPassword(stored: string, password: string): Promise<boolean> {
  const m = stored.match(
    /^\$scrypt\$ln=(\d+),r=(\d+),p=(\d+)\$([A-Za-z0-9+/=]+)\$([A-Za-z0-9+/=]+)$/,
  );
  if (!m) return false;
  const ln = Number(m[1]);
  if (ln < 1 || ln > 20) return false;
  const expected = fromB64(m[5]);
  const key = await scrypt(password, fromB64(m[4]), {
    N: 2 ** ln,
    r: Number(m[2]),
    p: Number(m[3]),
    keylen: expected.length,
  });
  return key.length === expected.length && timingSafeEqual(key, expected);
}

function b64(bytes: Uint8Array): string {
  return btoa(String.fromCharCode(...bytes));
}

function fromB64(s: string): Uint8Array {
  return Uint8Array.from(atob(s), (c) => c.charCodeAt(0));
}
