/**
 * The key file: 96 random bytes in three 32-byte slots, the same layout as
 * privacyIDEA's `encKey` (slot 0 token secrets, slot 1 config secrets, slot 2
 * values). Created with mode 0600 when absent.
 *
 * @module
 */
import { dirname } from "node:path";
import type { Random } from "./random.ts";

/** Length of a key file in bytes. */
export const KEY_FILE_LENGTH = 96;

/** Reads the key file at `path`, creating it (0600) when it does not exist. */
export function loadOrCreateKeyFile(
  path: string,
  random: Random,
): { bytes: Uint8Array; created: boolean } {
  try {
    const bytes = Deno.readFileSync(path);
    if (bytes.length !== KEY_FILE_LENGTH) {
      throw new Error(`Key file "${path}" has ${bytes.length} bytes, expected ${KEY_FILE_LENGTH}`);
    }
    return { bytes, created: false };
  } catch (err) {
    if (!(err instanceof Deno.errors.NotFound)) throw err;
  }
  Deno.mkdirSync(dirname(path), { recursive: true });
  const bytes = random.bytes(KEY_FILE_LENGTH);
  // createNew: never overwrite a key file another process created meanwhile
  try {
    Deno.writeFileSync(path, bytes, { mode: 0o600, createNew: true });
  } catch (err) {
    if (err instanceof Deno.errors.AlreadyExists) return loadOrCreateKeyFile(path, random);
    throw err;
  }
  Deno.chmodSync(path, 0o600);
  return { bytes, created: true };
}
