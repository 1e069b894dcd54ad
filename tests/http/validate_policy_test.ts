import assert from "node:assert/strict";
import { createTestApp, jsonOf, type TestApp } from "../test_app.ts";
import { createUsers } from "../fixtures/users.ts";
import { enrollHotp, hotp } from "../fixtures/tokens.ts";
import { getTokenBySerial } from "../../src/domain/token/mod.ts";
import { actionTest } from "../policy_actions/_registry.ts";
import { deletePolicy } from "../../src/domain/policy/mod.ts";

async function check(t: TestApp, body: Record<string, unknown>, remoteAddr?: string) {
  return await jsonOf(await t.post("/validate/check", body, { remoteAddr }));
}

async function policy(t: TestApp, name: string, body: Record<string, unknown>) {
  const res = await jsonOf(await t.asAdmin("POST", `/policy/${name}`, { body, json: true }));
  assert.equal(res.status, 200, JSON.stringify(res.body));
}

/** realm1 with alice (token, PIN 1234) and bob (no token). */
async function setup(): Promise<{ t: TestApp; serial: string }> {
  const t = await createTestApp();
  await createUsers(t.deps, {
    realm: "realm1",
    users: [{ login: "alice", password: "alicepw" }, { login: "bob", password: "bobpw" }],
  });
  const serial = await enrollHotp(t, { user: "alice", realm: "realm1", pin: "1234" });
  return { t, serial };
}

actionTest(
  "authentication",
  "otppin",
  "otppin=userstore: the PIN part is the user-store password",
  async () => {
    const { t } = await setup();
    assert.equal(
      (await check(t, { user: "alice", realm: "realm1", pass: "alicepw" + hotp(0) })).body.result
        .value,
      false,
    );
    await policy(t, "pin", { scope: "authentication", action: "otppin=userstore" });
    assert.equal(
      (await check(t, { user: "alice", realm: "realm1", pass: "alicepw" + hotp(1) })).body.result
        .value,
      true,
    );
    assert.equal(
      (await check(t, { user: "alice", realm: "realm1", pass: "1234" + hotp(2) })).body.result
        .value,
      false,
    );
    await t.close();
  },
);

Deno.test("otppin=none: the PIN part must be empty; a realm or client restriction limits it", async () => {
  const { t } = await setup();
  await policy(t, "pin", { scope: "authentication", action: "otppin=none", client: "10.0.0.0/8" });
  assert.equal(
    (await check(t, { user: "alice", realm: "realm1", pass: hotp(0) })).body.result.value,
    false,
  );
  assert.equal(
    (await check(t, { user: "alice", realm: "realm1", pass: hotp(1) }, "10.1.2.3")).body.result
      .value,
    true,
  );
  await t.close();
});

Deno.test("otppin: two policies of the same priority with different values conflict", async () => {
  const { t } = await setup();
  await policy(t, "a", { scope: "authentication", action: "otppin=none" });
  await policy(t, "b", { scope: "authentication", action: "otppin=userstore" });
  const res = await check(t, { user: "alice", realm: "realm1", pass: hotp(0) });
  assert.equal(res.status, 403);
  assert.equal(res.body.result.error.code, 303);
  assert.equal(
    res.body.result.error.message,
    "There are policies with conflicting actions: ['a', 'b']",
  );
  await policy(t, "b", { scope: "authentication", action: "otppin=userstore", priority: 2 });
  assert.equal(
    (await check(t, { user: "alice", realm: "realm1", pass: hotp(0) })).body.result.value,
    true,
  );
  await t.close();
});

actionTest(
  "authentication",
  "passthru",
  "a user without tokens authenticates against the user store",
  async () => {
    const { t } = await setup();
    assert.equal(
      (await check(t, { user: "bob", realm: "realm1", pass: "bobpw" })).body.result.value,
      false,
    );
    await policy(t, "pt", { scope: "authentication", action: "passthru" });
    const ok = await check(t, { user: "bob", realm: "realm1", pass: "bobpw" });
    assert.equal(ok.body.result.value, true);
    assert.equal(ok.body.detail.message, "against userstore due to 'pt'");
    // a wrong password falls through to the check without passthru, as in privacyIDEA
    const wrong = await check(t, { user: "bob", realm: "realm1", pass: "wrong" });
    assert.equal(wrong.status, 200);
    assert.equal(wrong.body.result.value, false);
    assert.equal(wrong.body.result.authentication, "REJECT");
    assert.equal(wrong.body.detail.message, "The user has no tokens assigned");
    await policy(t, "pt2", { scope: "authentication", action: "passthru=radius1" });
    const contra = await check(t, { user: "bob", realm: "realm1", pass: "bobpw" });
    assert.equal(contra.status, 403);
    assert.equal(contra.body.result.error.message, "Contradicting passthru policies.");
    await t.close();
  },
);

actionTest(
  "authentication",
  ["passOnNoToken", "passOnNoUser"],
  "accept with the policy name",
  async () => {
    const { t } = await setup();
    const without = await check(t, { user: "bob", realm: "realm1", pass: "anything" });
    assert.equal(without.body.result.value, false);
    assert.equal(without.body.detail.message, "The user has no tokens assigned");
    await policy(t, "pnt", { scope: "authentication", action: "passOnNoToken" });
    const noToken = await check(t, { user: "bob", realm: "realm1", pass: "anything" });
    assert.equal(noToken.body.result.value, true);
    assert.equal(noToken.body.detail.message, "user has no token, accepted due to 'pnt'");
    const unknown = await check(t, { user: "nobody", realm: "realm1", pass: "x" });
    assert.equal(unknown.status, 400);
    await policy(t, "pnu", { scope: "authentication", action: "passOnNoUser" });
    const accepted = await check(t, { user: "nobody", realm: "realm1", pass: "x" });
    assert.equal(accepted.body.result.value, true);
    assert.equal(accepted.body.detail.message, "user does not exist, accepted due to 'pnu'");
    await t.close();
  },
);

actionTest(
  "authentication",
  [
    "challenge_response",
    "challenge_text",
    "increase_failcounter_on_challenge",
  ],
  "a PIN triggers a challenge, with its text, and counts a failure",
  async () => {
    const { t, serial } = await setup();
    const plain = await check(t, { user: "alice", realm: "realm1", pass: "1234" });
    assert.equal(plain.body.result.value, false);
    assert.equal(plain.body.detail.transaction_id, undefined);
    // challenge_response alone: the default text, no failure counted
    await policy(t, "cr", { scope: "authentication", action: "challenge_response=hotp" });
    const failcount = (await getTokenBySerial(t.deps, serial)).failcount;
    const first = await check(t, { user: "alice", realm: "realm1", pass: "1234" });
    assert.equal(first.body.result.authentication, "CHALLENGE");
    assert.equal(first.body.detail.message, "please enter otp: ");
    assert.equal((await getTokenBySerial(t.deps, serial)).failcount, failcount);
    await policy(t, "cr", {
      scope: "authentication",
      action:
        "challenge_response=hotp, challenge_text=code\\, please, increase_failcounter_on_challenge",
    });
    const before = (await getTokenBySerial(t.deps, serial)).failcount;
    const ch = await check(t, { user: "alice", realm: "realm1", pass: "1234" });
    assert.equal(ch.body.result.authentication, "CHALLENGE");
    assert.match(ch.body.detail.transaction_id, /^\d+$/);
    assert.equal(ch.body.detail.message, "code, please");
    assert.equal((await getTokenBySerial(t.deps, serial)).failcount, before + 1);
    const answer = await check(t, {
      user: "alice",
      realm: "realm1",
      pass: hotp(0),
      transaction_id: ch.body.detail.transaction_id,
    });
    assert.equal(answer.body.result.value, true);
    await t.close();
  },
);

actionTest("authorization", "last_auth", "rejects when the last success is too old", async () => {
  const { t } = await setup();
  await policy(t, "la", { scope: "authorization", action: "last_auth=1h" });
  assert.equal(
    (await check(t, { user: "alice", realm: "realm1", pass: "1234" + hotp(0) })).body.result.value,
    true,
  );
  t.clock.advance(30 * 60_000);
  assert.equal(
    (await check(t, { user: "alice", realm: "realm1", pass: "1234" + hotp(1) })).body.result.value,
    true,
  );
  t.clock.advance(2 * 3_600_000);
  const late = await check(t, { user: "alice", realm: "realm1", pass: "1234" + hotp(2) });
  assert.equal(late.body.result.value, false);
  assert.match(late.body.detail.message, /It is too long ago\.$/);
  // the same request without the policy (the admin's login has expired by now)
  await deletePolicy(t.deps, "la");
  t.clock.advance(2 * 3_600_000);
  assert.equal(
    (await check(t, { user: "alice", realm: "realm1", pass: "1234" + hotp(3) })).body.result.value,
    true,
  );
  await t.close();
});

actionTest(
  "authorization",
  ["tokentype", "serial"],
  "restrict the authenticating token",
  async () => {
    const { t } = await setup();
    await policy(t, "tt", { scope: "authorization", action: "tokentype=totp spass" });
    const bad = await check(t, { user: "alice", realm: "realm1", pass: "1234" + hotp(0) });
    assert.equal(bad.status, 403);
    assert.equal(bad.body.result.error.message, "Tokentype not allowed for authentication!");
    await policy(t, "tt", { scope: "authorization", action: "tokentype=totp hotp" });
    assert.equal(
      (await check(t, { user: "alice", realm: "realm1", pass: "1234" + hotp(1) })).body.result
        .value,
      true,
    );
    await policy(t, "sr", { scope: "authorization", action: "serial=^TOTP.*" });
    const s = await check(t, { user: "alice", realm: "realm1", pass: "1234" + hotp(2) });
    assert.equal(s.status, 403);
    assert.equal(s.body.result.error.message, "Serial is not allowed for authentication!");
    await t.close();
  },
);

actionTest(
  "authorization",
  [
    "add_user_in_response",
    "add_resolver_in_response",
  ],
  "shape the detail",
  async () => {
    const { t } = await setup();
    const plain = await check(t, { user: "alice", realm: "realm1", pass: "1234" + hotp(0) });
    assert.equal(plain.body.detail.user, undefined);
    assert.equal(plain.body.detail["user-resolver"], undefined);
    await policy(t, "ad", {
      scope: "authorization",
      action: "add_user_in_response, add_resolver_in_response",
    });
    const res = await check(t, { user: "alice", realm: "realm1", pass: "1234" + hotp(1) });
    assert.equal(res.body.result.value, true);
    assert.equal(res.body.detail.user.username, "alice");
    assert.equal(res.body.detail["user-resolver"], "sql-realm1");
    assert.equal(res.body.detail["user-realm"], "realm1");
    await t.close();
  },
);

actionTest("authorization", "setrealm", "moves the user into another realm", async () => {
  const t = await createTestApp();
  await createUsers(t.deps, { realm: "realm1", users: [{ login: "carol", password: "x" }] });
  await createUsers(t.deps, { realm: "realm2", users: [{ login: "carol", password: "x" }] });
  await enrollHotp(t, { user: "carol", realm: "realm2", pin: "1234" });
  assert.equal(
    (await check(t, { user: "carol", realm: "realm1", pass: "1234" + hotp(0) })).body.result.value,
    false,
  );
  await policy(t, "sr", { scope: "authorization", action: "setrealm=realm2", realm: "realm1" });
  assert.equal(
    (await check(t, { user: "carol", realm: "realm1", pass: "1234" + hotp(1) })).body.result.value,
    true,
  );
  await policy(t, "sr2", { scope: "authorization", action: "setrealm=realm1", realm: "realm1" });
  const conflict = await check(t, { user: "carol", realm: "realm1", pass: "1234" + hotp(2) });
  assert.equal(conflict.status, 403);
  assert.equal(
    conflict.body.result.error.message,
    "I do not know, to which realm I should set the new realm. Conflicting policies exist.",
  );
  await t.close();
});

Deno.test("an inactive or non-matching policy changes nothing", async () => {
  const { t } = await setup();
  await policy(t, "off", { scope: "authentication", action: "otppin=none", active: false });
  await policy(t, "other", { scope: "authentication", action: "otppin=none", user: "bob" });
  await policy(t, "late", { scope: "authentication", action: "otppin=none", time: "Sat-Sun: 0-1" });
  assert.equal(
    (await check(t, { user: "alice", realm: "realm1", pass: hotp(0) })).body.result.value,
    false,
  );
  assert.equal(
    (await check(t, { user: "alice", realm: "realm1", pass: "1234" + hotp(1) })).body.result.value,
    true,
  );
  await t.close();
});

Deno.test("a userinfo condition selects the policy", async () => {
  const t = await createTestApp();
  await createUsers(t.deps, {
    realm: "realm1",
    users: [{ login: "alice", password: "a", email: "alice@corp.example" }, {
      login: "dave",
      password: "d",
      email: "dave@home.example",
    }],
  });
  await enrollHotp(t, { user: "alice", realm: "realm1", pin: "1234" });
  await enrollHotp(t, {
    user: "dave",
    realm: "realm1",
    pin: "1234",
    otpkey: "3132333435363738393031323334353637383931",
  });
  await policy(t, "corp", {
    scope: "authentication",
    action: "otppin=none",
    conditions: [["userinfo", "email", "matches", ".*@corp\\.example", true]],
  });
  assert.equal(
    (await check(t, { user: "alice", realm: "realm1", pass: hotp(0) })).body.result.value,
    true,
  );
  const dave = await check(t, {
    user: "dave",
    realm: "realm1",
    pass: hotp(0, "3132333435363738393031323334353637383931"),
  });
  assert.equal(dave.body.result.value, false);
  await t.close();
});

Deno.test("the audit row of /validate/check names the policies that applied", async () => {
  const { t } = await setup();
  await policy(t, "pin", { scope: "authentication", action: "otppin=none" });
  await policy(t, "types", { scope: "authorization", action: "tokentype=hotp" });
  assert.equal(
    (await check(t, { user: "alice", realm: "realm1", pass: hotp(0) })).body.result.value,
    true,
  );
  await t.deps.audit.flush();
  const rows = await t.deps.db.selectFrom("audit").select(["action", "policies"])
    .where("action", "like", "%/validate/check").execute();
  assert.deepEqual(rows.map((r) => r.policies.split(",").sort()), [["pin", "types"]]);
  await t.close();
});
