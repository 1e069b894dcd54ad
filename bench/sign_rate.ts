/**
 * Raw RSA-PSS signing rate of a PEM private key with Web Crypto, the way the
 * server signs responses (SHA-256, MGF1-SHA256, maximal salt length), over a
 * body the size of a /validate/check envelope. Prints one JSON line:
 * `{"sequential": n/s, "parallel": n/s, "msPerSignature": ms}`.
 *
 * Run: deno run -A bench/sign_rate.ts <key.pem> [seconds per mode] [in flight]
 *
 * @module
 */
import { createPrivateKey, createPublicKey } from "node:crypto";
import { importSigningKey } from "../src/domain/signing/mod.ts";

// the server's own key import (RSA-PSS, SHA-256, maximal salt), so the rate is the server's
export { importSigningKey };

/**
 * Verifies a signed response body (spec 01 §4): the body is the canonical text
 * with `, "signature": "rsa_sha256_pss:<hex>"` added before the closing brace.
 */
export async function verifySignedBody(body: string, privateKeyPem: string): Promise<boolean> {
  const m = body.match(/^(.*), "signature": "rsa_sha256_pss:([0-9a-f]+)"\}$/s);
  if (!m) return false;
  const canonical = m[1] + "}";
  const keyObject = createPublicKey(createPrivateKey(privateKeyPem));
  const bits = keyObject.asymmetricKeyDetails?.modulusLength ?? 2048;
  const key = await crypto.subtle.importKey(
    "spki",
    new Uint8Array(keyObject.export({ type: "spki", format: "der" })),
    { name: "RSA-PSS", hash: "SHA-256" },
    false,
    ["verify"],
  );
  const sig = new Uint8Array(m[2].match(/../g)!.map((h) => parseInt(h, 16)));
  return await crypto.subtle.verify(
    { name: "RSA-PSS", saltLength: Math.ceil((bits - 1) / 8) - 32 - 2 },
    key,
    sig,
    new TextEncoder().encode(canonical),
  );
}

/** A body like a signed /validate/check answer. */
export const SAMPLE_BODY = JSON.stringify({
  detail: { message: "matching 1 tokens", otplen: 6, serial: "BH0001", threadid: 1, type: "hotp" },
  id: 2,
  jsonrpc: "2.0",
  result: { authentication: "ACCEPT", status: true, value: true },
  time: 1763740000.123,
  version: "Tessera 0.1.0",
  versionnumber: "3.14",
});

/** Signatures per second over `seconds`, with `inFlight` signatures outstanding. */
export async function signRate(
  key: CryptoKey,
  saltLength: number,
  seconds: number,
  inFlight: number,
): Promise<number> {
  const data = new TextEncoder().encode(SAMPLE_BODY);
  const end = performance.now() + seconds * 1000;
  let done = 0;
  const worker = async () => {
    while (performance.now() < end) {
      await crypto.subtle.sign({ name: "RSA-PSS", saltLength }, key, data);
      done++;
    }
  };
  const t0 = performance.now();
  await Promise.all(Array.from({ length: inFlight }, worker));
  return done / ((performance.now() - t0) / 1000);
}

if (import.meta.main) {
  const [path, secondsText, inFlightText] = Deno.args;
  if (!path) {
    console.error("Usage: deno run -A bench/sign_rate.ts <key.pem> [seconds] [in flight]");
    Deno.exit(2);
  }
  const seconds = Number(secondsText ?? 3);
  const inFlight = Number(inFlightText ?? 8);
  const { key, saltLength } = await importSigningKey(Deno.readTextFileSync(path));
  await signRate(key, saltLength, 0.5, 1); // warm-up
  const sequential = await signRate(key, saltLength, seconds, 1);
  const parallel = await signRate(key, saltLength, seconds, inFlight);
  console.log(JSON.stringify({ sequential, parallel, msPerSignature: 1000 / sequential }));
}
