/**
 * privacyIDEA's encryption key file and ciphers (spec 12 §2): three AES-256
 * keys in 96 bytes (optionally password-protected), AES-256-CBC with PKCS#7
 * or the legacy `01 02` padding.
 *
 * @module
 */
import { createDecipheriv, createHash } from "node:crypto";
import { Buffer } from "node:buffer";

/** The three keys of a privacyIDEA `encKey` file. */
export interface PiKeys {
  /** Slot 0: token secrets, encrypted PINs. */
  token: Uint8Array;
  /** Slot 1: every "password" value (resolvers, config, tokeninfo, RADIUS, SMTP). */
  config: Uint8Array;
}

/** Thrown when a value cannot be decrypted (wrong key, damaged value). */
export class PiDecryptError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "PiDecryptError";
  }
}

const HEX_REGEXP = /^([0-9a-fA-F]{2})*$/;

function unhex(text: string, what: string): Uint8Array {
  const clean = text.trim();
  if (!HEX_REGEXP.test(clean)) throw new PiDecryptError(`${what} is not hex`);
  return new Uint8Array(Buffer.from(clean, "hex"));
}

function lastIndexOfMarker(bytes: Uint8Array): number {
  for (let i = bytes.length - 2; i >= 0; i--) {
    if (bytes[i] === 0x01 && bytes[i + 1] === 0x02) return i;
  }
  return -1;
}

/** The legacy padding (spec 12 §2.4): hex text, `01 02`, zeros; returns the hex-decoded data. */
function legacyUnpad(plain: Uint8Array): Uint8Array | undefined {
  const at = lastIndexOfMarker(plain);
  if (at < 0) return undefined;
  const hexText = new TextDecoder().decode(plain.subarray(0, at));
  if (!/^([0-9a-fA-F]{2})*$/.test(hexText)) return undefined;
  return new Uint8Array(Buffer.from(hexText, "hex"));
}

/** AES-256-CBC decryption with PKCS#7, falling back to the legacy padding. */
export function aesCbcDecrypt(key: Uint8Array, iv: Uint8Array, data: Uint8Array): Uint8Array {
  if (iv.length !== 16 || data.length === 0 || data.length % 16 !== 0) {
    throw new PiDecryptError("the encrypted value has a wrong length");
  }
  const raw = createDecipheriv("aes-256-cbc", key, iv).setAutoPadding(false);
  const plain = new Uint8Array(Buffer.concat([raw.update(data), raw.final()]));
  const pad = plain[plain.length - 1];
  if (pad >= 1 && pad <= 16 && plain.subarray(plain.length - pad).every((b) => b === pad)) {
    return plain.subarray(0, plain.length - pad);
  }
  const legacy = legacyUnpad(plain);
  if (legacy === undefined) throw new PiDecryptError("bad padding (wrong key?)");
  return legacy;
}

const strictUtf8 = new TextDecoder("utf-8", { fatal: true });

function utf8(bytes: Uint8Array): string {
  try {
    return strictUtf8.decode(bytes);
  } catch {
    throw new PiDecryptError("the decrypted value is not text (wrong key?)");
  }
}

/** Reads an `encKey` file: 96 raw bytes, or the password-protected text form (§2.5). */
export function parseEncKey(file: Uint8Array, password?: string): PiKeys {
  let raw = file;
  if (file.length > 100) {
    const text = new TextDecoder().decode(file).trim();
    const m = /^([0-9a-fA-F]{32}):([0-9a-fA-F]+)$/.exec(text);
    if (!m) throw new PiDecryptError("the key file is neither 96 bytes nor iv:cipher text");
    if (password === undefined) {
      throw new PiDecryptError("the key file is password-protected: give its password");
    }
    const k = new Uint8Array(createHash("sha256").update(password, "utf8").digest());
    const d = createDecipheriv("aes-256-cbc", k, unhex(m[1], "iv")).setAutoPadding(false);
    const plain = new Uint8Array(Buffer.concat([d.update(unhex(m[2], "key")), d.final()]));
    const key = legacyUnpad(plain);
    if (!key || key.length !== 96) {
      throw new PiDecryptError(
        "Error decrypting the encryption key. You probably provided the wrong password.",
      );
    }
    raw = key;
  }
  if (raw.length !== 96) {
    throw new PiDecryptError(`the key file has ${raw.length} bytes, expected 96`);
  }
  return { token: raw.slice(0, 32), config: raw.slice(32, 64) };
}

/** A token secret (`key_enc`, `key_iv`) → the key string its type uses (hex for OATH types). */
export function decryptTokenKey(keys: PiKeys, keyEnc: string, keyIv: string): string {
  return utf8(aesCbcDecrypt(keys.token, unhex(keyIv, "key_iv"), unhex(keyEnc, "key_enc")));
}

function decryptIvCipher(key: Uint8Array, value: string): string {
  const at = value.indexOf(":");
  if (at < 0) throw new PiDecryptError("the value is not iv:cipher");
  return utf8(
    aesCbcDecrypt(key, unhex(value.slice(0, at), "iv"), unhex(value.slice(at + 1), "cipher")),
  );
}

/** A slot-1 "password" value `hex(iv):hex(cipher)` → its text. */
export function decryptPassword(keys: PiKeys, value: string): string {
  return decryptIvCipher(keys.config, value);
}

/** An encrypted PIN `@@hex(iv):hex(cipher)` (slot 0) → the PIN. */
export function decryptPin(keys: PiKeys, value: string): string {
  return decryptIvCipher(keys.token, value.replace(/^@@/, ""));
}
