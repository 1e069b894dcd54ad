/**
 * `/token/copypin` and `/token/copyuser` (spec 14 §18): the PIN (as stored) and the owner with
 * the realms go from one token to another; admins only, with `copytokenpin` / `copytokenuser`
 * reaching both tokens' realms.
 */
import assert from "node:assert/strict";
import { createTestApp, jsonOf, type TestApp } from "../test_app.ts";
import { createUsers } from "../fixtures/users.ts";
import { issueJwt } from "../../src/http/jwt.ts";
import { savePolicy } from "../../src/domain/policy/mod.ts";
import { actionTest } from "../policy_actions/_registry.ts";

async function post(t: TestApp, path: string, body: Record<string, unknown>) {
  const res = await jsonOf(await t.asAdmin("POST", path, { body }));
  assert.equal(res.status, 200, `${path}: ${JSON.stringify(res.body)}`);
  return res.body.result.value;
}

/**
 * r1: alice with spass A1 (PIN "a1pin"), unassigned spass N1 (PIN "n1pin") in r1;
 * r2: bob with spass B1 (PIN "b1pin").
 */
async function world(): Promise<TestApp> {
  const t = await createTestApp();
  await createUsers(t.deps, { realm: "r1", users: [{ login: "alice", password: "a" }] });
  await createUsers(t.deps, { realm: "r2", users: [{ login: "bob", password: "b" }] });
  await post(t, "/token/init", {
    type: "spass",
    serial: "A1",
    pin: "a1pin",
    user: "alice",
    realm: "r1",
  });
  await post(t, "/token/init", { type: "spass", serial: "N1", pin: "n1pin" });
  await post(t, "/token/realm/N1", { realms: "r1" });
  await post(t, "/token/init", {
    type: "spass",
    serial: "B1",
    pin: "b1pin",
    user: "bob",
    realm: "r2",
  });
  return t;
}

async function checks(t: TestApp, serial: string, pass: string): Promise<boolean> {
  const res = await jsonOf(await t.post("/validate/check", { serial, pass }));
  return res.body.result.value === true;
}

async function state(t: TestApp) {
  return await t.deps.db.selectFrom("token").select([
    "serial",
    "pin_hash",
    "user_login",
    "user_realm",
  ]).orderBy("serial").execute();
}

Deno.test("POST /token/copypin: the target authenticates with the source's PIN, not its own", async () => {
  const t = await world();
  assert.equal(await post(t, "/token/copypin", { from: "A1", to: "N1" }), true);
  assert.equal(await checks(t, "N1", "a1pin"), true);
  assert.equal(await checks(t, "N1", "n1pin"), false);
  assert.equal(await checks(t, "A1", "a1pin"), true, "the source keeps its PIN");
  // unknown serials: privacyIDEA's errors, nothing changed
  const before = await state(t);
  const noFrom = await jsonOf(
    await t.asAdmin("POST", "/token/copypin", { body: { from: "X", to: "N1" } }),
  );
  assert.equal(noFrom.status, 400);
  assert.equal(noFrom.body.result.error.message, "ERR1016: No unique token to copy from found");
  const noTo = await jsonOf(
    await t.asAdmin("POST", "/token/copypin", { body: { from: "A1", to: "X" } }),
  );
  assert.equal(noTo.body.result.error.message, "ERR1017: No unique token to copy to found");
  const missing = await jsonOf(await t.asAdmin("POST", "/token/copypin", { body: { from: "A1" } }));
  assert.equal(missing.status, 400);
  assert.equal(missing.body.result.error.code, 905);
  assert.deepEqual(await state(t), before);
  await t.close();
});

Deno.test("POST /token/copyuser: the target gets the source's owner and realms, loses its PIN", async () => {
  const t = await world();
  assert.equal(await post(t, "/token/copyuser", { from: "B1", to: "N1" }), true);
  const n1 = await jsonOf(await t.asAdmin("GET", "/token/", { query: { serial: "N1" } }));
  const tok = n1.body.result.value.tokens[0];
  assert.equal(tok.username, "bob");
  assert.equal(tok.user_realm, "r2");
  assert.deepEqual(tok.realms, ["r2"], "r1 replaced by the source's realms");
  const bobs = await jsonOf(
    await t.asAdmin("GET", "/token/", { query: { user: "bob", realm: "r2" } }),
  );
  assert.deepEqual(bobs.body.result.value.tokens.map((x: { serial: string }) => x.serial).sort(), [
    "B1",
    "N1",
  ]);
  assert.equal(await checks(t, "N1", "n1pin"), false, "its PIN went with its former owner");
  // a source without owner is refused, nothing changed
  await post(t, "/token/init", { type: "spass", serial: "U1", pin: "u" });
  const before = await state(t);
  const noOwner = await jsonOf(
    await t.asAdmin("POST", "/token/copyuser", { body: { from: "U1", to: "A1" } }),
  );
  assert.equal(noOwner.status, 400);
  assert.equal(noOwner.body.result.error.message, "ERR10: The token U1 has no user to copy.");
  assert.deepEqual(await state(t), before);
  await t.close();
});

Deno.test("/token/copypin and /copyuser refuse a user JWT (also for the user's own tokens) and no JWT", async () => {
  const t = await world();
  await post(t, "/token/assign", { serial: "N1", user: "alice", realm: "r1" });
  const { token } = await issueJwt(t.deps, {
    username: "alice",
    realm: "r1",
    role: "user",
    resolver: "",
    authtype: "password",
    rights: [],
  });
  const before = await state(t);
  for (const path of ["/token/copypin", "/token/copyuser"]) {
    const body = { from: "A1", to: "N1" };
    assert.equal((await t.request("POST", path, { token, body })).status, 401, path);
    assert.equal((await t.request("POST", path, { body })).status, 401, path);
  }
  assert.deepEqual(await state(t), before);
  await t.close();
});

/** The right, and both tokens' realms: without it 403; r1-only policy: r1 pair yes, r2 no. */
async function checkRight(action: string, path: string): Promise<void> {
  const t = await world();
  await savePolicy(t.deps, "p", { scope: "admin", action: "tokenlist" });
  const before = await state(t);
  const denied = await jsonOf(await t.asAdmin("POST", path, { body: { from: "A1", to: "N1" } }));
  assert.equal(denied.status, 403);
  assert.equal(
    denied.body.result.error.message,
    `Admin actions are defined, but the action ${action} is not allowed!`,
  );
  assert.deepEqual(await state(t), before);
  // the right for r1 only: A1 and N1 (both r1) yes; B1 (r2) as source or target no
  await savePolicy(t.deps, "r1", { scope: "admin", action, realm: "r1" });
  for (const body of [{ from: "B1", to: "N1" }, { from: "A1", to: "B1" }]) {
    const res = await jsonOf(await t.asAdmin("POST", path, { body }));
    assert.equal(res.status, 403, `${JSON.stringify(body)}: ${JSON.stringify(res.body)}`);
    assert.deepEqual(await state(t), before, "nothing changed");
  }
  const allowed = await jsonOf(await t.asAdmin("POST", path, { body: { from: "A1", to: "N1" } }));
  assert.equal(allowed.status, 200, JSON.stringify(allowed.body));
  assert.notDeepEqual(await state(t), before);
  await t.close();
}

actionTest(
  "admin",
  "copytokenpin",
  "POST /token/copypin needs the right for both tokens' realms",
  () => checkRight("copytokenpin", "/token/copypin"),
);
actionTest(
  "admin",
  "copytokenuser",
  "POST /token/copyuser needs the right for both tokens' realms",
  () => checkRight("copytokenuser", "/token/copyuser"),
);
