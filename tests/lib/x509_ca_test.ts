import assert from "node:assert/strict";
import { X509Certificate } from "node:crypto";
import {
  certificateFacts,
  createCaCertificate,
  createCertificateRequest,
  createCrl,
  createPkcs12,
  generateRsaKey,
  issueCertificate,
  keyMatchesCertificate,
  NAME_OIDS,
  normalSerial,
  parseCertificateRequest,
  privateKeyToPkcs8,
  signingKeyOf,
  slashName,
  toPem,
} from "../../src/lib/x509_ca.ts";

async function openssl(args: string[], stdin?: Uint8Array): Promise<string> {
  const cmd = new Deno.Command("openssl", {
    args,
    stdin: stdin ? "piped" : "null",
    stdout: "piped",
    stderr: "piped",
  });
  const child = cmd.spawn();
  if (stdin) {
    const w = child.stdin.getWriter();
    await w.write(stdin);
    await w.close();
  }
  const out = await child.output();
  const text = new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
  if (!out.success) throw new Error(`openssl ${args[0]} failed: ${text}`);
  return text;
}

async function testCa() {
  const keys = await generateRsaKey(2048);
  const pkcs8 = new Uint8Array(await crypto.subtle.exportKey("pkcs8", keys.privateKey));
  const now = new Date("2026-01-01T00:00:00Z");
  const cert = await createCaCertificate({
    subject: [[NAME_OIDS.CN, "TestCA"]],
    keys,
    serialHex: "01",
    notBefore: now,
    notAfter: new Date(now.getTime() + 30 * 86_400_000),
  });
  return { cert, pkcs8, key: await signingKeyOf(pkcs8), now };
}

Deno.test("x509_ca: a CSR made here is signed into a certificate the CA verifies", async () => {
  const ca = await testCa();
  const userKeys = await generateRsaKey(2048);
  const csrPem = await createCertificateRequest(
    [[NAME_OIDS.CN, "alice, O=evil"], [NAME_OIDS.OU, "realm1"]],
    userKeys,
  );
  // line breaks anywhere and no markers: accepted as privacyIDEA does
  const body = csrPem.split("\n").slice(1, -2).join("");
  const csr = await parseCertificateRequest(body);
  assert.equal(csr.isSignatureValid, true);
  assert.equal(csr.pem, csrPem);
  assert.deepEqual(csr.subject, [[NAME_OIDS.CN, "alice, O=evil"], [NAME_OIDS.OU, "realm1"]]);
  const pem = await issueCertificate({
    caCertificate: ca.cert,
    caKey: ca.key,
    subject: csr.subject,
    publicKey: csr.publicKey,
    serialHex: "1000",
    notBefore: ca.now,
    notAfter: new Date(ca.now.getTime() + 365 * 86_400_000),
    profile: "user",
  });
  const cert = new X509Certificate(pem);
  assert.equal(cert.verify(new X509Certificate(ca.cert).publicKey), true);
  assert.equal(cert.serialNumber, "1000");
  assert.equal(cert.issuer, "CN=TestCA");
  // the comma stays inside the CN value: no name syntax is parsed from input
  assert.deepEqual((await certificateFacts(pem)).subject, csr.subject);
  assert.equal(slashName(csr.subject), "/CN=alice, O=evil/OU=realm1");
  assert.equal(await keyMatchesCertificate(ca.pkcs8, ca.cert), true);
  assert.equal(await keyMatchesCertificate(ca.pkcs8, pem), false);
});

Deno.test("x509_ca: a CSR with a broken signature is reported, garbage throws", async () => {
  const keys = await generateRsaKey(2048);
  const pem = await createCertificateRequest([[NAME_OIDS.CN, "bob"]], keys);
  const der = Uint8Array.from(atob(pem.split("\n").slice(1, -2).join("")), (c) => c.charCodeAt(0));
  der[der.length - 5] ^= 0xff;
  const broken = await parseCertificateRequest(toPem(der, "CERTIFICATE REQUEST"));
  assert.equal(broken.isSignatureValid, false);
  await assert.rejects(() => parseCertificateRequest("not a csr"), /PKCS#10|base64/);
});

Deno.test("x509_ca: the CRL lists revoked serials and OpenSSL reads it", async () => {
  const ca = await testCa();
  const crl = await createCrl({
    caCertificate: ca.cert,
    caKey: ca.key,
    entries: [
      { serialHex: "1000", revokedAt: ca.now, reason: "unspecified" },
      { serialHex: "1001", revokedAt: ca.now, reason: "keyCompromise" },
    ],
    thisUpdate: ca.now,
    nextUpdate: new Date(ca.now.getTime() + 30 * 86_400_000),
    crlNumber: 7,
  });
  assert.match(crl, /^-----BEGIN X509 CRL-----/);
  const text = await openssl(["crl", "-noout", "-text"], new TextEncoder().encode(crl));
  assert.match(text, /Serial Number: 1000/);
  assert.match(text, /Serial Number: 1001[\s\S]*Key Compromise/);
  assert.match(text, /X509v3 CRL Number:\s*\n\s*7/);
});

Deno.test("x509_ca: a PKCS#12 file opens with its password in OpenSSL and not without", async () => {
  const ca = await testCa();
  const p12 = await createPkcs12({
    pkcs8: ca.pkcs8,
    certificate: ca.cert,
    password: "s3cret pw",
    friendlyName: "certificatetoken",
  });
  const dir = await Deno.makeTempDir();
  try {
    await Deno.writeFile(`${dir}/t.p12`, p12);
    const out = await openssl([
      "pkcs12",
      "-in",
      `${dir}/t.p12`,
      "-passin",
      "pass:s3cret pw",
      "-noenc",
      "-info",
    ]);
    assert.match(out, /AES-256-CBC/);
    assert.match(out, /friendlyName: certificatetoken/);
    assert.match(out, /BEGIN PRIVATE KEY/);
    assert.match(out, /subject=CN ?= ?TestCA/);
    await assert.rejects(() =>
      openssl(["pkcs12", "-in", `${dir}/t.p12`, "-passin", "pass:wrong", "-noenc"])
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("x509_ca: PKCS#1 and PKCS#8 PEM keys are read, anything else refused", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await openssl(["genrsa", "-traditional", "-out", `${dir}/k1.pem`, "2048"]);
    const pkcs1 = await Deno.readTextFile(`${dir}/k1.pem`);
    assert.match(pkcs1, /BEGIN RSA PRIVATE KEY/);
    const der = privateKeyToPkcs8(pkcs1);
    assert.equal((await signingKeyOf(der)).algorithm.name, "RSASSA-PKCS1-v1_5");
    assert.throws(
      () => privateKeyToPkcs8("-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----"),
      {
        message: "not an unencrypted PEM private key",
      },
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
  assert.equal(normalSerial("1000"), "1000");
  assert.equal(normalSerial("fff"), "0FFF");
  assert.equal(normalSerial("00ff"), "FF");
});
