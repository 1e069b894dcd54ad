/**
 * Response signing (spec 01 §4): RSA-PSS, MGF1-SHA256, SHA-256, maximal salt
 * length over the canonical envelope text. Signing runs in Web Crypto, which
 * is asynchronous, so the RSA work does not block the request handler's
 * JavaScript.
 *
 * @module
 */
import { createPrivateKey, createPublicKey, generateKeyPairSync } from "node:crypto";
import type { ResponseSigner } from "../../deps.ts";
import { toHex } from "../../lib/random.ts";

/**
 * Imports a PEM (PKCS#1 or PKCS#8) RSA private key for RSA-PSS signing with
 * SHA-256 and the maximal salt length (also what `bench/sign_rate.ts` measures).
 */
export async function importSigningKey(
  privateKeyPem: string,
): Promise<{ key: CryptoKey; saltLength: number }> {
  const keyObject = createPrivateKey(privateKeyPem);
  if (keyObject.asymmetricKeyType !== "rsa") {
    throw new Error("the response signing key must be an RSA key");
  }
  const der = keyObject.export({ type: "pkcs8", format: "der" });
  const bits = keyObject.asymmetricKeyDetails?.modulusLength ?? 2048;
  const key = await crypto.subtle.importKey(
    "pkcs8",
    new Uint8Array(der),
    { name: "RSA-PSS", hash: "SHA-256" },
    false,
    ["sign"],
  );
  // maximal salt length: emLen − hLen − 2
  return { key, saltLength: Math.ceil((bits - 1) / 8) - 32 - 2 };
}

/** Imports a PEM (PKCS#1 or PKCS#8) RSA private key as a response signer. */
export async function createResponseSigner(privateKeyPem: string): Promise<ResponseSigner> {
  const { key, saltLength } = await importSigningKey(privateKeyPem);
  const encoder = new TextEncoder();
  return {
    async sign(text: string): Promise<string> {
      const sig = await crypto.subtle.sign(
        { name: "RSA-PSS", saltLength },
        key,
        encoder.encode(text),
      );
      return toHex(new Uint8Array(sig));
    },
  };
}

/** The public key (SPKI PEM) of a private key PEM, for clients that verify signatures. */
export function publicKeyPem(privateKeyPem: string): string {
  return createPublicKey(createPrivateKey(privateKeyPem)).export({ type: "spki", format: "pem" })
    .toString();
}

/** A new 2048-bit RSA private key as PKCS#8 PEM. */
export function generateSigningKeyPem(): string {
  const { privateKey } = generateKeyPairSync("rsa", {
    modulusLength: 2048,
    privateKeyEncoding: { type: "pkcs8", format: "pem" },
    publicKeyEncoding: { type: "spki", format: "pem" },
  });
  return privateKey;
}

/**
 * Reads the signing key at `path`, creating it (mode 0600, with its public key
 * next to it as `<path>.pub`) when absent.
 */
export function loadOrCreateSigningKey(path: string): { pem: string; isCreated: boolean } {
  try {
    return { pem: Deno.readTextFileSync(path), isCreated: false };
  } catch (err) {
    if (!(err instanceof Deno.errors.NotFound)) throw err;
  }
  const pem = generateSigningKeyPem();
  try {
    // createNew: a parallel first start on the same data dir keeps the first key
    Deno.writeTextFileSync(path, pem, { mode: 0o600, createNew: true });
  } catch (err) {
    if (err instanceof Deno.errors.AlreadyExists) {
      return { pem: Deno.readTextFileSync(path), isCreated: false };
    }
    throw err;
  }
  Deno.chmodSync(path, 0o600);
  Deno.writeTextFileSync(`${path}.pub`, publicKeyPem(pem), { mode: 0o644 });
  return { pem, isCreated: true };
}
