/**
 * Tessera's import keys (spec 12 §1.8): the OpenPGP key pairs vendors encrypt token files to,
 * as privacyIDEA keeps them in its GnuPG home. They live in the database (`importkey`), the
 * private keys encrypted with the configuration key, so every node decrypts with the same
 * keys. The first key is generated when it is first needed; an operator may add their own
 * (privacyIDEA's) with `tessera import gpgkey`.
 *
 * @module
 */
import type { Deps } from "../../deps.ts";
import { ParameterError } from "../../errors.ts";
import { decryptSecretText, encryptSecret } from "../../lib/crypto.ts";
import {
  decryptPgpMessage,
  generatePgpKeyPair,
  type PgpKeyPair,
  readPgpPrivateKeys,
} from "../../lib/pgp.ts";
import { insertGeneratedKey, listImportKeys, upsertImportedKey } from "./import_key_store.ts";

/** The text an OpenPGP-encrypted upload starts with. */
export const PGP_MESSAGE_HEADER = "-----BEGIN PGP MESSAGE-----";

/** The user id of a generated import key. */
const GENERATED_NAME = "Tessera token import";

/** The stored keys, generating the first one when there is none. */
async function importKeys(deps: Deps) {
  const rows = await listImportKeys(deps.db);
  if (rows.length > 0) return rows;
  const pair = await generatePgpKeyPair(GENERATED_NAME, new Date(deps.clock.now()));
  await insertGeneratedKey(deps.db, rowOf(deps, pair, "generated"));
  return await listImportKeys(deps.db);
}

function rowOf(deps: Deps, pair: PgpKeyPair, origin: "generated" | "imported") {
  return {
    keyid: pair.keyid,
    fingerprint: pair.fingerprint,
    public_armor: pair.publicArmor,
    private_enc: encryptSecret(deps.keys.config, pair.privateArmor, deps.random),
    origin,
    created_at: deps.clock.now(),
  };
}

/** `GET /system/gpgkeys`: `{<keyid>: {armor, fingerprint}}` of every import key. */
export async function importPublicKeys(
  deps: Deps,
): Promise<Record<string, { armor: string; fingerprint: string }>> {
  const out: Record<string, { armor: string; fingerprint: string }> = {};
  for (const row of await importKeys(deps)) {
    out[row.keyid] = { armor: row.public_armor, fingerprint: row.fingerprint };
  }
  return out;
}

/**
 * Decrypts an armoured OpenPGP token file with the import keys; failure is
 * `ERR304: GPG decryption failed: <reason>` (privacyIDEA's TokenImportException).
 */
export async function decryptImportFile(deps: Deps, armored: string): Promise<Uint8Array> {
  // no key is generated here: nobody can have encrypted to a key that does not exist yet
  const privateArmors = (await listImportKeys(deps.db)).map((row) =>
    decryptSecretText(deps.keys.config, row.private_enc)
  );
  if (privateArmors.length === 0) {
    throw new ParameterError(
      "GPG decryption failed: there is no import key yet (GET /system/gpgkeys creates it)",
      304,
    );
  }
  try {
    return await decryptPgpMessage(armored, privateArmors);
  } catch (err) {
    throw new ParameterError(`GPG decryption failed: ${(err as Error).message}`, 304);
  }
}

/**
 * Adds the private keys of an armoured key file (e.g. privacyIDEA's, exported with
 * `gpg --homedir <PI_GNUPG_HOME> --export-secret-keys --armor`) as import keys; a key id that
 * exists is replaced. Returns the keys with whether each was new.
 */
export async function addImportKeys(
  deps: Deps,
  armored: string,
  passphrase?: string,
): Promise<{ keyid: string; fingerprint: string; isNew: boolean }[]> {
  const pairs = await readPgpPrivateKeys(armored, passphrase);
  const out = [];
  for (const pair of pairs) {
    const isNew = await upsertImportedKey(deps.db, rowOf(deps, pair, "imported"));
    out.push({ keyid: pair.keyid, fingerprint: pair.fingerprint, isNew });
  }
  return out;
}
