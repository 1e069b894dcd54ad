/**
 * OpenPGP for encrypted token import files (privacyIDEA's GPG import, spec 12 §1.8): key pairs,
 * their armoured public keys, and decryption of an armoured message with any of them.
 *
 * @module
 */
import type * as openpgp from "openpgp";

/** An OpenPGP key pair as Tessera keeps it. */
export interface PgpKeyPair {
  /** The primary key's long key id, 16 upper-case hex digits (as GnuPG lists it). */
  keyid: string;
  /** Upper-case hex, as GnuPG lists it. */
  fingerprint: string;
  /** The ASCII-armoured public key. */
  publicArmor: string;
  /** The ASCII-armoured private key, not protected by a passphrase. */
  privateArmor: string;
}

/** The largest decompressed message {@link decryptPgpMessage} accepts by default (32 MiB). */
export const MAX_DECRYPTED_BYTES = 32 * 1024 * 1024;

let openpgpLoading: Promise<typeof import("openpgp")> | undefined;

// openpgp is large (about 10 MB resident) and serves only GPG imports: loaded on first use
function openpgpModule(): Promise<typeof import("openpgp")> {
  return openpgpLoading ??= import("openpgp");
}

/** A key the caller named that cannot serve as an import key (the message says why). */
export class PgpKeyError extends Error {}

function pairOf(key: openpgp.PrivateKey): PgpKeyPair {
  return {
    keyid: key.getKeyID().toHex().toUpperCase(),
    fingerprint: key.getFingerprint().toUpperCase(),
    publicArmor: key.toPublic().armor(),
    privateArmor: key.armor(),
  };
}

/** A new RSA 3072 key pair (GnuPG's long-time default, which every vendor's tool can use). */
export async function generatePgpKeyPair(name: string, now: Date): Promise<PgpKeyPair> {
  const openpgp = await openpgpModule();
  const { privateKey } = await openpgp.generateKey({
    type: "rsa",
    rsaBits: 3072,
    userIDs: [{ name }],
    date: now,
    format: "object",
  });
  return pairOf(privateKey);
}

/**
 * The private keys of an armoured file (`gpg --export-secret-keys --armor`, one key or several);
 * a key protected by a passphrase is unlocked with `passphrase`.
 */
export async function readPgpPrivateKeys(
  armored: string,
  passphrase?: string,
): Promise<PgpKeyPair[]> {
  const openpgp = await openpgpModule();
  let keys: openpgp.PrivateKey[];
  try {
    keys = await openpgp.readPrivateKeys({ armoredKeys: armored });
  } catch (err) {
    throw new PgpKeyError(`not an armoured OpenPGP private key: ${(err as Error).message}`);
  }
  const out: PgpKeyPair[] = [];
  for (let key of keys) {
    if (!key.isDecrypted()) {
      if (passphrase === undefined) {
        throw new PgpKeyError(
          `the key ${key.getKeyID().toHex().toUpperCase()} is protected by a passphrase`,
        );
      }
      try {
        key = await openpgp.decryptKey({ privateKey: key, passphrase });
      } catch (err) {
        throw new PgpKeyError(
          `the key ${key.getKeyID().toHex().toUpperCase()}: ${(err as Error).message}`,
        );
      }
    }
    out.push(pairOf(key));
  }
  return out;
}

/**
 * Decrypts an ASCII-armoured OpenPGP message with whichever of `privateArmors` it was encrypted
 * to; the bytes, or an Error whose message says why not (a signature is not checked, as GnuPG's
 * decryption does not require one). A compressed message may expand to at most `maxBytes`.
 */
export async function decryptPgpMessage(
  armoredMessage: string,
  privateArmors: string[],
  maxBytes = MAX_DECRYPTED_BYTES,
): Promise<Uint8Array> {
  const openpgp = await openpgpModule();
  const message = await openpgp.readMessage({ armoredMessage });
  const decryptionKeys = await Promise.all(
    privateArmors.map((armoredKey) => openpgp.readPrivateKey({ armoredKey })),
  );
  if (decryptionKeys.length === 0) throw new Error("no secret key");
  const { data } = await openpgp.decrypt({
    message,
    decryptionKeys,
    format: "binary",
    // a compressed packet may expand a thousandfold: the upload's size limit does not bound it
    config: { maxDecompressedMessageSize: maxBytes },
  });
  return data;
}
