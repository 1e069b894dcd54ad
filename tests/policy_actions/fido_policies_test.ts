/**
 * The webauthn and passkey policies, each against the same request without it: the
 * enrolment request (step 1) and its checks (step 2), and the sign request a PIN triggers.
 */
import assert from "node:assert/strict";
import { type Json, jsonOf, type TestApp } from "../test_app.ts";
import { addPolicy, appWithAlice, challengeOf } from "../http/_challenge_types.ts";
import { SoftAuthenticator } from "../http/_soft_authenticator.ts";
import { getTokenBySerial } from "../../src/domain/token/mod.ts";
import { actionTest } from "./_registry.ts";

const RP_ID = "example.com";
const ORIGIN = "https://login.example.com";
const RP = { webauthn_relying_party_id: RP_ID, webauthn_relying_party_name: "Example" };

async function initAs(t: TestApp, body: Record<string, unknown>): Promise<Json> {
  return await jsonOf(
    await t.asAdmin("POST", "/token/init", { body, json: true, headers: { Origin: ORIGIN } }),
  );
}

/** The enrolment policy: the relying party, attestation level none, plus `extra`. */
async function enrolPolicy(t: TestApp, extra: Record<string, unknown> = {}): Promise<void> {
  await addPolicy(t, "fido", {
    scope: "enrollment",
    action: { ...RP, webauthn_authenticator_attestation_level: "none", ...extra },
  });
}

/** Step 1 of a webauthn enrolment for alice: the serial, transaction and register request. */
async function step1(t: TestApp): Promise<{ serial: string; tid: string; request: Json }> {
  const res = await initAs(t, { type: "webauthn", user: "alice", realm: "realm1", pin: "pin" });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return {
    serial: res.body.detail.serial,
    tid: res.body.detail.transaction_id,
    request: res.body.detail.webAuthnRegisterRequest,
  };
}

/** Both steps with `auth` (none attestation); returns the step-2 answer. */
async function register(
  t: TestApp,
  auth: SoftAuthenticator,
): Promise<{ serial: string; res: Json }> {
  const { serial, tid, request } = await step1(t);
  const att = await auth.register({ challenge: request.nonce, origin: ORIGIN, rpId: RP_ID });
  const res = await initAs(t, {
    type: "webauthn",
    serial,
    transaction_id: tid,
    clientdata: att.clientDataJSON,
    regdata: att.attestationObject,
  });
  return { serial, res };
}

actionTest(
  "enrollment",
  [
    "webauthn_relying_party_id",
    "webauthn_relying_party_name",
    "webauthn_timeout",
    "webauthn_user_verification_requirement",
    "webauthn_public_key_credential_algorithms",
    "webauthn_authenticator_attachment",
    "webauthn_authenticator_attestation_form",
    "webauthn_challenge_text",
  ],
  "webauthn: each enrolment policy shapes the register request",
  async () => {
    const t = await appWithAlice();
    const refused = await initAs(t, { type: "webauthn", user: "alice", realm: "realm1" });
    assert.equal(refused.status, 403);
    assert.equal(
      refused.body.result.error.message,
      "Missing enrollment policy for WebauthnToken: webauthn_relying_party_id",
    );
    await enrolPolicy(t);
    const plain = (await step1(t)).request;
    assert.deepEqual(plain.relyingParty, { id: RP_ID, name: "Example" });
    assert.equal(plain.timeout, 60000);
    assert.deepEqual(plain.authenticatorSelection, { userVerification: "preferred" });
    assert.deepEqual(plain.pubKeyCredAlgorithms.map((a: Json) => a.alg), [-7, -37, -257]);
    assert.equal(plain.attestation, "direct");
    assert.equal(plain.message, "Please confirm with your WebAuthn token");
    const cases: [Record<string, unknown>, (r: Json) => void][] = [
      [{ webauthn_relying_party_name: "ACME" }, (r) => assert.equal(r.relyingParty.name, "ACME")],
      [{ webauthn_timeout: "30" }, (r) => assert.equal(r.timeout, 30000)],
      [
        { webauthn_user_verification_requirement: "required" },
        (r) => assert.equal(r.authenticatorSelection.userVerification, "required"),
      ],
      [
        { webauthn_public_key_credential_algorithms: "ecdsa" },
        (r) => assert.deepEqual(r.pubKeyCredAlgorithms.map((a: Json) => a.alg), [-7]),
      ],
      [
        { webauthn_authenticator_attachment: "platform" },
        (r) => assert.equal(r.authenticatorSelection.authenticatorAttachment, "platform"),
      ],
      [
        { webauthn_authenticator_attestation_form: "none" },
        (r) => assert.equal(r.attestation, "none"),
      ],
      [
        { webauthn_challenge_text: "Touch your key" },
        (r) => assert.equal(r.message, "Touch your key"),
      ],
    ];
    for (const [policy, expect] of cases) {
      await enrolPolicy(t, policy);
      expect((await step1(t)).request);
    }
    await t.close();
  },
);

actionTest(
  "enrollment",
  "webauthn_authenticator_attestation_level",
  "webauthn: 'untrusted' refuses a key without attestation that 'none' takes",
  async () => {
    const t = await appWithAlice();
    await enrolPolicy(t);
    assert.equal((await register(t, await SoftAuthenticator.create())).res.status, 200);
    await enrolPolicy(t, { webauthn_authenticator_attestation_level: "untrusted" });
    const { serial, res } = await register(t, await SoftAuthenticator.create());
    assert.equal(res.status, 400);
    assert.equal(res.body.result.error.message, "ERR404: Could not enroll webauthn token!");
    const token = await getTokenBySerial(t.deps, serial);
    assert.equal(token.rolloutState, "clientwait", "the refused key is not registered");
    assert.equal(token.active, false);
    await t.close();
  },
);

actionTest(
  "enrollment",
  "webauthn_avoid_double_registration",
  "webauthn: the register request excludes the user's keys",
  async () => {
    const t = await appWithAlice();
    await enrolPolicy(t);
    const auth = await SoftAuthenticator.create();
    assert.equal((await register(t, auth)).res.status, 200);
    assert.equal((await step1(t)).request.excludeCredentials, undefined);
    await enrolPolicy(t, { webauthn_avoid_double_registration: true });
    assert.deepEqual((await step1(t)).request.excludeCredentials, [
      { id: auth.id, type: "public-key", transports: ["usb", "ble", "nfc", "internal"] },
    ]);
    await t.close();
  },
);

actionTest(
  "enrollment",
  "passkey_attestation_conveyance_preference",
  "passkey: the registration asks for the attestation of the policy",
  async () => {
    const t = await appWithAlice();
    await enrolPolicy(t);
    const request = async () => {
      const res = await initAs(t, { type: "passkey", user: "alice", realm: "realm1" });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      return res.body.detail.passkey_registration;
    };
    assert.equal((await request()).attestation, "none");
    await enrolPolicy(t, { passkey_attestation_conveyance_preference: "direct" });
    assert.equal((await request()).attestation, "direct");
    await t.close();
  },
);

actionTest(
  "authentication",
  [
    "webauthn_timeout",
    "webauthn_user_verification_requirement",
    "webauthn_allowed_transports",
    "webauthn_challenge_text",
  ],
  "webauthn: the sign request a PIN triggers follows the authentication policies",
  async () => {
    const t = await appWithAlice();
    await enrolPolicy(t);
    const auth = await SoftAuthenticator.create();
    assert.equal((await register(t, auth)).res.status, 200);
    const sign = async () => {
      const res = await jsonOf(
        await t.post("/validate/check", { user: "alice", pass: "pin" }, {
          headers: { Origin: ORIGIN },
        }),
      );
      const { entry } = challengeOf(res.body);
      return { entry, request: entry.attributes.webAuthnSignRequest as Json };
    };
    const plain = await sign();
    assert.equal(plain.request.timeout, 60000);
    assert.equal(plain.request.userVerification, "preferred");
    assert.deepEqual(plain.request.allowCredentials[0].transports, [
      "usb",
      "ble",
      "nfc",
      "internal",
    ]);
    assert.match(plain.entry.message, /^Please confirm with your WebAuthn token/);
    await addPolicy(t, "auth", {
      scope: "authentication",
      action: {
        webauthn_timeout: "20",
        webauthn_user_verification_requirement: "required",
        webauthn_allowed_transports: "usb nfc",
        webauthn_challenge_text: "Touch the key",
      },
    });
    const shaped = await sign();
    assert.equal(shaped.request.timeout, 20000);
    assert.equal(shaped.request.userVerification, "required");
    assert.deepEqual(shaped.request.allowCredentials[0].transports, ["usb", "nfc"]);
    assert.equal(shaped.entry.message, "Touch the key");
    await t.close();
  },
);

actionTest(
  "authentication",
  "passkey_challenge_text",
  "passkey: the login challenge shows the text of the policy",
  async () => {
    const t = await appWithAlice();
    await enrolPolicy(t);
    const initialize = async () =>
      (await jsonOf(await t.get("/validate/initialize", { query: { type: "passkey" } }))).body;
    const plain = await initialize();
    assert.equal(plain.detail.passkey.message, "Please authenticate with your passkey!");
    await addPolicy(t, "auth", {
      scope: "authentication",
      action: { passkey_challenge_text: "Sign in with your passkey" },
    });
    assert.equal((await initialize()).detail.passkey.message, "Sign in with your passkey");
    await t.close();
  },
);
