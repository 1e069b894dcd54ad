/**
 * `POST /auth` with a passkey instead of a password (spec 11 §5.3 point 4),
 * with a software authenticator: the transaction of
 * `/validate/initialize?type=passkey`, user verification required, the JWT
 * of the owner as a realm user, and the refusals (replay, wrong origin, no
 * UV, disabled token, unknown credential, another user's handle), which
 * change nothing and count against the per-address login limits.
 */
import assert from "node:assert/strict";
import { type Json, jsonOf, type TestApp } from "../test_app.ts";
import { addPolicy, appWithAlice, auditRows } from "./_challenge_types.ts";
import {
  type Assertion,
  fromB64url,
  PI_PASSKEY,
  SoftAuthenticator,
} from "./_soft_authenticator.ts";
import { getTokenBySerial } from "../../src/domain/token/mod.ts";
import { createUsers } from "../fixtures/users.ts";

const RP_ID = "example.com";
const ORIGIN = "https://example.com";
const NOT_REGISTERED = "Authentication failure. The passkey is not registered.";
const FAILED = "Authentication failure using passkey.";

async function setup(configText?: string): Promise<TestApp> {
  const t = await appWithAlice(configText);
  await addPolicy(t, "fido", {
    scope: "enrollment",
    action: { webauthn_relying_party_id: RP_ID, webauthn_relying_party_name: "Example" },
  });
  return t;
}

/** Enrols a passkey for `user` (both steps); the authenticator keeps the user handle. */
async function enrol(
  t: TestApp,
  auth: SoftAuthenticator,
  user = "alice",
  realm = "realm1",
): Promise<string> {
  const headers = { Origin: ORIGIN };
  const step1 = await jsonOf(
    await t.asAdmin("POST", "/token/init", {
      body: { type: "passkey", user, realm },
      json: true,
      headers,
    }),
  );
  assert.equal(step1.status, 200, JSON.stringify(step1.body));
  const { serial, transaction_id: tid, passkey_registration: options } = step1.body.detail;
  const att = await auth.register({ challenge: options.challenge, origin: ORIGIN, rpId: RP_ID });
  const step2 = await jsonOf(
    await t.asAdmin("POST", "/token/init", {
      body: {
        type: "passkey",
        serial,
        transaction_id: tid,
        credential_id: att.credentialId,
        rawId: att.credentialId,
        attestationObject: att.attestationObject,
        clientDataJSON: att.clientDataJSON,
      },
      json: true,
      headers,
    }),
  );
  assert.equal(step2.status, 200, JSON.stringify(step2.body));
  auth.userHandle = fromB64url(options.user.id);
  return serial;
}

/** `/validate/initialize?type=passkey` → transaction id and challenge. */
async function initialize(t: TestApp): Promise<{ tid: string; challenge: string }> {
  const res = await jsonOf(await t.get("/validate/initialize", { query: { type: "passkey" } }));
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return { tid: res.body.detail.transaction_id, challenge: res.body.detail.passkey.challenge };
}

/** The login request as the WebUI sends it (JSON, names of the WebAuthn API). */
function loginBody(tid: string, a: Assertion): Record<string, unknown> {
  return {
    transaction_id: tid,
    credential_id: a.credentialId,
    authenticatorData: a.authenticatorData,
    clientDataJSON: a.clientDataJSON,
    signature: a.signature,
    ...(a.userHandle ? { userHandle: a.userHandle } : {}),
  };
}

async function authWith(
  t: TestApp,
  body: Record<string, unknown>,
  options: { origin?: string | null; remoteAddr?: string; json?: boolean } = {},
): Promise<{ status: number; body: Json }> {
  const origin = options.origin === undefined ? ORIGIN : options.origin;
  return await jsonOf(
    await t.request("POST", "/auth", {
      body,
      json: options.json ?? true,
      headers: origin === null ? {} : { Origin: origin },
      remoteAddr: options.remoteAddr,
    }),
  );
}

/** A fresh transaction and an assertion over it (UV unless told otherwise). */
async function assertion(
  t: TestApp,
  auth: SoftAuthenticator,
  o: { uv?: boolean; origin?: string } = {},
): Promise<{ tid: string; a: Assertion }> {
  const { tid, challenge } = await initialize(t);
  const a = await auth.assert({
    challenge,
    origin: o.origin ?? ORIGIN,
    rpId: RP_ID,
    uv: o.uv ?? true,
  });
  return { tid, a };
}

async function stateOf(t: TestApp, serial: string) {
  const tok = await getTokenBySerial(t.deps, serial);
  return {
    count: tok.count,
    signCount: tok.info.sign_count?.value,
    failcount: tok.failcount,
    lastAuth: tok.info.last_auth?.value,
  };
}

function assertRefused(res: { status: number; body: Json }, message: string): void {
  assert.equal(res.status, 401, JSON.stringify(res.body));
  assert.equal(res.body.result.status, false);
  assert.equal(res.body.result.error.code, 4031);
  assert.equal(res.body.result.error.message, message);
  // no JWT on a refusal
  assert.equal(JSON.stringify(res.body).includes('"token"'), false);
}

function claimsOf(jwt: string): Json {
  return JSON.parse(atob(jwt.split(".")[1].replaceAll("-", "+").replaceAll("_", "/")));
}

Deno.test("POST /auth with a passkey: the owner logs in as a realm user; the JWT works; the assertion moved the sign count", async () => {
  const t = await setup();
  const auth = await SoftAuthenticator.create(PI_PASSKEY);
  const serial = await enrol(t, auth);
  const before = await stateOf(t, serial);
  const { tid, a } = await assertion(t, auth);
  const res = await authWith(t, loginBody(tid, a));
  assert.equal(res.status, 200, JSON.stringify(res.body));
  const value = res.body.result.value;
  assert.equal(value.role, "user");
  assert.equal(value.username, "alice");
  assert.equal(value.realm, "realm1");
  const claims = claimsOf(value.token);
  assert.equal(claims.role, "user");
  assert.equal(claims.username, "alice");
  assert.equal(claims.realm, "realm1");
  assert.equal(claims.authtype, "pi");
  assert.equal(claims.credential_version, undefined);
  // the same answer as a password login of alice (rights, menus)
  const pw = await jsonOf(await t.post("/auth", { username: "alice", password: "alicepw" }));
  assert.equal(pw.status, 200);
  assert.deepEqual(value.rights, pw.body.result.value.rights);
  assert.deepEqual(value.menus, pw.body.result.value.menus);
  // the JWT is a user's: own tokens yes, admin endpoints no
  const own = await jsonOf(await t.get("/token/", { token: value.token }));
  assert.equal(own.status, 200);
  assert.equal(own.body.result.value.tokens[0].serial, serial);
  assert.equal((await t.get("/system/", { token: value.token })).status, 401);
  const after = await stateOf(t, serial);
  assert.equal(after.count, before.count + 1);
  assert.equal(after.signCount, String(auth.signCount));
  assert.ok(after.lastAuth);
  const audit = (await auditRows(t, "POST /auth")).find((r) => r.serial === serial);
  assert.equal(audit?.user, "alice", JSON.stringify(audit));
  assert.equal(audit?.realm, "realm1");
  await t.close();
});

Deno.test("POST /auth with a passkey: lower-case aliases and form fields are accepted", async () => {
  const t = await setup();
  const auth = await SoftAuthenticator.create(PI_PASSKEY);
  await enrol(t, auth);
  const { tid, a } = await assertion(t, auth);
  const res = await authWith(t, {
    transaction_id: tid,
    credentialid: a.credentialId,
    authenticatordata: a.authenticatorData,
    clientdatajson: a.clientDataJSON,
    signaturedata: a.signature,
    userhandle: a.userHandle,
  }, { json: false });
  // clientdatajson is no alias upstream knows: clientdata is
  assert.equal(res.status, 400, JSON.stringify(res.body));
  assert.equal(res.body.result.error.message, "ERR905: Missing parameter: clientdata");
  const ok = await authWith(t, {
    transaction_id: tid,
    credentialid: a.credentialId,
    authenticatordata: a.authenticatorData,
    clientdata: a.clientDataJSON,
    signaturedata: a.signature,
    userhandle: a.userHandle,
  }, { json: false });
  assert.equal(ok.status, 200, JSON.stringify(ok.body));
  assert.equal(ok.body.result.value.username, "alice");
  await t.close();
});

Deno.test("POST /auth with a passkey of a superuser realm's user gives the admin role a password login gives", async () => {
  const t = await setup('[auth]\nsuperuser_realms = ["realm1"]\n');
  const auth = await SoftAuthenticator.create(PI_PASSKEY);
  await enrol(t, auth);
  const { tid, a } = await assertion(t, auth);
  const res = await authWith(t, loginBody(tid, a));
  assert.equal(res.status, 200, JSON.stringify(res.body));
  assert.equal(res.body.result.value.role, "admin");
  assert.equal(res.body.result.value.realm, "realm1");
  assert.equal(claimsOf(res.body.result.value.token).credential_version, undefined);
  assert.equal((await t.get("/system/", { token: res.body.result.value.token })).status, 200);
  await t.close();
});

Deno.test("POST /auth with a passkey: an assertion logs in once; replayed on /auth or /validate/check it is refused", async () => {
  const t = await setup();
  const auth = await SoftAuthenticator.create(PI_PASSKEY);
  const serial = await enrol(t, auth);
  const { tid, a } = await assertion(t, auth);
  assert.equal((await authWith(t, loginBody(tid, a))).status, 200);
  const state = await stateOf(t, serial);
  assertRefused(await authWith(t, loginBody(tid, a)), FAILED);
  const check = await jsonOf(
    await t.post("/validate/check", loginBody(tid, a), { headers: { Origin: ORIGIN } }),
  );
  assert.equal(check.body.result.value, undefined, JSON.stringify(check.body));
  assert.equal(check.status, 404);
  // the same assertion against a new transaction: other challenge
  const fresh = await initialize(t);
  assertRefused(await authWith(t, loginBody(fresh.tid, a)), FAILED);
  assert.deepEqual(await stateOf(t, serial), state);
  // and one made for /validate/check does not log in afterwards
  const other = await assertion(t, auth);
  const checked = await jsonOf(
    await t.post("/validate/check", loginBody(other.tid, other.a), { headers: { Origin: ORIGIN } }),
  );
  assert.equal(checked.body.result.value, true, JSON.stringify(checked.body));
  assertRefused(await authWith(t, loginBody(other.tid, other.a)), FAILED);
  await t.close();
});

Deno.test("POST /auth with a passkey: refusals (origin, no UV, disabled token, other user handle, cloned counter) change nothing; the transaction stays open", async () => {
  const t = await setup();
  // the authentication policy asks only for "preferred": /auth requires UV anyway
  await addPolicy(t, "uv", {
    scope: "authentication",
    action: { webauthn_user_verification_requirement: "discouraged" },
  });
  const auth = await SoftAuthenticator.create(PI_PASSKEY);
  const serial = await enrol(t, auth);
  const start = await stateOf(t, serial);
  const { tid, challenge } = await initialize(t);
  const cases: [string, () => Promise<{ status: number; body: Json }>][] = [
    ["origin of another site", async () => {
      const a = await auth.assert({ challenge, origin: "https://evil.example.net", rpId: RP_ID });
      return await authWith(t, loginBody(tid, a), { origin: "https://evil.example.net" });
    }],
    ["Origin header not the client data's", async () => {
      const a = await auth.assert({ challenge, origin: ORIGIN, rpId: RP_ID, uv: true });
      return await authWith(t, loginBody(tid, a), { origin: "https://login.example.com" });
    }],
    ["no user verification", async () => {
      const a = await auth.assert({ challenge, origin: ORIGIN, rpId: RP_ID, uv: false });
      return await authWith(t, loginBody(tid, a));
    }],
    ["another user handle", async () => {
      const a = await auth.assert({ challenge, origin: ORIGIN, rpId: RP_ID, uv: true });
      return await authWith(t, { ...loginBody(tid, a), userHandle: "b3RoZXI" });
    }],
    ["sign count not above the stored one", async () => {
      const a = await auth.assert({
        challenge,
        origin: ORIGIN,
        rpId: RP_ID,
        uv: true,
        signCount: start.count,
      });
      return await authWith(t, loginBody(tid, a));
    }],
    ["signature of another key", async () => {
      const a = await auth.assert({ challenge, origin: ORIGIN, rpId: RP_ID, uv: true });
      const b = await (await SoftAuthenticator.create(PI_PASSKEY)).assert({
        challenge,
        origin: ORIGIN,
        rpId: RP_ID,
        uv: true,
      });
      return await authWith(t, { ...loginBody(tid, a), signature: b.signature });
    }],
  ];
  for (const [name, send] of cases) {
    const res = await send();
    assertRefused(res, FAILED);
    assert.deepEqual(await stateOf(t, serial), start, name);
  }
  // the open transaction still takes a right assertion
  const a = await auth.assert({ challenge, origin: ORIGIN, rpId: RP_ID, uv: true });
  assert.equal((await authWith(t, loginBody(tid, a))).status, 200);
  // a disabled passkey does not log in, and the refusal moves nothing
  const disabled = await jsonOf(await t.asAdmin("POST", "/token/disable", { body: { serial } }));
  assert.equal(disabled.status, 200);
  const before = await stateOf(t, serial);
  const next = await assertion(t, auth);
  assertRefused(await authWith(t, loginBody(next.tid, next.a)), FAILED);
  assert.deepEqual(await stateOf(t, serial), before);
  await t.close();
});

Deno.test("POST /auth with a passkey: unknown credential, a WebAuthn token's credential and bad requests", async () => {
  const t = await setup();
  const auth = await SoftAuthenticator.create(PI_PASSKEY);
  await enrol(t, auth);
  const stranger = await SoftAuthenticator.create(PI_PASSKEY);
  const { tid, challenge } = await initialize(t);
  const a = await stranger.assert({ challenge, origin: ORIGIN, rpId: RP_ID, uv: true });
  assertRefused(await authWith(t, loginBody(tid, a)), NOT_REGISTERED);
  // a credential of a webauthn token is no passkey
  const wan = await SoftAuthenticator.create();
  const w1 = await jsonOf(
    await t.asAdmin("POST", "/token/init", {
      body: { type: "webauthn", user: "alice", realm: "realm1" },
      headers: { Origin: ORIGIN },
    }),
  );
  assert.equal(w1.status, 200, JSON.stringify(w1.body));
  const req = w1.body.detail.webAuthnRegisterRequest;
  const att = await wan.register({
    challenge: req.nonce,
    origin: ORIGIN,
    rpId: RP_ID,
    fmt: "packed",
  });
  const w2 = await jsonOf(
    await t.asAdmin("POST", "/token/init", {
      body: {
        type: "webauthn",
        serial: w1.body.detail.serial,
        transaction_id: w1.body.detail.transaction_id,
        clientdata: att.clientDataJSON,
        regdata: att.attestationObject,
      },
      headers: { Origin: ORIGIN },
    }),
  );
  assert.equal(w2.status, 200, JSON.stringify(w2.body));
  const wa = await wan.assert({ challenge, origin: ORIGIN, rpId: RP_ID, uv: true });
  assertRefused(await authWith(t, loginBody(tid, wa)), NOT_REGISTERED);
  // an unknown transaction is a failed passkey login like any other
  const right = await auth.assert({ challenge, origin: ORIGIN, rpId: RP_ID, uv: true });
  assertRefused(await authWith(t, loginBody("12345678901234567890", right)), FAILED);
  // parameter errors: no transaction, no Origin (before any lookup), a missing field, bad id
  const noTid = await authWith(t, { ...loginBody(tid, right), transaction_id: "" });
  assert.equal(noTid.status, 400);
  assert.equal(noTid.body.result.error.message, "ERR905: Missing parameter: transaction_id");
  for (const cred of [right, a]) {
    const noOrigin = await authWith(t, loginBody(tid, cred), { origin: null });
    assert.equal(noOrigin.status, 400);
    assert.equal(noOrigin.body.result.error.message, "ERR905: Missing parameter: HTTP_ORIGIN");
  }
  const { signature: _s, ...noSignature } = loginBody(tid, right);
  const missing = await authWith(t, noSignature);
  assert.equal(missing.status, 400);
  assert.equal(missing.body.result.error.message, "ERR905: Missing parameter: signaturedata");
  const badId = await authWith(t, { ...loginBody(tid, right), credential_id: "!!" });
  assert.equal(badId.status, 400);
  // a credential id wins over name and password, as upstream: no password login on the side
  const mixed = await authWith(t, {
    ...loginBody(tid, a),
    username: "alice",
    password: "alicepw",
  });
  assertRefused(mixed, NOT_REGISTERED);
  // after all that the right assertion still logs in
  const res = await authWith(t, loginBody(tid, right));
  assert.equal(res.status, 200, JSON.stringify(res.body));
  await t.close();
});

Deno.test("POST /auth with a passkey: failures count against the address's login limits like wrong passwords", async () => {
  const t = await setup("[auth]\nlogin_failures = 2\nlogin_failure_window = 60\n");
  const auth = await SoftAuthenticator.create(PI_PASSKEY);
  const serial = await enrol(t, auth);
  const stranger = await SoftAuthenticator.create(PI_PASSKEY);
  const { tid, challenge } = await initialize(t);
  const unknown = await stranger.assert({ challenge, origin: ORIGIN, rpId: RP_ID, uv: true });
  assertRefused(
    await authWith(t, loginBody(tid, unknown), { remoteAddr: "192.0.2.7" }),
    NOT_REGISTERED,
  );
  const noUv = await auth.assert({ challenge, origin: ORIGIN, rpId: RP_ID, uv: false });
  assertRefused(await authWith(t, loginBody(tid, noUv), { remoteAddr: "192.0.2.7" }), FAILED);
  // the address is spent: even a right assertion is not looked at, and it stays usable
  const before = await stateOf(t, serial);
  const right = await auth.assert({ challenge, origin: ORIGIN, rpId: RP_ID, uv: true });
  const limited = await authWith(t, loginBody(tid, right), { remoteAddr: "192.0.2.7" });
  assert.equal(limited.status, 429, JSON.stringify(limited.body));
  assert.deepEqual(await stateOf(t, serial), before);
  const pw = await jsonOf(
    await t.post("/auth", { username: "alice", password: "alicepw" }, { remoteAddr: "192.0.2.7" }),
  );
  assert.equal(pw.status, 429);
  // another address logs in with that very assertion
  const other = await authWith(t, loginBody(tid, right), { remoteAddr: "192.0.2.8" });
  assert.equal(other.status, 200, JSON.stringify(other.body));
  await t.close();
});

Deno.test("POST /auth with a passkey: login_mode=disable and a token without owner refuse the login", async () => {
  const t = await setup();
  await createUsers(t.deps, { realm: "realm2", users: [{ login: "bob", password: "bobpw" }] });
  const alice = await SoftAuthenticator.create(PI_PASSKEY);
  await enrol(t, alice);
  const bob = await SoftAuthenticator.create(PI_PASSKEY);
  const bobSerial = await enrol(t, bob, "bob", "realm2");
  await addPolicy(t, "nologin", {
    scope: "webui",
    action: "login_mode=disable",
    realm: "realm1",
    user: "alice",
  });
  const { tid, a } = await assertion(t, alice);
  const res = await authWith(t, loginBody(tid, a));
  assert.equal(res.status, 403, JSON.stringify(res.body));
  assert.equal(res.body.result.error.message, "The login for this user is disabled.");
  const unassigned = await jsonOf(
    await t.asAdmin("POST", "/token/unassign", { body: { serial: bobSerial } }),
  );
  assert.equal(unassigned.status, 200, JSON.stringify(unassigned.body));
  const b = await assertion(t, bob);
  assertRefused(await authWith(t, loginBody(b.tid, b.a)), FAILED);
  await t.close();
});

Deno.test("POST /auth with a passkey: the same assertion sent twice at once logs in once", async () => {
  const t = await setup();
  const auth = await SoftAuthenticator.create(PI_PASSKEY);
  const serial = await enrol(t, auth);
  const before = await stateOf(t, serial);
  const { tid, a } = await assertion(t, auth);
  const results = await Promise.all([
    authWith(t, loginBody(tid, a), { remoteAddr: "192.0.2.1" }),
    authWith(t, loginBody(tid, a), { remoteAddr: "192.0.2.2" }),
  ]);
  assert.deepEqual(results.map((r) => r.status).sort(), [200, 401], JSON.stringify(results));
  const after = await stateOf(t, serial);
  assert.equal(after.count, before.count + 1);
  await t.close();
});

Deno.test("POST /auth with a passkey: a user deleted from the user store gets no JWT; the same passkey got one while the user existed", async () => {
  const t = await setup();
  const auth = await SoftAuthenticator.create(PI_PASSKEY);
  const serial = await enrol(t, auth);
  const before = await assertion(t, auth);
  const ok = await authWith(t, loginBody(before.tid, before.a));
  assert.equal(ok.status, 200, JSON.stringify(ok.body));
  assert.equal(ok.body.result.value.username, "alice");

  const deleted = await jsonOf(await t.asAdmin("DELETE", "/user/sql-realm1/alice"));
  assert.equal(deleted.status, 200, JSON.stringify(deleted.body));
  const state = await stateOf(t, serial);
  const after = await assertion(t, auth);
  assertRefused(await authWith(t, loginBody(after.tid, after.a)), FAILED);
  assert.deepEqual(await stateOf(t, serial), state, "nothing moves");
  await t.close();
});
