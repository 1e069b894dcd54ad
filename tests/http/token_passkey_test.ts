/**
 * The `passkey` token over HTTP (spec 11 §5) with a software authenticator:
 * the policies, enrolment with the user handle `fido2_user_id`, the login
 * without a user name (`/validate/initialize`, then `/validate/check` found
 * by `credential_id_hash`), the PIN trigger under `passkey_trigger_by_pin`,
 * and the refusals (replay, cloned counter, wrong origin, another user
 * handle, a credential already registered, missing policies).
 */
import assert from "node:assert/strict";
import { actionTest } from "../policy_actions/_registry.ts";
import { type Json, jsonOf, type TestApp } from "../test_app.ts";
import { addPolicy, appWithAlice, auditRows, challengeOf, listed } from "./_challenge_types.ts";
import {
  type Assertion,
  b64url,
  type ChallengeForm,
  fromB64url,
  PI_PASSKEY,
  SoftAuthenticator,
} from "./_soft_authenticator.ts";
import { getTokenBySerial } from "../../src/domain/token/mod.ts";

const RP_ID = "example.com";
const ORIGIN = "https://example.com";

async function setup(action: Record<string, unknown> = {}): Promise<TestApp> {
  const t = await appWithAlice();
  await addPolicy(t, "fido", {
    scope: "enrollment",
    action: { webauthn_relying_party_id: RP_ID, webauthn_relying_party_name: "Example", ...action },
  });
  return t;
}

async function initAs(t: TestApp, body: Record<string, unknown>, origin: string | null = ORIGIN) {
  return await jsonOf(
    await t.asAdmin("POST", "/token/init", {
      body,
      json: true,
      headers: origin === null ? {} : { Origin: origin },
    }),
  );
}

async function checkAs(t: TestApp, body: Record<string, unknown>, origin: string | null = ORIGIN) {
  return await jsonOf(
    await t.post("/validate/check", body, { headers: origin === null ? {} : { Origin: origin } }),
  );
}

/** Step 1 for alice. */
async function requestRegistration(t: TestApp, extra: Record<string, unknown> = {}) {
  const res = await initAs(t, { type: "passkey", user: "alice", realm: "realm1", ...extra });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return {
    serial: res.body.detail.serial as string,
    tid: res.body.detail.transaction_id as string,
    options: res.body.detail.passkey_registration as Json,
    detail: res.body.detail as Json,
  };
}

/** Both steps; the authenticator keeps the user handle as a discoverable credential does. */
async function enrol(t: TestApp, auth: SoftAuthenticator, extra: Record<string, unknown> = {}) {
  const { serial, tid, options } = await requestRegistration(t, extra);
  const att = await auth.register({
    challenge: options.challenge,
    origin: ORIGIN,
    rpId: options.rp.id,
  });
  const res = await initAs(t, {
    type: "passkey",
    serial,
    transaction_id: tid,
    credential_id: att.credentialId,
    rawId: att.credentialId,
    authenticatorAttachment: "cross-platform",
    attestationObject: att.attestationObject,
    clientDataJSON: att.clientDataJSON,
  });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  auth.userHandle = fromB64url(options.user.id);
  return { serial, res, options };
}

/** `/validate/initialize?type=passkey` → transaction id and the passkey request. */
async function initialize(t: TestApp) {
  const res = await jsonOf(await t.get("/validate/initialize", { query: { type: "passkey" } }));
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return {
    tid: res.body.detail.transaction_id as string,
    passkey: res.body.detail.passkey as Json,
    body: res.body,
  };
}

/** The assertion as pam-passkey sends it (no user). */
function answer(tid: string, a: Assertion) {
  return {
    transaction_id: tid,
    credential_id: a.credentialId,
    clientDataJSON: a.clientDataJSON,
    authenticatorData: a.authenticatorData,
    signature: a.signature,
    ...(a.userHandle ? { userHandle: a.userHandle } : {}),
  };
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

Deno.test("passkey: enrolment needs the policies and a user; /validate/initialize needs the RP id and type passkey", async () => {
  const t = await appWithAlice();
  const noPolicy = await initAs(t, { type: "passkey", user: "alice", realm: "realm1" });
  assert.equal(noPolicy.status, 403);
  assert.equal(
    noPolicy.body.result.error.message,
    "Missing enrollment policy for PasskeyToken: webauthn_relying_party_id",
  );
  const init = await jsonOf(await t.get("/validate/initialize", { query: { type: "passkey" } }));
  assert.equal(init.status, 403);
  assert.equal(
    init.body.result.error.message,
    "Missing policy for webauthn_relying_party_id, unable to create challenge!",
  );
  const other = await jsonOf(await t.post("/validate/initialize", { type: "hotp" }));
  assert.equal(other.status, 400);
  assert.equal(
    other.body.result.error.message,
    "ERR905: Unsupported token type 'hotp' for authentication initialization!",
  );
  await addPolicy(t, "fido", {
    scope: "enrollment",
    action: { webauthn_relying_party_id: RP_ID, webauthn_relying_party_name: "Example" },
  });
  const noUser = await initAs(t, { type: "passkey" });
  assert.equal(noUser.status, 400);
  assert.equal(
    noUser.body.result.error.message,
    "ERR9051: User must be provided for passkey enrollment!",
  );
  const list = await jsonOf(await t.asAdmin("GET", "/token/", { query: { type: "passkey" } }));
  assert.equal(list.body.result.value.count, 0);
  await addPolicy(t, "off", {
    scope: "authentication",
    action: { disabled_token_types: "passkey" },
  });
  const disabled = await jsonOf(
    await t.get("/validate/initialize", { query: { type: "passkey" } }),
  );
  assert.equal(disabled.status, 403);
  assert.equal(disabled.body.result.error.message, "The authentication method is not available.");
  // no refused call left a challenge (or a token) behind
  const challenges = await t.deps.db.selectFrom("challenge").select("id").execute();
  assert.equal(challenges.length, 0);
  await t.close();
});

Deno.test("passkey: step 1 answers passkey_registration with the user's handle (made once, reused)", async () => {
  const t = await setup();
  const first = await requestRegistration(t);
  assert.match(first.serial, /^PIPK/);
  assert.equal(first.detail.rollout_state, "clientwait");
  const o = first.options;
  assert.deepEqual(o.rp, { name: "Example", id: RP_ID });
  assert.equal(o.user.name, "alice");
  assert.equal(o.user.displayName, "alice");
  assert.equal(fromB64url(o.user.id).length, 32);
  assert.equal(fromB64url(o.challenge).length, 32);
  assert.deepEqual(o.pubKeyCredParams, [
    { type: "public-key", alg: -7 },
    { type: "public-key", alg: -37 },
    { type: "public-key", alg: -257 },
  ]);
  assert.equal(o.timeout, 12000);
  assert.deepEqual(o.excludeCredentials, []);
  assert.deepEqual(o.authenticatorSelection, {
    residentKey: "required",
    requireResidentKey: true,
    userVerification: "preferred",
  });
  assert.equal(o.attestation, "none");
  const token = await listed(t, first.serial);
  assert.equal(token.active, false);
  assert.equal(token.info.fido2_user_id, o.user.id);
  const attr = await jsonOf(
    await t.asAdmin("GET", "/user/attribute", {
      query: { user: "alice", realm: "realm1", key: "fido2_user_id" },
    }),
  );
  assert.equal(attr.body.result.value, o.user.id);
  const second = await requestRegistration(t);
  assert.equal(second.options.user.id, o.user.id, "the handle is the user's, not the token's");
  await t.close();
});

Deno.test("passkey: enrol, then log in without a user name; the assertion succeeds once", async () => {
  const t = await setup();
  const auth = await SoftAuthenticator.create(PI_PASSKEY);
  const { serial, res } = await enrol(t, auth);
  assert.equal(res.body.detail.rollout_state, "enrolled");
  const token = await listed(t, serial);
  assert.equal(token.active, true);
  assert.equal(token.info.public_key, b64url(await auth.coseKey()));
  assert.equal(token.info.sign_count, "1");
  assert.equal(token.info.aaguid, "00000000-0000-0000-0000-000000000000");
  assert.equal(token.info.device_type, "single_device");
  assert.equal(token.info.backed_up, "False");
  assert.match(token.info.credential_id_hash, /^[0-9a-f]{64}$/);

  const { tid, passkey, body } = await initialize(t);
  assert.equal(body.result.value, false);
  assert.equal(body.result.authentication, "CHALLENGE");
  assert.equal(passkey.transaction_id, tid);
  assert.equal(passkey.message, "Please authenticate with your passkey!");
  assert.equal(passkey.rpId, RP_ID);
  assert.equal(passkey.user_verification, "preferred");
  assert.equal(fromB64url(passkey.challenge).length, 32);

  const a = await auth.assert({ challenge: passkey.challenge, origin: ORIGIN, rpId: RP_ID });
  const ok = await checkAs(t, answer(tid, a));
  assert.equal(ok.status, 200, JSON.stringify(ok.body));
  assert.equal(ok.body.result.value, true);
  assert.equal(ok.body.result.authentication, "ACCEPT");
  assert.equal(ok.body.detail.username, "alice");
  assert.equal(ok.body.detail.message, "Found matching challenge");
  assert.equal(ok.body.detail.serial, serial);
  const after = await stateOf(t, serial);
  assert.deepEqual({ count: after.count, signCount: after.signCount }, {
    count: 2,
    signCount: "2",
  });
  assert.ok(after.lastAuth);

  const replay = await checkAs(t, answer(tid, a));
  assert.equal(replay.status, 404, "the transaction is used up");
  assert.deepEqual(await stateOf(t, serial), after);
  // the same assertion for a new challenge: the challenge differs, and so would the count
  const next = await initialize(t);
  const stale = await checkAs(t, answer(next.tid, a));
  assert.equal(stale.body.result.value, false);
  assert.deepEqual(await stateOf(t, serial), after);

  const rows = await auditRows(t, "POST /validate/check");
  assert.equal(rows[2].user, "alice");
  assert.equal(rows[2].serial, serial);
  assert.equal(rows[2].token_type, "passkey");
  assert.equal((await auditRows(t, "GET /validate/initialize")).length, 2);
  await t.close();
});

Deno.test("passkey: replayed and cloned counters, other origins, another user handle are refused and change nothing", async () => {
  const t = await setup();
  const auth = await SoftAuthenticator.create(PI_PASSKEY);
  const { serial } = await enrol(t, auth);
  const before = await stateOf(t, serial);
  const { tid, passkey } = await initialize(t);
  const ch = passkey.challenge;
  const cases: [string, Record<string, unknown>, string][] = [
    [
      "same sign count",
      answer(tid, await auth.assert({ challenge: ch, origin: ORIGIN, rpId: RP_ID, signCount: 1 })),
      ORIGIN,
    ],
    [
      "counter going back",
      answer(tid, await auth.assert({ challenge: ch, origin: ORIGIN, rpId: RP_ID, signCount: 0 })),
      ORIGIN,
    ],
    [
      "another origin",
      answer(
        tid,
        await auth.assert({
          challenge: ch,
          origin: "https://evil.example.net",
          rpId: RP_ID,
          signCount: 5,
        }),
      ),
      "https://evil.example.net",
    ],
    [
      "another RP id",
      answer(
        tid,
        await auth.assert({
          challenge: ch,
          origin: ORIGIN,
          rpId: "evil.example.net",
          signCount: 5,
        }),
      ),
      ORIGIN,
    ],
    ["another user handle", {
      ...answer(
        tid,
        await auth.assert({ challenge: ch, origin: ORIGIN, rpId: RP_ID, signCount: 5 }),
      ),
      userHandle: b64url(new Uint8Array(32)),
    }, ORIGIN],
  ];
  for (const [name, body, origin] of cases) {
    const res = await checkAs(t, body, origin);
    assert.equal(res.status, 200, name);
    assert.equal(res.body.result.value, false, name);
    assert.deepEqual(await stateOf(t, serial), before, name);
  }
  // lower-case aliases (credentialid, clientdata, signaturedata, authenticatordata, userhandle)
  const a = await auth.assert({ challenge: ch, origin: ORIGIN, rpId: RP_ID, signCount: 7 });
  const ok = await checkAs(t, {
    transaction_id: tid,
    credentialid: a.credentialId,
    clientdata: a.clientDataJSON,
    signaturedata: a.signature,
    authenticatordata: a.authenticatorData,
    userhandle: a.userHandle,
  });
  assert.equal(ok.body.result.value, true, JSON.stringify(ok.body));
  assert.equal((await stateOf(t, serial)).signCount, "7");
  await t.close();
});

Deno.test("passkey: the challenge as privacyIDEA's clients pass it (the text's bytes) and decoded both enrol and log in; any other challenge is refused and changes nothing", async () => {
  const t = await setup();
  for (const form of ["text", "bytes"] as const) {
    const auth = await SoftAuthenticator.create({ challengeAs: form });
    const { serial, tid, options } = await requestRegistration(t);
    const base = { type: "passkey", serial, transaction_id: tid, credential_id: auth.id };
    const register = async (o: { challenge: string; challengeAs?: ChallengeForm }) => {
      const att = await auth.register({ ...o, origin: ORIGIN, rpId: RP_ID });
      return await initAs(t, {
        ...base,
        attestationObject: att.attestationObject,
        clientDataJSON: att.clientDataJSON,
      });
    };
    // another nonce in either form, and the text form taken twice, are no answer
    const other = b64url(crypto.getRandomValues(new Uint8Array(32)));
    for (
      const wrong of [
        { challenge: other, challengeAs: "text" },
        { challenge: other, challengeAs: "bytes" },
        { challenge: b64url(new TextEncoder().encode(options.challenge)), challengeAs: "text" },
      ] as const
    ) {
      const refused = await register(wrong);
      assert.equal(refused.status, 400, `${form}: ${JSON.stringify(wrong)}`);
      assert.equal(
        refused.body.result.error.message,
        "ERR404: Invalid registration response: " +
          "the client data's challenge is not the nonce of the transaction",
      );
      assert.equal((await getTokenBySerial(t.deps, serial)).rolloutState, "clientwait");
    }
    const enrolled = await register({ challenge: options.challenge });
    assert.equal(enrolled.status, 200, `${form}: ${JSON.stringify(enrolled.body)}`);
    assert.equal(enrolled.body.detail.rollout_state, "enrolled");
    auth.userHandle = fromB64url(options.user.id);

    const login = await initialize(t);
    const before = await stateOf(t, serial);
    for (
      const wrong of [
        { challenge: other, challengeAs: "text" },
        { challenge: other, challengeAs: "bytes" },
        {
          challenge: b64url(new TextEncoder().encode(login.passkey.challenge)),
          challengeAs: "text",
        },
      ] as const
    ) {
      const a = await auth.assert({ ...wrong, origin: ORIGIN, rpId: RP_ID, signCount: 5 });
      const refused = await checkAs(t, answer(login.tid, a));
      assert.equal(refused.status, 200);
      assert.equal(refused.body.result.value, false, `${form}: ${JSON.stringify(wrong)}`);
      assert.deepEqual(await stateOf(t, serial), before, "nothing moves");
    }
    const a = await auth.assert({
      challenge: login.passkey.challenge,
      origin: ORIGIN,
      rpId: RP_ID,
    });
    const ok = await checkAs(t, answer(login.tid, a));
    assert.equal(ok.body.result.value, true, `${form}: ${JSON.stringify(ok.body)}`);
    assert.equal(ok.body.detail.username, "alice");
    assert.equal(ok.body.detail.serial, serial);
  }
  await t.close();
});

Deno.test("passkey: UV required by policy; a credential registered twice is refused; wrong step-2 data", async () => {
  const t = await setup();
  const auth = await SoftAuthenticator.create(PI_PASSKEY);
  const { serial } = await enrol(t, auth);
  await addPolicy(t, "uv", {
    scope: "authentication",
    action: { webauthn_user_verification_requirement: "required" },
  });
  const { tid, passkey } = await initialize(t);
  assert.equal(passkey.user_verification, "required");
  const noUv = await checkAs(
    t,
    answer(tid, await auth.assert({ challenge: passkey.challenge, origin: ORIGIN, rpId: RP_ID })),
  );
  assert.equal(noUv.body.result.value, false);
  const uv = await checkAs(
    t,
    answer(
      tid,
      await auth.assert({ challenge: passkey.challenge, origin: ORIGIN, rpId: RP_ID, uv: true }),
    ),
  );
  assert.equal(uv.body.result.value, true);

  // the same credential for a second passkey of alice
  const second = await requestRegistration(t);
  assert.deepEqual(second.options.excludeCredentials, [{ id: auth.id, type: "public-key" }]);
  const att = await auth.register({
    challenge: second.options.challenge,
    origin: ORIGIN,
    rpId: RP_ID,
  });
  const base = {
    type: "passkey",
    serial: second.serial,
    transaction_id: second.tid,
    credential_id: att.credentialId,
    attestationObject: att.attestationObject,
    clientDataJSON: att.clientDataJSON,
  };
  const taken = await initAs(t, base);
  assert.equal(taken.status, 400);
  assert.equal(
    taken.body.result.error.message,
    "ERR404: Invalid registration response: the credential is already registered",
  );
  const missing = await initAs(t, { ...base, credential_id: undefined });
  assert.equal(missing.body.result.error.message, "ERR905: Missing parameter: credential_id");
  const fresh = await SoftAuthenticator.create(PI_PASSKEY);
  const freshAtt = await fresh.register({
    challenge: second.options.challenge,
    origin: ORIGIN,
    rpId: RP_ID,
  });
  const otherId = await initAs(t, {
    ...base,
    attestationObject: freshAtt.attestationObject,
    clientDataJSON: freshAtt.clientDataJSON,
  });
  assert.match(
    otherId.body.result.error.message,
    /^ERR404: Invalid registration response: the credential id is not/,
  );
  const wrongOrigin = await initAs(t, {
    ...base,
    credential_id: freshAtt.credentialId,
    attestationObject: freshAtt.attestationObject,
    clientDataJSON: freshAtt.clientDataJSON,
  }, "https://evil.example.net");
  assert.match(
    wrongOrigin.body.result.error.message,
    /^ERR404: Invalid registration response: origin/,
  );
  assert.equal((await getTokenBySerial(t.deps, second.serial)).rolloutState, "clientwait");
  const good = await initAs(t, {
    ...base,
    credential_id: freshAtt.credentialId,
    attestationObject: freshAtt.attestationObject,
    clientDataJSON: freshAtt.clientDataJSON,
  });
  assert.equal(good.status, 200, JSON.stringify(good.body));
  assert.equal((await getTokenBySerial(t.deps, serial)).active, true);
  await t.close();
});

actionTest(
  "authentication",
  "passkey_trigger_by_pin",
  "passkey: a PIN triggers a challenge only with the policy (flat extras); the failcounter stays",
  async () => {
    const t = await setup();
    const auth = await SoftAuthenticator.create(PI_PASSKEY);
    const { serial } = await enrol(t, auth, { pin: "pin" });
    const without = await checkAs(t, { user: "alice", pass: "pin" });
    assert.equal(without.body.result.value, false);
    assert.equal(without.body.detail.multi_challenge, undefined);
    const wrong = await checkAs(t, { user: "alice", pass: "nope" });
    assert.equal(wrong.body.result.value, false);
    assert.equal(
      (await stateOf(t, serial)).failcount,
      0,
      "a passkey's failcounter is never raised",
    );
    const trig0 = await jsonOf(
      await t.asAdmin("POST", "/validate/triggerchallenge", {
        body: { user: "alice", realm: "realm1" },
      }),
    );
    assert.equal(trig0.body.result.value, 0);

    await addPolicy(t, "bypin", {
      scope: "authentication",
      action: { passkey_trigger_by_pin: true },
    });
    const res = await checkAs(t, { user: "alice", pass: "pin" });
    const { tid, entry } = challengeOf(res.body);
    assert.equal(entry.type, "passkey");
    assert.equal(entry.client_mode, "webauthn");
    assert.equal(entry.message, "Please authenticate with your passkey!");
    assert.equal(entry.rpId, RP_ID);
    assert.equal(entry.userVerification, "preferred");
    assert.equal(entry.attributes, undefined);
    const a = await auth.assert({ challenge: entry.challenge, origin: ORIGIN, rpId: RP_ID });
    const ok = await checkAs(t, { ...answer(tid, a), user: "alice" });
    assert.equal(ok.body.result.value, true, JSON.stringify(ok.body));
    await t.close();
  },
);

/** Logs in with `auth` through `/validate/initialize` and `/validate/check` without a user. */
async function passkeyLogin(t: TestApp, auth: SoftAuthenticator) {
  const { tid, passkey } = await initialize(t);
  const a = await auth.assert({ challenge: passkey.challenge, origin: ORIGIN, rpId: RP_ID });
  return await checkAs(t, answer(tid, a));
}

/** What a client sees of a refused check: status, result and detail. */
function seen(res: { status: number; body: Json }) {
  return { status: res.status, result: res.body.result, detail: res.body.detail };
}

Deno.test("passkey: the owner is asked of the user store on every login: renamed there, the passkey logs in under the new name; deleted there, it is refused like a failed assertion and nothing moves", async () => {
  const t = await setup();
  const auth = await SoftAuthenticator.create(PI_PASSKEY);
  const { serial } = await enrol(t, auth);
  // baseline: the user exists, the passkey logs in
  const ok = await passkeyLogin(t, auth);
  assert.equal(ok.body.result.value, true, JSON.stringify(ok.body));
  assert.equal(ok.body.detail.username, "alice");

  const uid = (await getTokenBySerial(t.deps, serial)).owner!.uid;
  const renamed = await jsonOf(
    await t.asAdmin("PUT", "/user/", {
      body: { user: "alice2", resolver: "sql-realm1", userid: uid },
    }),
  );
  assert.equal(renamed.status, 200, JSON.stringify(renamed.body));
  const asNew = await passkeyLogin(t, auth);
  assert.equal(asNew.body.result.value, true, JSON.stringify(asNew.body));
  assert.equal(asNew.body.detail.username, "alice2", "the name the user store has now");

  // a failed assertion (another origin in the client data), for comparison
  const failed = await (async () => {
    const { tid, passkey } = await initialize(t);
    const a = await auth.assert({
      challenge: passkey.challenge,
      origin: "https://evil.example.net",
      rpId: RP_ID,
    });
    return await checkAs(t, answer(tid, a));
  })();
  assert.equal(failed.body.result.value, false);

  const deleted = await jsonOf(await t.asAdmin("DELETE", "/user/sql-realm1/alice2"));
  assert.equal(deleted.status, 200, JSON.stringify(deleted.body));
  const before = await stateOf(t, serial);
  t.log.lines.length = 0;
  const gone = await passkeyLogin(t, auth);
  assert.deepEqual(seen(gone), seen(failed), "the client sees a plain failed authentication");
  assert.deepEqual(await stateOf(t, serial), before, "nothing moves");
  assert.match(t.log.lines.join("\n"), /owner is no longer in the user store/);
  await t.close();
});

Deno.test("passkey: a user removed from a passwd file no longer logs in; the same passkey did while the line was there", async () => {
  const t = await appWithAlice();
  const file = `${t.deps.config.storage.dataDir}/passwd`;
  const carol = "carol:x:1000:1000:Carol,,,:/home/carol:/bin/sh\n";
  const dave = "dave:x:1001:1001:Dave,,,:/home/dave:/bin/sh\n";
  await Deno.writeTextFile(file, carol + dave);
  for (
    const [path, body] of [
      ["/resolver/pw", { type: "passwdresolver", fileName: file }],
      ["/realm/realm2", { resolvers: "pw" }],
      ["/policy/fido", {
        scope: "enrollment",
        action: { webauthn_relying_party_id: RP_ID, webauthn_relying_party_name: "Example" },
      }],
    ] as const
  ) {
    const res = await jsonOf(await t.asAdmin("POST", path, { body, json: true }));
    assert.equal(res.status, 200, JSON.stringify(res.body));
  }
  const auth = await SoftAuthenticator.create(PI_PASSKEY);
  const { serial } = await enrol(t, auth, { user: "carol", realm: "realm2" });
  const ok = await passkeyLogin(t, auth);
  assert.equal(ok.body.result.value, true, JSON.stringify(ok.body));
  assert.equal(ok.body.detail.username, "carol");

  await Deno.writeTextFile(file, dave);
  const before = await stateOf(t, serial);
  const gone = await passkeyLogin(t, auth);
  assert.equal(gone.status, 200);
  assert.equal(gone.body.result.value, false, JSON.stringify(gone.body));
  assert.equal(gone.body.result.authentication, "REJECT");
  assert.equal(gone.body.detail, undefined);
  assert.deepEqual(await stateOf(t, serial), before, "nothing moves");
  // back in the file, the same passkey logs in again
  await Deno.writeTextFile(file, carol + dave + "\n");
  assert.equal((await passkeyLogin(t, auth)).body.result.value, true);
  await t.close();
});
