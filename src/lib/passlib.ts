/**
 * Verification of passlib hash strings as privacyIDEA writes them for PINs and
 * admin passwords: `$argon2id$…`, `$argon2i$…`, `$argon2d$…` (Argon2 through
 * the WebAssembly build of `hash-wasm`) and `$pbkdf2-sha512$…` (node:crypto).
 * Only verification: Tessera never writes these formats.
 *
 * @module
 */
import { type Argon2Job, argon2OffThread } from "./argon2.ts";
import { pbkdf2, timingSafeEqual } from "node:crypto";
import { Buffer } from "node:buffer";
import { BoundedQueue } from "./bounded_queue.ts";

const ARGON2_REGEXP =
  /^\$argon2(id|i|d)\$(?:v=(\d+)\$)?m=(\d+),t=(\d+),p=(\d+)\$([A-Za-z0-9+/]+)\$([A-Za-z0-9+/]+)$/;
const PBKDF2_REGEXP = /^\$pbkdf2-sha512\$(\d+)\$([A-Za-z0-9./]*)\$([A-Za-z0-9./]+)$/;

// bounds far above anything passlib writes: a hash string cannot make one check
// take minutes or gigabytes
const MAX_ARGON2_MEMORY_KIB = 1024 * 1024;
const MAX_ARGON2_ITERATIONS = 64;
const MAX_ARGON2_LANES = 64;
const MAX_PBKDF2_ROUNDS = 10_000_000;

/** The scheme of a passlib hash string Tessera can verify, or undefined. */
export function passlibScheme(hash: string): "argon2" | "pbkdf2-sha512" | undefined {
  const m = ARGON2_REGEXP.exec(hash);
  // hash-wasm implements Argon2 version 0x13 only (passlib writes v=19 since 1.7.2)
  if (m) return m[2] === "19" ? "argon2" : undefined;
  return PBKDF2_REGEXP.test(hash) ? "pbkdf2-sha512" : undefined;
}

// One slow hash at a time: an argon2 check holds up to m KiB of memory (64 MiB
// for privacyIDEA's defaults) and a core for about a second.
const slots = new BoundedQueue(1);

/** Thrown when too many verifications already wait (the caller decides how to answer). */
export { QueueFullError } from "./bounded_queue.ts";

/**
 * Verifies `password` against a passlib hash (see {@link passlibScheme});
 * false for a wrong password and for anything malformed or unsupported.
 * Runs one at a time; with `maxWaiting`, a full line rejects with QueueFullError.
 */
export async function verifyPasslibHash(
  hash: string,
  password: string,
  options: { maxWaiting?: number } = {},
): Promise<boolean> {
  const scheme = passlibScheme(hash);
  if (scheme === undefined) return false;
  return await slots.run(
    () => scheme === "argon2" ? verifyArgon2(hash, password) : verifyPbkdf2(hash, password),
    options.maxWaiting,
  );
}

function fromB64(text: string): Uint8Array {
  return new Uint8Array(Buffer.from(text, "base64"));
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && a.length > 0 && timingSafeEqual(a, b);
}

async function verifyArgon2(hash: string, password: string): Promise<boolean> {
  const m = ARGON2_REGEXP.exec(hash)!;
  const memorySize = Number(m[3]);
  const iterations = Number(m[4]);
  const parallelism = Number(m[5]);
  if (
    memorySize > MAX_ARGON2_MEMORY_KIB || iterations < 1 || iterations > MAX_ARGON2_ITERATIONS ||
    parallelism < 1 || parallelism > MAX_ARGON2_LANES || memorySize < 8 * parallelism
  ) return false;
  const salt = fromB64(m[6]);
  const expected = fromB64(m[7]);
  if (salt.length < 8 || expected.length < 4) return false;
  const got = await argon2OffThread({
    variant: m[1] as Argon2Job["variant"],
    password: new TextEncoder().encode(password),
    salt,
    iterations,
    memorySize,
    parallelism,
    hashLength: expected.length,
  });
  return sameBytes(got, expected);
}

function ab64Decode(text: string): Uint8Array {
  return fromB64(text.replaceAll(".", "+"));
}

async function verifyPbkdf2(hash: string, password: string): Promise<boolean> {
  const m = PBKDF2_REGEXP.exec(hash)!;
  const rounds = Number(m[1]);
  if (rounds < 1 || rounds > MAX_PBKDF2_ROUNDS) return false;
  const expected = ab64Decode(m[3]);
  if (expected.length === 0 || expected.length > 64) return false;
  const got = await new Promise<Uint8Array>((resolve, reject) =>
    pbkdf2(password, ab64Decode(m[2]), rounds, expected.length, "sha512", (err, key) => {
      if (err) reject(err);
      else resolve(new Uint8Array(key));
    })
  );
  return sameBytes(got, expected);
}
