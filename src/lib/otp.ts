/**
 * HOTP (RFC 4226) and TOTP (RFC 6238) math plus Base32 (RFC 4648), on
 * `node:crypto` HMAC. Knows nothing of tokens or storage.
 *
 * The validate window search ({@link searchHotp}) uses Web Crypto: one key
 * import, then every HMAC of the window in parallel off the JavaScript thread.
 * Measured here for a window of 10 (SHA-1): Web Crypto ≈170–260 µs,
 * `otpauth` ≈450–600 µs, `node:crypto` createHmac ≈600 µs (Deno's node
 * compatibility layer costs ~50 µs per HMAC). The synchronous {@link hotpAt}
 * (node:crypto) serves single values (enrolment, tests, machine helpers).
 *
 * @module
 */
import { createHmac, timingSafeEqual } from "node:crypto";

/** Hash algorithms an OTP token may use. */
export type OtpHash = "sha1" | "sha256" | "sha512";

/** The accepted hash names. */
export const OTP_HASHES: readonly OtpHash[] = ["sha1", "sha256", "sha512"];

/** Default key size in bytes for a hash (20/32/64). */
export function keySizeOf(hash: OtpHash): number {
  return hash === "sha512" ? 64 : hash === "sha256" ? 32 : 20;
}

const POW10 = [1, 10, 100, 1000, 10000, 100000, 1000000, 10000000, 100000000, 1000000000];

/** The HOTP value of `key` at `counter` with `digits` digits (RFC 4226 §5.3). */
export function hotpAt(
  key: Uint8Array,
  counter: number,
  digits = 6,
  hash: OtpHash = "sha1",
): string {
  const msg = new Uint8Array(8);
  // counter is a non-negative safe integer: split into two 32-bit halves
  const hi = Math.floor(counter / 0x100000000);
  const lo = counter >>> 0;
  msg[0] = hi >>> 24;
  msg[1] = (hi >>> 16) & 0xff;
  msg[2] = (hi >>> 8) & 0xff;
  msg[3] = hi & 0xff;
  msg[4] = lo >>> 24;
  msg[5] = (lo >>> 16) & 0xff;
  msg[6] = (lo >>> 8) & 0xff;
  msg[7] = lo & 0xff;
  const mac = createHmac(hash, key).update(msg).digest();
  const off = mac[mac.length - 1] & 0x0f;
  const bin = ((mac[off] & 0x7f) << 24) | (mac[off + 1] << 16) | (mac[off + 2] << 8) |
    mac[off + 3];
  return String(bin % POW10[digits]).padStart(digits, "0");
}

/** The TOTP time step of `unixSeconds` for `step` seconds per step (RFC 6238 §4). */
export function totpStepAt(unixSeconds: number, step = 30): number {
  return Math.floor(unixSeconds / step);
}

/** The TOTP value at `unixSeconds`. */
export function totpAt(
  key: Uint8Array,
  unixSeconds: number,
  options: { step?: number; digits?: number; hash?: OtpHash } = {},
): string {
  return hotpAt(
    key,
    totpStepAt(unixSeconds, options.step ?? 30),
    options.digits ?? 6,
    options.hash ?? "sha1",
  );
}

/** Constant-time comparison of two OTP strings of equal length. */
export function otpEqual(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  return timingSafeEqual(new TextEncoder().encode(a), new TextEncoder().encode(b));
}

/**
 * Searches `from … from+count−1` for the counter whose HOTP equals `otp`;
 * returns it or −1. Every candidate is compared (no early exit on timing).
 */
export function findHotpCounter(
  key: Uint8Array,
  otp: string,
  from: number,
  count: number,
  digits: number,
  hash: OtpHash,
): number {
  let found = -1;
  for (let c = Math.max(0, from); c < from + count; c++) {
    if (otpEqual(hotpAt(key, c, digits, hash), otp) && found < 0) found = c;
  }
  return found;
}

const WEB_HASH: Record<OtpHash, string> = { sha1: "SHA-1", sha256: "SHA-256", sha512: "SHA-512" };

function truncate(mac: Uint8Array, digits: number): string {
  const off = mac[mac.length - 1] & 0x0f;
  const bin = ((mac[off] & 0x7f) << 24) | (mac[off + 1] << 16) | (mac[off + 2] << 8) |
    mac[off + 3];
  return String(bin % POW10[digits]).padStart(digits, "0");
}

function counterBytes(counter: number): Uint8Array<ArrayBuffer> {
  const msg = new Uint8Array(8);
  const view = new DataView(msg.buffer);
  view.setUint32(0, Math.floor(counter / 0x100000000));
  view.setUint32(4, counter >>> 0);
  return msg;
}

/** The HOTP values of counters `from … from+count−1` (Web Crypto, computed in parallel). */
export async function hotpRange(
  key: Uint8Array,
  from: number,
  count: number,
  digits: number,
  hash: OtpHash,
): Promise<string[]> {
  const start = Math.max(0, from);
  const end = from + count;
  if (end <= start) return [];
  const k = await crypto.subtle.importKey(
    "raw",
    key.slice(),
    { name: "HMAC", hash: WEB_HASH[hash] },
    false,
    ["sign"],
  );
  const macs = await Promise.all(
    Array.from(
      { length: end - start },
      (_, i) => crypto.subtle.sign("HMAC", k, counterBytes(start + i)),
    ),
  );
  return macs.map((m) => truncate(new Uint8Array(m), digits));
}

/**
 * Async {@link findHotpCounter} for the validate hot path: the counter in
 * `from … from+count−1` whose HOTP equals `otp`, or −1. Every candidate is
 * compared in constant time.
 */
export async function searchHotp(
  key: Uint8Array,
  otp: string,
  from: number,
  count: number,
  digits: number,
  hash: OtpHash,
): Promise<number> {
  const start = Math.max(0, from);
  const values = await hotpRange(key, start, from + count - start, digits, hash);
  let found = -1;
  values.forEach((v, i) => {
    if (otpEqual(v, otp) && found < 0) found = start + i;
  });
  return found;
}

const B32 = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";

/** Base32 of `bytes` without padding (as used in otpauth:// URLs). */
export function base32Encode(bytes: Uint8Array, padding = false): string {
  let out = "";
  let bits = 0;
  let value = 0;
  for (const b of bytes) {
    value = (value << 8) | b;
    bits += 8;
    while (bits >= 5) {
      out += B32[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += B32[(value << (5 - bits)) & 31];
  if (padding) { while (out.length % 8 !== 0) out += "="; }
  return out;
}

/** Bytes of a Base32 string (case-insensitive, padding and spaces ignored); throws if invalid. */
export function base32Decode(text: string): Uint8Array {
  const clean = text.replace(/[\s=]/g, "").toUpperCase();
  const out: number[] = [];
  let bits = 0;
  let value = 0;
  for (const ch of clean) {
    const idx = B32.indexOf(ch);
    if (idx < 0) throw new Error("invalid base32 string");
    value = (value << 5) | idx;
    bits += 5;
    if (bits >= 8) {
      out.push((value >>> (bits - 8)) & 0xff);
      bits -= 8;
    }
  }
  return new Uint8Array(out);
}
