/**
 * Enrolment of a passkey via multichallenge over HTTP (spec 11 §5.4, policy
 * `enroll_via_multichallenge=passkey`) with a software authenticator: the
 * challenge after a successful `/validate/check`, the completion by
 * `/validate/check` with the registration, its refusals (which leave the
 * enrolment open), `cancel_enrollment` under
 * `enroll_via_multichallenge_optional`, and that only enrolments of this flow
 * can be completed or cancelled there.
 */
import assert from "node:assert/strict";
import { type Json, jsonOf, type TestApp } from "../test_app.ts";
import { addPolicy, appWithAlice, challengeOf, enrolOk } from "./_challenge_types.ts";
import {
  type Attestation,
  fromB64url,
  PI_PASSKEY,
  SoftAuthenticator,
} from "./_soft_authenticator.ts";
import { findTokenBySerial, getTokensOfUser } from "../../src/domain/token/mod.ts";
import { resolveUser } from "../../src/domain/user/mod.ts";
import { completePasskeyEnrolment } from "../../src/domain/validate/_enrol_passkey.ts";

const RP_ID = "example.com";
const ORIGIN = "https://example.com";
const PIN = "alice-pin";

/** alice with an spass token (PIN only), the RP policy and enroll_via_multichallenge=passkey. */
async function setup(auth: Record<string, unknown> = {}): Promise<TestApp> {
  const t = await appWithAlice();
  await addPolicy(t, "fido", {
    scope: "enrollment",
    action: { webauthn_relying_party_id: RP_ID, webauthn_relying_party_name: "Example" },
  });
  await addPolicy(t, "evm", {
    scope: "authentication",
    action: { enroll_via_multichallenge: "passkey", ...auth },
  });
  await enrolOk(t, { type: "spass", user: "alice", realm: "realm1", pin: PIN });
  return t;
}

async function checkAs(t: TestApp, body: Record<string, unknown>, origin: string | null = ORIGIN) {
  return await jsonOf(
    await t.post("/validate/check", body, { headers: origin === null ? {} : { Origin: origin } }),
  );
}

/** The first factor; asserts the enrolment challenge and returns it. */
async function firstFactor(t: TestApp) {
  const res = await checkAs(t, { user: "alice", pass: PIN });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  const { tid, entry } = challengeOf(res.body);
  return { tid, entry, body: res.body as Json };
}

/** The step-2 request as privacyIDEA's clients send it. */
function completion(serial: string, tid: string, att: Attestation): Record<string, unknown> {
  return {
    user: "alice",
    serial,
    transaction_id: tid,
    type: "passkey",
    credential_id: att.credentialId,
    rawId: att.credentialId,
    authenticatorAttachment: "cross-platform",
    attestationObject: att.attestationObject,
    clientDataJSON: att.clientDataJSON,
  };
}

async function passkeysOfAlice(t: TestApp) {
  const alice = await resolveUser(t.deps, "alice", "realm1");
  return (await getTokensOfUser(t.deps, alice!)).filter((x) => x.type === "passkey");
}

Deno.test("enroll_via_multichallenge=passkey: a successful check answers with step 1; the registration completes login and enrolment; the passkey then logs in", async () => {
  const t = await setup();
  const { tid, entry, body } = await firstFactor(t);
  const detail = body.detail;
  assert.equal(detail.enroll_via_multichallenge, true);
  assert.equal(detail.enroll_via_multichallenge_optional, false);
  assert.equal(detail.type, "passkey");
  assert.equal(detail.client_mode, "webauthn");
  assert.equal(detail.message, "Please confirm the registration with your passkey!");
  assert.deepEqual(detail.transaction_ids, [tid]);
  assert.equal(detail.multi_challenge.length, 1);
  assert.equal(entry.rollout_state, "clientwait");
  assert.equal(entry.type, "passkey");
  assert.equal(entry.client_mode, "webauthn");
  assert.equal(detail.serial, entry.serial);
  const options = entry.passkey_registration;
  assert.equal(options.rp.id, RP_ID);
  assert.equal(options.user.name, "alice");
  assert.equal(options.authenticatorSelection.residentKey, "required");
  const serial = entry.serial as string;
  assert.match(serial, /^PIPK/);
  const waiting = await findTokenBySerial(t.deps, serial);
  assert.equal(waiting?.active, false);
  assert.equal(waiting?.info.enroll_via_multichallenge?.value, "True");

  const auth = await SoftAuthenticator.create(PI_PASSKEY);
  const att = await auth.register({ challenge: options.challenge, origin: ORIGIN, rpId: RP_ID });
  const done = await checkAs(t, completion(serial, tid, att));
  assert.equal(done.status, 200, JSON.stringify(done.body));
  assert.equal(done.body.result.value, true, JSON.stringify(done.body));
  assert.equal(done.body.result.authentication, "ACCEPT");
  const { threadid: _thread, ...doneDetail } = done.body.detail;
  assert.deepEqual(doneDetail, { username: "alice", message: "Found matching challenge", serial });
  const enrolled = await findTokenBySerial(t.deps, serial);
  assert.equal(enrolled?.active, true);
  assert.equal(enrolled?.rolloutState, "enrolled");
  assert.equal(enrolled?.info.enroll_via_multichallenge, undefined);
  assert.ok(enrolled?.info.credential_id_hash);

  // the completion is used up
  const again = await checkAs(t, completion(serial, tid, att));
  assert.equal(again.body.result.value, false, JSON.stringify(again.body));
  // with a passkey, the PIN logs in again without a new enrolment
  const next = await checkAs(t, { user: "alice", pass: PIN });
  assert.equal(next.body.result.value, true, JSON.stringify(next.body));
  assert.equal((await passkeysOfAlice(t)).length, 1);
  // and the passkey logs in without a user name
  auth.userHandle = fromB64url(options.user.id);
  const init = await jsonOf(await t.get("/validate/initialize", { query: { type: "passkey" } }));
  const a = await auth.assert({
    challenge: init.body.detail.passkey.challenge,
    origin: ORIGIN,
    rpId: RP_ID,
  });
  const login = await checkAs(t, {
    transaction_id: init.body.detail.transaction_id,
    credential_id: a.credentialId,
    clientDataJSON: a.clientDataJSON,
    authenticatorData: a.authenticatorData,
    signature: a.signature,
    userHandle: a.userHandle,
  });
  assert.equal(login.body.result.value, true, JSON.stringify(login.body));
  assert.equal(login.body.detail.serial, serial);
  await t.close();
});

Deno.test("enroll_via_multichallenge=passkey: a wrong PIN gets no enrolment; an unfinished one is offered again with the same token; the text policy", async () => {
  const t = await setup({ enroll_via_multichallenge_text: "Register a passkey\\, please" });
  const wrong = await checkAs(t, { user: "alice", pass: "wrong" });
  assert.equal(wrong.body.result.value, false);
  assert.equal(wrong.body.detail.multi_challenge, undefined);
  assert.equal((await passkeysOfAlice(t)).length, 0);
  const first = await firstFactor(t);
  assert.equal(first.body.detail.message, "Register a passkey, please");
  const second = await firstFactor(t);
  assert.equal(second.entry.serial, first.entry.serial);
  assert.notEqual(second.tid, first.tid);
  assert.equal((await passkeysOfAlice(t)).length, 1);
  await t.close();
});

Deno.test("enroll_via_multichallenge=passkey: refused registrations change nothing and leave the enrolment open", async () => {
  const t = await setup();
  const { tid, entry } = await firstFactor(t);
  const serial = entry.serial as string;
  const challenge = entry.passkey_registration.challenge as string;
  const auth = await SoftAuthenticator.create(PI_PASSKEY);
  const evil = await auth.register({ challenge, origin: "https://evil.example.net", rpId: RP_ID });
  const refused = await checkAs(t, completion(serial, tid, evil), "https://evil.example.net");
  assert.equal(refused.status, 200);
  assert.equal(refused.body.result.value, false, JSON.stringify(refused.body));
  const otherRp = await auth.register({ challenge, origin: ORIGIN, rpId: "example.org" });
  assert.equal((await checkAs(t, completion(serial, tid, otherRp))).body.result.value, false);
  const otherChallenge = await auth.register({ challenge: "AAAA", origin: ORIGIN, rpId: RP_ID });
  assert.equal(
    (await checkAs(t, completion(serial, tid, otherChallenge))).body.result.value,
    false,
  );
  const good = await auth.register({ challenge, origin: ORIGIN, rpId: RP_ID });
  const noOrigin = await checkAs(t, completion(serial, tid, good), null);
  assert.equal(noOrigin.status, 400);
  assert.equal(noOrigin.body.result.error.message, "ERR905: Missing parameter: HTTP_ORIGIN");
  const noSerial = await checkAs(t, { ...completion(serial, tid, good), serial: "" });
  assert.equal(noSerial.status, 400);
  const { clientDataJSON: _c, ...noClientData } = completion(serial, tid, good);
  const missing = await checkAs(t, noClientData);
  assert.equal(missing.status, 400);
  assert.equal(missing.body.result.error.message, "ERR905: Missing parameter: clientDataJSON");
  // each refusal for its own reason (the log has it; the client does not)
  const reasons = t.log.lines.filter((l) => l.includes("via multichallenge was refused"));
  assert.equal(reasons.length, 3, reasons.join("\n"));
  assert.match(reasons[0], /origin/);
  assert.match(reasons[1], /RP ID/i);
  assert.match(reasons[2], /challenge/i);
  const otherTid = await checkAs(t, completion(serial, "12345678901234567890", good));
  assert.equal(otherTid.body.result.value, false);
  const waiting = await findTokenBySerial(t.deps, serial);
  assert.equal(waiting?.rolloutState, "clientwait");
  assert.equal(waiting?.active, false);
  // the right registration still completes it
  const done = await checkAs(t, completion(serial, tid, good));
  assert.equal(done.body.result.value, true, JSON.stringify(done.body));
  await t.close();
});

Deno.test("enroll_via_multichallenge=passkey: another user's name, and an enrolment an admin started at /token/init, cannot be completed or cancelled here", async () => {
  const t = await setup({ enroll_via_multichallenge_optional: true });
  const { createUsers } = await import("../fixtures/users.ts");
  await createUsers(t.deps, { realm: "realm2", users: [{ login: "bob", password: "bobpw" }] });
  const { tid, entry } = await firstFactor(t);
  const auth = await SoftAuthenticator.create(PI_PASSKEY);
  const att = await auth.register({
    challenge: entry.passkey_registration.challenge,
    origin: ORIGIN,
    rpId: RP_ID,
  });
  const asBob = await checkAs(t, { ...completion(entry.serial, tid, att), user: "bob@realm2" });
  assert.equal(asBob.status, 400);
  assert.equal(
    asBob.body.result.error.message,
    "ERR905: Given serial does not belong to given user!",
  );
  // an admin's own step 1 for alice: its transaction is not the multichallenge's
  const admin = await jsonOf(
    await t.asAdmin("POST", "/token/init", {
      body: { type: "passkey", user: "alice", realm: "realm1" },
      json: true,
      headers: { Origin: ORIGIN },
    }),
  );
  assert.equal(admin.status, 200, JSON.stringify(admin.body));
  const adminSerial = admin.body.detail.serial as string;
  const adminTid = admin.body.detail.transaction_id as string;
  const adminAtt = await (await SoftAuthenticator.create(PI_PASSKEY)).register({
    challenge: admin.body.detail.passkey_registration.challenge,
    origin: ORIGIN,
    rpId: RP_ID,
  });
  const completed = await checkAs(t, completion(adminSerial, adminTid, adminAtt));
  assert.equal(completed.body.result.value, false, JSON.stringify(completed.body));
  const cancelled = await checkAs(t, { cancel_enrollment: "true", transaction_id: adminTid });
  assert.equal(cancelled.body.result.value, false);
  assert.equal(cancelled.body.detail.message, "Failed to cancel enrollment via multichallenge");
  const adminToken = await findTokenBySerial(t.deps, adminSerial);
  assert.equal(adminToken?.rolloutState, "clientwait");
  // the admin still completes it at /token/init
  const step2 = await jsonOf(
    await t.asAdmin("POST", "/token/init", {
      body: {
        type: "passkey",
        serial: adminSerial,
        transaction_id: adminTid,
        credential_id: adminAtt.credentialId,
        attestationObject: adminAtt.attestationObject,
        clientDataJSON: adminAtt.clientDataJSON,
      },
      json: true,
      headers: { Origin: ORIGIN },
    }),
  );
  assert.equal(step2.status, 200, JSON.stringify(step2.body));
  await t.close();
});

Deno.test("cancel_enrollment: only under enroll_via_multichallenge_optional; deletes the waiting passkey once and accepts the login", async () => {
  const t = await setup();
  const first = await firstFactor(t);
  const refused = await checkAs(t, { cancel_enrollment: "true", transaction_id: first.tid });
  assert.equal(refused.status, 200);
  assert.equal(refused.body.result.value, false);
  assert.equal(refused.body.detail.message, "Failed to cancel enrollment via multichallenge");
  assert.ok(await findTokenBySerial(t.deps, first.entry.serial));

  await addPolicy(t, "evm", {
    scope: "authentication",
    action: { enroll_via_multichallenge: "passkey", enroll_via_multichallenge_optional: true },
  });
  const { tid, entry, body } = await firstFactor(t);
  assert.equal(body.detail.enroll_via_multichallenge_optional, true);
  const missing = await checkAs(t, { cancel_enrollment: "true" });
  assert.equal(missing.status, 400);
  const unknown = await checkAs(t, {
    cancel_enrollment: "true",
    transaction_id: "12345678901234567890",
  });
  assert.equal(unknown.body.result.value, false);
  const ok = await checkAs(t, { cancel_enrollment: "true", transaction_id: tid });
  assert.equal(ok.body.result.value, true, JSON.stringify(ok.body));
  assert.equal(ok.body.result.authentication, "ACCEPT");
  assert.equal(ok.body.detail.message, "Cancelled enrollment via multichallenge");
  assert.equal(await findTokenBySerial(t.deps, entry.serial), undefined);
  const twice = await checkAs(t, { cancel_enrollment: "true", transaction_id: tid });
  assert.equal(twice.body.result.value, false);
  // a cancelled transaction cannot be completed either
  const att = await (await SoftAuthenticator.create(PI_PASSKEY)).register({
    challenge: entry.passkey_registration.challenge,
    origin: ORIGIN,
    rpId: RP_ID,
  });
  assert.equal((await checkAs(t, completion(entry.serial, tid, att))).body.result.value, false);
  await t.close();
});

Deno.test("enroll_via_multichallenge=passkey does not turn a WebUI login (login_mode=privacyIDEA) into a challenge", async () => {
  const t = await setup();
  await addPolicy(t, "web", { scope: "webui", action: "login_mode=privacyIDEA" });
  const res = await jsonOf(await t.post("/auth", { username: "alice", password: PIN }));
  assert.equal(res.status, 200, JSON.stringify(res.body));
  assert.equal(res.body.result.value.username, "alice");
  assert.equal((await passkeysOfAlice(t)).length, 0);
  await t.close();
});

Deno.test("enroll_via_multichallenge=passkey: two registrations sent at once for one transaction: one completes", async () => {
  const t = await setup();
  const { tid, entry } = await firstFactor(t);
  const register = async () =>
    await (await SoftAuthenticator.create(PI_PASSKEY)).register({
      challenge: entry.passkey_registration.challenge,
      origin: ORIGIN,
      rpId: RP_ID,
    });
  const [one, two] = [await register(), await register()];
  const results = await Promise.all([
    checkAs(t, completion(entry.serial, tid, one)),
    checkAs(t, completion(entry.serial, tid, two)),
  ]);
  const values = results.map((r) => r.body.result.value);
  assert.deepEqual(values.sort(), [false, true], JSON.stringify(results.map((r) => r.body)));
  const token = await findTokenBySerial(t.deps, entry.serial);
  assert.equal(token?.rolloutState, "enrolled");
  // the token holds the winner's credential
  const winner = results[0].body.result.value ? one : two;
  const hash = new Uint8Array(
    await crypto.subtle.digest(
      "SHA-256",
      fromB64url(winner.credentialId) as Uint8Array<ArrayBuffer>,
    ),
  );
  const hex = Array.from(hash, (b) => b.toString(16).padStart(2, "0")).join("");
  assert.equal(token?.info.credential_id_hash?.value, hex);
  await t.close();
});

Deno.test("enroll_via_multichallenge=passkey: a registration that lost the race (its view of the token still waiting, the token already enrolled) is a failed login, not an error", async () => {
  const t = await setup();
  const { tid, entry } = await firstFactor(t);
  const stale = await findTokenBySerial(t.deps, entry.serial);
  assert.equal(stale?.rolloutState, "clientwait");
  const register = async () =>
    await (await SoftAuthenticator.create(PI_PASSKEY)).register({
      challenge: entry.passkey_registration.challenge,
      origin: ORIGIN,
      rpId: RP_ID,
    });
  const winner = await checkAs(t, completion(entry.serial, tid, await register()));
  assert.equal(winner.body.result.value, true, JSON.stringify(winner.body));
  const loser = await register();
  const value = await completePasskeyEnrolment(t.deps, stale!, {
    transactionId: tid,
    registration: {
      credentialId: loser.credentialId,
      clientDataJSON: loser.clientDataJSON,
      attestationObject: loser.attestationObject,
      origin: ORIGIN,
    },
  });
  assert.equal(value, false);
  assert.equal((await findTokenBySerial(t.deps, entry.serial))?.rolloutState, "enrolled");
  await t.close();
});

Deno.test("enroll_via_multichallenge=passkey: after the user is deleted from the user store the enrolment can be neither completed nor cancelled without a user name; before, both work", async () => {
  for (const isDeleted of [false, true]) {
    const t = await setup({ enroll_via_multichallenge_optional: true });
    const first = await firstFactor(t);
    const second = await firstFactor(t);
    assert.equal(second.entry.serial, first.entry.serial, "the same waiting token");
    if (isDeleted) {
      const res = await jsonOf(await t.asAdmin("DELETE", "/user/sql-realm1/alice"));
      assert.equal(res.status, 200, JSON.stringify(res.body));
    }
    const att = await (await SoftAuthenticator.create(PI_PASSKEY)).register({
      challenge: first.entry.passkey_registration.challenge,
      origin: ORIGIN,
      rpId: RP_ID,
    });
    // the request names no user: the token's stored owner is the only one there is
    const { user: _user, ...userless } = completion(first.entry.serial, first.tid, att);
    const done = await checkAs(t, userless);
    assert.equal(done.status, 200, JSON.stringify(done.body));
    assert.equal(done.body.result.value, !isDeleted, `deleted: ${isDeleted}`);
    const token = await findTokenBySerial(t.deps, first.entry.serial);
    assert.equal(token?.rolloutState, isDeleted ? "clientwait" : "enrolled");
    if (isDeleted) {
      const cancel = await checkAs(t, { cancel_enrollment: "true", transaction_id: second.tid });
      assert.equal(cancel.body.result.value, false);
      assert.equal(cancel.body.detail.message, "Failed to cancel enrollment via multichallenge");
      assert.ok(await findTokenBySerial(t.deps, first.entry.serial), "the token stays");
    }
    await t.close();
  }
});

Deno.test("enroll_via_multichallenge=passkey over a token limit: the login succeeds as it is, no passkey is made, the audit says why", async () => {
  const t = await setup();
  await addPolicy(t, "limit", { scope: "enrollment", action: { max_token_per_user: 1 } });
  const res = await checkAs(t, { user: "alice", pass: PIN });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  assert.equal(res.body.result.value, true);
  assert.equal(res.body.result.authentication, "ACCEPT");
  assert.equal(res.body.detail.multi_challenge, undefined);
  assert.equal((await passkeysOfAlice(t)).length, 0);
  const audit = await jsonOf(
    await t.asAdmin("GET", "/audit/", { query: { action: "*validate/check*", user: "alice" } }),
  );
  const row = audit.body.result.value.auditdata[0];
  assert.equal(row.success, 1, JSON.stringify(row));
  assert.match(row.info, /\(.*(limit|maximum|number of tokens).*\)/i, JSON.stringify(row));
  await t.close();
});
