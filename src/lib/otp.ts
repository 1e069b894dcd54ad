/**
 * HOTP (RFC 4226) and TOTP (RFC 6238) math plus Base32 (RFC 4648), on
 * `node:crypto` HMAC. Knows nothing of tokens or storage.
 *
 * The validate window search ({@link searchHotp}) precomputes the key's HMAC
 * pad states once and then needs two compression calls per counter (SHA-1,
 * SHA-256; SHA-512 via Web Crypto). Measured here for a window of 10 (SHA-1):
 * `otpauth` ≈450–600 µs, `node:crypto` createHmac ≈600 µs (Deno's node layer
 * costs ~50 µs per HMAC), Web Crypto ≈170–260 µs, the precomputed HMAC far
 * less (see `deno run -A bench/inprocess.ts`). The synchronous {@link hotpAt}
 * (node:crypto) serves single values (enrolment, tests, machine helpers).
 *
 * @module
 */
import { createHash, createHmac } from "node:crypto";

/** Hash algorithms an OTP token may use. */
export type OtpHash = "sha1" | "sha256" | "sha512";

/** The accepted hash names. */
export const OTP_HASHES: readonly OtpHash[] = ["sha1", "sha256", "sha512"];

/** Default key size in bytes for a hash (20/32/64). */
export function keySizeOf(hash: OtpHash): number {
  return hash === "sha512" ? 64 : hash === "sha256" ? 32 : 20;
}

// 10^0 … 10^10: digits of an OTP (OCRA allows up to 10)
const POW10 = Array.from({ length: 11 }, (_, i) => 10 ** i);

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
  return truncateOtp(createHmac(hash, key).update(msg).digest(), digits);
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
  // equal UTF-16 code units ⇔ equal strings; every unit is compared (no early exit),
  // with no encoder and no native call
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
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

/** RFC 4226 §5.3's dynamic truncation of `mac` to `digits` (at most 10) decimal digits. */
export function truncateOtp(mac: Uint8Array, digits: number): string {
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

// ---------------------------------------------------------------------------
// Precomputed-key HMAC for the window search.
//
// An HOTP message is 8 bytes, so HMAC-SHA-1/SHA-256 of it is exactly two
// compression-function calls once the key's inner and outer pad states are
// known. Computing those states once per key and then 2 compressions per
// counter is ~30x cheaper than a library HMAC call (which re-hashes the key
// pads each time and, in Deno's node:crypto, crosses into native code per
// call). SHA-512 goes through Web Crypto.

const SHA1_IV = [0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476, 0xc3d2e1f0];
const SHA256_IV = [
  0x6a09e667,
  0xbb67ae85,
  0x3c6ef372,
  0xa54ff53a,
  0x510e527f,
  0x9b05688c,
  0x1f83d9ab,
  0x5be0cd19,
];
// deno-fmt-ignore
const K256 = new Uint32Array([
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
  0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
  0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
  0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
  0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
  0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
  0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
  0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
]);

type Compress = (state: Uint32Array, block: Uint32Array, out: Uint32Array, w: Uint32Array) => void;

function sha1Compress(state: Uint32Array, block: Uint32Array, out: Uint32Array, w: Uint32Array) {
  for (let i = 0; i < 16; i++) w[i] = block[i];
  for (let i = 16; i < 80; i++) {
    const x = w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16];
    w[i] = (x << 1) | (x >>> 31);
  }
  let a = state[0], b = state[1], c = state[2], d = state[3], e = state[4];
  for (let i = 0; i < 80; i++) {
    let f: number, k: number;
    if (i < 20) {
      f = (b & c) | (~b & d);
      k = 0x5a827999;
    } else if (i < 40) {
      f = b ^ c ^ d;
      k = 0x6ed9eba1;
    } else if (i < 60) {
      f = (b & c) | (b & d) | (c & d);
      k = 0x8f1bbcdc;
    } else {
      f = b ^ c ^ d;
      k = 0xca62c1d6;
    }
    const t = (((a << 5) | (a >>> 27)) + f + e + k + w[i]) | 0;
    e = d;
    d = c;
    c = (b << 30) | (b >>> 2);
    b = a;
    a = t;
  }
  out[0] = state[0] + a;
  out[1] = state[1] + b;
  out[2] = state[2] + c;
  out[3] = state[3] + d;
  out[4] = state[4] + e;
}

function rotr(x: number, n: number): number {
  return (x >>> n) | (x << (32 - n));
}

function sha256Compress(state: Uint32Array, block: Uint32Array, out: Uint32Array, w: Uint32Array) {
  for (let i = 0; i < 16; i++) w[i] = block[i];
  for (let i = 16; i < 64; i++) {
    const x = w[i - 15];
    const y = w[i - 2];
    const s0 = rotr(x, 7) ^ rotr(x, 18) ^ (x >>> 3);
    const s1 = rotr(y, 17) ^ rotr(y, 19) ^ (y >>> 10);
    w[i] = w[i - 16] + s0 + w[i - 7] + s1;
  }
  let a = state[0], b = state[1], c = state[2], d = state[3];
  let e = state[4], f = state[5], g = state[6], h = state[7];
  for (let i = 0; i < 64; i++) {
    const t1 = (h + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) + K256[i] +
      w[i]) | 0;
    const t2 = ((rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c))) | 0;
    h = g;
    g = f;
    f = e;
    e = (d + t1) | 0;
    d = c;
    c = b;
    b = a;
    a = (t1 + t2) | 0;
  }
  out[0] = state[0] + a;
  out[1] = state[1] + b;
  out[2] = state[2] + c;
  out[3] = state[3] + d;
  out[4] = state[4] + e;
  out[5] = state[5] + f;
  out[6] = state[6] + g;
  out[7] = state[7] + h;
}

/**
 * The hash states after the HMAC key's inner (0x36) and outer (0x5c) pad
 * blocks: what every MAC under that key starts from (RFC 2104).
 */
function padStates(
  key: Uint8Array,
  hash: "sha1" | "sha256",
  w: Uint32Array,
): [Uint32Array, Uint32Array] {
  const compress = hash === "sha1" ? sha1Compress : sha256Compress;
  const iv = Uint32Array.from(hash === "sha1" ? SHA1_IV : SHA256_IV);
  // keys longer than the block are hashed first
  const k = new Uint8Array(64);
  k.set(key.length > 64 ? createHash(hash).update(key).digest() : key);
  const pad = (byte: number) => {
    const block = new Uint32Array(16);
    for (let i = 0; i < 16; i++) {
      block[i] = (((k[4 * i] ^ byte) << 24) | ((k[4 * i + 1] ^ byte) << 16) |
        ((k[4 * i + 2] ^ byte) << 8) | (k[4 * i + 3] ^ byte)) >>> 0;
    }
    const out = new Uint32Array(iv.length);
    compress(iv, block, out, w);
    return out;
  };
  return [pad(0x36), pad(0x5c)];
}

/** HMAC of 8-byte messages under one key, with the pad states computed once. */
class CounterHmac {
  readonly #compress: Compress;
  readonly #inner: Uint32Array;
  readonly #outer: Uint32Array;
  readonly #words: number;
  readonly #block = new Uint32Array(16);
  readonly #digest: Uint32Array;
  readonly #w = new Uint32Array(80);

  constructor(key: Uint8Array, hash: "sha1" | "sha256") {
    this.#compress = hash === "sha1" ? sha1Compress : sha256Compress;
    this.#words = hash === "sha1" ? 5 : 8;
    [this.#inner, this.#outer] = padStates(key, hash, this.#w);
    this.#digest = new Uint32Array(this.#words);
  }

  /** The MAC of the 8-byte big-endian `counter` as bytes. */
  mac(counter: number): Uint8Array {
    const b = this.#block;
    // inner: counter || 0x80 || zeros || bit length of (pad block + 8 bytes)
    b.fill(0);
    b[0] = Math.floor(counter / 0x100000000);
    b[1] = counter >>> 0;
    b[2] = 0x80000000;
    b[15] = (64 + 8) * 8;
    this.#compress(this.#inner, b, this.#digest, this.#w);
    // outer: inner digest || 0x80 || zeros || bit length of (pad block + digest)
    b.fill(0);
    for (let i = 0; i < this.#words; i++) b[i] = this.#digest[i];
    b[this.#words] = 0x80000000;
    b[15] = (64 + 4 * this.#words) * 8;
    this.#compress(this.#outer, b, this.#digest, this.#w);
    const out = new Uint8Array(4 * this.#words);
    for (let i = 0; i < this.#words; i++) {
      const v = this.#digest[i];
      out[4 * i] = v >>> 24;
      out[4 * i + 1] = (v >>> 16) & 0xff;
      out[4 * i + 2] = (v >>> 8) & 0xff;
      out[4 * i + 3] = v & 0xff;
    }
    return out;
  }
}

/** The HOTP values of counters `from … from+count−1` (precomputed-key HMAC; SHA-512 via Web Crypto). */
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
  if (hash === "sha1" || hash === "sha256") {
    const h = new CounterHmac(key, hash);
    const out: string[] = new Array(end - start);
    for (let c = start; c < end; c++) out[c - start] = truncateOtp(h.mac(c), digits);
    return out;
  }
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
  return macs.map((m) => truncateOtp(new Uint8Array(m), digits));
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
  const end = from + count;
  if (hash === "sha1" || hash === "sha256") {
    // stops at the first match: the time then tells only what a correct OTP
    // already tells; a wrong OTP is compared against the whole window
    const h = new CounterHmac(key, hash);
    for (let c = start; c < end; c++) {
      if (otpEqual(truncateOtp(h.mac(c), digits), otp)) return c;
    }
    return -1;
  }
  const values = await hotpRange(key, start, end - start, digits, hash);
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

/**
 * HMAC-SHA-256 of arbitrary messages under one fixed key, with the key's pad
 * states computed once (the PIN pepper: one MAC per PIN check, where a
 * `node:crypto` HMAC object costs ~9 µs and this ~1–2 µs).
 */
export class KeyedHmacSha256 {
  readonly #inner: Uint32Array;
  readonly #outer: Uint32Array;
  readonly #state = new Uint32Array(8);
  readonly #block = new Uint32Array(16);
  readonly #w = new Uint32Array(64);

  constructor(key: Uint8Array) {
    [this.#inner, this.#outer] = padStates(key, "sha256", this.#w);
  }

  /** The 32-byte MAC of `data`. */
  mac(data: Uint8Array): Uint8Array {
    const state = this.#state;
    const b = this.#block;
    const w = this.#w;
    state.set(this.#inner);
    const n = data.length;
    // message || 0x80 || zeros || 64-bit bit length (of pad block + message)
    const blocks = Math.ceil((n + 9) / 64);
    const bits = (64 + n) * 8;
    for (let blk = 0; blk < blocks; blk++) {
      b.fill(0);
      for (let i = 0; i < 64; i++) {
        const pos = blk * 64 + i;
        let byte = 0;
        if (pos < n) byte = data[pos];
        else if (pos === n) byte = 0x80;
        else continue;
        b[i >> 2] |= byte << (24 - 8 * (i & 3));
      }
      if (blk === blocks - 1) {
        b[14] = Math.floor(bits / 0x100000000);
        b[15] = bits >>> 0;
      }
      sha256Compress(state, b, state, w);
    }
    b.fill(0);
    for (let i = 0; i < 8; i++) b[i] = state[i];
    b[8] = 0x80000000;
    b[15] = (64 + 32) * 8;
    sha256Compress(this.#outer, b, state, w);
    const out = new Uint8Array(32);
    for (let i = 0; i < 8; i++) {
      const v = state[i];
      out[4 * i] = v >>> 24;
      out[4 * i + 1] = (v >>> 16) & 0xff;
      out[4 * i + 2] = (v >>> 8) & 0xff;
      out[4 * i + 3] = v & 0xff;
    }
    return out;
  }
}
