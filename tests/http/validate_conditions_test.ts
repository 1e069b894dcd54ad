/**
 * Policy conditions on the request's headers (spec 04 §4.8, section `HTTP Request header`) at
 * the validate routes besides `/validate/check`: `/validate/triggerchallenge`,
 * `/validate/initialize` and `/validate/polltransaction` match their policies with the
 * request's headers, environment and parameters, as `/validate/check` does. Each test shows a
 * policy whose header condition holds applying, and the same policy not applying to a request
 * whose header differs.
 */
import assert from "node:assert/strict";
import { createTestApp, type Json, jsonOf, type TestApp } from "../test_app.ts";
import { createUsers } from "../fixtures/users.ts";
import { enrollHotp } from "../fixtures/tokens.ts";

const VPN_ONLY = [["HTTP Request header", "X-Site", "equals", "vpn", true]];

async function policy(t: TestApp, name: string, body: Record<string, unknown>) {
  const res = await jsonOf(await t.asAdmin("POST", `/policy/${name}`, { body, json: true }));
  assert.equal(res.status, 200, JSON.stringify(res.body));
}

async function challengeCount(t: TestApp): Promise<number> {
  const row = await t.deps.db.selectFrom("challenge").select((eb) => eb.fn.countAll().as("n"))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

function site(value: string): Record<string, string> {
  return { "X-Site": value };
}

Deno.test("POST /validate/triggerchallenge: an authentication policy with a header condition applies when the header matches", async () => {
  const t = await createTestApp();
  try {
    await createUsers(t.deps, { realm: "realm1", users: [{ login: "alice", password: "pw" }] });
    await enrollHotp(t, { user: "alice", realm: "realm1", pin: "1234" });
    await policy(t, "vpn", {
      scope: "authentication",
      action: { challenge_text: "Code from the VPN token" },
      conditions: VPN_ONLY,
    });
    const trigger = async (headers: Record<string, string>): Promise<Json> =>
      await jsonOf(
        await t.asAdmin("POST", "/validate/triggerchallenge", {
          body: { user: "alice", realm: "realm1" },
          headers,
        }),
      );
    const vpn = await trigger(site("vpn"));
    assert.equal(vpn.status, 200, JSON.stringify(vpn.body));
    assert.equal(vpn.body.result.value, 1);
    assert.equal(vpn.body.detail.message, "Code from the VPN token");
    const office = await trigger(site("office"));
    assert.equal(office.status, 200, JSON.stringify(office.body));
    assert.equal(office.body.result.value, 1);
    assert.equal(office.body.detail.message, "please enter otp: ");
    // no header at all is missing data: raise_error (the default) refuses, nothing is triggered
    const before = await challengeCount(t);
    const missing = await trigger({});
    assert.equal(missing.status, 403);
    assert.equal(
      missing.body.result.error.message,
      "Unknown HTTP Request header key 'X-Site' referenced in condition of policy 'vpn'!",
    );
    assert.equal(await challengeCount(t), before);
  } finally {
    await t.close();
  }
});

Deno.test("GET /validate/initialize: disabled_token_types with a header condition refuses only the matching requests", async () => {
  const t = await createTestApp();
  try {
    await policy(t, "fido", {
      scope: "enrollment",
      action: { webauthn_relying_party_id: "example.com", webauthn_relying_party_name: "Example" },
    });
    await policy(t, "kiosk", {
      scope: "authentication",
      action: { disabled_token_types: "passkey" },
      conditions: [["HTTP Request header", "X-Site", "equals", "kiosk", true]],
    });
    const initialize = async (headers: Record<string, string>): Promise<Json> =>
      await jsonOf(await t.get("/validate/initialize", { query: { type: "passkey" }, headers }));
    const kiosk = await initialize(site("kiosk"));
    assert.equal(kiosk.status, 403, JSON.stringify(kiosk.body));
    assert.equal(kiosk.body.result.error.code, 303);
    assert.equal(
      kiosk.body.result.error.message,
      "The authentication method is not available.",
    );
    assert.equal(await challengeCount(t), 0, "a refused request stores no challenge");
    const office = await initialize(site("office"));
    assert.equal(office.status, 200, JSON.stringify(office.body));
    assert.equal(typeof office.body.detail.transaction_id, "string");
    assert.equal(office.body.detail.passkey.rpId, "example.com");
    assert.equal(await challengeCount(t), 1);
  } finally {
    await t.close();
  }
});

Deno.test("GET /validate/polltransaction: api_key_required with a header condition asks only the matching requests for a key", async () => {
  const t = await createTestApp();
  try {
    await policy(t, "public", {
      scope: "authorization",
      action: { api_key_required: true },
      conditions: [["HTTP Request header", "X-Site", "equals", "public", true]],
    });
    const poll = async (headers: Record<string, string>): Promise<Json> =>
      await jsonOf(
        await t.get("/validate/polltransaction", { query: { transaction_id: "123" }, headers }),
      );
    const pub = await poll(site("public"));
    assert.equal(pub.status, 403, JSON.stringify(pub.body));
    assert.equal(pub.body.result.error.code, 303);
    assert.equal(pub.body.result.error.message, "No valid API key was passed.");
    const office = await poll(site("office"));
    assert.equal(office.status, 200, JSON.stringify(office.body));
    assert.equal(office.body.result.value, false);
    assert.equal(office.body.detail.challenge_status, "pending");
  } finally {
    await t.close();
  }
});
