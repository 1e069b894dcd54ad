/**
 * Yubico OTP primitives (spec 11 §6.1, §6.4): modhex, the CRC-16 residue,
 * AES-128-ECB decryption of the 16-byte token block, and the HMAC-SHA1
 * signature of the Yubico validation protocol.
 *
 * @module
 */
import { Buffer } from "node:buffer";
import { createDecipheriv, createHmac, timingSafeEqual } from "node:crypto";

const MODHEX = "cbdefghijklnrtuv";

/** Characters of modhex text (lower case). */
export const MODHEX_REGEXP = /^[cbdefghijklnrtuv]*$/;

/** Modhex text → bytes; undefined for a character outside the alphabet or an odd length. */
export function modhexDecode(text: string): Uint8Array | undefined {
  if (text.length % 2 !== 0) return undefined;
  const out = new Uint8Array(text.length / 2);
  for (let i = 0; i < out.length; i++) {
    const hi = MODHEX.indexOf(text[2 * i].toLowerCase());
    const lo = MODHEX.indexOf(text[2 * i + 1].toLowerCase());
    if (hi < 0 || lo < 0) return undefined;
    out[i] = hi * 16 + lo;
  }
  return out;
}

/** Bytes → modhex text. */
export function modhexEncode(bytes: Uint8Array): string {
  let out = "";
  for (const b of bytes) out += MODHEX[b >> 4] + MODHEX[b & 15];
  return out;
}

/** CRC-16 as the YubiKey computes it (init 0xFFFF, reflected polynomial 0x8408, no final xor). */
export function yubicoCrc16(bytes: Uint8Array): number {
  let crc = 0xffff;
  for (const b of bytes) {
    crc ^= b;
    for (let i = 0; i < 8; i++) {
      const lsb = crc & 1;
      crc >>= 1;
      if (lsb) crc ^= 0x8408;
    }
  }
  return crc;
}

/** The CRC-16 over a whole valid block (data plus its complemented CRC field). */
export const YUBICO_CRC_RESIDUE = 0xf0b8;

/** The fields of a decrypted Yubico OTP block. */
export interface YubicoOtpBlock {
  /** Private uid, 12 lower-case hex characters. */
  uid: string;
  /** Power-up (usage) counter. */
  usage: number;
  /** Session counter (0–255). */
  session: number;
  /** usage·256 + session: grows with every OTP. */
  counter: number;
}

/**
 * Decrypts the 32 modhex characters of a Yubico OTP with the 16-byte AES key;
 * undefined when they are not modhex or the CRC residue is wrong.
 */
export function decryptYubicoOtp(key: Uint8Array, otp32: string): YubicoOtpBlock | undefined {
  if (key.length !== 16 || otp32.length !== 32) return undefined;
  const cipher = modhexDecode(otp32);
  if (!cipher) return undefined;
  // Web Crypto has no ECB; one block, no padding
  const decipher = createDecipheriv("aes-128-ecb", key, null);
  decipher.setAutoPadding(false);
  const plain = new Uint8Array(
    Buffer.concat([decipher.update(cipher), decipher.final()]),
  );
  if (yubicoCrc16(plain) !== YUBICO_CRC_RESIDUE) return undefined;
  const uid = Array.from(plain.subarray(0, 6), (b) => b.toString(16).padStart(2, "0")).join("");
  const usage = plain[6] | (plain[7] << 8);
  const session = plain[11];
  return { uid, usage, session, counter: usage * 256 + session };
}

/**
 * The validation protocol signature: the parameters except `h`, sorted by
 * name, joined as `k=v` with `&` (raw values), HMAC-SHA1 under `key`, base64.
 */
export function yubicoSignature(params: Record<string, string>, key: Uint8Array): string {
  const text = Object.keys(params).filter((k) => k !== "h").sort()
    .map((k) => `${k}=${params[k]}`).join("&");
  return createHmac("sha1", key).update(text).digest("base64");
}

/** True if `signature` is the protocol signature of `params` under `key` (constant time). */
export function isYubicoSignature(
  params: Record<string, string>,
  key: Uint8Array,
  signature: string,
): boolean {
  const expected = new TextEncoder().encode(yubicoSignature(params, key));
  const given = new TextEncoder().encode(signature);
  return expected.length === given.length && timingSafeEqual(expected, given);
}

/** Decodes standard base64; undefined when `text` is not base64. */
export function base64Bytes(text: string): Uint8Array | undefined {
  const clean = text.trim();
  if (clean === "" || !/^[A-Za-z0-9+/]+={0,2}$/.test(clean) || clean.length % 4 !== 0) {
    return undefined;
  }
  return new Uint8Array(Buffer.from(clean, "base64"));
}

/** Parses a protocol answer (`k=v` lines, the value after the first `=`). */
export function parseYubicoReply(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of text.split(/\r?\n/)) {
    const i = line.indexOf("=");
    if (i > 0) out[line.slice(0, i).trim()] = line.slice(i + 1).trim();
  }
  return out;
}
