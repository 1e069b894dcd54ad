/**
 * Derives the working keys from the raw key file bytes.
 *
 * @module
 */
import type { Keys } from "../deps.ts";
import { deriveKey } from "../lib/crypto.ts";
import type { Db } from "../db/schema.ts";
import * as store from "./key_check_store.ts";

/** Splits the 96-byte key file into slots and derives the PIN pepper and JWT secret. */
export function keysFromKeyFile(bytes: Uint8Array): Keys {
  const slot2 = bytes.subarray(64, 96);
  return {
    token: bytes.slice(0, 32),
    config: bytes.slice(32, 64),
    pinPepper: deriveKey(slot2, "tessera pin pepper"),
    jwtSecret: deriveKey(slot2, "tessera jwt secret"),
  };
}

/** Thrown when the key file is not the one the database's secrets were written with. */
export class KeyMismatchError extends Error {}

/** A value that names a key file without revealing anything of it (HKDF, 32 bytes, hex). */
export function keyFingerprint(bytes: Uint8Array): string {
  return Array.from(
    deriveKey(bytes, "tessera key fingerprint v1"),
    (b) => b.toString(16).padStart(2, "0"),
  ).join("");
}

/**
 * Checks that `keyBytes` is the key file the database's secrets are encrypted
 * under; records it on first use. Every node sharing a database needs the same
 * key file: one started with another key refuses to start (KeyMismatchError)
 * instead of writing secrets that the other nodes cannot read.
 */
export async function checkKeyFile(db: Db, keyBytes: Uint8Array, now: number): Promise<void> {
  const mine = keyFingerprint(keyBytes);
  let recorded = await store.readFingerprint(db);
  if (recorded === undefined) {
    await store.recordFingerprint(db, mine, now);
    // two nodes starting at once: whoever recorded first decides
    recorded = await store.readFingerprint(db);
  }
  if (recorded !== mine) {
    throw new KeyMismatchError(
      `The key file does not match the key the database's secrets are encrypted with ` +
        `(database ${recorded?.slice(0, 12)}…, key file ${mine.slice(0, 12)}…): ` +
        "every node sharing a database needs the same key file; refusing to start",
    );
  }
}
