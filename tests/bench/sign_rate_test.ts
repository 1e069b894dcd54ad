import assert from "node:assert/strict";
import { generateKeyPairSync } from "node:crypto";
import {
  importSigningKey,
  SAMPLE_BODY,
  signRate,
  verifySignedBody,
} from "../../bench/sign_rate.ts";

const { privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
const pem = privateKey.export({ type: "pkcs8", format: "pem" }).toString();

async function signedBody(canonical: string): Promise<string> {
  const { key, saltLength } = await importSigningKey(pem);
  const sig = new Uint8Array(
    await crypto.subtle.sign(
      { name: "RSA-PSS", saltLength },
      key,
      new TextEncoder().encode(canonical),
    ),
  );
  const hex = Array.from(sig, (b) => b.toString(16).padStart(2, "0")).join("");
  // as the envelope sends it: the canonical text with the signature key added at the end
  return canonical.slice(0, -1) + `, "signature": "rsa_sha256_pss:${hex}"}`;
}

Deno.test("verifySignedBody accepts a body signed like the envelope and nothing else", async () => {
  const canonical = '{"id": 2, "result": {"status": true, "value": true}}';
  const body = await signedBody(canonical);
  assert.equal(await verifySignedBody(body, pem), true);
  assert.equal(await verifySignedBody(body.replace('"value": true', '"value": fals'), pem), false);
  assert.equal(await verifySignedBody(canonical, pem), false); // unsigned
  const other = generateKeyPairSync("rsa", { modulusLength: 2048 }).privateKey
    .export({ type: "pkcs8", format: "pem" }).toString();
  assert.equal(await verifySignedBody(body, other), false);
});

Deno.test("importSigningKey uses the maximal PSS salt; signRate counts signatures", async () => {
  const { key, saltLength } = await importSigningKey(pem);
  assert.equal(saltLength, 256 - 32 - 2);
  const rate = await signRate(key, saltLength, 0.2, 2);
  assert.ok(rate > 0 && Number.isFinite(rate));
  assert.ok(SAMPLE_BODY.includes('"value":true'));
});
