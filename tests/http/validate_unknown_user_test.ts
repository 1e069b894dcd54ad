/**
 * ERR904 for a user the user store does not know carries privacyIDEA's
 * angle brackets (`User <login@realm> does not exist.`, spec 01), wherever
 * Tessera produces it.
 */
import assert from "node:assert/strict";
import { createTestApp, type Json, jsonOf, type TestApp } from "../test_app.ts";
import { createUsers } from "../fixtures/users.ts";

async function setup(): Promise<TestApp> {
  const t = await createTestApp();
  await createUsers(t.deps, {
    realm: "realm1",
    resolver: "res1",
    users: [{ login: "alice", password: "alicepw" }],
  });
  return t;
}

function assertUnknown(res: { status: number; body: Json }, message: string) {
  assert.equal(res.status, 400, JSON.stringify(res.body));
  assert.equal(res.body.result.status, false);
  assert.equal(res.body.result.error.code, 904);
  assert.equal(res.body.result.error.message, message);
}

Deno.test("ERR904 of /validate/check, /validate/samlcheck and /validate/radiuscheck names <login@realm>", async () => {
  const t = await setup();
  const check = async (path: string, body: Record<string, unknown>) =>
    await jsonOf(await t.post(path, body));
  const expected = "ERR904: User <carol@realm1> does not exist.";
  assertUnknown(await check("/validate/check", { user: "carol", pass: "x" }), expected);
  assertUnknown(await check("/validate/check", { user: "carol@realm1", pass: "x" }), expected);
  assertUnknown(await check("/validate/samlcheck", { user: "carol", pass: "x" }), expected);
  // with an explicit resolver, privacyIDEA writes <login.resolver@realm>
  assertUnknown(
    await check("/validate/check", { user: "carol", realm: "realm1", resolver: "res1", pass: "x" }),
    "ERR904: User <carol.res1@realm1> does not exist.",
  );
  // radiuscheck answers a bare status, but the same error
  const radius = await t.post("/validate/radiuscheck", { user: "carol", pass: "x" });
  assert.equal(radius.status, 400);
  assert.equal((await radius.json()).result.error.message, expected);
  await t.close();
});

Deno.test("ERR904 of a user endpoint naming an unknown user has the same brackets", async () => {
  const t = await setup();
  const res = await jsonOf(
    await t.asAdmin("GET", "/user/attribute", { query: { user: "carol", realm: "realm1" } }),
  );
  assertUnknown(res, "ERR904: User <carol@realm1> does not exist.");
  await t.close();
});
