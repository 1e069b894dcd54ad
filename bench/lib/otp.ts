/**
 * HOTP (RFC 4226) sequences for the load generator, computed ahead of the run
 * with node:crypto (pure apart from the HMAC).
 *
 * @module
 */
import { createHmac } from "node:crypto";

/** One HOTP value for `counter`. */
export function hotp(
  key: Uint8Array,
  counter: number,
  digits = 6,
  hash: "sha1" | "sha256" | "sha512" = "sha1",
): string {
  const msg = new Uint8Array(8);
  new DataView(msg.buffer).setBigUint64(0, BigInt(counter));
  const mac = createHmac(hash, key).update(msg).digest();
  const offset = mac[mac.length - 1] & 0x0f;
  const bin = ((mac[offset] & 0x7f) << 24) | (mac[offset + 1] << 16) | (mac[offset + 2] << 8) |
    mac[offset + 3];
  return String(bin % 10 ** digits).padStart(digits, "0");
}

/**
 * `count` consecutive HOTP values from counter `start`, concatenated (the Lua
 * script cuts value k out as characters k·digits … k·digits+digits−1).
 */
export function hotpSequence(key: Uint8Array, start: number, count: number, digits = 6): string {
  const parts: string[] = new Array(count);
  for (let i = 0; i < count; i++) parts[i] = hotp(key, start + i, digits);
  return parts.join("");
}

/**
 * An OTP value that is none of the values for counters 0 … `window`−1 past
 * `count` (so it stays wrong while the token's counter does not move).
 */
export function wrongOtp(key: Uint8Array, count: number, window: number, digits = 6): string {
  const taken = new Set<string>();
  for (let i = 0; i < window; i++) taken.add(hotp(key, count + i, digits));
  for (let n = 0; n < 10 ** digits; n++) {
    const candidate = String(n).padStart(digits, "0");
    if (!taken.has(candidate)) return candidate;
  }
  throw new Error(`the window holds every ${digits}-digit code`);
}

/** Lower-case hex of `bytes`. */
export function toHex(bytes: Uint8Array): string {
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

/** A deterministic 20-byte key for item `i` of a scenario (reproducible runs). */
export function benchKey(scenario: string, i: number): Uint8Array {
  return new Uint8Array(createHmac("sha1", "tessera-bench").update(`${scenario}:${i}`).digest());
}
