import assert from "node:assert/strict";
import {
  DEFAULT_VALIDATE_POLICIES,
  validateCheck,
  validatePolicies,
} from "../../../src/domain/validate/mod.ts";
import { deletePolicy, savePolicy } from "../../../src/domain/policy/mod.ts";
import { initToken } from "../../../src/domain/token/mod.ts";
import { createTestApp } from "../../test_app.ts";
import { createUsers } from "../../fixtures/users.ts";
import { hotp, SEED_HEX } from "../../fixtures/tokens.ts";

const CTX = { login: "a", realm: "r", clientIp: "127.0.0.1", userAgent: "" };

Deno.test("validatePolicies returns privacyIDEA's defaults and a matching policy's values, per database", async () => {
  const t = await createTestApp();
  assert.deepEqual(await validatePolicies(t.deps, CTX), DEFAULT_VALIDATE_POLICIES);
  await savePolicy(t.deps, "cr", { scope: "authentication", action: "challenge_response=hotp" });
  await savePolicy(t.deps, "other", {
    scope: "authentication",
    action: "challenge_response=x",
    user: "b",
  });
  const p = await validatePolicies(t.deps, CTX);
  assert.deepEqual(p.challengeResponse, ["hotp"]);
  assert.equal(p.otppin, "tokenpin");
  const other = await createTestApp();
  assert.deepEqual((await validatePolicies(other.deps, CTX)).challengeResponse, []);
  await deletePolicy(t.deps, "cr");
  assert.deepEqual((await validatePolicies(t.deps, CTX)).challengeResponse, []);
  await t.close();
  await other.close();
});

Deno.test("validateCheck (the RADIUS listener's entry) returns value, detail, serial and user", async () => {
  const t = await createTestApp();
  await createUsers(t.deps, { realm: "r1", users: [{ login: "alice" }] });
  const user = { login: "alice", realm: "r1", resolver: "sql-r1", uid: "" };
  const { resolveUser } = await import("../../../src/domain/user/mod.ts");
  const ref = (await resolveUser(t.deps, "alice", "r1"))!;
  user.uid = ref.uid;
  await initToken(t.deps, { serial: "V1", otpkey: SEED_HEX, pin: "p" }, { user: ref });
  const base = { user: "alice", realm: "r1", clientIp: "10.0.0.1", userAgent: "FreeRADIUS" };
  const okRes = await validateCheck(t.deps, { ...base, pass: "p" + hotp(0) });
  assert.equal(okRes.value, true);
  assert.equal(okRes.serial, "V1");
  assert.equal(okRes.tokenType, "hotp");
  assert.deepEqual(okRes.user, ref);
  assert.equal(okRes.detail.message, "matching 1 tokens");

  await savePolicy(t.deps, "cr", { scope: "authentication", action: "challenge_response=hotp" });
  const ch = await validateCheck(t.deps, { ...base, pass: "p" });
  assert.equal(ch.value, false);
  const tid = ch.detail.transaction_id as string;
  assert.match(tid, /^\d{20}$/);
  const answer = await validateCheck(t.deps, { ...base, pass: hotp(1), transactionId: tid });
  assert.equal(answer.value, true);
  assert.equal(answer.detail.message, "Found matching challenge");
  await t.close();
});
