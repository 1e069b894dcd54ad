/**
 * `GET /dashboard/tokens` (the web interface's dashboard): token counts by type and state, for
 * admins with `tokenlist`, limited to the realms their tokenlist policies name exactly as the
 * token list is; refused without the right, for users and without a JWT; it changes nothing.
 */
import assert from "node:assert/strict";
import { createTestApp, jsonOf, type TestApp } from "../../test_app.ts";
import { createUsers } from "../../fixtures/users.ts";
import { addAdmin } from "../../../src/domain/admin/mod.ts";
import { savePolicy } from "../../../src/domain/policy/mod.ts";

const KEY = "3132333435363738393031323334353637383930";

async function login(t: TestApp, username: string, password: string): Promise<string> {
  const res = await jsonOf(await t.post("/auth", { username, password }));
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body.result.value.token;
}

async function asAdmin(t: TestApp, path: string, body: Record<string, unknown>) {
  const res = await jsonOf(await t.asAdmin("POST", path, { body }));
  assert.equal(res.status, 200, `${path}: ${JSON.stringify(res.body)}`);
}

/**
 * r1: alice with HOTP A1 (active) and A2 (locked), an unassigned spass U1 with token realm r1;
 * r2: bob with HOTP B1 (disabled) and spass B2 (revoked); an unassigned T0 in no realm.
 */
async function world() {
  const t = await createTestApp();
  await createUsers(t.deps, { realm: "r1", users: [{ login: "alice", password: "a-pass" }] });
  await createUsers(t.deps, { realm: "r2", users: [{ login: "bob", password: "b-pass" }] });
  const hotp = (serial: string, user: string, realm: string) =>
    asAdmin(t, "/token/init", { type: "hotp", serial, otpkey: KEY, user, realm });
  await hotp("A1", "alice", "r1");
  await hotp("A2", "alice", "r1");
  await hotp("B1", "bob", "r2");
  await asAdmin(t, "/token/init", {
    type: "spass",
    serial: "B2",
    pin: "1",
    user: "bob",
    realm: "r2",
  });
  await asAdmin(t, "/token/init", { type: "spass", serial: "U1", pin: "1" });
  await asAdmin(t, "/token/realm/U1", { realms: "r1" });
  await asAdmin(t, "/token/init", { type: "spass", serial: "T0", pin: "1" });
  await asAdmin(t, "/token/set", { serial: "A2", max_failcount: 1 });
  const fail = await t.post("/validate/check", { serial: "A2", pass: "000000" });
  await fail.body?.cancel();
  await asAdmin(t, "/token/disable", { serial: "B1" });
  await asAdmin(t, "/token/revoke", { serial: "B2" });
  return t;
}

async function counts(t: TestApp, token: string | undefined) {
  return await jsonOf(await t.get("/dashboard/tokens", { token }));
}

Deno.test("GET /dashboard/tokens: an admin without admin policies counts every token by type and state", async () => {
  const t = await world();
  const res = await counts(t, await t.adminToken());
  assert.equal(res.status, 200, JSON.stringify(res.body));
  assert.deepEqual(res.body.result.value, {
    count: 6,
    active: 3,
    locked: 1,
    disabled: 1,
    revoked: 1,
    types: {
      hotp: { count: 3, active: 1, locked: 1, disabled: 1, revoked: 0 },
      spass: { count: 3, active: 2, locked: 0, disabled: 0, revoked: 1 },
    },
  });
  // the list agrees: its count of each state is the dashboard's (a token counts once)
  for (const state of ["active", "revoked"]) {
    const list = await jsonOf(
      await t.asAdmin("GET", "/token/", { query: { state, pagesize: "1" } }),
    );
    assert.equal(list.body.result.value.count, res.body.result.value[state], state);
  }
  await t.close();
});

Deno.test("GET /dashboard/tokens: a realm-limited admin counts only the tokens of their realms, as their token list shows them", async () => {
  const t = await world();
  await savePolicy(t.deps, "all", { scope: "admin", action: "*", adminuser: "admin" });
  await savePolicy(t.deps, "r1-only", {
    scope: "admin",
    action: "tokenlist",
    adminuser: "helpdesk",
    realm: "r1",
  });
  await addAdmin(t.deps, "helpdesk", { password: "helpdesk-password" });
  const helpdesk = await login(t, "helpdesk", "helpdesk-password");
  const res = await counts(t, helpdesk);
  assert.equal(res.status, 200, JSON.stringify(res.body));
  // A1, A2 (owner in r1) and U1 (token realm r1); nothing of r2, not T0 in no realm
  assert.deepEqual(res.body.result.value, {
    count: 3,
    active: 2,
    locked: 1,
    disabled: 0,
    revoked: 0,
    types: {
      hotp: { count: 2, active: 1, locked: 1, disabled: 0, revoked: 0 },
      spass: { count: 1, active: 1, locked: 0, disabled: 0, revoked: 0 },
    },
  });
  const list = await jsonOf(await t.get("/token/", { token: helpdesk, query: { pagesize: "50" } }));
  assert.deepEqual(
    list.body.result.value.tokens.map((x: { serial: string }) => x.serial).sort(),
    ["A1", "A2", "U1"],
  );
  // the superuser admin still counts everything
  assert.equal((await counts(t, await t.adminToken())).body.result.value.count, 6);
  await t.close();
});

Deno.test("GET /dashboard/tokens: refused without tokenlist, for a user and without a JWT; nothing changes", async () => {
  const t = await world();
  const before = await jsonOf(await t.asAdmin("GET", "/token/", { query: { pagesize: "50" } }));
  await savePolicy(t.deps, "all", { scope: "admin", action: "*", adminuser: "admin" });
  await savePolicy(t.deps, "audit-only", {
    scope: "admin",
    action: "auditlog",
    adminuser: "auditor",
  });
  await addAdmin(t.deps, "auditor", { password: "auditor-password" });
  const auditor = await login(t, "auditor", "auditor-password");
  const refused = await counts(t, auditor);
  assert.equal(refused.status, 403, JSON.stringify(refused.body));
  assert.equal(refused.body.result.status, false);
  assert.match(refused.body.result.error.message, /tokenlist/);

  const alice = await login(t, "alice@r1", "a-pass");
  const user = await counts(t, alice);
  assert.equal(user.status, 401, JSON.stringify(user.body));
  assert.equal(user.body.result.status, false);

  const anonymous = await counts(t, undefined);
  assert.equal(anonymous.status, 401, JSON.stringify(anonymous.body));

  // reading counts changed no token
  const after = await jsonOf(await t.asAdmin("GET", "/token/", { query: { pagesize: "50" } }));
  assert.deepEqual(after.body.result.value.tokens, before.body.result.value.tokens);
  await t.close();
});
