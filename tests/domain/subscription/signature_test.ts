import assert from "node:assert/strict";
import {
  modPow,
  parseVendorKey,
  PSS_PREFIX,
  SIGNED_FIELDS,
  signedMessage,
  signMessage,
  vendorKeyFileName,
  verifySignature,
} from "../../../src/domain/subscription/signature.ts";
import { demoValues, testVendorKeys } from "../../fixtures/subscription_keys.ts";

Deno.test("signedMessage joins the 18 values in spec order, each followed by a newline", () => {
  const message = signedMessage(demoValues());
  const lines = message.split("\n");
  assert.equal(lines.length, 19);
  assert.equal(lines[18], "");
  assert.equal(SIGNED_FIELDS.length, 18);
  assert.deepEqual(lines.slice(0, 3), ["demo_application", "customer", "customer-address"]);
  assert.deepEqual(lines.slice(12, 18), ["2025-01-01", "2026-12-31", "100", "100", "100", "Gold"]);
});

Deno.test("PSS and legacy signatures verify; a changed message does not", async () => {
  const key = await parseVendorKey(testVendorKeys().publicPem);
  const message = signedMessage(demoValues());
  const tampered = signedMessage(demoValues({ num_tokens: 1000 }));
  for (const format of ["pss", "legacy"] as const) {
    const sig = await signMessage(testVendorKeys().privatePem, message, format);
    assert.equal(sig.startsWith(PSS_PREFIX), format === "pss", format);
    assert.ok(sig.length <= 640, format);
    assert.equal(await verifySignature(key, message, sig), "ok", format);
    assert.equal(await verifySignature(key, tampered, sig), "mismatch", format);
  }
});

Deno.test("a signature from another key does not match", async () => {
  const { generateVendorKeyPair } = await import("../../../src/domain/subscription/signature.ts");
  const other = generateVendorKeyPair(1024);
  const key = await parseVendorKey(testVendorKeys().publicPem);
  const message = signedMessage(demoValues());
  for (const format of ["pss", "legacy"] as const) {
    const sig = await signMessage(other.privatePem, message, format);
    assert.equal(await verifySignature(key, message, sig), "mismatch", format);
  }
});

Deno.test("malformed signatures are reported as malformed, not as a mismatch", async () => {
  const key = await parseVendorKey(testVendorKeys().publicPem);
  const message = signedMessage(demoValues());
  for (const sig of ["", "abc", "12a4", `${PSS_PREFIX}`, `${PSS_PREFIX}xyz`, `${PSS_PREFIX}abc`]) {
    assert.equal(await verifySignature(key, message, sig), "malformed", sig);
  }
});

Deno.test("parseVendorKey refuses text that is not a key", async () => {
  await assert.rejects(() => parseVendorKey("not a key"));
});

Deno.test("vendorKeyFileName takes the first word of by_name and refuses path tricks", () => {
  assert.equal(vendorKeyFileName("NetKnights GmbH"), "NetKnights.pem");
  assert.equal(vendorKeyFileName("  Acme\tCorp"), "Acme.pem");
  assert.equal(vendorKeyFileName("acme-1.2_x"), "acme-1.2_x.pem");
  for (const bad of ["", "   ", "../etc/passwd", "a/b", ".hidden", "..", "a..b", "x\\y", "ä"]) {
    assert.equal(vendorKeyFileName(bad), undefined, bad);
  }
});

Deno.test("modPow computes modular powers", () => {
  assert.equal(modPow(4n, 13n, 497n), 445n);
  assert.equal(modPow(2n, 0n, 7n), 1n);
  assert.equal(modPow(10n, 1n, 7n), 3n);
});

Deno.test("a genuine NetKnights legacy signature verifies with NetKnights' public key", async () => {
  const { NETKNIGHTS_DEMO_FILE, NETKNIGHTS_PEM } = await import(
    "../../fixtures/netknights_subscription.ts"
  );
  const { parseSubscriptionFile, signedValuesOf } = await import(
    "../../../src/domain/subscription/file.ts"
  );
  const parsed = parseSubscriptionFile(NETKNIGHTS_DEMO_FILE);
  assert.ok(parsed.ok);
  const key = await parseVendorKey(NETKNIGHTS_PEM);
  const values = signedValuesOf(parsed.data);
  assert.equal(await verifySignature(key, signedMessage(values), parsed.data.signature), "ok");
  const changed = signedMessage({ ...values, level: "Platinum" });
  assert.equal(await verifySignature(key, changed, parsed.data.signature), "mismatch");
});
