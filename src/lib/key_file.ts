/**
 * The key file: 96 random bytes in three 32-byte slots, the same layout as
 * privacyIDEA's `encKey` (slot 0 token secrets, slot 1 config secrets, slot 2
 * values), mode 0600. A new one is staged under a temporary name first and
 * only then put in place, so a start that is refused leaves nothing behind.
 *
 * @module
 */
import { dirname } from "node:path";
import type { Random } from "./random.ts";

/** Length of a key file in bytes. */
export const KEY_FILE_LENGTH = 96;

/** The key file at `path`, or undefined when there is none; a file of another length is refused. */
export function readKeyFile(path: string): Uint8Array | undefined {
  let bytes: Uint8Array;
  try {
    bytes = Deno.readFileSync(path);
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return undefined;
    throw err;
  }
  if (bytes.length !== KEY_FILE_LENGTH) {
    throw new Error(`Key file "${path}" has ${bytes.length} bytes, expected ${KEY_FILE_LENGTH}`);
  }
  return bytes;
}

/** A new key written under a temporary name next to its final path. */
export interface StagedKeyFile {
  bytes: Uint8Array;
  /**
   * Puts the key at its path unless a key file appeared there meanwhile
   * (then the staged file stays); returns the key that is there now.
   */
  commit(): Uint8Array;
  /** Removes the staged file and the folders made for it. */
  discard(): void;
}

/** Folders of `path`'s parent that do not exist yet, the outermost first. */
function missingFolders(path: string): string[] {
  const missing: string[] = [];
  for (let dir = dirname(path);; dir = dirname(dir)) {
    try {
      Deno.statSync(dir);
      return missing.reverse();
    } catch (err) {
      if (!(err instanceof Deno.errors.NotFound)) throw err;
      missing.push(dir);
      if (dirname(dir) === dir) return missing.reverse();
    }
  }
}

/**
 * Writes a new random key (mode 0600) to a temporary file beside `path`,
 * making missing folders with mode 0700; nothing is at `path` until
 * {@link StagedKeyFile.commit}.
 */
export function stageKeyFile(path: string, random: Random): StagedKeyFile {
  const made = missingFolders(path);
  for (const dir of made) Deno.mkdirSync(dir, { mode: 0o700 });
  const bytes = random.bytes(KEY_FILE_LENGTH);
  const suffix = Array.from(random.bytes(6), (b) => b.toString(16).padStart(2, "0")).join("");
  const staged = `${path}.new-${suffix}`;
  const discard = () => {
    try {
      Deno.removeSync(staged);
    } catch (err) {
      if (!(err instanceof Deno.errors.NotFound)) throw err;
    }
    for (const dir of [...made].reverse()) Deno.removeSync(dir);
  };
  try {
    Deno.writeFileSync(staged, bytes, { mode: 0o600, createNew: true });
    Deno.chmodSync(staged, 0o600); // whatever the umask
  } catch (err) {
    discard();
    throw err;
  }
  return {
    bytes,
    commit() {
      try {
        // a hard link fails when the path exists: never overwrite a key file made meanwhile
        Deno.linkSync(staged, path);
      } catch (err) {
        if (!(err instanceof Deno.errors.AlreadyExists)) throw err;
        // the staged file stays: it may hold the key a database has just recorded
        return readKeyFile(path)!;
      }
      Deno.removeSync(staged);
      return bytes;
    },
    discard,
  };
}
