import assert from "node:assert/strict";
import { constants, createPublicKey, generateKeyPairSync, verify } from "node:crypto";
import {
  createResponseSigner,
  loadOrCreateSigningKey,
  publicKeyPem,
} from "../../../src/domain/signing/mod.ts";
import { createTestApp } from "../../test_app.ts";
import { enrollHotp, hotp } from "../../fixtures/tokens.ts";

function verifyPss(pubPem: string, text: string, hex: string): boolean {
  return verify(
    "sha256",
    new TextEncoder().encode(text),
    {
      key: createPublicKey(pubPem),
      padding: constants.RSA_PKCS1_PSS_PADDING,
      saltLength: constants.RSA_PSS_SALTLEN_AUTO,
    },
    Buffer.from(hex, "hex"),
  );
}

Deno.test("signed /validate/check responses verify with the public key (RSA-PSS, max salt)", async () => {
  const { privateKey } = generateKeyPairSync("rsa", {
    modulusLength: 2048,
    privateKeyEncoding: { type: "pkcs1", format: "pem" },
    publicKeyEncoding: { type: "spki", format: "pem" },
  });
  const signer = await createResponseSigner(privateKey);
  const t = await createTestApp({ deps: { signer } });
  const serial = await enrollHotp(t, { pin: "1" });
  const res = await t.post("/validate/check", { serial, pass: "1" + hotp(0), nonce: "abc" });
  const text = await res.text();
  const m = text.match(/^(.*), "signature": "rsa_sha256_pss:([0-9a-f]+)"\}$/s);
  assert.ok(m, text);
  const canonical = m[1] + "}";
  assert.ok(verifyPss(publicKeyPem(privateKey), canonical, m[2]));
  // the maximal salt length: verification with a fixed 222-byte salt must also pass
  assert.ok(verify("sha256", new TextEncoder().encode(canonical), {
    key: createPublicKey(publicKeyPem(privateKey)),
    padding: constants.RSA_PKCS1_PSS_PADDING,
    saltLength: 222,
  }, Buffer.from(m[2], "hex")));
  const body = JSON.parse(text);
  assert.equal(body.nonce, "abc");
  assert.equal(body.result.value, true);
  // a tampered body does not verify
  assert.equal(verifyPss(publicKeyPem(privateKey), canonical.replace("true", "fals"), m[2]), false);
  await t.close();
});

Deno.test("loadOrCreateSigningKey creates a 0600 key once and reuses it", async () => {
  const dir = await Deno.makeTempDir();
  const path = `${dir}/signing-key.pem`;
  const first = loadOrCreateSigningKey(path);
  assert.equal(first.isCreated, true);
  assert.equal((Deno.statSync(path).mode ?? 0) & 0o777, 0o600);
  const second = loadOrCreateSigningKey(path);
  assert.equal(second.isCreated, false);
  assert.equal(second.pem, first.pem);
  assert.match(Deno.readTextFileSync(`${path}.pub`), /BEGIN PUBLIC KEY/);
  await Deno.remove(dir, { recursive: true });
});

Deno.test("openRuntime creates the signing key when signing is on and skips it when off", async () => {
  const { openRuntime, closeRuntime } = await import("../../../src/runtime.ts");
  const { loadConfig } = await import("../../../src/config.ts");
  const { memoryLogger } = await import("../../../src/lib/logger.ts");
  for (const enabled of [true, false]) {
    const dir = await Deno.makeTempDir();
    const config = loadConfig({
      fileText: `[signing]\nenabled = ${enabled}\n`,
      overrides: { dataDir: dir },
    });
    const deps = await openRuntime(config, memoryLogger());
    assert.equal(deps.signer !== undefined, enabled);
    const exists = await Deno.stat(config.signing.keyFile).then(() => true, () => false);
    assert.equal(exists, enabled);
    if (enabled) assert.equal((Deno.statSync(config.signing.keyFile).mode ?? 0) & 0o777, 0o600);
    await closeRuntime(deps);
    await Deno.remove(dir, { recursive: true });
  }
});
