/**
 * `tessera import gpgkey <file>`: adds an operator's OpenPGP private key (privacyIDEA's GnuPG
 * key, exported armoured) to the import keys that decrypt encrypted token files (spec 12 §1.8).
 *
 * @module
 */
import type { Config } from "../config.ts";
import type { Deps } from "../deps.ts";
import type { Logger } from "../lib/logger.ts";
import { PgpKeyError } from "../lib/pgp.ts";
import { AppError } from "../errors.ts";
import { KeyMismatchError } from "../domain/keys/mod.ts";
import { closeRuntime, openRuntime } from "../runtime.ts";
import { addImportKeys } from "../domain/import/mod.ts";

/** The `import gpgkey` part of the `import` command's help. */
export const GPG_KEY_HELP = `       tessera import gpgkey <key.asc> [--passphrase-file <file>]

Adds the OpenPGP private keys of <key.asc> to the keys that decrypt encrypted
token files (POST /token/load; the public keys are at GET /system/gpgkeys), e.g.
privacyIDEA's, exported from its PI_GNUPG_HOME with
  gpg --homedir /etc/privacyidea/gpg --export-secret-keys --armor > key.asc
They are stored in the database, encrypted with Tessera's key file, for every
node; a key id that is stored already is replaced. Delete key.asc afterwards.

  --passphrase-file <file>     first line: the passphrase of a protected key`;

/** Options of `import privacyidea` that `import gpgkey` refuses. */
const IMPORT_ONLY_FLAGS = [
  "database",
  "database-file",
  "enckey",
  "enckey-password-file",
  "pepper-file",
  "dry-run",
  "replace",
];

/** A usage error of `import gpgkey` (exit code 2). */
export class GpgKeyUsageError extends Error {}

/** Checks the arguments; the key file's path. */
export function gpgKeyArgs(args: string[], flags: Map<string, string | true>): string {
  if (args.length !== 1) {
    throw new GpgKeyUsageError("tessera import gpgkey needs one key file");
  }
  const foreign = [...flags.keys()].find((f) => IMPORT_ONLY_FLAGS.includes(f));
  if (foreign !== undefined) {
    throw new GpgKeyUsageError(`--${foreign} is not an option of tessera import gpgkey`);
  }
  const passphrase = flags.get("passphrase-file");
  if (passphrase === true) throw new GpgKeyUsageError("--passphrase-file needs a file");
  return args[0];
}

/** What `import gpgkey` stores: the armoured key file and the passphrase, if any. */
export interface GpgKeyInput {
  armored: string;
  passphrase?: string;
}

/** Reads the key file and the passphrase file (before anything of Tessera's is opened). */
export async function gpgKeyInput(
  file: string,
  flags: Map<string, string | true>,
): Promise<GpgKeyInput> {
  const armored = await Deno.readTextFile(file);
  const passphraseFile = flags.get("passphrase-file");
  const passphrase = typeof passphraseFile === "string"
    ? (await Deno.readTextFile(passphraseFile)).split(/\r?\n/)[0]
    : undefined;
  return { armored, passphrase };
}

/** Stores the keys of `input`; prints one line per key. */
export async function gpgKeyCommand(
  deps: Deps,
  input: GpgKeyInput,
  out: { line(text: string): void },
): Promise<void> {
  const keys = await addImportKeys(deps, input.armored, input.passphrase);
  for (const key of keys) {
    out.line(`${key.isNew ? "added" : "replaced"}: ${key.keyid} (fingerprint ${key.fingerprint})`);
  }
}

/** Runs `tessera import gpgkey …`; returns the exit code. */
export async function runGpgKeyCommand(
  config: Config,
  log: Logger,
  args: string[],
  flags: Map<string, string | true>,
): Promise<number> {
  let file: string;
  try {
    // refused before the data directory or database is touched
    file = gpgKeyArgs(args, flags);
  } catch (err) {
    if (!(err instanceof GpgKeyUsageError)) throw err;
    console.error(`${err.message}\n\n${GPG_KEY_HELP}`);
    return 2;
  }
  let deps: Deps | undefined;
  try {
    const input = await gpgKeyInput(file, flags);
    deps = await openRuntime(config, log);
    await gpgKeyCommand(deps, input, { line: (text) => console.log(text) });
    return 0;
  } catch (err) {
    if (
      err instanceof PgpKeyError || err instanceof AppError ||
      err instanceof Deno.errors.NotFound || err instanceof KeyMismatchError
    ) {
      console.error(`Error: ${(err as Error).message}`);
      return 1;
    }
    throw err;
  } finally {
    if (deps) await closeRuntime(deps);
  }
}
