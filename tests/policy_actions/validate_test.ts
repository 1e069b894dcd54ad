/**
 * Effect tests of the authentication and authorization actions on the validate API
 * (`/validate/check`, `/validate/triggerchallenge`, `/validate/polltransaction`) and
 * `/auth`: each shows the behaviour without the policy, then with it (spec 15 §3, §4).
 *
 * @module
 */
import assert from "node:assert/strict";
import { sign } from "hono/jwt";
import { actionTest } from "./_registry.ts";
import { createTestApp, type Json, jsonOf, type TestApp } from "../test_app.ts";
import { createUsers } from "../fixtures/users.ts";
import { enroll, enrollHotp, hotp, SEED_HEX } from "../fixtures/tokens.ts";
import { issueApiKey, issueJwt } from "../../src/http/jwt.ts";
import { getTokenBySerial } from "../../src/domain/token/mod.ts";
import { PI_PASSKEY, SoftAuthenticator } from "../http/_soft_authenticator.ts";
import { startResponder } from "../domain/radius_server/responder.ts";
import { setRadiusServer } from "../../src/domain/radius_server/mod.ts";
import type { Deps } from "../../src/deps.ts";

/** realm1 with alice (HOTP, PIN 1234) and bob (no token). */
async function setup(): Promise<{ t: TestApp; serial: string }> {
  const t = await createTestApp();
  await createUsers(t.deps, {
    realm: "realm1",
    users: [{ login: "alice", password: "alicepw" }, { login: "bob", password: "bobpw" }],
  });
  const serial = await enrollHotp(t, { user: "alice", realm: "realm1", pin: "1234" });
  return { t, serial };
}

async function policy(t: TestApp, name: string, body: Record<string, unknown>): Promise<void> {
  const res = await jsonOf(await t.asAdmin("POST", `/policy/${name}`, { body, json: true }));
  assert.equal(res.status, 200, JSON.stringify(res.body));
}

async function check(
  t: TestApp,
  body: Record<string, unknown>,
  headers: Record<string, string> = {},
) {
  return await jsonOf(await t.post("/validate/check", body, { headers }));
}

function assertPolicyError(res: { status: number; body: Json }, message: string) {
  assert.equal(res.status, 403, JSON.stringify(res.body));
  assert.equal(res.body.result.status, false);
  assert.equal(res.body.result.error.code, 303);
  assert.equal(res.body.result.error.message, message);
}

// --- authorization: api_key_required --------------------------------------------------------

actionTest(
  "authorization",
  "api_key_required",
  "the validate API needs a validate JWT; no key, a foreign, broken or expired JWT, and admin or user JWTs are refused",
  async () => {
    const { t, serial } = await setup();
    try {
      // baseline: no key needed
      let res = await check(t, { user: "alice", realm: "realm1", pass: "1234" + hotp(0) });
      assert.equal(res.body.result.value, true);

      await policy(t, "apikey", { scope: "authorization", action: "api_key_required" });
      const counter = (await getTokenBySerial(t.deps, serial)).count;
      const { token: key } = await issueApiKey(t.deps, {
        username: "radius1",
        realm: "API",
        days: 1,
      });
      const { token: expired } = await issueApiKey(t.deps, {
        username: "old",
        realm: "API",
        days: 1,
      });
      const foreign = await sign(
        {
          username: "radius1",
          realm: "API",
          role: "validate",
          exp: Math.floor(t.clock.now() / 1000) + 3600,
        },
        "another server's secret",
        "HS256",
      );
      const unsigned = `${btoa(JSON.stringify({ alg: "none", typ: "JWT" }))}.${
        btoa(JSON.stringify({ username: "x", role: "validate", exp: 9999999999 }))
      }.`;
      const admin = await t.adminToken();
      const user = (await issueJwt(t.deps, {
        username: "alice",
        realm: "realm1",
        resolver: "sql-realm1",
        role: "user",
        authtype: "password",
        rights: [],
      })).token;
      const pass = "1234" + hotp(1);
      const refusals: [string, Record<string, string>, string][] = [
        ["no key", {}, "No valid API key was passed."],
        ["a JWT of another server", { Authorization: foreign }, "No valid API key was passed."],
        ["an unsigned JWT", { Authorization: unsigned }, "No valid API key was passed."],
        ["not a JWT", { Authorization: "hello" }, "No valid API key was passed."],
        [
          "an admin JWT",
          { Authorization: admin },
          "A correct JWT was passed, but it was no API key.",
        ],
        [
          "a user JWT in PI-Authorization",
          { "PI-Authorization": user },
          "A correct JWT was passed, but it was no API key.",
        ],
      ];
      for (const [what, headers, message] of refusals) {
        res = await check(t, { user: "alice", realm: "realm1", pass }, headers);
        assertPolicyError(res, message);
        assert.ok(!("detail" in res.body) || !res.body.detail?.serial, what);
      }
      // radiuscheck, samlcheck and polltransaction ask for it too; triggerchallenge does not
      assertPolicyError(
        await jsonOf(await t.post("/validate/radiuscheck", { user: "alice", pass })),
        "No valid API key was passed.",
      );
      assertPolicyError(
        await jsonOf(await t.post("/validate/samlcheck", { user: "alice", pass })),
        "No valid API key was passed.",
      );
      assertPolicyError(
        await jsonOf(await t.get("/validate/polltransaction?transaction_id=123")),
        "No valid API key was passed.",
      );
      // nothing was checked: the counter stands, the fail counter too
      const after = await getTokenBySerial(t.deps, serial);
      assert.equal(after.count, counter);
      assert.equal(after.failcount, 0);

      // an expired key is no valid key
      t.clock.advance(2 * 86_400_000);
      res = await check(t, { user: "alice", realm: "realm1", pass }, { Authorization: expired });
      assertPolicyError(res, "No valid API key was passed.");
      t.clock.advance(-2 * 86_400_000);

      // a valid key: the check runs (bare, or with "Bearer ")
      res = await check(t, { user: "alice", realm: "realm1", pass }, { Authorization: key });
      assert.equal(res.status, 200);
      assert.equal(res.body.result.value, true);
      res = await check(t, { user: "alice", realm: "realm1", pass: "1234" + hotp(2) }, {
        "PI-Authorization": `Bearer ${key}`,
      });
      assert.equal(res.body.result.value, true);
      res = await jsonOf(
        await t.get("/validate/polltransaction?transaction_id=123", {
          headers: { Authorization: key },
        }),
      );
      assert.equal(res.status, 200);
      assert.equal(res.body.result.value, false);

      // the key opens nothing else
      res = await jsonOf(await t.get("/token/", { headers: { Authorization: key } }));
      assert.equal(res.status, 401);
    } finally {
      await t.close();
    }
  },
);

Deno.test("api_key_required matches on the request's user: a policy for bob leaves alice alone", async () => {
  const { t } = await setup();
  try {
    await policy(t, "apikey", {
      scope: "authorization",
      action: "api_key_required",
      user: "bob",
    });
    const res = await check(t, { user: "alice", realm: "realm1", pass: "1234" + hotp(0) });
    assert.equal(res.body.result.value, true);
    await policy(t, "apikey", {
      scope: "authorization",
      action: "api_key_required",
      user: "alice",
    });
    assertPolicyError(
      await check(t, { user: "alice", realm: "realm1", pass: "1234" + hotp(1) }),
      "No valid API key was passed.",
    );
  } finally {
    await t.close();
  }
});

// --- authentication: auth_cache -------------------------------------------------------------

/** The `policies` column of the audit rows of `/validate/check`, oldest first. */
async function checkAuditPolicies(t: TestApp): Promise<string[]> {
  await t.deps.audit.flush();
  const rows = await t.deps.db.selectFrom("audit").select(["policies", "id"])
    .where("action", "like", "%/validate/check").orderBy("id").execute();
  return rows.map((r) => r.policies);
}

actionTest(
  "authentication",
  "auth_cache",
  "the same PIN+OTP within the time is accepted from the cache; after the idle time it is a replay",
  async () => {
    const { t, serial } = await setup();
    try {
      const alice = { user: "alice", realm: "realm1" };
      // baseline: a replayed OTP fails
      let res = await check(t, { ...alice, pass: "1234" + hotp(0) });
      assert.equal(res.body.result.value, true);
      res = await check(t, { ...alice, pass: "1234" + hotp(0) });
      assert.equal(res.body.result.value, false);
      assert.equal(res.body.detail.message, "wrong otp value. previous otp used again");

      await policy(t, "cache", { scope: "authentication", action: "auth_cache=4h/5m" });
      res = await check(t, { ...alice, pass: "1234" + hotp(1) });
      assert.equal(res.body.result.value, true);
      assert.equal(res.body.detail.message, "matching 1 tokens");
      const before = await getTokenBySerial(t.deps, serial);
      t.clock.advance(4 * 60_000);
      res = await check(t, { ...alice, pass: "1234" + hotp(1) });
      assert.equal(res.status, 200);
      assert.equal(res.body.result.value, true);
      assert.equal(res.body.result.authentication, "ACCEPT");
      const { threadid: _, ...detail } = res.body.detail;
      assert.deepEqual(detail, { message: "Authenticated by AuthCache." });
      // the token was not checked: counter, fail counter and auth count stand
      const after = await getTokenBySerial(t.deps, serial);
      assert.equal(after.count, before.count);
      assert.equal(after.failcount, before.failcount);
      assert.equal(after.info.count_auth?.value, before.info.count_auth?.value);
      // another pass, another user: no hit
      res = await check(t, { ...alice, pass: "1234" + hotp(0) });
      assert.equal(res.body.result.value, false);
      res = await check(t, { user: "bob", realm: "realm1", pass: "1234" + hotp(1) });
      assert.equal(res.body.result.value, false);
      // 4 minutes after the last use: still counts (d2 is measured from the last use)
      t.clock.advance(4 * 60_000);
      res = await check(t, { ...alice, pass: "1234" + hotp(1) });
      assert.equal(res.body.detail.message, "Authenticated by AuthCache.");
      // 6 idle minutes: a miss, the entry goes, the OTP is a replay
      t.clock.advance(6 * 60_000);
      res = await check(t, { ...alice, pass: "1234" + hotp(1) });
      assert.equal(res.body.result.value, false);
      assert.equal(res.body.detail.message, "wrong otp value. previous otp used again");
      assert.equal(
        (await t.deps.db.selectFrom("auth_cache").select("id").execute()).length,
        0,
      );
      // the policy name is audited on the hits only (it is no unique action read otherwise)
      assert.deepEqual(await checkAuditPolicies(t), ["", "", "", "cache", "", "", "cache", ""]);
    } finally {
      await t.close();
    }
  },
);

Deno.test("auth_cache=2d/3: the authentication and three uses of the cache, no more; not for serials", async () => {
  const { t, serial } = await setup();
  try {
    await policy(t, "cache", { scope: "authentication", action: "auth_cache=2d/3" });
    const pass = "1234" + hotp(0);
    let res = await check(t, { user: "alice", realm: "realm1", pass });
    assert.equal(res.body.detail.message, "matching 1 tokens");
    for (let i = 0; i < 3; i++) {
      t.clock.advance(3_600_000);
      res = await check(t, { user: "alice", realm: "realm1", pass });
      assert.equal(res.body.detail.message, "Authenticated by AuthCache.", `use ${i + 1}`);
    }
    res = await check(t, { user: "alice", realm: "realm1", pass });
    assert.equal(res.body.result.value, false);
    // a serial-only request never reads the cache
    const pass1 = "1234" + hotp(1);
    assert.equal(
      (await check(t, { user: "alice", realm: "realm1", pass: pass1 })).body.result.value,
      true,
    );
    res = await check(t, { serial, pass: pass1 });
    assert.equal(res.body.result.value, false);
    // after two days the entry is too old however often it was used
    t.clock.advance(2 * 86_400_000);
    res = await check(t, { user: "alice", realm: "realm1", pass: pass1 });
    assert.equal(res.body.result.value, false);
  } finally {
    await t.close();
  }
});

Deno.test("auth_cache: a value that is no duration is refused with 403, nothing is checked", async () => {
  const { t, serial } = await setup();
  try {
    await policy(t, "cache", { scope: "authentication", action: "auth_cache=4x" });
    const res = await check(t, { user: "alice", realm: "realm1", pass: "1234" + hotp(0) });
    assertPolicyError(
      res,
      'Cannot parse the auth_cache value "4x": expected a duration like 4h, 4h/5m or 2d/3',
    );
    assert.equal((await getTokenBySerial(t.deps, serial)).count, 0);
  } finally {
    await t.close();
  }
});

Deno.test("auth_cache: /auth with login_mode=privacyIDEA uses it too", async () => {
  const { t } = await setup();
  try {
    await policy(t, "login", { scope: "webui", action: "login_mode=privacyIDEA" });
    const auth = async (password: string) =>
      (await t.post("/auth", { username: "alice", realm: "realm1", password })).status;
    assert.equal(await auth("1234" + hotp(0)), 200);
    assert.equal(await auth("1234" + hotp(0)), 401);
    await policy(t, "cache", { scope: "authentication", action: "auth_cache=1h" });
    assert.equal(await auth("1234" + hotp(1)), 200);
    assert.equal(await auth("1234" + hotp(1)), 200);
  } finally {
    await t.close();
  }
});

// --- authentication: challenge_text_header, challenge_text_footer -------------------------

/** alice with an HOTP and a TOTP token, both PIN 1234, both triggered by the PIN. */
async function twoChallengeTokens(t: TestApp): Promise<void> {
  await enroll(t, { type: "totp", otpkey: SEED_HEX, user: "alice", realm: "realm1", pin: "1234" });
  await policy(t, "cr", {
    scope: "authentication",
    action: "challenge_response=hotp totp, challenge_text=enter {tokentype} code",
  });
}

async function trigger(t: TestApp) {
  return await jsonOf(
    await t.asAdmin("POST", "/validate/triggerchallenge", {
      body: { user: "alice", realm: "realm1" },
    }),
  );
}

for (
  const [action, header, footer, expected] of [
    [
      "challenge_text_header",
      "Choose one: <ul>",
      undefined,
      "Choose one: <ul><li>enter hotp code</li>\n<li>enter totp code</li>\n",
    ],
    [
      "challenge_text_footer",
      "Please answer:",
      " Thank you.",
      "Please answer:\nenter hotp code, enter totp code\n Thank you.",
    ],
  ] as const
) {
  actionTest(
    "authentication",
    action,
    `detail.message of a challenge becomes ${JSON.stringify(expected)}`,
    async () => {
      const { t } = await setup();
      try {
        await twoChallengeTokens(t);
        const pin = { user: "alice", realm: "realm1", pass: "1234" };
        // baseline: privacyIDEA's joined messages
        let res = await check(t, pin);
        assert.equal(res.body.result.authentication, "CHALLENGE");
        assert.equal(res.body.detail.message, "enter hotp code, enter totp code");
        const baseline = (await trigger(t)).body.detail.message;
        assert.equal(baseline, "enter hotp code, enter totp code");
        if (action === "challenge_text_footer") {
          // a footer alone does nothing
          await policy(t, "foot", { scope: "authentication", action: `${action}=${footer}` });
          res = await check(t, pin);
          assert.equal(res.body.detail.message, "enter hotp code, enter totp code");
        }
        await policy(t, "head", {
          scope: "authentication",
          action: `challenge_text_header=${header}`,
        });
        res = await check(t, pin);
        assert.equal(res.body.detail.message, expected);
        assert.equal(res.body.detail.multi_challenge.length, 2);
        assert.deepEqual(res.body.detail.messages, ["enter hotp code", "enter totp code"]);
        // /validate/triggerchallenge too
        res = await trigger(t);
        assert.equal(res.body.result.value, 2);
        assert.equal(res.body.detail.message, expected);
        // a success has no challenges: its message stays
        res = await check(t, { user: "alice", realm: "realm1", pass: "1234" + hotp(0) });
        assert.equal(res.body.detail.message, "matching 1 tokens");
      } finally {
        await t.close();
      }
    },
  );
}

Deno.test("increase_failcounter_on_challenge: /validate/triggerchallenge counts a failure per challenged token", async () => {
  const { t, serial } = await setup();
  try {
    await policy(t, "cr", { scope: "authentication", action: "challenge_response=hotp" });
    let res = await trigger(t);
    assert.equal(res.body.result.value, 1);
    assert.equal((await getTokenBySerial(t.deps, serial)).failcount, 0);
    await policy(t, "cr", {
      scope: "authentication",
      action: "challenge_response=hotp, increase_failcounter_on_challenge",
    });
    res = await trigger(t);
    assert.equal(res.body.result.value, 1);
    assert.equal((await getTokenBySerial(t.deps, serial)).failcount, 1);
    // the right answer resets it
    res = await check(t, {
      user: "alice",
      realm: "realm1",
      pass: hotp(0),
      transaction_id: res.body.detail.transaction_id,
    });
    assert.equal(res.body.result.value, true);
    assert.equal((await getTokenBySerial(t.deps, serial)).failcount, 0);
  } finally {
    await t.close();
  }
});

// --- authentication: reset_all_user_tokens --------------------------------------------------

actionTest(
  "authentication",
  "reset_all_user_tokens",
  "a success resets the fail counters of all the user's tokens, not only the one that matched",
  async () => {
    const { t, serial } = await setup();
    try {
      const totpSerial = (await enroll(t, {
        type: "totp",
        otpkey: SEED_HEX,
        user: "alice",
        realm: "realm1",
        pin: "1234",
      })).serial;
      const alice = { user: "alice", realm: "realm1" };
      const fail = async () => {
        const res = await check(t, { ...alice, pass: "1234000000" });
        assert.equal(res.body.result.value, false);
      };
      const failcounts = async () => [
        (await getTokenBySerial(t.deps, serial)).failcount,
        (await getTokenBySerial(t.deps, totpSerial)).failcount,
      ];
      // baseline: only the token that matched is reset
      await fail();
      await fail();
      assert.deepEqual(await failcounts(), [2, 2]);
      assert.equal((await check(t, { ...alice, pass: "1234" + hotp(0) })).body.result.value, true);
      assert.deepEqual(await failcounts(), [0, 2]);

      await policy(t, "reset", { scope: "authentication", action: "reset_all_user_tokens" });
      await fail();
      assert.deepEqual(await failcounts(), [1, 3]);
      // a failure resets nothing
      await fail();
      assert.deepEqual(await failcounts(), [2, 4]);
      assert.equal((await check(t, { ...alice, pass: "1234" + hotp(1) })).body.result.value, true);
      assert.deepEqual(await failcounts(), [0, 0]);
      // a serial-only request resets the token it checked
      await fail();
      assert.equal((await check(t, { serial, pass: "1234" + hotp(2) })).body.result.value, true);
      assert.deepEqual(await failcounts(), [0, 1]);
    } finally {
      await t.close();
    }
  },
);

// --- authentication: resync_via_multichallenge ----------------------------------------------

actionTest(
  "authentication",
  "resync_via_multichallenge",
  "an OTP in the sync window is answered with a challenge for the next OTP, which resyncs the token",
  async () => {
    const { t, serial } = await setup();
    try {
      await t.asAdmin("POST", "/system/setConfig", { body: { AutoResync: "True" } });
      const alice = { user: "alice", realm: "realm1" };
      // baseline: an OTP beyond the count window is a wrong OTP (auto-resync remembers it)
      let res = await check(t, { ...alice, pass: "1234" + hotp(20) });
      assert.equal(res.body.result.value, false);
      assert.equal(res.body.detail.message, "wrong otp value");

      await policy(t, "resync", { scope: "authentication", action: "resync_via_multichallenge" });
      res = await check(t, { ...alice, pass: "1234" + hotp(40) });
      assert.equal(res.body.result.value, false);
      assert.equal(res.body.result.authentication, "CHALLENGE");
      const message = "To resync your token, please enter the next OTP value";
      const tid = res.body.detail.transaction_id;
      assert.deepEqual(res.body.detail.multi_challenge, [{
        transaction_id: tid,
        client_mode: "interactive",
        message,
        attributes: null,
        serial,
        type: "hotp",
      }]);
      assert.equal(res.body.detail.message, message);
      assert.deepEqual(res.body.detail.messages, [message]);
      assert.deepEqual(res.body.detail.transaction_ids, [tid]);
      // an answer that is not the next OTP does not resync: it is remembered instead, and
      // the reply is a new challenge for the OTP after it
      res = await check(t, { ...alice, pass: hotp(45), transaction_id: tid });
      assert.equal(res.body.result.authentication, "CHALLENGE");
      assert.notEqual(res.body.detail.transaction_id, tid);
      assert.equal((await getTokenBySerial(t.deps, serial)).count, 0);
      // the next OTP answers it: the token is in step again
      res = await check(t, {
        ...alice,
        pass: hotp(46),
        transaction_id: res.body.detail.transaction_id,
      });
      assert.equal(res.body.result.value, true);
      assert.equal(res.body.detail.message, "Found matching challenge");
      assert.equal((await getTokenBySerial(t.deps, serial)).count, 47);
      res = await check(t, { ...alice, pass: "1234" + hotp(47) });
      assert.equal(res.body.result.value, true);
      // a wrong OTP outside the sync window stays a plain failure
      res = await check(t, { ...alice, pass: "1234000000" });
      assert.equal(res.body.detail.message, "wrong otp value");
    } finally {
      await t.close();
    }
  },
);

// --- authentication: client_mode_per_user, preferred_client_mode ----------------------------

const RP_ID = "example.com";
const ORIGIN = "https://login.example.com";

/**
 * realm1 with alice holding an HOTP token and a WebAuthn token (software authenticator),
 * both with PIN "pin", both triggered by it: an `interactive` and a `webauthn` challenge.
 */
async function aliceWithWebauthn(): Promise<{ t: TestApp; auth: SoftAuthenticator }> {
  const { t } = await setup();
  await policy(t, "fido", {
    scope: "enrollment",
    action: {
      webauthn_relying_party_id: RP_ID,
      webauthn_relying_party_name: "Example",
      webauthn_authenticator_attestation_level: "none",
    },
  });
  await enroll(t, { type: "hotp", otpkey: SEED_HEX, user: "alice", realm: "realm1", pin: "pin" });
  const auth = await SoftAuthenticator.create();
  const init = (body: Record<string, unknown>) =>
    t.asAdmin("POST", "/token/init", { body, json: true, headers: { Origin: ORIGIN } });
  const step1 = await jsonOf(
    await init({ type: "webauthn", user: "alice", realm: "realm1", pin: "pin" }),
  );
  const request = step1.body.detail.webAuthnRegisterRequest;
  const att = await auth.register({ challenge: request.nonce, origin: ORIGIN, rpId: RP_ID });
  const step2 = await jsonOf(
    await init({
      type: "webauthn",
      serial: step1.body.detail.serial,
      transaction_id: step1.body.detail.transaction_id,
      clientdata: att.clientDataJSON,
      regdata: att.attestationObject,
    }),
  );
  assert.equal(step2.status, 200, JSON.stringify(step2.body));
  return { t, auth };
}

/** The PIN from `agent`: the reply with an HOTP and a WebAuthn challenge. */
async function pinFrom(t: TestApp, agent: string): Promise<Json> {
  const res = await jsonOf(
    await t.post("/validate/check", { user: "alice", realm: "realm1", pass: "pin" }, {
      headers: { "User-Agent": agent, Origin: ORIGIN },
    }),
  );
  assert.equal(res.body.result.authentication, "CHALLENGE", JSON.stringify(res.body));
  assert.deepEqual(
    res.body.detail.multi_challenge.map((c: Json) => c.client_mode).sort(),
    ["interactive", "webauthn"],
  );
  return res.body;
}

/** Logs alice in from `agent` with the WebAuthn token, answering `reply`'s challenge. */
async function webauthnLogin(t: TestApp, auth: SoftAuthenticator, reply: Json, agent: string) {
  const entry = reply.detail.multi_challenge.find((c: Json) => c.type === "webauthn");
  const signRequest = entry.attributes.webAuthnSignRequest;
  const a = await auth.assert({ challenge: signRequest.challenge, origin: ORIGIN, rpId: RP_ID });
  const res = await jsonOf(
    await t.post("/validate/check", {
      user: "alice",
      realm: "realm1",
      pass: "",
      transaction_id: reply.detail.transaction_id,
      credentialid: a.credentialId,
      clientdata: a.clientDataJSON,
      signaturedata: a.signature,
      authenticatordata: a.authenticatorData,
    }, { headers: { "User-Agent": agent, Origin: ORIGIN } }),
  );
  assert.equal(res.body.result.value, true, JSON.stringify(res.body));
}

async function lastUsed(t: TestApp): Promise<Record<string, string>> {
  const res = await jsonOf(
    await t.asAdmin("GET", "/user/attribute", { query: { user: "alice", realm: "realm1" } }),
  );
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return Object.fromEntries(
    Object.entries(res.body.result.value as Record<string, string>).filter(([k]) =>
      k.startsWith("last_used_token")
    ),
  );
}

actionTest(
  "authentication",
  "client_mode_per_user",
  "the client mode of the token type the user last logged in with from that agent is preferred",
  async () => {
    const { t, auth } = await aliceWithWebauthn();
    try {
      const cp = "privacyidea-cp/2.0 Windows/Laptop-1";
      await policy(t, "cr", { scope: "authentication", action: "challenge_response=hotp" });
      // baseline: the default order prefers interactive, nothing is remembered
      let reply = await pinFrom(t, cp);
      assert.equal(reply.detail.preferred_client_mode, "interactive");
      await webauthnLogin(t, auth, reply, cp);
      assert.equal((await pinFrom(t, cp)).detail.preferred_client_mode, "interactive");
      assert.deepEqual(await lastUsed(t), {});

      await policy(t, "cr", {
        scope: "authentication",
        action: "challenge_response=hotp, client_mode_per_user",
      });
      reply = await pinFrom(t, cp);
      assert.equal(reply.detail.preferred_client_mode, "interactive");
      await webauthnLogin(t, auth, reply, cp);
      assert.deepEqual(await lastUsed(t), { "last_used_token_privacyidea-cp": "webauthn" });
      reply = await pinFrom(t, cp);
      assert.equal(reply.detail.preferred_client_mode, "webauthn");
      // per agent: another one still gets the policy's order
      assert.equal((await pinFrom(t, "curl/8.5")).detail.preferred_client_mode, "interactive");
      // an HOTP login from the same agent switches it back
      const res = await check(t, {
        user: "alice",
        realm: "realm1",
        pass: hotp(0),
        transaction_id: reply.detail.transaction_id,
      }, { "User-Agent": cp });
      assert.equal(res.body.result.value, true);
      assert.deepEqual(await lastUsed(t), { "last_used_token_privacyidea-cp": "hotp" });
      assert.equal((await pinFrom(t, cp)).detail.preferred_client_mode, "interactive");
      // nobody sets the internal attribute by hand
      const set = await jsonOf(
        await t.asAdmin("POST", "/user/attribute", {
          body: {
            user: "alice",
            realm: "realm1",
            key: "last_used_token_privacyidea-cp",
            value: "webauthn",
          },
        }),
      );
      assert.equal(set.status, 400);
      assert.equal(
        set.body.result.error.message,
        "ERR905: Invalid attribute name! The name shall not start with last_used_token. " +
          "This is an internally used prefix.",
      );
      assert.deepEqual(await lastUsed(t), { "last_used_token_privacyidea-cp": "hotp" });
    } finally {
      await t.close();
    }
  },
);

actionTest(
  "authentication",
  "preferred_client_mode",
  "detail.preferred_client_mode is the first listed mode a challenge has",
  async () => {
    const { t } = await aliceWithWebauthn();
    try {
      await policy(t, "cr", { scope: "authentication", action: "challenge_response=hotp" });
      assert.equal((await pinFrom(t, "curl/8")).detail.preferred_client_mode, "interactive");
      await policy(t, "cr", {
        scope: "authentication",
        action: "challenge_response=hotp, preferred_client_mode=poll webauthn interactive",
      });
      assert.equal((await pinFrom(t, "curl/8")).detail.preferred_client_mode, "webauthn");
      // a list naming no mode of the challenges: interactive
      await policy(t, "cr", {
        scope: "authentication",
        action: "challenge_response=hotp, preferred_client_mode=poll u2f",
      });
      assert.equal((await pinFrom(t, "curl/8")).detail.preferred_client_mode, "interactive");
      // /validate/triggerchallenge too
      await policy(t, "cr", {
        scope: "authentication",
        action: "preferred_client_mode=webauthn interactive",
      });
      const res = await jsonOf(
        await t.asAdmin("POST", "/validate/triggerchallenge", {
          body: { user: "alice", realm: "realm1" },
          headers: { Origin: ORIGIN },
        }),
      );
      // alice's three tokens (the HOTP token of every test here has PIN 1234)
      assert.equal(res.body.result.value, 3, JSON.stringify(res.body));
      assert.equal(res.body.detail.preferred_client_mode, "webauthn");
    } finally {
      await t.close();
    }
  },
);

// --- authentication: passthru_assign --------------------------------------------------------

const OTHER_SEED = "3132333435363738393031323334353637383931";

actionTest(
  "authentication",
  "passthru_assign",
  "after the RADIUS server accepts a user without tokens, the realm's unassigned token the OTP part matches becomes theirs",
  async () => {
    const { t } = await setup();
    const up = await startResponder(
      "pt-secret",
      (req) =>
        req.attributes["User-Name"] === "bob"
          ? { code: "Access-Accept" }
          : { code: "Access-Reject" },
    );
    try {
      await setRadiusServer(t.deps, "up", {
        server: "127.0.0.1",
        port: up.port,
        secret: "pt-secret",
        timeout: 1,
        retries: 1,
      });
      const spare = (await enroll(t, { type: "hotp", otpkey: OTHER_SEED })).serial;
      const realm = await jsonOf(
        await t.asAdmin("POST", `/token/realm/${spare}`, { body: { realms: "realm1" } }),
      );
      assert.equal(realm.status, 200, JSON.stringify(realm.body));
      await policy(t, "pt", { scope: "authentication", action: "passthru=up" });
      const bob = { user: "bob", realm: "realm1" };
      // baseline: RADIUS accepts, nothing is assigned
      let res = await check(t, { ...bob, pass: hotp(0, OTHER_SEED) + "test" });
      assert.equal(res.body.result.value, true);
      assert.equal(res.body.detail.message, "against RADIUS server up due to 'pt'");
      assert.equal((await getTokenBySerial(t.deps, spare)).owner, undefined);

      // a value with one part assigns nothing; an unreadable length is refused
      await policy(t, "assign", { scope: "authentication", action: "passthru_assign=6" });
      res = await check(t, { ...bob, pass: hotp(0, OTHER_SEED) + "test" });
      assert.equal(res.body.detail.message, "against RADIUS server up due to 'pt'");
      await policy(t, "assign", { scope: "authentication", action: "passthru_assign=PIN:6" });
      assertPolicyError(
        await check(t, { ...bob, pass: hotp(0, OTHER_SEED) + "test" }),
        'Cannot parse the passthru_assign value "PIN:6": expected pin:<length>[:<window>] or <length>:pin[:<window>]',
      );
      assert.equal((await getTokenBySerial(t.deps, spare)).owner, undefined);

      // OTP first, then the PIN; window 10: an OTP 20 steps ahead matches no token
      await policy(t, "assign", { scope: "authentication", action: "passthru_assign=6:pin:10" });
      res = await check(t, { ...bob, pass: hotp(20, OTHER_SEED) + "test" });
      assert.equal(res.body.detail.message, "against RADIUS server up due to 'pt'");
      res = await check(t, { ...bob, pass: hotp(3, OTHER_SEED) + "test" });
      assert.equal(res.body.result.value, true);
      assert.equal(
        res.body.detail.message,
        `auto-assigned ${spare},against RADIUS server up due to 'pt'`,
      );
      const token = await getTokenBySerial(t.deps, spare);
      assert.equal(token.owner?.login, "bob");
      assert.equal(token.count, 4);
      // bob now logs in with that token and the PIN "test" (no RADIUS: he has a token)
      res = await check(t, { ...bob, pass: "test" + hotp(4, OTHER_SEED) });
      assert.equal(res.body.result.value, true);
      assert.equal(res.body.detail.serial, spare);
    } finally {
      await up.close();
      await t.close();
    }
  },
);

Deno.test("passthru_assign=pin:6: the PIN comes first, the OTP is the end of the password", async () => {
  const { t } = await setup();
  const up = await startResponder("s", () => ({ code: "Access-Accept" }));
  try {
    await setRadiusServer(t.deps, "up", {
      server: "127.0.0.1",
      port: up.port,
      secret: "s",
      timeout: 1,
      retries: 1,
    });
    const spare = (await enroll(t, { type: "hotp", otpkey: OTHER_SEED })).serial;
    await t.asAdmin("POST", `/token/realm/${spare}`, { body: { realms: "realm1" } });
    await policy(t, "pt", {
      scope: "authentication",
      action: "passthru=up, passthru_assign=pin:6",
    });
    const res = await check(t, {
      user: "bob",
      realm: "realm1",
      pass: "s3cret" + hotp(0, OTHER_SEED),
    });
    assert.equal(
      res.body.detail.message,
      `auto-assigned ${spare},against RADIUS server up due to 'pt'`,
    );
    const ok = await check(t, {
      user: "bob",
      realm: "realm1",
      pass: "s3cret" + hotp(1, OTHER_SEED),
    });
    assert.equal(ok.body.result.value, true);
  } finally {
    await up.close();
    await t.close();
  }
});

// --- hide_specific_error_message (authentication), _for_ttype, _for_offline_refill (token) --

actionTest(
  "authentication",
  "hide_specific_error_message",
  "a rejection and an authentication error say only 'Authentication failed.'; the audit keeps the reason",
  async () => {
    const { t, serial } = await setup();
    try {
      const alice = { user: "alice", realm: "realm1" };
      const login = async (password: string) =>
        await jsonOf(await t.post("/auth", { username: "alice", realm: "realm1", password }));
      const brokenJwt = async () =>
        await jsonOf(await t.get("/token/", { headers: { Authorization: "not.a.jwt" } }));
      // baseline: the specific reasons
      let res = await check(t, { ...alice, pass: "1234000000" });
      assert.equal(res.body.result.authentication, "REJECT");
      assert.equal(res.body.detail.message, "wrong otp value");
      assert.equal(res.body.detail.serial, serial);
      res = await login("wrong");
      assert.equal(res.status, 401);
      assert.equal(res.body.result.error.message, "Authentication failure. Wrong credentials");
      res = await brokenJwt();
      assert.equal(res.status, 401);
      assert.match(res.body.result.error.message, /^Authentication failure. Error decoding/);

      await policy(t, "hide", { scope: "authentication", action: "hide_specific_error_message" });
      res = await check(t, { ...alice, pass: "1234000001" });
      assert.equal(res.status, 200);
      assert.equal(res.body.result.value, false);
      assert.equal(res.body.result.authentication, "REJECT");
      const { threadid: _, ...detail } = res.body.detail;
      assert.deepEqual(detail, { message: "Authentication failed." });
      // unknown users look the same
      res = await check(t, { user: "nobody", realm: "realm1", pass: "1234000001" });
      assert.equal(res.status, 400, "an unknown user stays an error (ERR904), as in privacyIDEA");
      res = await login("wrong");
      assert.equal(res.status, 401);
      assert.equal(res.body.result.error.code, 4031);
      assert.equal(res.body.result.error.message, "Authentication failed.");
      assert.equal(res.body.detail.message, "Authentication failed.");
      res = await brokenJwt();
      assert.equal(res.status, 401);
      assert.equal(res.body.result.error.message, "Authentication failed.");
      // a challenge and a success are not touched
      await policy(t, "cr", { scope: "authentication", action: "challenge_response=hotp" });
      res = await check(t, { ...alice, pass: "1234" });
      assert.equal(res.body.result.authentication, "CHALLENGE");
      assert.equal(res.body.detail.message, "please enter otp: ");
      res = await check(t, { ...alice, pass: "1234" + hotp(0) });
      assert.equal(res.body.detail.message, "matching 1 tokens");
      // the audit keeps the reason
      await t.deps.audit.flush();
      const rows = await t.deps.db.selectFrom("audit").select(["action", "info"])
        .orderBy("id").execute();
      assert.ok(
        rows.some((r) => r.action.endsWith("/validate/check") && r.info === "wrong otp value"),
      );
      assert.ok(
        rows.some((r) =>
          r.action === "POST /auth" && r.info.includes("Authentication failure. Wrong credentials")
        ),
      );
    } finally {
      await t.close();
    }
  },
);

Deno.test("hide_specific_error_message matches on the user: a policy for bob leaves alice's reasons", async () => {
  const { t } = await setup();
  try {
    await policy(t, "hide", {
      scope: "authentication",
      action: "hide_specific_error_message",
      user: "bob",
    });
    const res = await check(t, { user: "alice", realm: "realm1", pass: "1234000000" });
    assert.equal(res.body.detail.message, "wrong otp value");
  } finally {
    await t.close();
  }
});

actionTest(
  "token",
  "hide_specific_error_message_for_offline_refill",
  "an offline refill's error becomes 'Failed offline token refill', code 401, same status",
  async () => {
    const { t, serial } = await setup();
    try {
      const refill = async (body: Record<string, unknown>) =>
        await jsonOf(await t.post("/validate/offlinerefill", body));
      const body = { serial, refilltoken: "a".repeat(80), pass: "1234" + hotp(0) };
      let res = await refill(body);
      assert.equal(res.status, 400);
      assert.equal(res.body.result.error.code, 905);
      const specific = res.body.result.error.message;
      assert.notEqual(specific, "Failed offline token refill");

      await policy(t, "hide", {
        scope: "token",
        action: "hide_specific_error_message_for_offline_refill",
      });
      res = await refill(body);
      assert.equal(res.status, 400);
      assert.equal(res.body.result.status, false);
      assert.equal(res.body.result.error.code, 401);
      assert.equal(res.body.result.error.message, "Failed offline token refill");
      // a missing parameter is no refill error: it stays as it is
      res = await refill({ serial, refilltoken: "x" });
      assert.equal(res.body.result.error.message, "ERR905: Missing parameter: pass");
      // the audit keeps the reason
      await t.deps.audit.flush();
      const rows = await t.deps.db.selectFrom("audit").select(["info"])
        .where("action", "=", "POST /validate/offlinerefill").orderBy("id").execute();
      const reason = specific.replace(/^ERR905: /, "");
      assert.deepEqual(rows.map((r) => r.info).slice(0, 2), [reason, reason]);
      assert.equal((await getTokenBySerial(t.deps, serial)).count, 0);
    } finally {
      await t.close();
    }
  },
);

/** `db` whose reads of the tables starting with `prefix` fail (an unreadable table). */
function failingReads(db: Deps["db"], prefix: string): Deps["db"] {
  return new Proxy(db, {
    get(target, prop) {
      if (prop === "selectFrom") {
        return (from: unknown) => {
          if (String(from).startsWith(prefix)) throw new Error(`cannot read ${String(from)}`);
          return target.selectFrom(from as never);
        };
      }
      const value = Reflect.get(target, prop, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

actionTest(
  "token",
  "hide_specific_error_message_for_ttype",
  "an error of /ttype/yubikey becomes 'Failed special token function', code -311, same status",
  async () => {
    const { t } = await setup();
    try {
      await t.asAdmin("POST", "/system/setConfig", {
        body: { "yubikey.apiid.1": btoa("0123456789abcdef0123") },
      });
      await policy(t, "hide", {
        scope: "token",
        action: "hide_specific_error_message_for_ttype",
        active: false,
      });
      const otp = "vvvvvvvvvvvv" + "c".repeat(32);
      const ask = async () => {
        const db = t.deps.db;
        // the token lookup fails inside the token type's function
        t.deps.db = failingReads(db, "token");
        try {
          return await jsonOf(
            await t.get(`/ttype/yubikey?id=1&otp=${otp}&nonce=abcdefghijklmnop`),
          );
        } finally {
          t.deps.db = db;
        }
      };
      let res = await ask();
      assert.equal(res.status, 500);
      assert.equal(res.body.result.error.code, -500);
      assert.equal(res.body.result.error.message, "An internal server error occurred");
      await t.asAdmin("POST", "/policy/enable/hide");
      res = await ask();
      assert.equal(res.status, 500);
      assert.equal(res.body.result.error.code, -311);
      assert.equal(res.body.result.error.message, "Failed special token function");
    } finally {
      await t.close();
    }
  },
);

// --- authentication: change_pin_via_validate (with enrollment change_pin_on_first_use) -------

/** bob's HOTP token with PIN "test", enrolled by an admin under change_pin_on_first_use. */
async function bobWithPinDue(t: TestApp): Promise<string> {
  await policy(t, "pinchange", { scope: "enrollment", action: "change_pin_on_first_use" });
  const serial = await enrollHotp(t, { user: "bob", realm: "realm1", pin: "test" });
  // the due date is the enrolment's minute: the check comes a little later
  t.clock.advance(60_000);
  return serial;
}

actionTest(
  "authentication",
  "change_pin_via_validate",
  "a success with a PIN change due becomes a dialogue that sets a new PIN",
  async () => {
    const { t } = await setup();
    try {
      const serial = await bobWithPinDue(t);
      const due = (await getTokenBySerial(t.deps, serial)).info.next_pin_change?.value;
      assert.match(due ?? "", /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}\+0000$/);
      const bob = { user: "bob", realm: "realm1" };
      // baseline: the success says that the PIN change is due, and that is all
      let res = await check(t, { ...bob, pass: "test" + hotp(0) });
      assert.equal(res.body.result.value, true);
      assert.equal(res.body.detail.next_pin_change, due);
      assert.equal(res.body.detail.pin_change, true);

      await policy(t, "cpv", {
        scope: "authentication",
        action: "change_pin_via_validate, challenge_response=hotp",
      });
      // 1. the PIN triggers the HOTP challenge; its entry says the PIN change is due
      res = await check(t, { ...bob, pass: "test" });
      assert.equal(res.body.result.authentication, "CHALLENGE");
      assert.equal(res.body.detail.multi_challenge[0].pin_change, true);
      assert.equal(res.body.detail.multi_challenge[0].next_pin_change, due);
      // 2. the right OTP: instead of the success, a new PIN is asked for
      res = await check(t, {
        ...bob,
        pass: hotp(1),
        transaction_id: res.body.detail.transaction_id,
      });
      assert.equal(res.body.result.value, false);
      assert.equal(res.body.result.authentication, "CHALLENGE");
      assert.equal(res.body.detail.message, "Please enter a new PIN");
      assert.deepEqual(
        res.body.detail.multi_challenge.map((c: Json) => [c.serial, c.type, c.client_mode]),
        [[serial, "hotp", "interactive"]],
      );
      const t2 = res.body.detail.transaction_id;
      // 3. the new PIN, asked again
      res = await check(t, { ...bob, pass: "n3wPIN", transaction_id: t2 });
      assert.equal(res.body.result.authentication, "CHALLENGE");
      assert.equal(res.body.detail.message, "Please enter the new PIN again");
      const t3 = res.body.detail.transaction_id;
      assert.notEqual(t3, t2);
      // the first challenge is used up
      res = await check(t, { ...bob, pass: "other1", transaction_id: t2 });
      assert.equal(res.body.result.value, false);
      assert.notEqual(res.body.result.authentication, "CHALLENGE");
      // 4. a different PIN does not match; the challenge stays
      res = await check(t, { ...bob, pass: "n3wPIX", transaction_id: t3 });
      assert.equal(res.body.result.value, false);
      assert.equal(res.body.detail.message, "PINs do not match");
      assert.equal(res.body.detail.serial, serial);
      // 5. the same PIN sets it
      res = await check(t, { ...bob, pass: "n3wPIN", transaction_id: t3 });
      assert.equal(res.body.result.value, true);
      assert.equal(res.body.result.authentication, "ACCEPT");
      assert.equal(res.body.detail.message, "PIN successfully set.");
      assert.equal(res.body.detail.serial, serial);
      // no change_pin_every: nothing is due any more; the new PIN works, the old one not
      assert.equal((await getTokenBySerial(t.deps, serial)).info.next_pin_change, undefined);
      res = await check(t, { ...bob, pass: "n3wPIN" + hotp(2) });
      assert.equal(res.body.result.value, true);
      assert.equal(res.body.detail.pin_change, undefined);
      res = await check(t, { ...bob, pass: "test" + hotp(3) });
      assert.equal(res.body.result.value, false);
    } finally {
      await t.close();
    }
  },
);

Deno.test("change_pin_via_validate: the new PIN meets the user's PIN rules; change_pin_every sets the next due date", async () => {
  const { t } = await setup();
  try {
    const serial = await bobWithPinDue(t);
    await policy(t, "every", { scope: "enrollment", action: "change_pin_every=90d" });
    await policy(t, "rules", { scope: "user", action: "otp_pin_minlength=8, setpin" });
    await policy(t, "cpv", { scope: "authentication", action: "change_pin_via_validate" });
    const bob = { user: "bob", realm: "realm1" };
    let res = await check(t, { ...bob, pass: "test" + hotp(0) });
    assert.equal(res.body.detail.message, "Please enter a new PIN");
    const t2 = res.body.detail.transaction_id;
    res = await check(t, { ...bob, pass: "short", transaction_id: t2 });
    assertPolicyError(res, "The minimum OTP PIN length is 8");
    // refused: the challenge is still open, the PIN unchanged
    res = await check(t, { ...bob, pass: "longenough", transaction_id: t2 });
    assert.equal(res.body.detail.message, "Please enter the new PIN again");
    res = await check(t, {
      ...bob,
      pass: "longenough",
      transaction_id: res.body.detail.transaction_id,
    });
    assert.equal(res.body.detail.message, "PIN successfully set.");
    const next = (await getTokenBySerial(t.deps, serial)).info.next_pin_change?.value;
    const expected = new Date(t.clock.now() + 90 * 86_400_000).toISOString().slice(0, 16) + "+0000";
    assert.equal(next, expected);
    res = await check(t, { ...bob, pass: "longenough" + hotp(1) });
    assert.equal(res.body.result.value, true);
    assert.equal(res.body.detail.pin_change, false);
    assert.equal(res.body.detail.next_pin_change, expected);
  } finally {
    await t.close();
  }
});

Deno.test("change_pin_via_validate at /auth (login_mode=privacyIDEA): the dialogue cannot run there, the login fails as a wrong password", async () => {
  const { t } = await setup();
  try {
    await bobWithPinDue(t);
    await policy(t, "login", { scope: "webui", action: "login_mode=privacyIDEA" });
    const login = async (password: string) =>
      await jsonOf(await t.post("/auth", { username: "bob", realm: "realm1", password }));
    assert.equal((await login("test" + hotp(0))).status, 200);
    await policy(t, "cpv", { scope: "authentication", action: "change_pin_via_validate" });
    let res = await login("test" + hotp(1));
    assert.equal(res.status, 401);
    assert.equal(res.body.result.error.message, "Authentication failure. Wrong credentials");
    // as in privacyIDEA, an error of the check is a failed login too (here a policy conflict,
    // which /validate/check answers with 403)
    await policy(t, "a", { scope: "authentication", action: "otppin=none" });
    await policy(t, "b", { scope: "authentication", action: "otppin=userstore" });
    assert.equal((await check(t, { user: "bob", realm: "realm1", pass: "x" })).status, 403);
    res = await login("test" + hotp(2));
    assert.equal(res.status, 401);
    assert.equal(res.body.result.error.message, "Authentication failure. Wrong credentials");
  } finally {
    await t.close();
  }
});

// --- authorization: no_detail_on_fail ---------------------------------------------------------

actionTest(
  "authorization",
  "no_detail_on_fail",
  "a failed check answers without detail; successes and challenges keep theirs",
  async () => {
    const { t, serial } = await setup();
    try {
      const alice = { user: "alice", realm: "realm1" };
      let res = await check(t, { ...alice, pass: "1234000000" });
      assert.equal(res.body.detail.message, "wrong otp value");
      assert.equal(res.body.detail.serial, serial);

      await policy(t, "nodetail", { scope: "authorization", action: "no_detail_on_fail" });
      res = await check(t, { ...alice, pass: "1234000001" });
      assert.equal(res.status, 200);
      assert.equal(res.body.result.value, false);
      assert.equal(res.body.result.authentication, "REJECT");
      assert.equal("detail" in res.body, false);
      res = await check(t, { ...alice, pass: "1234" + hotp(0) });
      assert.equal(res.body.detail.message, "matching 1 tokens");
      // Tessera keeps a challenge's detail (privacyIDEA 3.12.3 strips it, and with it the
      // transaction id the answer needs)
      await policy(t, "cr", { scope: "authentication", action: "challenge_response=hotp" });
      res = await check(t, { ...alice, pass: "1234" });
      assert.equal(res.body.result.authentication, "CHALLENGE");
      assert.match(res.body.detail.transaction_id, /^\d{20}$/);
    } finally {
      await t.close();
    }
  },
);

// --- authorization: auth_max_fail, auth_max_success -----------------------------------------

actionTest(
  "authorization",
  "auth_max_fail",
  "after N failures in the period the user is refused at /validate/check and /auth, whatever the credentials",
  async () => {
    const { t, serial } = await setup();
    try {
      const alice = { user: "alice", realm: "realm1" };
      const login = async (password: string) =>
        await jsonOf(await t.post("/auth", { username: "alice", realm: "realm1", password }));
      // baseline: failures do not stop the right OTP
      for (let i = 0; i < 3; i++) await check(t, { ...alice, pass: "1234000000" });
      assert.equal((await check(t, { ...alice, pass: "1234" + hotp(0) })).body.result.value, true);

      t.clock.advance(120_000);
      await policy(t, "max", { scope: "authorization", action: "auth_max_fail=2/1m" });
      await check(t, { ...alice, pass: "1234000000" });
      await login("wrong");
      await t.deps.audit.flush();
      const before = await getTokenBySerial(t.deps, serial);
      let res = await check(t, { ...alice, pass: "1234" + hotp(1) });
      assert.equal(res.status, 200);
      assert.equal(res.body.result.value, false);
      assert.equal(res.body.detail.message, "Only 2 failed authentications per 0:01:00 allowed.");
      // no token was checked
      const after = await getTokenBySerial(t.deps, serial);
      assert.equal(after.count, before.count);
      assert.equal(after.failcount, before.failcount);
      // the login is refused before the password is looked at
      res = await login("alicepw");
      assert.equal(res.status, 401);
      assert.equal(res.body.result.error.code, 403);
      assert.equal(
        res.body.result.error.message,
        "Authentication failure. The account has exceeded the authentication time limit!",
      );
      assert.equal(res.body.detail.message, "Only 2 failed authentications per 0:01:00 allowed.");
      // a minute later the failures are out of the period
      t.clock.advance(61_000);
      assert.equal((await check(t, { ...alice, pass: "1234" + hotp(1) })).body.result.value, true);
      assert.equal((await login("alicepw")).status, 200);
      // a value that cannot be read is refused, not ignored (d is no unit of it)
      await policy(t, "max", { scope: "authorization", action: "auth_max_fail=2/1d" });
      assertPolicyError(
        await check(t, { ...alice, pass: "1234" + hotp(2) }),
        'Cannot parse the auth_max_fail value "2/1d": expected <count>/<period>, e.g. 3/5m (s, m, h)',
      );
    } finally {
      await t.close();
    }
  },
);

actionTest(
  "authorization",
  "auth_max_success",
  "after N successes in the period the next one is refused; the period reads as Python's timedelta",
  async () => {
    const { t } = await setup();
    try {
      const alice = { user: "alice", realm: "realm1" };
      // baseline: three successes in a row
      for (let i = 0; i < 3; i++) {
        assert.equal(
          (await check(t, { ...alice, pass: "1234" + hotp(i) })).body.result.value,
          true,
        );
      }
      await policy(t, "max", { scope: "authorization", action: "auth_max_success=2/24h" });
      await t.deps.audit.flush();
      const res = await check(t, { ...alice, pass: "1234" + hotp(5) });
      assert.equal(res.body.result.value, false);
      assert.equal(
        res.body.detail.message,
        "Only 2 successful authentications per 1 day, 0:00:00 allowed.",
      );
      // the policy's name is not audited for the success limit (privacyIDEA's)
      const policies = await checkAuditPolicies(t);
      assert.equal(policies.at(-1), "");
    } finally {
      await t.close();
    }
  },
);

// --- authentication: mangle -------------------------------------------------------------------

actionTest(
  "authentication",
  "mangle",
  "user, realm and pass are rewritten before the check (alice.vpn → alice)",
  async () => {
    const { t } = await setup();
    try {
      // baseline: the name as the VPN sends it is no user
      let res = await check(t, { user: "alice.vpn", realm: "realm1", pass: "1234" + hotp(0) });
      assert.equal(res.status, 400);
      assert.equal(
        res.body.result.error.message,
        "ERR904: User <alice.vpn@realm1> does not exist.",
      );
      await policy(t, "mangle", {
        scope: "authentication",
        action: { mangle: "user/^(.*)\\.vpn$/\\1/" },
      });
      res = await check(t, { user: "alice.vpn", realm: "realm1", pass: "1234" + hotp(0) });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.equal(res.body.result.value, true);
      // the audit names the user it became and the policy
      await t.deps.audit.flush();
      const row = await t.deps.db.selectFrom("audit").select(["user", "policies"])
        .where("action", "like", "%/validate/check").orderBy("id", "desc")
        .executeTakeFirstOrThrow();
      assert.equal(row.user, "alice");
      assert.equal(row.policies, "mangle");
      // pass: a prefix the client adds is cut off
      await policy(t, "mangle2", {
        scope: "authentication",
        action: { mangle: "pass/^vpn-(.*)$/\\1/" },
      });
      res = await check(t, { user: "alice", realm: "realm1", pass: "vpn-1234" + hotp(1) });
      assert.equal(res.body.result.value, true);
    } finally {
      await t.close();
    }
  },
);

// --- authentication: enroll_via_multichallenge_text, _optional (passkey) ----------------------

/** bob with an spass token (PIN "bob-pin") and enroll_via_multichallenge=passkey plus `auth`. */
async function bobEnrolsPasskey(auth: Record<string, unknown>): Promise<TestApp> {
  const { t } = await setup();
  await policy(t, "fido", {
    scope: "enrollment",
    action: { webauthn_relying_party_id: RP_ID, webauthn_relying_party_name: "Example" },
  });
  await policy(t, "evm", {
    scope: "authentication",
    action: { enroll_via_multichallenge: "passkey", ...auth },
  });
  await enroll(t, { type: "spass", user: "bob", realm: "realm1", pin: "bob-pin" });
  return t;
}

async function bobLogin(t: TestApp, extra: Record<string, unknown> = {}) {
  return await jsonOf(
    await t.post("/validate/check", { user: "bob", realm: "realm1", pass: "bob-pin", ...extra }, {
      headers: { Origin: "https://example.com" },
    }),
  );
}

actionTest(
  "authentication",
  "enroll_via_multichallenge_text",
  "the passkey enrolment challenge after a login says the policy's text",
  async () => {
    let t = await bobEnrolsPasskey({});
    try {
      const res = await bobLogin(t);
      assert.equal(res.body.result.authentication, "CHALLENGE");
      assert.equal(res.body.detail.message, "Please confirm the registration with your passkey!");
    } finally {
      await t.close();
    }
    t = await bobEnrolsPasskey({ enroll_via_multichallenge_text: "Register a passkey now" });
    try {
      const res = await bobLogin(t);
      assert.equal(res.body.result.authentication, "CHALLENGE");
      assert.equal(res.body.detail.message, "Register a passkey now");
      assert.equal(res.body.detail.multi_challenge[0].message, "Register a passkey now");
    } finally {
      await t.close();
    }
  },
);

actionTest(
  "authentication",
  "enroll_via_multichallenge_optional",
  "the user may cancel the passkey enrolment and is logged in without it",
  async () => {
    let t = await bobEnrolsPasskey({});
    try {
      const res = await bobLogin(t);
      assert.equal(res.body.detail.enroll_via_multichallenge_optional, false);
      const cancel = await bobLogin(t, {
        cancel_enrollment: "true",
        transaction_id: res.body.detail.transaction_id,
      });
      assert.equal(cancel.body.result.value, false);
      assert.equal(cancel.body.detail.message, "Failed to cancel enrollment via multichallenge");
    } finally {
      await t.close();
    }
    t = await bobEnrolsPasskey({ enroll_via_multichallenge_optional: true });
    try {
      const res = await bobLogin(t);
      assert.equal(res.body.detail.enroll_via_multichallenge_optional, true);
      const serial = res.body.detail.serial;
      const cancel = await bobLogin(t, {
        cancel_enrollment: "true",
        transaction_id: res.body.detail.transaction_id,
      });
      assert.equal(cancel.body.result.value, true);
      assert.equal(cancel.body.detail.message, "Cancelled enrollment via multichallenge");
      // the waiting passkey is gone
      const gone = await jsonOf(await t.asAdmin("GET", "/token/", { query: { serial } }));
      assert.equal(gone.body.result.value.count, 0);
    } finally {
      await t.close();
    }
  },
);

// --- user_case_insensitive (a policy attribute of privacyIDEA 3.13) -------------------------

Deno.test("user_case_insensitive: a policy for user ALICE applies to alice's check only with it", async () => {
  const { t } = await setup();
  try {
    const alice = { user: "alice", realm: "realm1" };
    await policy(t, "pin", { scope: "authentication", action: "otppin=userstore", user: "ALICE" });
    assert.equal(
      (await check(t, { ...alice, pass: "alicepw" + hotp(0) })).body.result.value,
      false,
    );
    assert.equal((await check(t, { ...alice, pass: "1234" + hotp(0) })).body.result.value, true);
    await policy(t, "pin", {
      scope: "authentication",
      action: "otppin=userstore",
      user: "ALICE",
      user_case_insensitive: true,
    });
    assert.equal((await check(t, { ...alice, pass: "alicepw" + hotp(1) })).body.result.value, true);
    assert.equal((await check(t, { ...alice, pass: "1234" + hotp(2) })).body.result.value, false);
  } finally {
    await t.close();
  }
});

// --- authentication: enroll_via_multichallenge_passkey_offline (privacyIDEA 3.13) ------------

/** bob logs in with his PIN and registers the passkey the login asks for, from `agent`. */
async function bobRegistersPasskey(t: TestApp, agent: string) {
  const headers = { Origin: "https://example.com", "User-Agent": agent };
  const first = await jsonOf(
    await t.post("/validate/check", { user: "bob", realm: "realm1", pass: "bob-pin" }, { headers }),
  );
  const entry = first.body.detail.multi_challenge[0];
  const auth = await SoftAuthenticator.create(PI_PASSKEY);
  const att = await auth.register({
    challenge: entry.passkey_registration.challenge,
    origin: "https://example.com",
    rpId: RP_ID,
  });
  return await jsonOf(
    await t.post("/validate/check", {
      user: "bob",
      realm: "realm1",
      serial: entry.serial,
      transaction_id: first.body.detail.transaction_id,
      type: "passkey",
      credential_id: att.credentialId,
      rawId: att.credentialId,
      authenticatorAttachment: "cross-platform",
      attestationObject: att.attestationObject,
      clientDataJSON: att.clientDataJSON,
    }, { headers }),
  );
}

actionTest(
  "authentication",
  "enroll_via_multichallenge_passkey_offline",
  "the passkey registered at login is attached for offline use and the answer carries its offline data",
  async () => {
    const agent = "privacyidea-cp/2.0 Windows/LAPTOP-7";
    let t = await bobEnrolsPasskey({});
    try {
      const res = await bobRegistersPasskey(t, agent);
      assert.equal(res.body.result.value, true, JSON.stringify(res.body));
      assert.equal("auth_items" in res.body, false);
    } finally {
      await t.close();
    }
    t = await bobEnrolsPasskey({ enroll_via_multichallenge_passkey_offline: true });
    try {
      const res = await bobRegistersPasskey(t, agent);
      assert.equal(res.body.result.value, true, JSON.stringify(res.body));
      const serial = res.body.detail.serial;
      const [item] = res.body.auth_items.offline;
      assert.equal(item.serial, serial);
      assert.equal(item.user, "bob");
      assert.match(item.refilltoken, /^[0-9a-f]{80}$/);
      assert.equal(item.response.rpId, RP_ID);
      assert.ok(item.response.pubKey);
      assert.ok(item.response.credentialId);
      const bindings = await jsonOf(
        await t.asAdmin("GET", "/machine/token", { query: { serial, application: "offline" } }),
      );
      assert.equal(bindings.status, 200, JSON.stringify(bindings.body));
      assert.equal(bindings.body.result.value.length, 1);
    } finally {
      await t.close();
    }
  },
);
