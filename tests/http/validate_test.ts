import assert from "node:assert/strict";
import { createTestApp, jsonOf, type TestApp } from "../test_app.ts";
import { createUsers } from "../fixtures/users.ts";
import { enroll, enrollHotp, hotp, SEED_HEX, totp } from "../fixtures/tokens.ts";
import { deletePolicy, savePolicy } from "../../src/domain/policy/mod.ts";
import { getTokenBySerial } from "../../src/domain/token/mod.ts";

async function check(t: TestApp, body: Record<string, unknown>) {
  return await jsonOf(await t.post("/validate/check", body));
}

/** Sets the policy `name` of `scope` with `action` (as an administrator would). */
async function policy(t: TestApp, name: string, scope: string, action: string): Promise<void> {
  await savePolicy(t.deps, name, { scope, action });
}

async function withUsers(): Promise<TestApp> {
  const t = await createTestApp();
  await createUsers(t.deps, {
    realm: "realm1",
    users: [{ login: "alice", password: "alicepw" }, { login: "bob", password: "bobpw" }],
  });
  return t;
}

Deno.test("POST /validate/check accepts PIN+OTP by serial with the spec's detail", async () => {
  const t = await createTestApp();
  const serial = await enrollHotp(t, { pin: "1234" });
  const { status, body } = await check(t, { serial, pass: "1234" + hotp(0) });
  assert.equal(status, 200);
  assert.equal(body.id, 2);
  assert.deepEqual(body.result, { status: true, value: true, authentication: "ACCEPT" });
  assert.equal(body.detail.message, "matching 1 tokens");
  assert.equal(body.detail.serial, serial);
  assert.equal(body.detail.type, "hotp");
  assert.equal(body.detail.otplen, 6);
  assert.equal(typeof body.detail.threadid, "number");
  await t.close();
});

Deno.test("POST /validate/check refuses an OTP that was already used", async () => {
  const t = await createTestApp();
  const serial = await enrollHotp(t, { pin: "1234" });
  assert.equal((await check(t, { serial, pass: "1234" + hotp(0) })).body.result.value, true);
  const again = await check(t, { serial, pass: "1234" + hotp(0) });
  assert.equal(again.status, 200);
  assert.equal(again.body.result.value, false);
  assert.equal(again.body.result.authentication, "REJECT");
  assert.equal(again.body.detail.message, "wrong otp value. previous otp used again");
  await t.close();
});

Deno.test("POST /validate/check: wrong OTP, wrong PIN, look-ahead window", async () => {
  const t = await createTestApp();
  const serial = await enrollHotp(t, { pin: "1234" });
  const wrongOtp = await check(t, { serial, pass: "1234000000" });
  assert.equal(wrongOtp.body.detail.message, "wrong otp value");
  assert.equal(wrongOtp.body.detail.serial, serial);
  const wrongPin = await check(t, { serial, pass: "9999" + hotp(0) });
  assert.equal(wrongPin.body.detail.message, "wrong otp pin");
  assert.equal(wrongPin.body.result.value, false);
  // counter 9 is the last one inside the default window of 10
  assert.equal((await check(t, { serial, pass: "1234" + hotp(9) })).body.result.value, true);
  assert.equal((await check(t, { serial, pass: "1234" + hotp(25) })).body.result.value, false);
  const token = await getTokenBySerial(t.deps, serial);
  assert.equal(token.count, 10);
  assert.equal(token.failcount, 1); // wrong otp +1, wrong pin +1, success resets, last +1
  await t.close();
});

Deno.test("POST /validate/check pre-checks give 400/905 and unknown serial 404", async () => {
  const t = await createTestApp();
  const cases: [Record<string, unknown>, number, string][] = [
    [{ pass: "x" }, 400, "ERR905: You need to specify a serial, user or credential_id."],
    [{ serial: "A*", pass: "x" }, 400, "ERR905: Invalid serial number."],
    [{ user: "a%b", pass: "x" }, 400, "ERR905: Invalid user."],
    [{ serial: "NOPE", pass: "x" }, 404, "The requested token could not be found."],
  ];
  for (const [body, status, message] of cases) {
    const res = await check(t, body);
    assert.equal(res.status, status, JSON.stringify(body));
    assert.equal(res.body.result.error.message, message);
  }
  await t.close();
});

Deno.test("POST /validate/check by user uses the default realm and the user's tokens", async () => {
  const t = await withUsers();
  await enrollHotp(t, { pin: "pin", user: "alice", realm: "realm1" });
  const ok = await check(t, { user: "alice", pass: "pin" + hotp(0) });
  assert.equal(ok.body.result.value, true);
  const explicit = await check(t, { user: "alice", realm: "realm1", pass: "pin" + hotp(1) });
  assert.equal(explicit.body.result.value, true);
  const noTokens = await check(t, { user: "bob", pass: "x" });
  assert.equal(noTokens.status, 200);
  assert.equal(noTokens.body.result.value, false);
  assert.equal(noTokens.body.detail.message, "The user has no tokens assigned");
  const unknown = await check(t, { user: "carol", pass: "x" });
  assert.equal(unknown.status, 400);
  assert.equal(unknown.body.result.error.code, 904);
  assert.equal(unknown.body.result.error.message, "ERR904: User <carol@realm1> does not exist.");
  await t.close();
});

Deno.test("POST /validate/check with serial and a foreign user is refused", async () => {
  const t = await withUsers();
  const serial = await enrollHotp(t, { pin: "pin", user: "alice", realm: "realm1" });
  const res = await check(t, { serial, user: "bob", pass: "pin" + hotp(0) });
  assert.equal(res.status, 400);
  assert.equal(
    res.body.result.error.message,
    "ERR905: Given serial does not belong to given user!",
  );
  await t.close();
});

Deno.test("fail counter locks the token at maxfail and reset clears it", async () => {
  const t = await createTestApp();
  const serial = await enrollHotp(t, { pin: "1234" });
  await t.asAdmin("POST", "/token/set", { body: { serial, max_failcount: "3" } });
  for (let i = 0; i < 5; i++) await check(t, { serial, pass: "1234000000" });
  const token = await getTokenBySerial(t.deps, serial);
  assert.equal(token.failcount, 3);
  assert.match(token.info.failcounter_exceeded.value, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}\+0000$/);
  const locked = await check(t, { serial, pass: "1234" + hotp(0) });
  assert.equal(locked.body.result.value, false);
  assert.equal(locked.body.detail.message, "Failcounter exceeded");
  await t.asAdmin("POST", "/token/reset", { body: { serial } });
  assert.equal((await check(t, { serial, pass: "1234" + hotp(0) })).body.result.value, true);
  await t.close();
});

Deno.test("parallel wrong attempts raise the fail counter by exactly N", async () => {
  const t = await createTestApp();
  const serial = await enrollHotp(t, { pin: "1234" });
  await t.asAdmin("POST", "/token/set", { body: { serial, max_failcount: "100" } });
  const n = 25;
  await Promise.all(
    Array.from({ length: n }, () => t.post("/validate/check", { serial, pass: "1234000000" })),
  );
  assert.equal((await getTokenBySerial(t.deps, serial)).failcount, n);
  await t.close();
});

Deno.test("the same OTP sent K times in parallel succeeds exactly once", async () => {
  const t = await createTestApp();
  const serial = await enrollHotp(t, { pin: "1234" });
  const k = 20;
  const results = await Promise.all(
    Array.from(
      { length: k },
      async () =>
        (await jsonOf(await t.post("/validate/check", { serial, pass: "1234" + hotp(2) }))).body
          .result.value,
    ),
  );
  assert.equal(results.filter((v) => v === true).length, 1);
  await t.close();
});

Deno.test("the same TOTP sent in parallel succeeds once; an older step is a replay", async () => {
  const t = await createTestApp();
  const { serial } = await enroll(t, { type: "totp", otpkey: SEED_HEX, pin: "p" });
  const now = t.clock.now();
  const results = await Promise.all(
    Array.from(
      { length: 10 },
      async () => (await check(t, { serial, pass: "p" + totp(now) })).body.result.value,
    ),
  );
  assert.equal(results.filter((v) => v === true).length, 1);
  // the 9 losers counted as wrong OTPs
  assert.equal((await getTokenBySerial(t.deps, serial)).failcount, 9);
  await t.asAdmin("POST", "/token/reset", { body: { serial } });
  // the previous step is inside the window but at/before the last used step
  assert.equal(
    (await check(t, { serial, pass: "p" + totp(now - 30_000) })).body.result.value,
    false,
  );
  t.clock.advance(30_000);
  assert.equal(
    (await check(t, { serial, pass: "p" + totp(t.clock.now()) })).body.result.value,
    true,
  );
  await t.close();
});

Deno.test("otponly checks only the OTP and counts a wrong one in the fail counter", async () => {
  const t = await createTestApp();
  const serial = await enrollHotp(t, { pin: "1234" });
  const bad = await check(t, { serial, otponly: "1", pass: "000000" });
  assert.equal(bad.body.result.value, false);
  assert.equal(bad.body.detail.message, "OTP verification failed.");
  assert.equal((await getTokenBySerial(t.deps, serial)).failcount, 1);
  assert.equal((await check(t, { serial, otponly: "1", pass: hotp(0) })).body.result.value, true);
  await t.close();
});

Deno.test("PrependPin=False puts the OTP first", async () => {
  const t = await createTestApp();
  const serial = await enrollHotp(t, { pin: "1234" });
  await t.asAdmin("POST", "/system/setConfig", { body: { PrependPin: "False" } });
  assert.equal((await check(t, { serial, pass: "1234" + hotp(0) })).body.result.value, false);
  assert.equal((await check(t, { serial, pass: hotp(1) + "1234" })).body.result.value, true);
  await t.close();
});

Deno.test("disabled and revoked tokens do not authenticate", async () => {
  const t = await createTestApp();
  const serial = await enrollHotp(t, { pin: "1" });
  await t.asAdmin("POST", "/token/disable", { body: { serial } });
  const disabled = await check(t, { serial, pass: "1" + hotp(0) });
  assert.equal(disabled.body.result.value, false);
  assert.equal(disabled.body.detail.message, "Token is disabled");
  await t.asAdmin("POST", "/token/revoke", { body: { serial } });
  const revoked = await check(t, { serial, pass: "1" + hotp(0) });
  assert.equal(revoked.status, 400);
  assert.equal(
    revoked.body.result.error.message,
    "ERR1007: This action is not possible, since the token is locked",
  );
  await t.close();
});

Deno.test("spass authenticates with the PIN; registration deletes itself after one use", async () => {
  const t = await createTestApp();
  const { serial: sp } = await enroll(t, { type: "spass", pin: "secret" });
  assert.equal((await check(t, { serial: sp, pass: "secret" })).body.result.value, true);
  assert.equal((await check(t, { serial: sp, pass: "nope" })).body.detail.message, "wrong otp pin");
  const { serial: reg, detail } = await enroll(t, { type: "registration" });
  const code = detail.registrationcode as string;
  assert.equal(code.length, 24);
  assert.equal((await check(t, { serial: reg, pass: code })).body.result.value, true);
  const gone = await check(t, { serial: reg, pass: code });
  assert.equal(gone.status, 404);
  await t.close();
});

Deno.test("pw token: PIN + static password", async () => {
  const t = await createTestApp();
  const { serial } = await enroll(t, { type: "pw", otpkey: "s3cret-pw", pin: "12" });
  assert.equal((await check(t, { serial, pass: "12s3cret-pw" })).body.result.value, true);
  assert.equal((await check(t, { serial, pass: "12s3cret-px" })).body.result.value, false);
  await t.close();
});

Deno.test("sshkey tokens never authenticate via /validate/check", async () => {
  const t = await createTestApp();
  const { serial } = await enroll(t, {
    type: "sshkey",
    sshkey: "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGZ4 user@host",
  });
  const res = await check(t, { serial, pass: "" });
  assert.equal(res.body.result.value, false);
  await t.close();
});

Deno.test("challenge-response: PIN triggers a challenge when policy allows, answered by OTP", async () => {
  const t = await withUsers();
  const serial = await enrollHotp(t, { pin: "pin", user: "alice", realm: "realm1" });
  await policy(t, "cr", "authentication", "challenge_response=hotp");
  const first = await check(t, { user: "alice", pass: "pin" });
  assert.equal(first.status, 200);
  assert.equal(first.body.result.value, false);
  assert.equal(first.body.result.authentication, "CHALLENGE");
  const d = first.body.detail;
  assert.match(d.transaction_id, /^\d{20}$/);
  assert.deepEqual(d.multi_challenge, [{
    transaction_id: d.transaction_id,
    serial,
    type: "hotp",
    client_mode: "interactive",
    message: "please enter otp: ",
  }]);
  assert.equal(d.message, "please enter otp: ");
  assert.deepEqual(d.messages, ["please enter otp: "]);
  assert.deepEqual(d.transaction_ids, [d.transaction_id]);
  assert.equal(d.preferred_client_mode, "interactive");
  assert.equal(d.serial, serial);

  const wrong = await check(t, { user: "alice", pass: "123456", transaction_id: d.transaction_id });
  assert.equal(wrong.body.result.value, false);
  assert.equal(wrong.body.detail.message, "Response did not match the challenge.");

  const answer = await check(t, { user: "alice", pass: hotp(0), state: d.transaction_id });
  assert.equal(answer.body.result.value, true);
  assert.equal(answer.body.detail.message, "Found matching challenge");
  // the transaction is closed after a successful answer
  const replay = await check(t, { user: "alice", pass: hotp(1), transaction_id: d.transaction_id });
  assert.equal(replay.body.result.value, false);
  await t.close();
});

Deno.test("challenge-response: an expired challenge does not accept the answer", async () => {
  const t = await createTestApp();
  const serial = await enrollHotp(t, { pin: "pin" });
  await policy(t, "cr", "authentication", "challenge_response=hotp, challenge_text=code\\, please");
  const first = await check(t, { serial, pass: "pin" });
  assert.equal(first.body.detail.message, "code, please");
  t.clock.advance(121_000);
  const late = await check(t, {
    serial,
    pass: hotp(0),
    transaction_id: first.body.detail.transaction_id,
  });
  assert.equal(late.body.result.value, false);
  assert.equal(late.body.detail.message, "Response did not match the challenge.");
  await t.close();
});

Deno.test("passOnNoUser, passOnNoToken and passthru=userstore", async () => {
  const t = await withUsers();
  await policy(t, "pol1", "authentication", "passOnNoUser");
  await policy(t, "pol2", "authentication", "passOnNoToken");
  const noUser = await check(t, { user: "nobody", pass: "x" });
  assert.equal(noUser.body.result.value, true);
  assert.equal(noUser.body.detail.message, "user does not exist, accepted due to 'pol1'");
  const noToken = await check(t, { user: "bob", pass: "x" });
  assert.equal(noToken.body.detail.message, "user has no token, accepted due to 'pol2'");
  await deletePolicy(t.deps, "pol1");
  await deletePolicy(t.deps, "pol2");
  await policy(t, "pt", "authentication", "passthru=userstore");
  const good = await check(t, { user: "bob", pass: "bobpw" });
  assert.equal(good.body.result.value, true);
  assert.equal(good.body.detail.message, "against userstore due to 'pt'");
  assert.equal((await check(t, { user: "bob", pass: "wrong" })).body.result.value, false);
  await t.close();
});

Deno.test("otppin=userstore checks the user's password as the PIN", async () => {
  const t = await withUsers();
  await enrollHotp(t, { pin: "tokenpin", user: "alice", realm: "realm1" });
  await policy(t, "pin", "authentication", "otppin=userstore");
  assert.equal(
    (await check(t, { user: "alice", pass: "alicepw" + hotp(0) })).body.result.value,
    true,
  );
  assert.equal(
    (await check(t, { user: "alice", pass: "tokenpin" + hotp(1) })).body.result.value,
    false,
  );
  await t.close();
});

Deno.test("POST /validate/triggerchallenge needs an admin and creates challenges", async () => {
  const t = await withUsers();
  const serial = await enrollHotp(t, { pin: "pin", user: "alice", realm: "realm1" });
  await enroll(t, { type: "spass", pin: "x", user: "alice", realm: "realm1" });
  assert.equal((await t.post("/validate/triggerchallenge", { user: "alice" })).status, 401);
  const { status, body } = await jsonOf(
    await t.asAdmin("POST", "/validate/triggerchallenge", {
      body: { user: "alice", realm: "realm1" },
    }),
  );
  assert.equal(status, 200);
  assert.equal(body.id, 2);
  assert.equal(body.result.value, 1);
  assert.equal(body.result.authentication, "CHALLENGE");
  assert.equal(body.detail.multi_challenge[0].serial, serial);
  const answer = await check(t, {
    user: "alice",
    pass: hotp(0),
    transaction_id: body.detail.transaction_id,
  });
  assert.equal(answer.body.result.value, true);

  const none = await jsonOf(
    await t.asAdmin("POST", "/validate/triggerchallenge", { body: { user: "bob" } }),
  );
  assert.equal(none.body.result.value, 0);
  assert.equal(none.body.result.authentication, "REJECT");
  assert.deepEqual(none.body.detail.multi_challenge, []);
  assert.deepEqual(none.body.detail.transaction_ids, []);
  assert.deepEqual(none.body.detail.messages, []);
  const unknown = await jsonOf(
    await t.asAdmin("POST", "/validate/triggerchallenge", { body: { user: "zed" } }),
  );
  assert.equal(unknown.status, 400);
  assert.equal(
    unknown.body.result.error.message,
    "ERR904: The user can not be found in any resolver in this realm!",
  );
  await t.close();
});

Deno.test("GET /validate/polltransaction answers pending for open and unknown transactions", async () => {
  const t = await createTestApp();
  const serial = await enrollHotp(t, { pin: "pin" });
  await policy(t, "cr", "authentication", "challenge_response=hotp");
  const tid = (await check(t, { serial, pass: "pin" })).body.detail.transaction_id;
  for (
    const path of [`/validate/polltransaction/${tid}`, "/validate/polltransaction?transaction_id=1"]
  ) {
    const { status, body } = await jsonOf(await t.get(path));
    assert.equal(status, 200);
    assert.equal(body.result.value, false);
    assert.equal(body.result.authentication, "REJECT");
    assert.equal(body.detail.challenge_status, "pending");
  }
  const { markAnswered } = await import("../../src/domain/challenge/mod.ts");
  await markAnswered(t.deps, tid);
  const done = await jsonOf(await t.get(`/validate/polltransaction/${tid}`));
  assert.equal(done.body.result.value, true);
  assert.equal(done.body.detail.challenge_status, "accept");
  await t.close();
});

Deno.test("/validate/radiuscheck answers 204 or 400 with empty bodies, errors as JSON", async () => {
  const t = await createTestApp();
  const serial = await enrollHotp(t, { pin: "1" });
  const good = await t.post("/validate/radiuscheck", { serial, pass: "1" + hotp(0) });
  assert.equal(good.status, 204);
  assert.equal(await good.text(), "");
  const bad = await t.post("/validate/radiuscheck", { serial, pass: "1" + hotp(0) });
  assert.equal(bad.status, 400);
  assert.equal(await bad.text(), "");
  const err = await jsonOf(await t.post("/validate/radiuscheck", { pass: "x" }));
  assert.equal(err.status, 400);
  assert.equal(err.body.result.error.code, 905);
  await t.close();
});

Deno.test("/validate/samlcheck returns auth and user attributes", async () => {
  const t = await withUsers();
  await enrollHotp(t, { pin: "1", user: "alice", realm: "realm1" });
  const ok = await jsonOf(
    await t.post("/validate/samlcheck", { user: "alice", pass: "1" + hotp(0) }),
  );
  assert.equal(ok.status, 200);
  assert.equal(ok.body.result.value.auth, true);
  assert.equal(ok.body.result.value.attributes.username, "alice");
  assert.equal(ok.body.result.value.attributes.realm, "realm1");
  assert.equal("password" in ok.body.result.value.attributes, false);
  const fail = await jsonOf(
    await t.post("/validate/samlcheck", { user: "alice", pass: "1000000" }),
  );
  assert.deepEqual(fail.body.result.value, { auth: false, attributes: {} });
  await t.close();
});

Deno.test("authorization policies: tokentype, add_user_in_response, add_resolver_in_response", async () => {
  const t = await withUsers();
  await enrollHotp(t, { pin: "1", user: "alice", realm: "realm1" });
  await policy(t, "az", "authorization", "add_user_in_response, add_resolver_in_response");
  const ok = await check(t, { user: "alice", pass: "1" + hotp(0) });
  assert.equal(ok.body.detail.user.username, "alice");
  assert.equal(ok.body.detail["user-realm"], "realm1");
  assert.equal(typeof ok.body.detail["user-resolver"], "string");
  await policy(t, "az", "authorization", "tokentype=totp");
  const denied = await check(t, { user: "alice", pass: "1" + hotp(1) });
  assert.equal(denied.status, 403);
  assert.equal(denied.body.result.error.message, "Tokentype not allowed for authentication!");
  await t.close();
});

Deno.test("the audit row of /validate/check records user, serial and outcome without the pass", async () => {
  const t = await createTestApp();
  const serial = await enrollHotp(t, { pin: "1234" });
  await check(t, { serial, pass: "1234" + hotp(0) });
  await t.deps.audit.flush();
  const rows = await t.deps.db.selectFrom("audit").selectAll().where(
    "action",
    "like",
    "%/validate/check",
  )
    .execute();
  assert.equal(rows.length, 1);
  assert.equal(rows[0].serial, serial);
  assert.equal(rows[0].success, 1);
  assert.equal(rows[0].info, "matching 1 tokens");
  assert.equal(JSON.stringify(rows[0]).includes(hotp(0)), false);
  await t.close();
});

Deno.test("last_auth policy refuses a token whose last success is too long ago", async () => {
  const t = await createTestApp();
  const serial = await enrollHotp(t, { pin: "1" });
  await policy(t, "la", "authorization", "last_auth=1d");
  assert.equal((await check(t, { serial, pass: "1" + hotp(0) })).body.result.value, true);
  const tok = await getTokenBySerial(t.deps, serial);
  assert.equal(tok.info.last_auth.value, "2026-01-01 00:00:00.000000+0000");
  t.clock.advance(3_600_000);
  assert.equal((await check(t, { serial, pass: "1" + hotp(1) })).body.result.value, true);
  t.clock.advance(2 * 86_400_000);
  const late = await check(t, { serial, pass: "1" + hotp(2) });
  assert.equal(late.body.result.value, false);
  assert.equal(
    late.body.detail.message,
    "The last successful authentication was 2026-01-01 01:00:00.000000+0000. It is too long ago.",
  );
  await t.close();
});

Deno.test("count_auth and count_auth_success are counted and limit the token", async () => {
  const t = await createTestApp();
  const serial = await enrollHotp(t, { pin: "1" });
  await t.asAdmin("POST", "/token/set", { body: { serial, count_auth_success_max: "2" } });
  assert.equal((await check(t, { serial, pass: "1000000" })).body.result.value, false);
  assert.equal((await check(t, { serial, pass: "1" + hotp(0) })).body.result.value, true);
  assert.equal((await check(t, { serial, pass: "1" + hotp(1) })).body.result.value, true);
  const tok = await getTokenBySerial(t.deps, serial);
  assert.equal(tok.info.count_auth.value, "3");
  assert.equal(tok.info.count_auth_success.value, "2");
  const over = await check(t, { serial, pass: "1" + hotp(2) });
  assert.equal(over.body.detail.message, "Authentication counter exceeded");
  await t.close();
});

Deno.test("auth_max_fail limits failed authentications per period (counted in the audit log)", async () => {
  const t = await withUsers();
  await enrollHotp(t, { pin: "1", user: "alice", realm: "realm1" });
  await policy(t, "mf", "authorization", "auth_max_fail=2/1m");
  for (let i = 0; i < 2; i++) await check(t, { user: "alice", pass: "1000000" });
  await t.deps.audit.flush();
  const limited = await check(t, { user: "alice", pass: "1" + hotp(0) });
  assert.equal(limited.body.result.value, false);
  assert.equal(limited.body.detail.message, "Only 2 failed authentications per 0:01:00 allowed.");
  t.clock.advance(61_000);
  assert.equal((await check(t, { user: "alice", pass: "1" + hotp(0) })).body.result.value, true);
  await t.close();
});

Deno.test("AutoResync: two consecutive OTPs far ahead resync the token and authenticate", async () => {
  const t = await createTestApp();
  const serial = await enrollHotp(t, { pin: "1" });
  assert.equal((await check(t, { serial, pass: "1" + hotp(100) })).body.result.value, false);
  await t.asAdmin("POST", "/system/setConfig", { body: { AutoResync: "True" } });
  assert.equal((await check(t, { serial, pass: "1" + hotp(200) })).body.result.value, false);
  // not the directly following value
  assert.equal((await check(t, { serial, pass: "1" + hotp(202) })).body.result.value, false);
  assert.equal((await check(t, { serial, pass: "1" + hotp(203) })).body.result.value, true);
  assert.equal((await getTokenBySerial(t.deps, serial)).count, 204);
  // after the timeout the first OTP is forgotten
  await check(t, { serial, pass: "1" + hotp(300) });
  t.clock.advance(301_000);
  assert.equal((await check(t, { serial, pass: "1" + hotp(301) })).body.result.value, false);
  await t.close();
});

Deno.test("POST /validate/check without pass is a 905; an empty pass is a normal attempt", async () => {
  const t = await createTestApp();
  const { serial } = await enroll(t, { type: "spass" });
  const missing = await check(t, { serial });
  assert.equal(missing.status, 400);
  assert.equal(missing.body.result.error.message, "ERR905: Missing parameter: pass");
  const empty = await check(t, { serial, pass: "" });
  assert.equal(empty.status, 200);
  assert.equal(empty.body.result.value, true);
  await t.close();
});

Deno.test("expired challenges of a token are removed when it gets a new challenge", async () => {
  const t = await createTestApp();
  const serial = await enrollHotp(t, { pin: "pin" });
  await policy(t, "cr", "authentication", "challenge_response=hotp");
  await check(t, { serial, pass: "pin" });
  await check(t, { serial, pass: "pin" });
  t.clock.advance(121_000);
  await check(t, { serial, pass: "pin" });
  const rows = await t.deps.db.selectFrom("challenge").selectAll().execute();
  assert.equal(rows.length, 1);
  await t.close();
});

Deno.test("POST /validate/check: a non-ASCII pass of the right length is a plain reject, not an error", async () => {
  const t = await createTestApp();
  const init = await t.asAdmin("POST", "/token/init", {
    body: { type: "pw", serial: "PWASCII", otpkey: "abc" },
  });
  assert.equal(init.status, 200);
  await init.body?.cancel();
  const res = await jsonOf(await t.post("/validate/check", { serial: "PWASCII", pass: "äbc" }));
  assert.equal(res.status, 200);
  assert.equal(res.body.result.value, false);
  const good = await jsonOf(await t.post("/validate/check", { serial: "PWASCII", pass: "abc" }));
  assert.equal(good.body.result.value, true);
  await t.close();
});
