/**
 * The `webauthn` token over HTTP (spec 11 §4) with a software authenticator
 * (tests/http/_soft_authenticator.ts): the policies the enrolment needs,
 * both enrolment steps (attestation `none` and `packed` self attestation),
 * the login challenge and its assertion, and the refusals: wrong origin,
 * wrong RP id, a replayed sign count, a counter going back (cloned key),
 * user verification required but not given, a challenge used twice or
 * meant for another token, a credential another token holds. Each refusal
 * leaves the token as it was. Attestation level `trusted`: chains to the
 * anchors of `webauthn.trust_anchor_dir` (tests/http/_attestation_ca.ts
 * makes them with openssl) register; another CA, self attestation, none, a
 * broken or expired chain and a missing anchor store are refused.
 */
import assert from "node:assert/strict";
import { actionTest } from "../policy_actions/_registry.ts";
import { type Json, jsonOf, type TestApp } from "../test_app.ts";
import { addPolicy, appWithAlice, auditRows, challengeOf, listed } from "./_challenge_types.ts";
import { b64url, fromB64url, SoftAuthenticator } from "./_soft_authenticator.ts";
import { getTokenBySerial } from "../../src/domain/token/mod.ts";
import { type AttestationPki, makeAttestationPki } from "./_attestation_ca.ts";

const RP_ID = "example.com";
const ORIGIN = "https://login.example.com";

/** App with alice and the enrolment policy (RP id/name; attestation level as given). */
async function setup(action: Record<string, unknown> = {}): Promise<TestApp> {
  const t = await appWithAlice();
  await addPolicy(t, "fido", {
    scope: "enrollment",
    action: {
      webauthn_relying_party_id: RP_ID,
      webauthn_relying_party_name: "Example",
      webauthn_authenticator_attestation_level: "none",
      ...action,
    },
  });
  return t;
}

/** `POST /token/init` as admin with an Origin header. */
async function initAs(t: TestApp, body: Record<string, unknown>, origin: string | null = ORIGIN) {
  return await jsonOf(
    await t.asAdmin("POST", "/token/init", {
      body,
      json: true,
      headers: origin === null ? {} : { Origin: origin },
    }),
  );
}

/** `POST /validate/check` with an Origin header. */
async function checkAs(t: TestApp, body: Record<string, unknown>, origin: string | null = ORIGIN) {
  return await jsonOf(
    await t.post("/validate/check", body, { headers: origin === null ? {} : { Origin: origin } }),
  );
}

/** Step 1 for alice: the serial, the transaction and the register request. */
async function requestRegistration(t: TestApp, extra: Record<string, unknown> = {}) {
  const res = await initAs(t, {
    type: "webauthn",
    user: "alice",
    realm: "realm1",
    pin: "pin",
    ...extra,
  });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  const detail = res.body.detail;
  return {
    serial: detail.serial as string,
    tid: detail.transaction_id as string,
    request: detail.webAuthnRegisterRequest as Json,
    detail,
  };
}

/** Both steps with `auth`; returns the serial and the step-2 response. */
async function enrol(
  t: TestApp,
  auth: SoftAuthenticator,
  options: { fmt?: "none" | "packed"; uv?: boolean } = {},
) {
  const { serial, tid, request } = await requestRegistration(t);
  const att = await auth.register({
    challenge: request.nonce,
    origin: ORIGIN,
    rpId: request.relyingParty.id,
    fmt: options.fmt,
    uv: options.uv,
  });
  const res = await initAs(t, {
    type: "webauthn",
    serial,
    transaction_id: tid,
    clientdata: att.clientDataJSON,
    regdata: att.attestationObject,
  });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return { serial, res };
}

/** The PIN triggers the challenge; returns its transaction id and sign request. */
async function challenge(t: TestApp, serial?: string) {
  const res = await checkAs(t, { user: "alice", pass: "pin" });
  const { tid } = challengeOf(res.body);
  const entry = res.body.detail.multi_challenge.find((e: Json) => !serial || e.serial === serial);
  return { tid, entry, signRequest: entry.attributes.webAuthnSignRequest as Json, body: res.body };
}

/** The assertion fields as privacyIDEA clients send them. */
function answer(tid: string, a: Awaited<ReturnType<SoftAuthenticator["assert"]>>) {
  return {
    user: "alice",
    pass: "",
    transaction_id: tid,
    credentialid: a.credentialId,
    clientdata: a.clientDataJSON,
    signaturedata: a.signature,
    authenticatordata: a.authenticatorData,
    ...(a.userHandle ? { userhandle: a.userHandle } : {}),
  };
}

/** Count and state of a token (what a refusal must leave alone). */
async function stateOf(t: TestApp, serial: string) {
  const tok = await getTokenBySerial(t.deps, serial);
  return {
    count: tok.count,
    failcount: tok.failcount,
    active: tok.active,
    rollout: tok.rolloutState,
    lastAuth: tok.info.last_auth?.value,
    hash: tok.info.credential_id_hash?.value,
  };
}

Deno.test("webauthn: enrolment needs the relying party policies and a user; nothing is created otherwise", async () => {
  const t = await appWithAlice();
  const noPolicy = await initAs(t, { type: "webauthn", user: "alice", realm: "realm1" });
  assert.equal(noPolicy.status, 403);
  assert.equal(noPolicy.body.result.error.code, 303);
  assert.equal(
    noPolicy.body.result.error.message,
    "Missing enrollment policy for WebauthnToken: webauthn_relying_party_id",
  );
  await addPolicy(t, "rpid", { scope: "enrollment", action: { webauthn_relying_party_id: RP_ID } });
  const noName = await initAs(t, { type: "webauthn", user: "alice", realm: "realm1" });
  assert.equal(noName.status, 403);
  assert.equal(
    noName.body.result.error.message,
    "Missing enrollment policy for WebauthnToken: webauthn_relying_party_name",
  );
  await addPolicy(t, "rpid", {
    scope: "enrollment",
    action: { webauthn_relying_party_id: "not a domain!", webauthn_relying_party_name: "Example" },
  });
  const illegal = await initAs(t, { type: "webauthn", user: "alice", realm: "realm1" });
  assert.equal(illegal.status, 403);
  assert.equal(
    illegal.body.result.error.message,
    "Illegal value for webauthn_relying_party_id (must be a domain name): not a domain!",
  );
  await addPolicy(t, "rpid", {
    scope: "enrollment",
    action: { webauthn_relying_party_id: RP_ID, webauthn_relying_party_name: "Example" },
  });
  const noUser = await initAs(t, { type: "webauthn" });
  assert.equal(noUser.status, 400);
  assert.equal(noUser.body.result.error.code, 9051);
  assert.equal(
    noUser.body.result.error.message,
    "ERR9051: User must be provided for WebAuthn enrollment!",
  );
  await addPolicy(t, "uv", {
    scope: "enrollment",
    action: { webauthn_user_verification_requirement: "sometimes" },
  });
  const badUv = await initAs(t, { type: "webauthn", user: "alice", realm: "realm1" });
  assert.equal(badUv.status, 403);
  assert.equal(
    badUv.body.result.error.message,
    "webauthn_user_verification_requirement must be one of required, preferred, discouraged",
  );
  await addPolicy(t, "uv", {
    scope: "enrollment",
    action: { webauthn_authenticator_attestation_level: "trusted" },
  });
  const trusted = await initAs(t, { type: "webauthn", user: "alice", realm: "realm1" });
  assert.equal(trusted.status, 403);
  assert.equal(
    trusted.body.result.error.message,
    "The attestation level 'trusted' needs trust anchors, but config webauthn.trust_anchor_dir is empty",
  );
  const list = await jsonOf(await t.asAdmin("GET", "/token/", { query: { type: "webauthn" } }));
  assert.equal(list.body.result.value.count, 0, "no refused enrolment left a token");
  const challenges = await jsonOf(await t.asAdmin("GET", "/token/challenges/"));
  assert.equal(challenges.body.result.value.count, 0, "nor a challenge");
  await t.close();
});

Deno.test("webauthn: step 1 answers the register request; the token waits inactive in clientwait", async () => {
  const t = await setup({
    webauthn_timeout: "30",
    webauthn_authenticator_attachment: "cross-platform",
  });
  const { serial, tid, request, detail } = await requestRegistration(t, { description: "my key" });
  assert.match(serial, /^WAN/);
  assert.equal(detail.rollout_state, "clientwait");
  assert.match(tid, /^\d{20}$/);
  assert.equal(request.transaction_id, tid);
  assert.equal(request.message, "Please confirm with your WebAuthn token");
  assert.equal(fromB64url(request.nonce).length, 32);
  assert.deepEqual(request.relyingParty, { id: RP_ID, name: "Example" });
  assert.equal(request.serialNumber, serial);
  assert.equal(request.name, "alice");
  assert.match(request.displayName, /^<alice\..+@realm1>$/);
  assert.deepEqual(request.pubKeyCredAlgorithms, [
    { alg: -7, type: "public-key" },
    { alg: -37, type: "public-key" },
    { alg: -257, type: "public-key" },
  ]);
  assert.deepEqual(request.authenticatorSelection, {
    userVerification: "preferred",
    authenticatorAttachment: "cross-platform",
  });
  assert.equal(request.timeout, 30000);
  assert.equal(request.attestation, "direct");
  const token = await listed(t, serial);
  assert.equal(token.active, false);
  assert.equal(token.rollout_state, "clientwait");
  assert.equal(token.info.relying_party_id, RP_ID);
  assert.equal(token.info.relying_party_name, "Example");
  // a waiting token never authenticates: the PIN gets no challenge
  const pin = await checkAs(t, { user: "alice", pass: "pin" });
  assert.equal(pin.body.result.value, false);
  assert.equal(pin.body.detail.message, "Token is disabled");
  await t.close();
});

Deno.test("webauthn: step 2 (none attestation) stores the credential; login with the key succeeds once", async () => {
  const t = await setup();
  const auth = await SoftAuthenticator.create({
    credentialId: Uint8Array.from({ length: 16 }, (_, i) => i),
  });
  const { serial, res } = await enrol(t, auth);
  assert.deepEqual(res.body.detail.webAuthnRegisterResponse, { subject: "Generic WebAuthn Token" });
  assert.equal(res.body.detail.rollout_state, "enrolled");
  const token = await listed(t, serial);
  assert.equal(token.active, true);
  assert.equal(token.description, "Generic WebAuthn Token");
  assert.equal(token.info.origin, ORIGIN);
  assert.equal(token.info.attestation_level, "none");
  assert.equal(token.info.aaguid, "00000000000000000000000000000000");
  // spec 11 §13: credential id bytes 00…0f
  assert.equal(
    token.info.credential_id_hash,
    "be45cb2605bf36bebde684841a28f0fd43c69850a3dce5fedba69928ee3a8991",
  );
  assert.equal(
    token.info.pubKey,
    Array.from(await auth.coseKey(), (b) => b.toString(16).padStart(2, "0")).join(""),
  );
  assert.equal(token.count, 1, "the sign count of the registration");

  const { tid, entry, signRequest, body } = await challenge(t);
  assert.equal(entry.type, "webauthn");
  assert.equal(entry.client_mode, "webauthn");
  assert.equal(entry.message, "Please confirm with your WebAuthn token (Generic WebAuthn Token)");
  assert.equal(entry.attributes.hideResponseInput, true);
  assert.equal(body.detail.client_mode, "webauthn");
  assert.deepEqual(body.detail.attributes, entry.attributes, "extras also at the top");
  assert.deepEqual(signRequest.allowCredentials, [
    {
      type: "public-key",
      id: "AAECAwQFBgcICQoLDA0ODw",
      transports: ["usb", "ble", "nfc", "internal"],
    },
  ]);
  assert.equal(signRequest.rpId, RP_ID);
  assert.equal(signRequest.userVerification, "preferred");
  assert.equal(signRequest.timeout, 60000);
  assert.equal(fromB64url(signRequest.challenge).length, 32);

  const a = await auth.assert({ challenge: signRequest.challenge, origin: ORIGIN, rpId: RP_ID });
  // the user handle of a webauthn credential is the serial (spec 11 §13)
  const ok = await checkAs(t, {
    ...answer(tid, a),
    userhandle: b64url(new TextEncoder().encode(serial)),
  });
  assert.equal(ok.status, 200, JSON.stringify(ok.body));
  assert.equal(ok.body.result.value, true);
  assert.equal(ok.body.result.authentication, "ACCEPT");
  assert.deepEqual(
    { ...ok.body.detail, threadid: undefined },
    { username: "alice", message: "Found matching challenge", serial, threadid: undefined },
  );
  const after = await stateOf(t, serial);
  assert.equal(after.count, 2, "the new sign count");
  assert.ok(after.lastAuth, "last_auth written");

  // the same assertion again: its transaction is used up
  const replay = await checkAs(t, answer(tid, a));
  assert.equal(replay.status, 404);
  assert.equal(replay.body.result.error.message, `Challenge with transaction_id ${tid} not found.`);
  assert.deepEqual(await stateOf(t, serial), after);

  const rows = await auditRows(t, "POST /validate/check");
  assert.equal(rows[1].success, 1);
  assert.equal(rows[1].serial, serial);
  assert.equal(rows[1].token_type, "webauthn");
  assert.ok(!JSON.stringify(rows).includes(a.signature), "no assertion in the audit log");
  await t.close();
});

Deno.test("webauthn: the nonce decoded (privacyIDEA's webauthn clients) and as its text's bytes both enrol and log in; another nonce is refused", async () => {
  const t = await setup();
  for (const form of ["bytes", "text"] as const) {
    const auth = await SoftAuthenticator.create({ challengeAs: form });
    const { serial, tid, request } = await requestRegistration(t);
    const register = async (o: { challenge: string; challengeAs?: "bytes" | "text" }) => {
      const att = await auth.register({ ...o, origin: ORIGIN, rpId: RP_ID });
      return await initAs(t, {
        type: "webauthn",
        serial,
        transaction_id: tid,
        clientdata: att.clientDataJSON,
        regdata: att.attestationObject,
      });
    };
    const other = b64url(crypto.getRandomValues(new Uint8Array(32)));
    for (
      const wrong of [
        { challenge: other, challengeAs: "text" },
        { challenge: other, challengeAs: "bytes" },
        { challenge: b64url(new TextEncoder().encode(request.nonce)), challengeAs: "text" },
      ] as const
    ) {
      const refused = await register(wrong);
      assert.equal(refused.status, 400, `${form}: ${JSON.stringify(wrong)}`);
      assert.equal(refused.body.result.error.message, "ERR404: Could not enroll webauthn token!");
      assert.equal((await stateOf(t, serial)).rollout, "clientwait");
    }
    const enrolled = await register({ challenge: request.nonce });
    assert.equal(enrolled.status, 200, `${form}: ${JSON.stringify(enrolled.body)}`);

    const { tid: loginTid, signRequest } = await challenge(t, serial);
    const before = await stateOf(t, serial);
    for (
      const wrong of [
        { challenge: other, challengeAs: "text" },
        { challenge: other, challengeAs: "bytes" },
        { challenge: b64url(new TextEncoder().encode(signRequest.challenge)), challengeAs: "text" },
      ] as const
    ) {
      const a = await auth.assert({ ...wrong, origin: ORIGIN, rpId: RP_ID, signCount: 9 });
      const refused = await checkAs(t, answer(loginTid, a));
      assert.equal(refused.body.result.value, false, `${form}: ${JSON.stringify(wrong)}`);
      assert.deepEqual(await stateOf(t, serial), before, "nothing moves");
    }
    const a = await auth.assert({ challenge: signRequest.challenge, origin: ORIGIN, rpId: RP_ID });
    const ok = await checkAs(t, answer(loginTid, a));
    assert.equal(ok.body.result.value, true, `${form}: ${JSON.stringify(ok.body)}`);
    assert.equal(ok.body.detail.serial, serial);
  }
  await t.close();
});

Deno.test("webauthn: packed self attestation satisfies the default level 'untrusted'; none does not", async () => {
  const t = await setup({ webauthn_authenticator_attestation_level: "untrusted" });
  const plain = await SoftAuthenticator.create();
  const { serial, tid, request } = await requestRegistration(t);
  const att = await plain.register({ challenge: request.nonce, origin: ORIGIN, rpId: RP_ID });
  const refused = await initAs(t, {
    type: "webauthn",
    serial,
    transaction_id: tid,
    clientdata: att.clientDataJSON,
    regdata: att.attestationObject,
  });
  assert.equal(refused.status, 400);
  assert.equal(refused.body.result.error.message, "ERR404: Could not enroll webauthn token!");
  assert.equal((await stateOf(t, serial)).rollout, "clientwait");
  assert.equal((await stateOf(t, serial)).hash, undefined);
  // the challenge survives a refused answer: the same step 1 can be answered properly
  const packed = await SoftAuthenticator.create();
  const good = await packed.register({
    challenge: request.nonce,
    origin: ORIGIN,
    rpId: RP_ID,
    fmt: "packed",
  });
  const res = await initAs(t, {
    type: "webauthn",
    serial,
    transaction_id: tid,
    clientdata: good.clientDataJSON,
    regdata: good.attestationObject,
  });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  const token = await listed(t, serial);
  assert.equal(token.info.attestation_level, "untrusted");
  assert.equal(token.active, true);
  // the enrolment challenge is used up
  const again = await initAs(t, {
    type: "webauthn",
    serial,
    transaction_id: tid,
    clientdata: good.clientDataJSON,
    regdata: good.attestationObject,
  });
  assert.equal(again.status, 400);
  assert.equal(
    again.body.result.error.message,
    "ERR905: regdata and or clientdata provided but token not in clientwait rollout_state.",
  );
  await t.close();
});

/** Step 2 with `att` for the registration started by step 1 (`serial`, `tid`). */
async function answerRegistration(
  t: TestApp,
  serial: string,
  tid: string,
  att: Awaited<ReturnType<SoftAuthenticator["register"]>>,
) {
  return await initAs(t, {
    type: "webauthn",
    serial,
    transaction_id: tid,
    clientdata: att.clientDataJSON,
    regdata: att.attestationObject,
  });
}

/**
 * The test PKI and an app whose `webauthn.trust_anchor_dir` holds one bundle
 * (a spare root, then the trusted root) and a file that is no certificate.
 */
async function trustedSetup(extraConfig = ""): Promise<{ t: TestApp; pki: AttestationPki }> {
  const pki = await makeAttestationPki();
  const anchors = `${pki.dir}/anchors`;
  await Deno.mkdir(anchors);
  await Deno.writeTextFile(`${anchors}/roots.crt`, pki.spareRootPem + pki.rootPem);
  await Deno.writeTextFile(`${anchors}/README.txt`, "not a certificate");
  const t = await appWithAlice(
    `${extraConfig}\n[webauthn]\ntrust_anchor_dir = ${JSON.stringify(anchors)}\n`,
  );
  await addPolicy(t, "fido", {
    scope: "enrollment",
    action: {
      webauthn_relying_party_id: RP_ID,
      webauthn_relying_party_name: "Example",
      webauthn_authenticator_attestation_level: "trusted",
    },
  });
  return { t, pki };
}

Deno.test("webauthn trusted: an attestation chaining to a trust anchor registers, directly or via an intermediate", async () => {
  const { t, pki } = await trustedSetup();
  try {
    for (
      const [signer, issuer] of [[pki.direct, "Test Attestation Root"], [
        pki.viaIntermediate,
        "Test Attestation Intermediate",
      ]] as const
    ) {
      const key = await SoftAuthenticator.create();
      const { serial, tid, request } = await requestRegistration(t);
      const att = await key.register({
        challenge: request.nonce,
        origin: ORIGIN,
        rpId: RP_ID,
        fmt: "packed",
        attestation: signer,
      });
      const res = await answerRegistration(t, serial, tid, att);
      assert.equal(res.status, 200, JSON.stringify(res.body));
      const token = await listed(t, serial);
      assert.equal(token.active, true);
      assert.equal(token.rollout_state, "enrolled");
      assert.equal(token.info.attestation_level, "trusted");
      assert.equal(token.info.attestation_issuer, `CN=${issuer},O=Tessera Test,C=DE`);
      // the registered key logs in
      const { tid: loginTid, signRequest } = await challenge(t, serial);
      const a = await key.assert({ challenge: signRequest.challenge, origin: ORIGIN, rpId: RP_ID });
      const ok = await checkAs(t, answer(loginTid, a));
      assert.equal(ok.body.result.value, true, JSON.stringify(ok.body));
      await t.asAdmin("DELETE", `/token/${serial}`);
    }
  } finally {
    await t.close();
    await pki.close();
  }
});

Deno.test("webauthn trusted: another CA's certificate, self attestation and none are refused and change nothing", async () => {
  const { t, pki } = await trustedSetup();
  try {
    const key = await SoftAuthenticator.create();
    const { serial, tid, request } = await requestRegistration(t);
    const ceremony = { challenge: request.nonce, origin: ORIGIN, rpId: RP_ID };
    // each attempt and the reason the log must give for its refusal
    const attempts = {
      foreign: [
        await key.register({ ...ceremony, fmt: "packed", attestation: pki.foreign }),
        /does not chain to a trust anchor: certificate \\"[^"]*CN=stranger\\" is not signed by a trust anchor/,
      ],
      self: [
        await key.register({ ...ceremony, fmt: "packed" }),
        /needs a certificate chain, \\"packed\\" has none/,
      ],
      none: [
        await key.register({ ...ceremony, fmt: "none" }),
        /needs a certificate chain, \\"none\\" has none/,
      ],
      // the intermediate's leaf without the intermediate: the chain is broken
      broken: [
        await key.register({
          ...ceremony,
          fmt: "packed",
          attestation: { key: pki.viaIntermediate.key, x5c: pki.viaIntermediate.x5c.slice(0, 1) },
        }),
        /does not chain to a trust anchor: certificate \\"[^"]*CN=deep\\" is not signed by a trust anchor/,
      ],
    } as const;
    const before = await stateOf(t, serial);
    for (const [name, [att, reason]] of Object.entries(attempts)) {
      t.log.lines.length = 0;
      const refused = await answerRegistration(t, serial, tid, att);
      assert.match(t.log.lines.join("\n"), reason, name);
      assert.equal(refused.status, 400, name);
      assert.equal(
        refused.body.result.error.message,
        "ERR404: Could not enroll webauthn token!",
        name,
      );
      assert.deepEqual(await stateOf(t, serial), before, name);
      assert.equal(before.rollout, "clientwait");
      assert.equal(before.hash, undefined);
    }
    // the challenge survives the refusals: a trusted attestation still answers it
    const good = await key.register({ ...ceremony, fmt: "packed", attestation: pki.direct });
    const res = await answerRegistration(t, serial, tid, good);
    assert.equal(res.status, 200, JSON.stringify(res.body));
  } finally {
    await t.close();
    await pki.close();
  }
});

Deno.test("webauthn trusted: a chain not valid at the server's time is refused", async () => {
  // the admin's JWT must outlive the jump of the clock
  const { t, pki } = await trustedSetup("[auth]\njwt_lifetime = 400000000");
  try {
    // the certificates end on 2036-01-01
    t.clock.set(Date.parse("2036-06-01T00:00:00Z"));
    const key = await SoftAuthenticator.create();
    const { serial, tid, request } = await requestRegistration(t);
    const att = await key.register({
      challenge: request.nonce,
      origin: ORIGIN,
      rpId: RP_ID,
      fmt: "packed",
      attestation: pki.direct,
    });
    const refused = await answerRegistration(t, serial, tid, att);
    assert.equal(refused.status, 400);
    assert.equal(refused.body.result.error.message, "ERR404: Could not enroll webauthn token!");
    assert.equal((await stateOf(t, serial)).rollout, "clientwait");
  } finally {
    await t.close();
    await pki.close();
  }
});

Deno.test("webauthn trusted: a trust anchor directory without certificates is a clear error at step 1", async () => {
  const dir = await Deno.makeTempDir({ prefix: "tessera-anchors-" });
  const t = await setup({ webauthn_authenticator_attestation_level: "trusted" });
  const empty = await appWithAlice(`[webauthn]\ntrust_anchor_dir = ${JSON.stringify(dir)}\n`);
  try {
    await Deno.writeTextFile(`${dir}/notes.txt`, "no certificate here");
    await addPolicy(empty, "fido", {
      scope: "enrollment",
      action: {
        webauthn_relying_party_id: RP_ID,
        webauthn_relying_party_name: "Example",
        webauthn_authenticator_attestation_level: "trusted",
      },
    });
    const none = await initAs(empty, { type: "webauthn", user: "alice", realm: "realm1" });
    assert.equal(none.status, 403);
    assert.equal(
      none.body.result.error.message,
      "The attestation level 'trusted' needs trust anchors, but config webauthn.trust_anchor_dir holds no certificate",
    );
    const unset = await initAs(t, { type: "webauthn", user: "alice", realm: "realm1" });
    assert.equal(unset.status, 403);
    assert.match(unset.body.result.error.message, /webauthn\.trust_anchor_dir is empty/);
  } finally {
    await t.close();
    await empty.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("webauthn: registrations from a wrong origin, for a wrong RP id, without the challenge or without UV are refused", async () => {
  const t = await setup();
  const auth = await SoftAuthenticator.create();
  const { serial, tid, request } = await requestRegistration(t);
  const step2 = (
    att: { clientDataJSON: string; attestationObject: string },
    origin: string | null = ORIGIN,
    txid = tid,
  ) =>
    initAs(t, {
      type: "webauthn",
      serial,
      transaction_id: txid,
      clientdata: att.clientDataJSON,
      regdata: att.attestationObject,
    }, origin);
  const cases: [string, Promise<{ status: number; body: Json }>, string][] = [
    [
      "client data from another origin",
      step2(
        await auth.register({
          challenge: request.nonce,
          origin: "https://evil.example.net",
          rpId: RP_ID,
        }),
      ),
      "ERR404: Could not enroll webauthn token!",
    ],
    [
      "an Origin header that does not belong to the RP id",
      step2(
        await auth.register({
          challenge: request.nonce,
          origin: "https://evil.example.net",
          rpId: RP_ID,
        }),
        "https://evil.example.net",
      ),
      "ERR404: Could not enroll webauthn token!",
    ],
    [
      "a credential for another RP id",
      step2(
        await auth.register({ challenge: request.nonce, origin: ORIGIN, rpId: "evil.example.net" }),
      ),
      "ERR404: Could not enroll webauthn token!",
    ],
    [
      "another challenge",
      step2(
        await auth.register({ challenge: b64url(new Uint8Array(32)), origin: ORIGIN, rpId: RP_ID }),
      ),
      "ERR404: Could not enroll webauthn token!",
    ],
    [
      "a get ceremony instead of create",
      step2(
        await auth.register({
          challenge: request.nonce,
          origin: ORIGIN,
          rpId: RP_ID,
          type: "webauthn.get",
        }),
      ),
      "ERR404: Could not enroll webauthn token!",
    ],
    [
      "no user presence",
      step2(
        await auth.register({ challenge: request.nonce, origin: ORIGIN, rpId: RP_ID, up: false }),
      ),
      "ERR404: Could not enroll webauthn token!",
    ],
    [
      "no Origin header",
      step2(await auth.register({ challenge: request.nonce, origin: ORIGIN, rpId: RP_ID }), null),
      "ERR905: Missing parameter: HTTP_ORIGIN",
    ],
    [
      "an unknown transaction",
      step2(
        await auth.register({ challenge: request.nonce, origin: ORIGIN, rpId: RP_ID }),
        ORIGIN,
        "12345678901234567890",
      ),
      `ERR404: The enrollment challenge does not exist or has timed out for ${serial}`,
    ],
  ];
  for (const [name, pending, message] of cases) {
    const res = await pending;
    assert.equal(res.status, 400, name);
    assert.equal(res.body.result.error.message, message, name);
  }
  assert.deepEqual(await stateOf(t, serial), {
    count: 0,
    failcount: 0,
    active: false,
    rollout: "clientwait",
    lastAuth: undefined,
    hash: undefined,
  });

  // user verification required at registration: a key without UV is refused, with UV accepted
  await addPolicy(t, "uvreq", {
    scope: "enrollment",
    action: { webauthn_user_verification_requirement: "required" },
  });
  const uv = await requestRegistration(t);
  assert.equal(uv.request.authenticatorSelection.userVerification, "required");
  const noUv = await auth.register({ challenge: uv.request.nonce, origin: ORIGIN, rpId: RP_ID });
  const refused = await initAs(t, {
    type: "webauthn",
    serial: uv.serial,
    transaction_id: uv.tid,
    clientdata: noUv.clientDataJSON,
    regdata: noUv.attestationObject,
  });
  assert.equal(refused.body.result.error.message, "ERR404: Could not enroll webauthn token!");
  const withUv = await auth.register({
    challenge: uv.request.nonce,
    origin: ORIGIN,
    rpId: RP_ID,
    uv: true,
  });
  const accepted = await initAs(t, {
    type: "webauthn",
    serial: uv.serial,
    transaction_id: uv.tid,
    clientdata: withUv.clientDataJSON,
    regdata: withUv.attestationObject,
  });
  assert.equal(accepted.status, 200, JSON.stringify(accepted.body));
  await t.close();
});

Deno.test("webauthn: a credential another token holds is refused; avoid_double_registration lists the user's keys", async () => {
  const t = await setup({ webauthn_avoid_double_registration: true });
  const auth = await SoftAuthenticator.create();
  const first = await enrol(t, auth);
  const { serial, tid, request } = await requestRegistration(t);
  assert.deepEqual(request.excludeCredentials, [
    { id: auth.id, type: "public-key", transports: ["usb", "ble", "nfc", "internal"] },
  ]);
  // the same key (same credential id) registered again for a second token
  const att = await auth.register({ challenge: request.nonce, origin: ORIGIN, rpId: RP_ID });
  const res = await initAs(t, {
    type: "webauthn",
    serial,
    transaction_id: tid,
    clientdata: att.clientDataJSON,
    regdata: att.attestationObject,
  });
  assert.equal(res.status, 400);
  assert.equal(res.body.result.error.message, "ERR404: Could not enroll webauthn token!");
  assert.equal((await stateOf(t, serial)).rollout, "clientwait");
  assert.equal((await stateOf(t, serial)).hash, undefined);
  assert.equal((await stateOf(t, first.serial)).active, true, "the holder keeps it");
  assert.ok(t.log.lines.some((l) => l.includes("the credential id belongs to another token")));
  await t.close();
});

Deno.test("webauthn: a replayed sign count and a counter going back (cloned key) are refused and change nothing", async () => {
  const t = await setup();
  const auth = await SoftAuthenticator.create();
  const { serial } = await enrol(t, auth);
  const first = await challenge(t);
  const a1 = await auth.assert({
    challenge: first.signRequest.challenge,
    origin: ORIGIN,
    rpId: RP_ID,
    signCount: 10,
  });
  assert.equal((await checkAs(t, answer(first.tid, a1))).body.result.value, true);
  const before = await stateOf(t, serial);
  assert.equal(before.count, 10);
  for (
    const [name, signCount] of [["same count", 10], ["count going back", 5], [
      "count 0",
      0,
    ]] as const
  ) {
    const c = await challenge(t);
    const a = await auth.assert({
      challenge: c.signRequest.challenge,
      origin: ORIGIN,
      rpId: RP_ID,
      signCount,
    });
    const res = await checkAs(t, answer(c.tid, a));
    assert.equal(res.status, 200, name);
    assert.equal(res.body.result.value, false, name);
    assert.equal(res.body.result.authentication, "REJECT", name);
    assert.equal(res.body.detail, undefined, `${name}: no detail on a refused assertion`);
    assert.deepEqual(await stateOf(t, serial), before, name);
    // the refused answer left the challenge open: the key's real next count answers it
    const good = await auth.assert({
      challenge: c.signRequest.challenge,
      origin: ORIGIN,
      rpId: RP_ID,
      signCount: before.count + 1,
    });
    assert.equal((await checkAs(t, answer(c.tid, good))).body.result.value, true, name);
    before.count += 1;
    before.lastAuth = (await stateOf(t, serial)).lastAuth;
  }
  await t.close();
});

Deno.test("webauthn: a key without a counter (always 0) authenticates; each challenge still once", async () => {
  const t = await setup();
  const auth = await SoftAuthenticator.create();
  auth.hasCounter = false;
  const { serial } = await enrol(t, auth);
  assert.equal((await stateOf(t, serial)).count, 0);
  for (let i = 0; i < 2; i++) {
    const c = await challenge(t);
    const a = await auth.assert({
      challenge: c.signRequest.challenge,
      origin: ORIGIN,
      rpId: RP_ID,
    });
    assert.equal((await checkAs(t, answer(c.tid, a))).body.result.value, true);
    assert.equal((await checkAs(t, answer(c.tid, a))).status, 404, "the challenge is used up");
  }
  await t.close();
});

Deno.test("webauthn: wrong origin, wrong RP id, wrong challenge, other key, missing UV at login are refused", async () => {
  const t = await setup();
  const auth = await SoftAuthenticator.create();
  const other = await SoftAuthenticator.create();
  const { serial } = await enrol(t, auth);
  const c = await challenge(t);
  const ch = c.signRequest.challenge;
  const before = await stateOf(t, serial);
  const cases: [string, Record<string, unknown>, string | null][] = [
    [
      "client data from another origin",
      answer(
        c.tid,
        await auth.assert({ challenge: ch, origin: "https://evil.example.net", rpId: RP_ID }),
      ),
      ORIGIN,
    ],
    [
      "Origin header of another site",
      answer(
        c.tid,
        await auth.assert({ challenge: ch, origin: "https://evil.example.net", rpId: RP_ID }),
      ),
      "https://evil.example.net",
    ],
    [
      "Origin header differs from the client data",
      answer(c.tid, await auth.assert({ challenge: ch, origin: ORIGIN, rpId: RP_ID })),
      "https://other.example.com",
    ],
    [
      "assertion for another RP id",
      answer(c.tid, await auth.assert({ challenge: ch, origin: ORIGIN, rpId: "evil.example.net" })),
      ORIGIN,
    ],
    [
      "another challenge",
      answer(
        c.tid,
        await auth.assert({ challenge: b64url(new Uint8Array(32)), origin: ORIGIN, rpId: RP_ID }),
      ),
      ORIGIN,
    ],
    [
      "a create ceremony",
      answer(
        c.tid,
        await auth.assert({ challenge: ch, origin: ORIGIN, rpId: RP_ID, type: "webauthn.create" }),
      ),
      ORIGIN,
    ],
    [
      "no user presence",
      answer(c.tid, await auth.assert({ challenge: ch, origin: ORIGIN, rpId: RP_ID, up: false })),
      ORIGIN,
    ],
    ["signed by another key", {
      ...answer(c.tid, await other.assert({ challenge: ch, origin: ORIGIN, rpId: RP_ID })),
      credentialid: auth.id,
    }, ORIGIN],
    ["a user handle of another token", {
      ...answer(c.tid, await auth.assert({ challenge: ch, origin: ORIGIN, rpId: RP_ID })),
      userhandle: b64url(new TextEncoder().encode("WAN00012345")),
    }, ORIGIN],
  ];
  for (const [name, body, origin] of cases) {
    const res = await checkAs(t, body, origin);
    assert.equal(res.status, 200, name);
    assert.equal(res.body.result.value, false, name);
    assert.equal(res.body.detail, undefined, name);
    assert.deepEqual(await stateOf(t, serial), before, name);
  }
  const noOrigin = await checkAs(
    t,
    answer(c.tid, await auth.assert({ challenge: ch, origin: ORIGIN, rpId: RP_ID })),
    null,
  );
  assert.equal(noOrigin.status, 400);
  assert.equal(noOrigin.body.result.error.message, "ERR905: Missing parameter: HTTP_ORIGIN");
  const unknown = await checkAs(
    t,
    answer(c.tid, await other.assert({ challenge: ch, origin: ORIGIN, rpId: RP_ID })),
  );
  assert.equal(unknown.body.result.value, false);
  assert.equal(
    unknown.body.detail.message,
    "No token found for the given credential ID or transaction ID!",
  );
  assert.equal(before.failcount, 0);
  assert.deepEqual(await stateOf(t, serial), before);

  // user verification required by the authentication policy: the sign request says so
  await addPolicy(t, "uvauth", {
    scope: "authentication",
    action: { webauthn_user_verification_requirement: "required" },
  });
  const uv = await challenge(t);
  assert.equal(uv.signRequest.userVerification, "required");
  const noUv = await auth.assert({
    challenge: uv.signRequest.challenge,
    origin: ORIGIN,
    rpId: RP_ID,
  });
  assert.equal((await checkAs(t, answer(uv.tid, noUv))).body.result.value, false);
  assert.equal((await stateOf(t, serial)).count, before.count);
  const withUv = await auth.assert({
    challenge: uv.signRequest.challenge,
    origin: ORIGIN,
    rpId: RP_ID,
    uv: true,
  });
  assert.equal((await checkAs(t, answer(uv.tid, withUv))).body.result.value, true);
  await t.close();
});

Deno.test("webauthn: a challenge of one token does not take another token's assertion; two keys share one nonce", async () => {
  const t = await setup();
  const a = await SoftAuthenticator.create();
  const b = await SoftAuthenticator.create();
  const ta = await enrol(t, a);
  const tb = await enrol(t, b);
  const both = await challenge(t);
  assert.equal(both.body.detail.multi_challenge.length, 2);
  const [ea, eb] = both.body.detail.multi_challenge;
  assert.equal(
    ea.attributes.webAuthnSignRequest.challenge,
    eb.attributes.webAuthnSignRequest.challenge,
    "one nonce for all keys of a request",
  );
  // a transaction of token a only (triggered by serial) answered with key b
  const onlyA = await checkAs(t, { serial: ta.serial, pass: "pin" });
  const { tid } = challengeOf(onlyA.body);
  const ch = onlyA.body.detail.multi_challenge[0].attributes.webAuthnSignRequest.challenge;
  const res = await checkAs(
    t,
    answer(tid, await b.assert({ challenge: ch, origin: ORIGIN, rpId: RP_ID })),
  );
  assert.equal(res.status, 400);
  assert.equal(
    res.body.result.error.message,
    `ERR403: The challenge ${tid} is not meant for the token ${tb.serial}.`,
  );
  // expired
  t.clock.advance(121_000);
  const late = await checkAs(
    t,
    answer(tid, await a.assert({ challenge: ch, origin: ORIGIN, rpId: RP_ID })),
  );
  assert.equal(late.status, 400);
  assert.equal(late.body.result.error.message, `ERR403: The challenge ${tid} has timed out.`);
  await t.close();
});

Deno.test("webauthn: a security key does not answer the user-less /validate/initialize challenge (its PIN would be skipped); a passkey does", async () => {
  const t = await setup();
  const key = await SoftAuthenticator.create();
  const { serial } = await enrol(t, key);
  // baseline: after its PIN the key logs in
  const own = await challenge(t, serial);
  const ownAnswer = await key.assert({
    challenge: own.signRequest.challenge,
    origin: ORIGIN,
    rpId: RP_ID,
  });
  assert.equal((await checkAs(t, answer(own.tid, ownAnswer))).body.result.value, true);

  const init = await jsonOf(await t.get("/validate/initialize", { query: { type: "passkey" } }));
  assert.equal(init.status, 200, JSON.stringify(init.body));
  const { transaction_id: tid, challenge: nonce } = init.body.detail.passkey;
  const before = await stateOf(t, serial);
  const a = await key.assert({ challenge: nonce, origin: ORIGIN, rpId: RP_ID });
  const fields = {
    transaction_id: tid,
    credential_id: a.credentialId,
    clientDataJSON: a.clientDataJSON,
    authenticatorData: a.authenticatorData,
    signature: a.signature,
  };
  // without a user, with the user, and naming the key's serial: refused alike
  for (const extra of [{}, { user: "alice" }, { serial }]) {
    const refused = await checkAs(t, { ...fields, ...extra });
    assert.equal(refused.status, 400, JSON.stringify(refused.body));
    assert.equal(refused.body.result.error.code, 403, JSON.stringify(extra));
    assert.equal(
      refused.body.result.error.message,
      `ERR403: The challenge ${tid} is not meant for the token ${serial}.`,
    );
    assert.deepEqual(await stateOf(t, serial), before, "nothing moves");
  }

  // the same transaction is still open: a passkey answers it
  const passkey = await SoftAuthenticator.create();
  const step1 = await initAs(t, { type: "passkey", user: "alice", realm: "realm1" });
  assert.equal(step1.status, 200, JSON.stringify(step1.body));
  const reg = step1.body.detail.passkey_registration;
  const att = await passkey.register({ challenge: reg.challenge, origin: ORIGIN, rpId: RP_ID });
  const step2 = await initAs(t, {
    type: "passkey",
    serial: step1.body.detail.serial,
    transaction_id: step1.body.detail.transaction_id,
    credential_id: att.credentialId,
    attestationObject: att.attestationObject,
    clientDataJSON: att.clientDataJSON,
  });
  assert.equal(step2.status, 200, JSON.stringify(step2.body));
  const p = await passkey.assert({ challenge: nonce, origin: ORIGIN, rpId: RP_ID });
  const ok = await checkAs(t, {
    ...fields,
    credential_id: p.credentialId,
    clientDataJSON: p.clientDataJSON,
    authenticatorData: p.authenticatorData,
    signature: p.signature,
  });
  assert.equal(ok.body.result.value, true, JSON.stringify(ok.body));
  assert.equal(ok.body.detail.serial, step1.body.detail.serial);
  await t.close();
});

Deno.test("webauthn: a key answered by its serial alone logs in while its owner exists; once the owner is deleted from the user store it is refused and nothing moves", async () => {
  const t = await setup();
  const key = await SoftAuthenticator.create();
  const { serial } = await enrol(t, key);
  const bySerial = async (c: Awaited<ReturnType<typeof challenge>>) => {
    const a = await key.assert({ challenge: c.signRequest.challenge, origin: ORIGIN, rpId: RP_ID });
    const { user: _user, ...fields } = answer(c.tid, a);
    return { serialOnly: { ...fields, serial }, withUser: answer(c.tid, a) };
  };
  const baseline = await bySerial(await challenge(t, serial));
  const ok = await checkAs(t, baseline.serialOnly);
  assert.equal(ok.body.result.value, true, JSON.stringify(ok.body));
  assert.equal(ok.body.detail.username, "alice");

  const pending = await challenge(t, serial);
  const deleted = await jsonOf(await t.asAdmin("DELETE", "/user/sql-realm1/alice"));
  assert.equal(deleted.status, 200, JSON.stringify(deleted.body));
  const before = await stateOf(t, serial);
  const answers = await bySerial(pending);
  const gone = await checkAs(t, answers.serialOnly);
  assert.equal(gone.status, 200);
  assert.equal(gone.body.result.value, false, JSON.stringify(gone.body));
  assert.equal(gone.body.detail, undefined, "a plain failed assertion");
  const named = await checkAs(t, answers.withUser);
  assert.equal(named.body.result.value, false, JSON.stringify(named.body));
  assert.deepEqual(await stateOf(t, serial), before, "nothing moves");
  await t.close();
});

Deno.test("webauthn: /validate/triggerchallenge makes the sign request; parallel answers: exactly one is accepted", async () => {
  const t = await setup();
  const auth = await SoftAuthenticator.create();
  const { serial } = await enrol(t, auth);
  const trig = await jsonOf(
    await t.asAdmin("POST", "/validate/triggerchallenge", {
      body: { user: "alice", realm: "realm1" },
    }),
  );
  assert.equal(trig.status, 200);
  assert.equal(trig.body.result.value, 1);
  const entry = trig.body.detail.multi_challenge[0];
  assert.equal(entry.serial, serial);
  const a = await auth.assert({
    challenge: entry.attributes.webAuthnSignRequest.challenge,
    origin: ORIGIN,
    rpId: RP_ID,
  });
  const results = await Promise.all(
    Array.from({ length: 6 }, () => checkAs(t, answer(entry.transaction_id, a))),
  );
  assert.equal(results.filter((r) => r.body.result?.value === true).length, 1);
  await t.close();
});

Deno.test("webauthn: disabled_token_types refuses the assertion; a plain pass never authenticates", async () => {
  const t = await setup();
  const auth = await SoftAuthenticator.create();
  const { serial } = await enrol(t, auth);
  const c = await challenge(t);
  const a = await auth.assert({ challenge: c.signRequest.challenge, origin: ORIGIN, rpId: RP_ID });
  // PIN + anything as one-shot: never valid
  assert.equal((await checkAs(t, { user: "alice", pass: "pin123456" })).body.result.value, false);
  assert.equal(
    (await checkAs(t, { user: "alice", transaction_id: c.tid, pass: "123456" })).body.result.value,
    false,
  );
  await addPolicy(t, "off", {
    scope: "authentication",
    action: { disabled_token_types: "webauthn" },
  });
  const res = await checkAs(t, answer(c.tid, a));
  assert.equal(res.status, 403);
  assert.equal(res.body.result.error.message, "The authentication method is not available.");
  assert.equal((await stateOf(t, serial)).count, 1);
  await t.close();
});

Deno.test("webauthn: two enrolments racing with one credential: exactly one token gets it", async () => {
  const t = await setup();
  const auth = await SoftAuthenticator.create();
  const steps = await Promise.all([requestRegistration(t), requestRegistration(t)]);
  const results = await Promise.all(
    await Promise.all(steps.map(async ({ serial, tid, request }) => {
      const att = await auth.register({ challenge: request.nonce, origin: ORIGIN, rpId: RP_ID });
      return initAs(t, {
        type: "webauthn",
        serial,
        transaction_id: tid,
        clientdata: att.clientDataJSON,
        regdata: att.attestationObject,
      });
    })),
  );
  assert.deepEqual(results.map((r) => r.status).sort(), [200, 400]);
  const refused = results.find((r) => r.status === 400)!;
  assert.equal(refused.body.result.error.message, "ERR404: Could not enroll webauthn token!");
  const states = await Promise.all(steps.map((s) => stateOf(t, s.serial)));
  assert.deepEqual(states.map((s) => s.rollout).sort(), ["clientwait", "enrolled"]);
  assert.equal(states.filter((s) => s.hash !== undefined).length, 1);
  await t.close();
});

actionTest(
  ["enrollment", "authorization"],
  "webauthn_authenticator_selection_list",
  "webauthn: the selection list limits which authenticators register (enrollment) and log in (authorization)",
  async () => {
    const aaguid = Uint8Array.from({ length: 16 }, (_, i) => 0xa0 + i);
    const dashed = "a0a1a2a3-a4a5-a6a7-a8a9-aaabacadaeaf";
    const t = await setup({
      webauthn_authenticator_selection_list: "00112233445566778899aabbccddeeff",
    });
    const auth = await SoftAuthenticator.create({ aaguid });
    const { serial, tid, request } = await requestRegistration(t);
    assert.deepEqual(request.authenticatorSelectionList, ["00112233445566778899aabbccddeeff"]);
    const att = await auth.register({ challenge: request.nonce, origin: ORIGIN, rpId: RP_ID });
    const step2 = {
      type: "webauthn",
      serial,
      transaction_id: tid,
      clientdata: att.clientDataJSON,
      regdata: att.attestationObject,
    };
    const refused = await initAs(t, step2);
    assert.equal(refused.status, 403);
    assert.equal(
      refused.body.result.error.message,
      "The WebAuthn token is not allowed to be registered due to a policy restriction.",
    );
    assert.equal((await stateOf(t, serial)).rollout, "clientwait");
    await addPolicy(t, "fido", {
      scope: "enrollment",
      action: {
        webauthn_relying_party_id: RP_ID,
        webauthn_relying_party_name: "Example",
        webauthn_authenticator_attestation_level: "none",
        webauthn_authenticator_selection_list: dashed,
      },
    });
    assert.equal((await initAs(t, step2)).status, 200);
    assert.equal((await listed(t, serial)).info.aaguid, "a0a1a2a3a4a5a6a7a8a9aaabacadaeaf");

    await addPolicy(t, "authz", {
      scope: "authorization",
      action: { webauthn_authenticator_selection_list: "00112233445566778899aabbccddeeff" },
    });
    const c = await challenge(t);
    const a = await auth.assert({
      challenge: c.signRequest.challenge,
      origin: ORIGIN,
      rpId: RP_ID,
    });
    const denied = await checkAs(t, answer(c.tid, a));
    assert.equal(denied.status, 403);
    assert.equal(
      denied.body.result.error.message,
      "The WebAuthn token is not allowed to authenticate due to a policy restriction.",
    );
    assert.equal((await stateOf(t, serial)).count, 1, "nothing moved");
    await addPolicy(t, "authz", {
      scope: "authorization",
      action: { webauthn_authenticator_selection_list: dashed },
    });
    assert.equal((await checkAs(t, answer(c.tid, a))).body.result.value, true);
    await t.close();
  },
);

Deno.test("webauthn offline: the item carries the credential id as hex (privacyIDEA's otpkey), the COSE key and the RP id", async () => {
  const t = await setup();
  const auth = await SoftAuthenticator.create({
    credentialId: Uint8Array.from({ length: 16 }, (_, i) => i),
  });
  const { serial } = await enrol(t, auth);
  const bound = await jsonOf(
    await t.asAdmin("POST", "/machine/token", { body: { serial, application: "offline" } }),
  );
  assert.equal(bound.status, 200, JSON.stringify(bound.body));
  const { tid, signRequest } = await challenge(t);
  const a = await auth.assert({ challenge: signRequest.challenge, origin: ORIGIN, rpId: RP_ID });
  const ok = await jsonOf(
    await t.post("/validate/check", answer(tid, a), {
      headers: { Origin: ORIGIN, "user-agent": "privacyidea-cp/3.8 Windows/LAPTOP1" },
    }),
  );
  assert.equal(ok.status, 200, JSON.stringify(ok.body));
  assert.equal(ok.body.result.value, true);
  const [item] = ok.body.auth_items.offline;
  assert.equal(item.serial, serial);
  assert.equal(item.username, "alice");
  assert.deepEqual(item.response, {
    pubKey: Array.from(await auth.coseKey(), (b) => b.toString(16).padStart(2, "0")).join(""),
    credentialId: "000102030405060708090a0b0c0d0e0f",
    rpId: RP_ID,
  });
  await t.close();
});
