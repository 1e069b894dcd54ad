/**
 * Certificate tokens over HTTP (spec 14 §1): enrolment from a CSR made here
 * with the openssl binary, a server-made key handed out as PKCS#12 (opened
 * by openssl with the returned password or the PIN), revocation visible in
 * the CRL the CA serves, /validate/check failing as privacyIDEA's, user
 * enrolment under user policies, and each certificate policy's effect.
 */
import assert from "node:assert/strict";
import { X509Certificate } from "node:crypto";
import { jsonOf, type TestApp } from "../test_app.ts";
import { addPolicy, appWithAlice, check, init, listed } from "./_challenge_types.ts";
import { type CaDir, createCaConnector, makeCaDir, openssl } from "./_local_ca.ts";
import { issueJwt } from "../../src/http/jwt.ts";
import { actionTest } from "../policy_actions/_registry.ts";
import { savePolicy } from "../../src/domain/policy/mod.ts";

/** A key and CSR made by openssl (`subj` as openssl's -subj). */
async function makeCsr(dir: string, subj: string, name = "user") {
  await openssl([
    "req",
    "-new",
    "-newkey",
    "rsa:2048",
    "-nodes",
    "-subj",
    subj,
    "-keyout",
    `${dir}/${name}.key`,
    "-out",
    `${dir}/${name}.csr`,
  ]);
  return await Deno.readTextFile(`${dir}/${name}.csr`);
}

interface Setup {
  t: TestApp;
  ca: CaDir;
  close(): Promise<void>;
}

async function setup(): Promise<Setup> {
  const t = await appWithAlice();
  const ca = await makeCaDir();
  await createCaConnector(t, "localCA", ca);
  return {
    t,
    ca,
    close: async () => {
      await ca.remove();
      await t.close();
    },
  };
}

function verifiesAgainst(certPem: string, caPem: string): boolean {
  return new X509Certificate(certPem).verify(new X509Certificate(caPem).publicKey);
}

async function crlText(t: TestApp, name = "localCA"): Promise<string> {
  const res = await t.get(`/ca/${name}/crl`);
  assert.equal(res.status, 200);
  assert.equal(res.headers.get("content-type"), "application/pkix-crl");
  const der = new Uint8Array(await res.arrayBuffer());
  return await openssl(["crl", "-inform", "DER", "-noout", "-text"], der);
}

async function userToken(t: TestApp): Promise<string> {
  return (await issueJwt(t.deps, {
    username: "alice",
    realm: "realm1",
    role: "user",
    resolver: "",
    authtype: "password",
    rights: [],
  })).token;
}

Deno.test("certificate: a CSR made in the test is signed by the CA; revoking lists it in the CRL", async () => {
  const s = await setup();
  const { t, ca } = s;
  try {
    const csr = await makeCsr(ca.dir, "/C=DE/ST=Hessen/O=privacyidea/CN=requester.localdomain");
    const res = await init(t, {
      type: "certificate",
      user: "alice",
      realm: "realm1",
      ca: "localCA",
      request: csr,
    });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const detail = res.body.detail;
    assert.match(detail.serial, /^CRT[0-9A-F]{8}$/);
    assert.equal(detail.rollout_state, "enrolled");
    assert.equal(detail.otpkey, undefined);
    assert.equal(detail.pkcs12, undefined);
    const cert = new X509Certificate(detail.certificate);
    assert.equal(verifiesAgainst(detail.certificate, await Deno.readTextFile(ca.cacert)), true);
    assert.equal(cert.issuer, "CN=TestCA");
    assert.equal(cert.subject, "C=DE\nST=Hessen\nO=privacyidea\nCN=requester.localdomain");
    // the CA directory's serial file said 1000
    assert.equal(cert.serialNumber, "1000");
    // the certificate holds the CSR's key
    const csrKey = await openssl(["req", "-in", `${ca.dir}/user.csr`, "-noout", "-pubkey"]);
    assert.equal(cert.publicKey.export({ type: "spki", format: "pem" }), csrKey);
    // default: 365 days and privacyIDEA's default extension section "server"
    const days = (Date.parse(cert.validTo) - Date.parse(cert.validFrom)) / 86_400_000;
    assert.equal(days, 365);
    const text = await openssl(
      ["x509", "-noout", "-text"],
      new TextEncoder().encode(detail.certificate),
    );
    assert.match(text, /TLS Web Server Authentication/);
    assert.match(text, /Digital Signature, Key Encipherment/);
    const token = await listed(t, detail.serial);
    assert.equal(token.tokentype, "certificate");
    assert.equal(token.info.CA, "localCA");
    assert.equal(token.info.certificate, detail.certificate);
    assert.equal(token.user_id !== undefined, true);

    // a certificate token never authenticates
    const checked = await check(t, { user: "alice", realm: "realm1", pass: "123456" });
    assert.equal(checked.status, 200);
    assert.equal(checked.body.result.value, false);
    assert.equal(checked.body.result.authentication, "REJECT");

    // a second one gets the next serial
    const second = await init(t, {
      type: "certificate",
      user: "alice",
      ca: "localCA",
      request: csr,
    });
    assert.equal(new X509Certificate(second.body.detail.certificate).serialNumber, "1001");

    // revoke: the token is revoked and the CA's CRL lists the serial, signed by the CA
    assert.doesNotMatch(await crlText(t), /Serial Number: 1000/);
    const revoked = await jsonOf(
      await t.asAdmin("POST", "/token/revoke", { body: { serial: detail.serial } }),
    );
    assert.equal(revoked.status, 200, JSON.stringify(revoked.body));
    assert.equal(revoked.body.result.value, 1);
    const after = await listed(t, detail.serial);
    assert.equal(after.revoked, true);
    assert.equal(after.locked, true);
    const crl = await crlText(t);
    assert.match(crl, /Issuer: CN ?= ?TestCA/);
    assert.match(crl, /Serial Number: 1000/);
    assert.doesNotMatch(crl, /Serial Number: 1001/);
    const pemRes = await t.get("/ca/localCA/crl.pem");
    const crlPem = await pemRes.text();
    await Deno.writeTextFile(`${ca.dir}/crl.pem`, crlPem);
    await Deno.writeTextFile(`${ca.dir}/issued.pem`, detail.certificate);
    // openssl verifies the CRL's signature with the CA certificate
    const verified = await openssl([
      "crl",
      "-in",
      `${ca.dir}/crl.pem`,
      "-CAfile",
      ca.cacert,
      "-noout",
    ]);
    assert.match(verified, /verify OK/);
    // an unknown CA has no CRL
    assert.equal((await t.get("/ca/nope/crl")).status, 404);
  } finally {
    await s.close();
  }
});

Deno.test("certificate: genkey hands out a PKCS#12 that opens with its password (or the PIN)", async () => {
  const s = await setup();
  const { t, ca } = s;
  try {
    const res = await init(t, { type: "certificate", genkey: 1, user: "alice", ca: "localCA" });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const d = res.body.detail;
    assert.match(d.pkcs12_password, /^[A-Za-z0-9_-]{16}$/);
    assert.equal(new X509Certificate(d.certificate).subject, "CN=alice");
    assert.equal(verifiesAgainst(d.certificate, await Deno.readTextFile(ca.cacert)), true);
    await Deno.writeFile(
      `${ca.dir}/a.p12`,
      Uint8Array.from(atob(d.pkcs12), (c) => c.charCodeAt(0)),
    );
    const out = await openssl([
      "pkcs12",
      "-in",
      `${ca.dir}/a.p12`,
      "-passin",
      `pass:${d.pkcs12_password}`,
      "-noenc",
    ]);
    assert.match(out, /friendlyName: certificatetoken/);
    assert.match(out, /subject=CN ?= ?alice/);
    const key = out.slice(out.indexOf("-----BEGIN PRIVATE KEY-----"));
    await Deno.writeTextFile(`${ca.dir}/a.key`, key);
    assert.match(await openssl(["rsa", "-in", `${ca.dir}/a.key`, "-noout", "-text"]), /2048 bit/);
    await assert.rejects(() =>
      openssl(["pkcs12", "-in", `${ca.dir}/a.p12`, "-passin", "pass:wrong", "-noenc"])
    );
    // the container is kept in the token info (encrypted by its passphrase), the password is not
    const token = await listed(t, d.serial);
    assert.equal(token.info.pkcs12, d.pkcs12);
    assert.doesNotMatch(JSON.stringify(token), new RegExp(d.pkcs12_password));

    // with a PIN, the PIN is the passphrase and no password is handed out
    const withPin = await init(t, {
      type: "certificate",
      genkey: 1,
      user: "alice",
      ca: "localCA",
      pin: "my pin 1",
      keysize: 1024,
    });
    assert.equal(withPin.status, 200);
    assert.equal(withPin.body.detail.pkcs12_password, undefined);
    await Deno.writeFile(
      `${ca.dir}/b.p12`,
      Uint8Array.from(atob(withPin.body.detail.pkcs12), (c) => c.charCodeAt(0)),
    );
    const opened = await openssl([
      "pkcs12",
      "-in",
      `${ca.dir}/b.p12`,
      "-passin",
      "pass:my pin 1",
      "-nocerts",
      "-noenc",
    ]);
    await Deno.writeTextFile(`${ca.dir}/b.key`, opened.slice(opened.indexOf("-----BEGIN")));
    // keysize below 2048 is raised to 2048, as privacyIDEA
    assert.match(await openssl(["rsa", "-in", `${ca.dir}/b.key`, "-noout", "-text"]), /2048 bit/);
  } finally {
    await s.close();
  }
});

Deno.test("certificate: bad enrolments are refused with a clear error and create nothing", async () => {
  const s = await setup();
  const { t, ca } = s;
  try {
    const csr = await makeCsr(ca.dir, "/CN=bob");
    const noCn = await makeCsr(ca.dir, "/O=nobody", "nocn");
    const tampered = csr.replace(/(.{70})(.)/s, (_, a, b) => a + (b === "A" ? "B" : "A"));
    const cases: [string, Record<string, unknown>, number, RegExp][] = [
      ["no ca", { request: csr }, 400, /Missing parameter: 'ca'/],
      ["unknown ca", { request: csr, ca: "nope" }, 404, /CAConnector could not be found/],
      ["not a csr", { request: "hello", ca: "localCA" }, 400, /ERR504: CSR invalid/],
      ["bad signature", { request: tampered, ca: "localCA" }, 400, /invalid signature|CSR invalid/],
      ["no common name", { request: noCn, ca: "localCA" }, 400, /ERR503: An error occurred/],
      ["unknown template", { request: csr, ca: "localCA", template: "x" }, 400, /ERR503/],
      ["spkac", { request: csr, ca: "localCA", spkac: 1 }, 400, /SPKAC/],
      ["genkey without user", { genkey: 1, ca: "localCA", user: undefined }, 400, /'user'/],
      ["huge key", { genkey: 1, ca: "localCA", keysize: 16384 }, 400, /at most 4096/],
      ["bad upload", { certificate: "-----BEGIN CERTIFICATE-----\nAA\n" }, 400, /not a PEM/],
    ];
    for (const [name, body, status, message] of cases) {
      const res = await init(t, { type: "certificate", user: "alice", ...body });
      assert.equal(res.status, status, `${name}: ${JSON.stringify(res.body)}`);
      assert.match(res.body.result.error.message, message, name);
    }
    const tokens = await jsonOf(await t.asAdmin("GET", "/token/"));
    assert.equal(tokens.body.result.value.count, 0, "nothing was created");
    // an uploaded certificate is just stored (no CA)
    const upload = await init(t, {
      type: "certificate",
      user: "alice",
      certificate: await Deno.readTextFile(ca.cacert),
    });
    assert.equal(upload.status, 200);
    assert.equal((await listed(t, upload.body.detail.serial)).info.CA, undefined);
    // revoking it revokes the token only
    const rev = await jsonOf(
      await t.asAdmin("POST", "/token/revoke", { body: { serial: upload.body.detail.serial } }),
    );
    assert.equal(rev.status, 200);
  } finally {
    await s.close();
  }
});

Deno.test("certificate: a user enrols with a CSR under user policy enrollCERTIFICATE only", async () => {
  const s = await setup();
  const { t, ca } = s;
  try {
    const token = await userToken(t);
    const csr = await makeCsr(ca.dir, "/CN=alice");
    const body = { type: "certificate", ca: "localCA", request: csr };
    await addPolicy(t, "u", { scope: "user", action: "enrollHOTP" });
    const denied = await jsonOf(await t.request("POST", "/token/init", { token, body }));
    assert.equal(denied.status, 403);
    assert.equal((await jsonOf(await t.asAdmin("GET", "/token/"))).body.result.value.count, 0);
    await addPolicy(t, "u", { scope: "user", action: "enrollCERTIFICATE" });
    const ok = await jsonOf(await t.request("POST", "/token/init", { token, body }));
    assert.equal(ok.status, 200, JSON.stringify(ok.body));
    const tok = await listed(t, ok.body.detail.serial);
    // the token is the user's own, whatever the request says
    assert.equal(tok.username, "alice");
    assert.equal(
      verifiesAgainst(ok.body.detail.certificate, await Deno.readTextFile(ca.cacert)),
      true,
    );
    // a user may not read or change CA connectors
    const list = await jsonOf(await t.request("GET", "/caconnector/", { token }));
    assert.equal(list.status, 401);
  } finally {
    await s.close();
  }
});

// --- policies of the certificate type

actionTest(
  "enrollment",
  "certificate_ca_connector",
  "the policy's CA replaces the client's ca",
  async () => {
    const s = await setup();
    try {
      const csr = await makeCsr(s.ca.dir, "/CN=alice");
      const body = { type: "certificate", user: "alice", ca: "other", request: csr };
      assert.equal((await init(s.t, body)).status, 404, "baseline: the client's unknown CA");
      await addPolicy(s.t, "ca", {
        scope: "enrollment",
        action: "certificate_ca_connector=localCA",
      });
      const res = await init(s.t, body);
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.equal((await listed(s.t, res.body.detail.serial)).info.CA, "localCA");
    } finally {
      await s.close();
    }
  },
);

actionTest(
  "enrollment",
  "certificate_template",
  "the policy's template sets the validity (webserver: 750 days)",
  async () => {
    const s = await setup();
    try {
      const csr = await makeCsr(s.ca.dir, "/CN=alice");
      const body = { type: "certificate", user: "alice", ca: "localCA", request: csr };
      const daysOf = (pem: string) => {
        const c = new X509Certificate(pem);
        return (Date.parse(c.validTo) - Date.parse(c.validFrom)) / 86_400_000;
      };
      assert.equal(daysOf((await init(s.t, body)).body.detail.certificate), 365);
      await addPolicy(s.t, "tpl", {
        scope: "enrollment",
        action: "certificate_template=webserver",
      });
      const res = await init(s.t, { ...body, template: "user" });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.equal(daysOf(res.body.detail.certificate), 750);
    } finally {
      await s.close();
    }
  },
);

actionTest(
  "enrollment",
  "certificate_request_subject_component",
  "email and realm join the subject of a server-made key",
  async () => {
    const s = await setup();
    try {
      const body = { type: "certificate", genkey: 1, user: "alice", ca: "localCA" };
      const plain = await init(s.t, body);
      assert.equal(new X509Certificate(plain.body.detail.certificate).subject, "CN=alice");
      await addPolicy(s.t, "subj", {
        scope: "enrollment",
        action: "certificate_request_subject_component=email realm",
      });
      const res = await init(s.t, body);
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.equal(
        new X509Certificate(res.body.detail.certificate).subject,
        "OU=realm1\nCN=alice\nemailAddress=alice@example.com",
      );
    } finally {
      await s.close();
    }
  },
);

/** A root → intermediate chain file in `dir/chains`, and an attestation certificate of the CSR's key. */
async function attestationChain(dir: string): Promise<{ csr: string; attestation: string }> {
  await Deno.mkdir(`${dir}/chains`);
  await openssl([
    "req",
    "-x509",
    "-newkey",
    "rsa:2048",
    "-nodes",
    "-subj",
    "/CN=Attestation Root",
    "-keyout",
    `${dir}/root.key`,
    "-out",
    `${dir}/root.pem`,
    "-days",
    "30",
  ]);
  await makeCsr(dir, "/CN=Attestation Intermediate", "inter");
  await Deno.writeTextFile(`${dir}/ca.ext`, "basicConstraints=critical,CA:TRUE\n");
  await openssl([
    "x509",
    "-req",
    "-in",
    `${dir}/inter.csr`,
    "-CA",
    `${dir}/root.pem`,
    "-CAkey",
    `${dir}/root.key`,
    "-CAcreateserial",
    "-extfile",
    `${dir}/ca.ext`,
    "-out",
    `${dir}/inter.pem`,
    "-days",
    "30",
  ]);
  const csr = await makeCsr(dir, "/CN=alice", "device");
  await openssl([
    "x509",
    "-req",
    "-in",
    `${dir}/device.csr`,
    "-CA",
    `${dir}/inter.pem`,
    "-CAkey",
    `${dir}/inter.key`,
    "-CAcreateserial",
    "-out",
    `${dir}/device.pem`,
    "-days",
    "30",
  ]);
  await Deno.writeTextFile(
    `${dir}/chains/yubico.pem`,
    "# root first, then the intermediate\n" + await Deno.readTextFile(`${dir}/root.pem`) +
      await Deno.readTextFile(`${dir}/inter.pem`),
  );
  return { csr, attestation: await Deno.readTextFile(`${dir}/device.pem`) };
}

actionTest(
  "enrollment",
  "certificate_require_attestation",
  "require_and_verify refuses a CSR without attestation; verify refuses an untrusted one",
  async () => {
    const s = await setup();
    try {
      const { csr, attestation } = await attestationChain(s.ca.dir);
      const body = { type: "certificate", user: "alice", ca: "localCA", request: csr };
      // baseline: no attestation needed, an untrusted one is only logged
      assert.equal((await init(s.t, body)).status, 200);
      assert.equal((await init(s.t, { ...body, attestation })).status, 200);
      await addPolicy(s.t, "att", {
        scope: "enrollment",
        action: "certificate_require_attestation=require_and_verify",
      });
      const missing = await init(s.t, body);
      assert.equal(missing.status, 403);
      assert.equal(
        missing.body.result.error.message,
        "A policy requires that you provide an attestation certificate.",
      );
      await addPolicy(s.t, "att", {
        scope: "enrollment",
        action: "certificate_require_attestation=verify",
      });
      assert.equal((await init(s.t, body)).status, 200, "verify: none given is fine");
      const untrusted = await init(s.t, { ...body, attestation });
      assert.equal(untrusted.status, 400);
      assert.equal(
        untrusted.body.result.error.message,
        "ERR10: Failed to verify certificate chain of attestation certificate.",
      );
      // an attestation of another key
      const other = await init(s.t, {
        ...body,
        attestation: await Deno.readTextFile(s.ca.cacert),
      });
      assert.equal(
        other.body.result.error.message,
        "ERR10: certificate request does not match attestation certificate.",
      );
    } finally {
      await s.close();
    }
  },
);

actionTest(
  ["admin", "user"],
  "certificate_trusted_Attestation_CA_path",
  "the attestation chains to a chain file of the policy's directory",
  async () => {
    const s = await setup();
    try {
      const { csr, attestation } = await attestationChain(s.ca.dir);
      await savePolicy(s.t.deps, "att", {
        scope: "enrollment",
        action: "certificate_require_attestation=verify",
      });
      const body = { type: "certificate", user: "alice", ca: "localCA", request: csr, attestation };
      assert.equal((await init(s.t, body)).status, 400, "baseline: the default directory is empty");
      // admin scope
      await savePolicy(s.t.deps, "adm", {
        scope: "admin",
        action: `enrollCERTIFICATE, certificate_trusted_Attestation_CA_path=${s.ca.dir}/chains`,
      });
      const res = await init(s.t, body);
      assert.equal(res.status, 200, JSON.stringify(res.body));
      // user scope: the user's own enrolment reads the user policies
      const token = await userToken(s.t);
      const userBody = { ...body, user: undefined };
      await savePolicy(s.t.deps, "usr", { scope: "user", action: "enrollCERTIFICATE" });
      const userDenied = await jsonOf(
        await s.t.request("POST", "/token/init", { token, body: userBody }),
      );
      assert.equal(userDenied.status, 400, JSON.stringify(userDenied.body));
      await savePolicy(s.t.deps, "usr", {
        scope: "user",
        action: `enrollCERTIFICATE, certificate_trusted_Attestation_CA_path=${s.ca.dir}/chains`,
      });
      const userOk = await jsonOf(
        await s.t.request("POST", "/token/init", { token, body: userBody }),
      );
      assert.equal(userOk.status, 200, JSON.stringify(userOk.body));
    } finally {
      await s.close();
    }
  },
);
