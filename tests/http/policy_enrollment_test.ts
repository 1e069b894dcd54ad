/** Enrolment and PIN policies read through the engine (spec 04 §3, 02). */
import assert from "node:assert/strict";
import { createTestApp, jsonOf, type TestApp } from "../test_app.ts";
import { hotp, SEED_HEX } from "../fixtures/tokens.ts";
import { savePolicy } from "../../src/domain/policy/mod.ts";
import { actionTest } from "../policy_actions/_registry.ts";

async function admin(t: TestApp, method: string, path: string, body?: Record<string, unknown>) {
  return await jsonOf(await t.asAdmin(method, path, { body, json: true }));
}

Deno.test("verify_enrollment (enrollment scope) keeps a new token in rollout state verify", async () => {
  const t = await createTestApp();
  const plain = await admin(t, "POST", "/token/init", { serial: "V0", otpkey: SEED_HEX });
  assert.equal(plain.body.detail.rollout_state, "enrolled");
  await savePolicy(t.deps, "ve", { scope: "enrollment", action: "verify_enrollment=hotp totp" });
  const first = await admin(t, "POST", "/token/init", { serial: "V1", otpkey: SEED_HEX });
  assert.equal(first.body.detail.rollout_state, "verify");
  const good = await admin(t, "POST", "/token/init", { serial: "V1", verify: hotp(0) });
  assert.equal(good.body.detail.rollout_state, "enrolled");
  await t.close();
});

Deno.test("<type>_2step (admin scope) with <type>_2step_difficulty (enrollment scope)", async () => {
  const t = await createTestApp();
  await savePolicy(t.deps, "adm", { scope: "admin", action: "enrollHOTP, hotp_2step=allow" });
  await savePolicy(t.deps, "en", { scope: "enrollment", action: "hotp_2step_difficulty=12000" });
  const first = await admin(t, "POST", "/token/init", { serial: "TS1", "2stepinit": "1" });
  assert.equal(first.status, 200, JSON.stringify(first.body));
  assert.equal(first.body.detail.rollout_state, "clientwait");
  assert.equal(first.body.detail["2step_difficulty"], 12000);
  await t.close();
});

actionTest("admin", "otp_pin_set_random", "gives /token/setrandompin its PIN length", async () => {
  const t = await createTestApp();
  await admin(t, "POST", "/token/init", { serial: "R1", otpkey: SEED_HEX });
  const none = await admin(t, "POST", "/token/setrandompin", { serial: "R1" });
  assert.equal(none.status, 400);
  await savePolicy(t.deps, "adm", {
    scope: "admin",
    action: "setrandompin, otp_pin_set_random=12",
  });
  const res = await admin(t, "POST", "/token/setrandompin", { serial: "R1" });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  assert.equal(res.body.result.value, 1);
  assert.equal(res.body.detail.pin.length, 12);
  await t.close();
});
