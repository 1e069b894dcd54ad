/**
 * Derives the working keys from the raw key file bytes.
 *
 * @module
 */
import type { Keys } from "../deps.ts";
import { deriveKey } from "../lib/crypto.ts";

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
