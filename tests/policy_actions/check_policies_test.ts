/**
 * Authentication and authorization actions of `/validate/check` that had no test of their
 * own: each request is sent without the policy (the baseline) and with it.
 */
import assert from "node:assert/strict";
import { createTestApp, jsonOf, type TestApp } from "../test_app.ts";
import { createUsers } from "../fixtures/users.ts";
import { enroll, enrollHotp, hotp } from "../fixtures/tokens.ts";
import { deletePolicy, savePolicy } from "../../src/domain/policy/mod.ts";
import { getTokenBySerial } from "../../src/domain/token/mod.ts";
import { actionTest } from "./_registry.ts";

async function check(t: TestApp, body: Record<string, unknown>) {
  return await jsonOf(await t.post("/validate/check", body));
}

/** realm1 with alice: an HOTP token with PIN 1234. */
async function setup(): Promise<{ t: TestApp; serial: string }> {
  const t = await createTestApp();
  await createUsers(t.deps, { realm: "realm1", users: [{ login: "alice", password: "pw" }] });
  const serial = await enrollHotp(t, { user: "alice", realm: "realm1", pin: "1234" });
  return { t, serial };
}

const ALICE = { user: "alice", realm: "realm1" };

actionTest(
  "authentication",
  "force_challenge_response",
  "PIN+OTP in one step is refused; the PIN alone triggers",
  async () => {
    const { t, serial } = await setup();
    await savePolicy(t.deps, "cr", { scope: "authentication", action: "challenge_response=hotp" });
    assert.equal((await check(t, { ...ALICE, pass: "1234" + hotp(0) })).body.result.value, true);
    await savePolicy(t.deps, "force", {
      scope: "authentication",
      action: "force_challenge_response",
    });
    const oneStep = await check(t, { ...ALICE, pass: "1234" + hotp(1) });
    assert.equal(oneStep.body.result.value, false);
    assert.equal(oneStep.body.result.authentication, "REJECT");
    assert.equal(oneStep.body.detail.message, "wrong otp pin");
    // the refused OTP was not used: it still answers the challenge
    assert.equal((await getTokenBySerial(t.deps, serial)).count, 1);
    const ch = await check(t, { ...ALICE, pass: "1234" });
    assert.equal(ch.body.result.authentication, "CHALLENGE");
    const answer = await check(t, {
      ...ALICE,
      pass: hotp(1),
      transaction_id: ch.body.detail.transaction_id,
    });
    assert.equal(answer.body.result.value, true);
    await t.close();
  },
);

actionTest(
  "authentication",
  "set_realm",
  "the request's realm is replaced before the user is looked up",
  async () => {
    const t = await createTestApp();
    await createUsers(t.deps, { realm: "realm1", users: [] });
    await createUsers(t.deps, { realm: "realm2", users: [{ login: "carol", password: "pw" }] });
    await enrollHotp(t, { user: "carol", realm: "realm2", pin: "1234" });
    const before = await check(t, { user: "carol", realm: "realm1", pass: "1234" + hotp(0) });
    assert.equal(before.status, 400);
    assert.equal(before.body.result.error.message, "ERR904: User <carol@realm1> does not exist.");
    await savePolicy(t.deps, "sr", {
      scope: "authentication",
      action: "set_realm=realm2",
      realm: "realm1",
    });
    const after = await check(t, { user: "carol", realm: "realm1", pass: "1234" + hotp(0) });
    assert.equal(after.body.result.value, true, JSON.stringify(after.body));
    await t.close();
  },
);

actionTest(
  "authentication",
  "disabled_token_types",
  "tokens of a disabled type do not authenticate",
  async () => {
    const { t, serial } = await setup();
    assert.equal((await check(t, { ...ALICE, pass: "1234" + hotp(0) })).body.result.value, true);
    await savePolicy(t.deps, "off", {
      scope: "authentication",
      action: "disabled_token_types=hotp",
    });
    const off = await check(t, { ...ALICE, pass: "1234" + hotp(1) });
    assert.equal(off.body.result.value, false);
    // the token was not even checked: its counter did not move
    assert.equal((await getTokenBySerial(t.deps, serial)).count, 1);
    await savePolicy(t.deps, "off", {
      scope: "authentication",
      action: "disabled_token_types=totp",
    });
    assert.equal((await check(t, { ...ALICE, pass: "1234" + hotp(1) })).body.result.value, true);
    await t.close();
  },
);

actionTest(
  "authorization",
  "authorized",
  "deny_access refuses a correct authentication; the OTP is used up",
  async () => {
    const { t, serial } = await setup();
    assert.equal((await check(t, { ...ALICE, pass: "1234" + hotp(0) })).body.result.value, true);
    await savePolicy(t.deps, "deny", { scope: "authorization", action: "authorized=deny_access" });
    const denied = await check(t, { ...ALICE, pass: "1234" + hotp(1) });
    assert.equal(denied.status, 400);
    assert.equal(denied.body.result.error.code, 401);
    assert.equal(
      denied.body.result.error.message,
      "ERR401: User is not authorized to authenticate under these conditions.",
    );
    assert.equal((await getTokenBySerial(t.deps, serial)).count, 2);
    await savePolicy(t.deps, "deny", { scope: "authorization", action: "authorized=grant_access" });
    assert.equal((await check(t, { ...ALICE, pass: "1234" + hotp(2) })).body.result.value, true);
    await t.close();
  },
);

actionTest(
  "authorization",
  "application_tokentype",
  "the request's type limits the tokens checked",
  async () => {
    const { t } = await setup();
    await enroll(t, {
      type: "spass",
      serial: "SP1",
      pin: "secret",
      user: "alice",
      realm: "realm1",
    });
    // without the policy the type parameter is ignored
    assert.equal(
      (await check(t, { ...ALICE, type: "spass", pass: "1234" + hotp(0) })).body.result.value,
      true,
    );
    await savePolicy(t.deps, "app", { scope: "authorization", action: "application_tokentype" });
    const hotpAsSpass = await check(t, { ...ALICE, type: "spass", pass: "1234" + hotp(1) });
    assert.equal(hotpAsSpass.body.result.value, false);
    assert.equal(
      (await check(t, { ...ALICE, type: "spass", pass: "secret" })).body.result.value,
      true,
    );
    assert.equal(
      (await check(t, { ...ALICE, type: "hotp", pass: "1234" + hotp(1) })).body.result.value,
      true,
    );
    await t.close();
  },
);

actionTest(
  "authorization",
  "no_detail_on_success",
  "a success answers without detail",
  async () => {
    const { t, serial } = await setup();
    const plain = await check(t, { ...ALICE, pass: "1234" + hotp(0) });
    assert.equal(plain.body.detail.serial, serial);
    assert.equal(plain.body.detail.message, "matching 1 tokens");
    await savePolicy(t.deps, "nd", { scope: "authorization", action: "no_detail_on_success" });
    const bare = await check(t, { ...ALICE, pass: "1234" + hotp(1) });
    assert.equal(bare.body.result.value, true);
    // privacyIDEA deletes the detail: the answer has none
    assert.equal("detail" in bare.body, false, JSON.stringify(bare.body));
    // a failure keeps its detail
    const fail = await check(t, { ...ALICE, pass: "1234000000" });
    assert.equal(fail.body.detail.message, "wrong otp value");
    await deletePolicy(t.deps, "nd");
    assert.equal((await check(t, { ...ALICE, pass: "1234" + hotp(2) })).body.detail.serial, serial);
    await t.close();
  },
);
