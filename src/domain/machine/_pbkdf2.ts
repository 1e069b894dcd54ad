/**
 * passlib-compatible `pbkdf2_sha512` hashes (`$pbkdf2-sha512$<rounds>$<salt>$<checksum>`,
 * adapted base64), as the offline clients verify them.
 *
 * @module
 */
import { pbkdf2 } from "node:crypto";
import { Buffer } from "node:buffer";

/** passlib's "adapted base64": standard alphabet with `.` for `+`, no padding. */
export function ab64Encode(bytes: Uint8Array): string {
  return Buffer.from(bytes).toString("base64").replace(/=+$/, "").replaceAll("+", ".");
}

/** Decodes adapted base64. */
export function ab64Decode(text: string): Uint8Array {
  return new Uint8Array(Buffer.from(text.replaceAll(".", "+"), "base64"));
}

function derive(password: string, salt: Uint8Array, rounds: number): Promise<Uint8Array> {
  return new Promise((resolve, reject) => {
    pbkdf2(password, salt, rounds, 64, "sha512", (err, key) => {
      if (err) reject(err);
      else resolve(new Uint8Array(key));
    });
  });
}

/** Hashes `password` with PBKDF2-HMAC-SHA512 (`rounds` iterations, given salt). */
export async function pbkdf2Sha512Hash(
  password: string,
  salt: Uint8Array,
  rounds: number,
): Promise<string> {
  const checksum = await derive(password, salt, rounds);
  return `$pbkdf2-sha512$${rounds}$${ab64Encode(salt)}$${ab64Encode(checksum)}`;
}

/** Verifies `password` against a passlib `pbkdf2-sha512` hash. */
export async function pbkdf2Sha512Verify(hash: string, password: string): Promise<boolean> {
  const m = hash.match(/^\$pbkdf2-sha512\$(\d+)\$([A-Za-z0-9./]*)\$([A-Za-z0-9./]+)$/);
  if (!m) return false;
  const expected = ab64Decode(m[3]);
  const got = await derive(password, ab64Decode(m[2]), Number(m[1]));
  return got.length === expected.length && got.every((b, i) => b === expected[i]);
}
