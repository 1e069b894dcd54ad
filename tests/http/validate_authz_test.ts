/**
 * The authorization rules on the authenticating token (`tokentype`, `serial`,
 * `tokeninfo`, `last_auth`) when one and when several tokens match the pass.
 */
import assert from "node:assert/strict";
import { createTestApp, type Json, jsonOf, type TestApp } from "../test_app.ts";
import { createUsers } from "../fixtures/users.ts";
import { enroll, enrollHotp, hotp } from "../fixtures/tokens.ts";
import { actionTest } from "../policy_actions/_registry.ts";
import { deletePolicy } from "../../src/domain/policy/mod.ts";

async function check(t: TestApp, pass: string) {
  return await jsonOf(await t.post("/validate/check", { user: "bob", realm: "realm1", pass }));
}

async function policy(t: TestApp, name: string, action: string) {
  const res = await jsonOf(
    await t.asAdmin("POST", `/policy/${name}`, {
      body: { scope: "authorization", action },
      json: true,
    }),
  );
  assert.equal(res.status, 200, JSON.stringify(res.body));
}

async function tokenInfo(t: TestApp, serial: string, key: string, value: string) {
  const res = await jsonOf(
    await t.asAdmin("POST", `/token/info/${serial}/${key}`, {
      body: { value },
    }),
  );
  assert.equal(res.status, 200, JSON.stringify(res.body));
}

/** realm1 with bob and `serials.length` spass tokens, all with PIN "bobpin". */
async function setup(serials: string[]): Promise<TestApp> {
  const t = await createTestApp();
  await createUsers(t.deps, { realm: "realm1", users: [{ login: "bob", password: "bobpw" }] });
  for (const serial of serials) {
    await enroll(t, { type: "spass", serial, pin: "bobpin", user: "bob", realm: "realm1" });
  }
  return t;
}

function assertRefused(res: { status: number; body: Json }, message: string) {
  assert.equal(res.status, 403, JSON.stringify(res.body));
  assert.equal(res.body.result.status, false);
  assert.equal(res.body.result.error.code, 303);
  assert.equal(res.body.result.error.message, message);
}

Deno.test("tokentype (authorization) refuses two matching tokens of a type it does not allow", async () => {
  const t = await setup(["SPASS1"]);
  await policy(t, "tt", "tokentype=hotp totp");
  assertRefused(await check(t, "bobpin"), "Tokentype not allowed for authentication!");
  await enroll(t, { type: "spass", serial: "SPASS2", pin: "bobpin", user: "bob", realm: "realm1" });
  // baseline: without the rule the same request authenticates with both tokens
  await policy(t, "tt", "tokentype=hotp totp spass");
  const two = await check(t, "bobpin");
  assert.equal(two.status, 200);
  assert.equal(two.body.result.value, true);
  assert.equal(two.body.detail.message, "matching 2 tokens");
  assert.equal(two.body.detail.type, "spass");
  await policy(t, "tt", "tokentype=hotp totp");
  assertRefused(await check(t, "bobpin"), "Tokentype not allowed for authentication!");
  await t.close();
});

Deno.test("tokentype (authorization): tokens of different types that match together are 'undetermined'", async () => {
  const t = await setup([]);
  // the pass is the HOTP token's PIN and OTP, and the spass token's PIN
  await enrollHotp(t, { serial: "HOTP1", pin: "1234", user: "bob", realm: "realm1" });
  await enroll(t, {
    type: "spass",
    serial: "SPASS1",
    pin: "1234" + hotp(0),
    user: "bob",
    realm: "realm1",
  });
  const both = await check(t, "1234" + hotp(0));
  assert.equal(both.body.result.value, true);
  assert.equal(both.body.detail.message, "matching 2 tokens");
  assert.equal(both.body.detail.type, "undetermined");
  // as in privacyIDEA, a list of token types does not allow "undetermined"
  await enroll(t, {
    type: "spass",
    serial: "SPASS1",
    pin: "1234" + hotp(1),
    user: "bob",
    realm: "realm1",
  });
  await policy(t, "tt", "tokentype=hotp spass");
  assertRefused(await check(t, "1234" + hotp(1)), "Tokentype not allowed for authentication!");
  // each alone is allowed
  assert.equal((await check(t, "1234" + hotp(2))).body.result.value, true);
  await t.close();
});

Deno.test("serial (authorization) applies to every matching token; several regexps add up", async () => {
  const t = await setup(["SPASSA1", "XSPASS2"]);
  const baseline = await check(t, "bobpin");
  assert.equal(baseline.body.result.value, true);
  assert.equal(baseline.body.detail.message, "matching 2 tokens");
  await policy(t, "sr", "serial=^SPASS");
  assertRefused(await check(t, "bobpin"), "Serial is not allowed for authentication!");
  await policy(t, "sr2", "serial=^XSPASS");
  const ok = await check(t, "bobpin");
  assert.equal(ok.status, 200);
  assert.equal(ok.body.result.value, true);
  await t.close();
});

Deno.test("serial (authorization): a regexp JavaScript cannot read refuses, not a 500", async () => {
  const t = await setup(["SPASSA1"]);
  await policy(t, "sr", "serial=^SPASS(?P<x>A)");
  assertRefused(await check(t, "bobpin"), "Serial is not allowed for authentication!");
  await t.close();
});

actionTest(
  "authorization",
  "tokeninfo",
  "requires a matching token info of every matching token",
  async () => {
    const t = await setup(["SPASS1"]);
    await tokenInfo(t, "SPASS1", "location", "office");
    await policy(t, "ti", "tokeninfo=location/^off/");
    assert.equal((await check(t, "bobpin")).body.result.value, true);
    await enroll(t, {
      type: "spass",
      serial: "SPASS2",
      pin: "bobpin",
      user: "bob",
      realm: "realm1",
    });
    // the second token has no such info: the empty value does not match
    const missing = await check(t, "bobpin");
    assertRefused(
      missing,
      "Tokeninfo field location with contents does not match regular expression.",
    );
    await tokenInfo(t, "SPASS2", "location", "home");
    assertRefused(
      await check(t, "bobpin"),
      "Tokeninfo field location with contents does not match regular expression.",
    );
    // without the policy the same tokens authenticate
    await deletePolicy(t.deps, "ti");
    assert.equal((await check(t, "bobpin")).body.result.value, true);
    await policy(t, "ti", "tokeninfo=location/^off/");
    await tokenInfo(t, "SPASS2", "location", "office 2");
    const ok = await check(t, "bobpin");
    assert.equal(ok.body.result.value, true);
    assert.equal(ok.body.detail.message, "matching 2 tokens");
    await t.close();
  },
);

Deno.test("tokeninfo (authorization): a value that is not key/regexp/ is ignored", async () => {
  const t = await setup(["SPASS1"]);
  await policy(t, "ti", "tokeninfo=location");
  assert.equal((await check(t, "bobpin")).body.result.value, true);
  await policy(t, "ti", "tokeninfo=location/^x/");
  assertRefused(
    await check(t, "bobpin"),
    "Tokeninfo field location with contents does not match regular expression.",
  );
  await t.close();
});

Deno.test("last_auth (authorization) applies to every matching token", async () => {
  const t = await setup(["SPASS1", "SPASS2"]);
  // SPASS1 last authenticated 4 hours ago, SPASS2 never
  await tokenInfo(t, "SPASS1", "last_auth", "2025-12-31 20:00:00.000000+0000");
  await policy(t, "la", "last_auth=5h");
  const ok = await check(t, "bobpin");
  assert.equal(ok.body.result.value, true);
  assert.equal(ok.body.detail.message, "matching 2 tokens");
  await tokenInfo(t, "SPASS1", "last_auth", "2025-12-31 20:00:00.000000+0000");
  await policy(t, "la", "last_auth=1h");
  const late = await check(t, "bobpin");
  assert.equal(late.status, 200);
  assert.equal(late.body.result.value, false);
  assert.equal(
    late.body.detail.message,
    "The last successful authentication was 2025-12-31 20:00:00.000000+0000. It is too long ago.",
  );
  await t.close();
});
