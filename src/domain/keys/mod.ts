/**
 * The key file: the working keys derived from it, and the check that it is
 * the key file the database's secrets are encrypted with.
 *
 * @module
 */
import type { Keys } from "../../deps.ts";
import { deriveKey } from "../../lib/crypto.ts";
import type { Db } from "../../db/schema.ts";
import { readKeyFile, stageKeyFile } from "../../lib/key_file.ts";
import type { Random } from "../../lib/random.ts";
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

/**
 * Thrown when the key file is not the one the database's secrets were written
 * with: another one, or none at all.
 */
export class KeyMismatchError extends Error {}

/** A value that names a key file without revealing anything of it (HKDF, 32 bytes, hex). */
export function keyFingerprint(bytes: Uint8Array): string {
  return Array.from(
    deriveKey(bytes, "tessera key fingerprint v1"),
    (b) => b.toString(16).padStart(2, "0"),
  ).join("");
}

function mismatch(path: string, recorded: string, mine: string): KeyMismatchError {
  return new KeyMismatchError(
    `The key file "${path}" does not match the key the database's secrets are encrypted with ` +
      `(database ${recorded.slice(0, 12)}…, key file ${mine.slice(0, 12)}…): ` +
      "every node sharing a database needs the same key file; refusing to start",
  );
}

function missing(path: string, recorded: string): KeyMismatchError {
  return new KeyMismatchError(
    `The key file "${path}" does not exist, but the database's secrets are encrypted with a ` +
      `key file (${recorded.slice(0, 12)}…): copy that key file to "${path}" (mode 0600) or ` +
      "set storage.key_file to its path; refusing to start without creating a new one",
  );
}

/**
 * Refuses (KeyMismatchError) when the database records a key file and the one
 * at `path` is another or missing. Reads only: it runs before migrations, so
 * a node with the wrong key changes nothing, neither on disk nor in the database.
 */
export async function checkKeyFile(db: Db, path: string): Promise<void> {
  const recorded = await store.readFingerprint(db, { tableMayBeMissing: true });
  if (recorded === undefined) return;
  const bytes = readKeyFile(path);
  if (bytes === undefined) throw missing(path, recorded);
  const mine = keyFingerprint(bytes);
  if (mine !== recorded) throw mismatch(path, recorded, mine);
}

/**
 * The key file at `path`, checked against the one the database records.
 * On a database that records none yet, the key (the file's, or on first
 * start a new one, mode 0600) is recorded; the first node to record decides,
 * and a node that lost that race leaves no key file behind. Every node
 * sharing a database needs the same key file: one started with another key
 * refuses to start (KeyMismatchError) instead of writing secrets that the
 * other nodes cannot read.
 */
export async function openKeyFile(
  db: Db,
  path: string,
  options: { random: Random; now: number },
): Promise<{ bytes: Uint8Array; isCreated: boolean }> {
  const existing = readKeyFile(path);
  let recorded = await store.readFingerprint(db);
  if (existing !== undefined) {
    const mine = keyFingerprint(existing);
    if (recorded === undefined) {
      await store.recordFingerprint(db, mine, options.now);
      recorded = (await store.readFingerprint(db))!;
    }
    if (recorded !== mine) throw mismatch(path, recorded, mine);
    return { bytes: existing, isCreated: false };
  }
  if (recorded !== undefined) throw missing(path, recorded);
  const staged = stageKeyFile(path, options.random);
  const mine = keyFingerprint(staged.bytes);
  try {
    await store.recordFingerprint(db, mine, options.now);
    // two nodes starting at once: whoever recorded first decides
    recorded = (await store.readFingerprint(db))!;
  } catch (err) {
    staged.discard();
    throw err;
  }
  if (recorded !== mine) {
    staged.discard();
    throw mismatch(path, recorded, mine);
  }
  // another process on this host may have put a key file there meanwhile
  const bytes = staged.commit();
  const inFile = keyFingerprint(bytes);
  if (inFile !== recorded) throw mismatch(path, recorded, inFile);
  return { bytes, isCreated: true };
}
