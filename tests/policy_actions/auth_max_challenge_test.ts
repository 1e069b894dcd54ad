/**
 * `auth_max_fail` counts answered failures only (privacyIDEA's audit filter
 * `authentication != CHALLENGE`): the audit column `authentication` of the
 * validate requests, shown and searchable at `GET /audit/`.
 */
import assert from "node:assert/strict";
import { actionTest } from "./_registry.ts";
import { createTestApp, type Json, jsonOf, type TestApp } from "../test_app.ts";
import { createUsers } from "../fixtures/users.ts";
import { enrollHotp, hotp } from "../fixtures/tokens.ts";

/** realm1 with alice (HOTP, PIN 1234), her PIN alone triggering a challenge. */
async function setup(): Promise<TestApp> {
  const t = await createTestApp();
  await createUsers(t.deps, { realm: "realm1", users: [{ login: "alice", password: "alicepw" }] });
  await enrollHotp(t, { user: "alice", realm: "realm1", pin: "1234" });
  await policy(t, "cr", { scope: "authentication", action: "challenge_response=hotp" });
  return t;
}

async function policy(t: TestApp, name: string, body: Record<string, unknown>): Promise<void> {
  const res = await jsonOf(await t.asAdmin("POST", `/policy/${name}`, { body, json: true }));
  assert.equal(res.status, 200, JSON.stringify(res.body));
}

async function check(t: TestApp, body: Record<string, unknown>): Promise<Json> {
  return (await jsonOf(await t.post("/validate/check", { user: "alice", ...body }))).body;
}

async function audit(t: TestApp, query: Record<string, string> = {}): Promise<Json> {
  const res = await jsonOf(
    await t.asAdmin("GET", "/audit/", { query: { action: "POST /validate/check", ...query } }),
  );
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body.result.value;
}

actionTest(
  "authorization",
  "auth_max_fail",
  "triggered challenges are no failures; wrong answers and wrong OTPs still count",
  async () => {
    const t = await setup();
    try {
      await policy(t, "max", { scope: "authorization", action: "auth_max_fail=2/1m" });
      // three challenges: the limit of two failures is not reached by them
      let tid = "";
      for (let i = 0; i < 3; i++) {
        const res = await check(t, { pass: "1234" });
        assert.equal(res.result.authentication, "CHALLENGE", JSON.stringify(res));
        tid = res.detail.transaction_id;
      }
      const done = await check(t, { pass: hotp(0), transaction_id: tid });
      assert.equal(done.result.value, true, JSON.stringify(done));
      // failures count: a wrong answer and a wrong OTP reach the limit
      const { detail } = await check(t, { pass: "1234" });
      const wrong = await check(t, { pass: "000000", transaction_id: detail.transaction_id });
      assert.equal(wrong.result.authentication, "REJECT");
      assert.equal((await check(t, { pass: "1234000000" })).result.value, false);
      const limited = await check(t, { pass: "1234" + hotp(1) });
      assert.equal(limited.result.value, false);
      assert.equal(limited.detail.message, "Only 2 failed authentications per 0:01:00 allowed.");

      // the audit shows the answer of each check, newest first, and finds rows by it
      const page = await audit(t);
      assert.ok(page.auditcolumns.includes("authentication"));
      assert.deepEqual(
        page.auditdata.map((r: Json) => [r.authentication, r.success]),
        [
          ["REJECT", 0],
          ["REJECT", 0],
          ["REJECT", 0],
          ["CHALLENGE", 0],
          ["ACCEPT", 1],
          ["CHALLENGE", 0],
          ["CHALLENGE", 0],
          ["CHALLENGE", 0],
        ],
      );
      assert.equal((await audit(t, { authentication: "CHALLENGE" })).count, 4);
      // other requests have no answer
      const admin = await jsonOf(
        await t.asAdmin("GET", "/audit/", { query: { action: "POST /policy/*" } }),
      );
      assert.equal(admin.body.result.value.auditdata[0].authentication, "");
    } finally {
      await t.close();
    }
  },
);
