/**
 * Admin rights on admin endpoints (spec 04 §4.10): once an admin policy
 * exists, each endpoint needs its action; granting it lifts the 403.
 */
import assert from "node:assert/strict";
import { createTestApp, jsonOf, type TestApp } from "../test_app.ts";
import { issueJwt } from "../../src/http/jwt.ts";
import { savePolicy } from "../../src/domain/policy/mod.ts";

interface Row {
  method: string;
  path: string;
  body?: Record<string, unknown>;
  action: string;
}

/** Endpoint → admin action; rows are added as endpoints are wired. */
const ROWS: Row[] = [
  { method: "GET", path: "/system/", action: "configread" },
  { method: "GET", path: "/system/PrependPin", action: "configread" },
  {
    method: "POST",
    path: "/system/setConfig",
    body: { PrependPin: "True" },
    action: "configwrite",
  },
  { method: "DELETE", path: "/system/PrependPin", action: "configdelete" },
  { method: "GET", path: "/audit/", action: "auditlog" },
  { method: "GET", path: "/policy/", action: "policyread" },
  { method: "GET", path: "/policy/defs", action: "policyread" },
  {
    method: "POST",
    path: "/policy/x",
    body: { scope: "webui", action: "search_on_enter" },
    action: "policywrite",
  },
  { method: "DELETE", path: "/policy/x", action: "policydelete" },
  { method: "GET", path: "/resolver/", action: "resolverread" },
  { method: "GET", path: "/resolver/r1", action: "resolverread" },
  {
    method: "POST",
    path: "/resolver/r1",
    body: { type: "passwdresolver", fileName: "x" },
    action: "resolverwrite",
  },
  {
    method: "POST",
    path: "/resolver/test",
    body: { type: "passwdresolver" },
    action: "resolverwrite",
  },
  { method: "DELETE", path: "/resolver/r1", action: "resolverdelete" },
  { method: "POST", path: "/realm/realm1", body: { resolvers: "r1" }, action: "resolverwrite" },
  { method: "DELETE", path: "/realm/realm1", action: "resolverdelete" },
  { method: "POST", path: "/defaultrealm/realm1", action: "resolverwrite" },
  { method: "DELETE", path: "/defaultrealm", action: "resolverdelete" },
  { method: "GET", path: "/user/", action: "userlist" },
  { method: "POST", path: "/user/", body: { user: "u", resolver: "r1" }, action: "adduser" },
  { method: "PUT", path: "/user/", body: { user: "u", resolver: "r1" }, action: "updateuser" },
  { method: "DELETE", path: "/user/r1/u", action: "deleteuser" },
];

async function send(t: TestApp, row: Row) {
  return await jsonOf(await t.asAdmin(row.method, row.path, { body: row.body, json: true }));
}

for (const row of ROWS) {
  Deno.test(`${row.method} ${row.path} needs admin right ${row.action}`, async () => {
    const t = await createTestApp();
    await t.adminToken();
    // an unrelated admin policy configures the admin scope
    await savePolicy(t.deps, "p", { scope: "admin", action: "tokenlist" });
    const denied = await send(t, row);
    assert.equal(denied.status, 403, JSON.stringify(denied.body));
    assert.equal(denied.body.result.error.code, 303);
    assert.equal(
      denied.body.result.error.message,
      `Admin actions are defined, but the action ${row.action} is not allowed!`,
    );
    await savePolicy(t.deps, "p", { scope: "admin", action: `tokenlist, ${row.action}` });
    const allowed = await send(t, row);
    assert.notEqual(allowed.body.result?.error?.code, 303, JSON.stringify(allowed.body));
    await t.close();
  });
}

Deno.test("admin rights: a policy restricted to another admin realm does not grant", async () => {
  const t = await createTestApp({ configText: '[auth]\nsuperuser_realms = ["helpdesk"]\n' });
  await savePolicy(t.deps, "p", { scope: "admin", action: "configread", adminrealm: "helpdesk" });
  const local = await jsonOf(await t.asAdmin("GET", "/system/"));
  assert.equal(local.status, 403, 'local admins have adminrealm ""');
  const { token } = await issueJwt(t.deps, {
    username: "carl",
    realm: "helpdesk",
    role: "admin",
    resolver: "",
    authtype: "password",
    rights: [],
  });
  const su = await jsonOf(await t.get("/system/", { token }));
  assert.equal(su.status, 200);
  await t.close();
});

Deno.test("user callers of admin-or-user endpoints are not checked against admin rights", async () => {
  const t = await createTestApp();
  await savePolicy(t.deps, "p", { scope: "admin", action: "tokenlist" });
  const { token } = await issueJwt(t.deps, {
    username: "alice",
    realm: "r1",
    role: "user",
    resolver: "",
    authtype: "password",
    rights: [],
  });
  assert.equal((await jsonOf(await t.get("/system/", { token }))).status, 200);
  await t.close();
});
