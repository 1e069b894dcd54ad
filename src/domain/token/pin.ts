/**
 * Token PINs: keyed hashes (DESIGN.md); an empty stored PIN matches only an
 * empty PIN. PIN hashes imported from privacyIDEA (spec 12 §3.1) are kept as
 * `import:<their form>`, verified once with their own scheme and then
 * replaced by Tessera's keyed hash.
 *
 * @module
 */
import type { Deps } from "../../deps.ts";
import {
  decryptSecretText,
  encryptSecret,
  hashPin,
  isEncrypted,
  safeEqual,
  verifyPin,
} from "../../lib/crypto.ts";
import { QueueFullError, verifyPasslibHash } from "../../lib/passlib.ts";
import { createHash } from "node:crypto";
import { fromHex, toHex } from "../../lib/random.ts";
import * as store from "./token_store.ts";

/** The stored form of `pin` ("" for an empty PIN). */
export function pinHashOf(deps: Deps, pin: string): string {
  return pin === "" ? "" : hashPin(deps.keys.pinPepper, pin, deps.random);
}

/**
 * The stored form of `pin` under the enrollment policy `encrypt_pin`: AES-256-GCM
 * under the token key (reversible, like privacyIDEA's `@@` PINs) instead of a hash.
 */
export function encryptedPinOf(deps: Deps, pin: string): string {
  return pin === "" ? "" : encryptSecret(deps.keys.token, pin, deps.random);
}

/** True for a PIN stored encrypted ({@link encryptedPinOf}). */
export function isEncryptedPin(stored: string): boolean {
  return isEncrypted(stored);
}

/** True if `pin` matches the stored hash (Tessera's own forms; see {@link checkImportedPin}). */
export function checkPin(deps: Deps, stored: string, pin: string): boolean {
  if (stored === "") return pin === "";
  if (isEncrypted(stored)) {
    let plain: string;
    try {
      plain = decryptSecretText(deps.keys.token, stored);
    } catch {
      return false;
    }
    return safeEqual(plain, pin);
  }
  return verifyPin(deps.keys.pinPepper, stored, pin);
}

const IMPORTED_PREFIX = "import:";
const LEGACY_PREFIX = "sha256:";
// slow imported hashes (argon2) waiting beyond this are answered as a wrong PIN
const MAX_WAITING_IMPORTED = 16;

/** True for a PIN hash imported from privacyIDEA that is not verified yet. */
export function isImportedPinHash(stored: string): boolean {
  return stored.startsWith(IMPORTED_PREFIX);
}

/**
 * The stored form of a privacyIDEA `pin_hash` (passlib `$argon2…`,
 * `$pbkdf2-sha512$…`) or of a legacy salted SHA-256 with its `pin_seed`.
 */
export function importedPinHash(piHash: string, pinSeed = ""): string {
  if (piHash.startsWith("$")) return `${IMPORTED_PREFIX}${piHash}`;
  return `${IMPORTED_PREFIX}${LEGACY_PREFIX}${pinSeed.trim().toLowerCase()}:${piHash.toLowerCase()}`;
}

async function verifyImported(stored: string, pin: string): Promise<boolean> {
  const form = stored.slice(IMPORTED_PREFIX.length);
  if (form.startsWith(LEGACY_PREFIX)) {
    // privacyIDEA ≤ 3.4: sha256(pin ‖ seed bytes)
    const [seed, hash] = form.slice(LEGACY_PREFIX.length).split(":");
    if (!/^([0-9a-f]{2})*$/.test(seed) || hash === undefined) return false;
    const digest = createHash("sha256").update(new TextEncoder().encode(pin))
      .update(fromHex(seed)).digest();
    return safeEqual(toHex(new Uint8Array(digest)), hash);
  }
  try {
    return await verifyPasslibHash(form, pin, { maxWaiting: MAX_WAITING_IMPORTED });
  } catch (err) {
    if (err instanceof QueueFullError) return false;
    throw err;
  }
}

/**
 * Checks `pin` against a token's imported PIN hash; on success the hash is
 * replaced by Tessera's own (only if nobody changed it meanwhile), so the
 * slow foreign scheme runs once per token.
 */
export async function checkImportedPin(
  deps: Deps,
  token: { id: number; pinHash: string },
  pin: string,
): Promise<boolean> {
  if (!isImportedPinHash(token.pinHash)) return false;
  if (!(await verifyImported(token.pinHash, pin))) return false;
  const old = token.pinHash;
  await store.updateTokens(
    deps.db,
    [token.id],
    { pin_hash: pinHashOf(deps, pin) },
    (eb) => eb("pin_hash", "=", old),
  );
  return true;
}

/**
 * Splits `pass` into PIN and OTP (spec 02 §3): with PrependPin the OTP is the
 * last `otplen` characters, else the first. Undefined when `pass` is too short.
 */
export function splitPinPass(
  pass: string,
  otplen: number,
  prependPin: boolean,
): { pin: string; otp: string } | undefined {
  if (pass.length < otplen) return undefined;
  return prependPin
    ? { pin: pass.slice(0, pass.length - otplen), otp: pass.slice(pass.length - otplen) }
    : { pin: pass.slice(otplen), otp: pass.slice(0, otplen) };
}
