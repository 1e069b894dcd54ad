/**
 * Admin rights on admin endpoints (spec 04 §4.10): once an admin policy
 * exists, each endpoint needs its action; granting it lifts the 403.
 */
import assert from "node:assert/strict";
import { createTestApp, jsonOf, type TestApp } from "../test_app.ts";
import { issueJwt } from "../../src/http/jwt.ts";
import { savePolicy } from "../../src/domain/policy/mod.ts";
import { createUsers } from "../fixtures/users.ts";
import { enrollHotp } from "../fixtures/tokens.ts";
import { actionTest } from "../policy_actions/_registry.ts";
import { TOKEN_TYPES } from "../../src/domain/token/types/mod.ts";

interface Row {
  method: string;
  path: string;
  body?: Record<string, unknown>;
  action: string;
  /** The denial when it is not the default one. */
  message?: string;
}

const ENROLL_DENIED =
  "Admin actions are defined, but you are not allowed to enroll this token type!";

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
  { method: "GET", path: "/token/", action: "tokenlist" },
  { method: "POST", path: "/token/assign", body: { serial: "S1", user: "u" }, action: "assign" },
  { method: "POST", path: "/token/unassign", body: { serial: "S1" }, action: "unassign" },
  { method: "POST", path: "/token/enable", body: { serial: "S1" }, action: "enable" },
  { method: "POST", path: "/token/disable/S1", action: "disable" },
  { method: "POST", path: "/token/revoke", body: { serial: "S1" }, action: "revoke" },
  { method: "POST", path: "/token/reset", body: { serial: "S1" }, action: "reset" },
  {
    method: "POST",
    path: "/token/resync",
    body: { serial: "S1", otp1: "1", otp2: "2" },
    action: "resync",
  },
  { method: "POST", path: "/token/setpin", body: { serial: "S1", otppin: "1" }, action: "setpin" },
  { method: "POST", path: "/token/setrandompin", body: { serial: "S1" }, action: "setrandompin" },
  {
    method: "POST",
    path: "/token/description",
    body: { serial: "S1", description: "d" },
    action: "setdescription",
  },
  { method: "POST", path: "/token/set", body: { serial: "S1", description: "d" }, action: "set" },
  { method: "POST", path: "/token/realm/S1", body: { realms: "" }, action: "tokenrealms" },
  { method: "POST", path: "/token/info/S1/k", body: { value: "v" }, action: "settokeninfo" },
  { method: "DELETE", path: "/token/info/S1/k", action: "settokeninfo" },
  { method: "GET", path: "/token/challenges/", action: "getchallenges" },
  { method: "DELETE", path: "/token/S1", action: "delete" },
  {
    method: "POST",
    path: "/validate/triggerchallenge",
    body: { serial: "S1" },
    action: "triggerchallenge",
  },
  { method: "GET", path: "/event/", action: "eventhandling_read" },
  { method: "POST", path: "/event/", body: { name: "e" }, action: "eventhandling_write" },
  { method: "DELETE", path: "/event/1", action: "eventhandling_write" },
  { method: "GET", path: "/smtpserver/", action: "smtpserver_read" },
  {
    method: "POST",
    path: "/smtpserver/s1",
    body: { server: "localhost" },
    action: "smtpserver_write",
  },
  { method: "GET", path: "/radiusserver/", action: "radiusserver_read" },
  {
    method: "POST",
    path: "/radiusserver/r1",
    body: { server: "127.0.0.1", secret: "s" },
    action: "radiusserver_write",
  },
  { method: "GET", path: "/machineresolver/", action: "mresolverread" },
  {
    method: "POST",
    path: "/machineresolver/test",
    body: { type: "hosts" },
    action: "mresolverwrite",
  },
  { method: "DELETE", path: "/machineresolver/m1", action: "mresolverdelete" },
  { method: "GET", path: "/machine/", action: "machinelist" },
  { method: "GET", path: "/machine/token", action: "manage_machine_tokens" },
  { method: "GET", path: "/machine/authitem", action: "fetch_authentication_items" },
  { method: "GET", path: "/subscriptions/", action: "managesubscription" },
  { method: "GET", path: "/token/getserial/123456", action: "getserial" },
  { method: "POST", path: "/token/lost/S1", action: "losttoken" },
  {
    method: "POST",
    path: "/token/load/tokens.csv",
    body: { file: "S1, 3132333435363738393031323334353637383930, hotp, 6\n", type: "aladdin-xml" },
    action: "importtokens",
    message: "Admin actions are defined, but you are not allowed to upload token files.",
  },
  { method: "GET", path: "/privacyideaserver/", action: "privacyideaserver_read" },
  {
    method: "POST",
    path: "/privacyideaserver/p1",
    body: { url: "https://pi.example" },
    action: "privacyideaserver_write",
  },
  { method: "GET", path: "/smsgateway/", action: "smsgateway_read" },
  { method: "POST", path: "/smsgateway", body: { name: "g1" }, action: "smsgateway_write" },
];

async function send(t: TestApp, row: Row) {
  return await jsonOf(await t.asAdmin(row.method, row.path, { body: row.body, json: true }));
}

/** An admin action no row needs: with a policy granting only it, the admin scope is configured. */
function otherAction(action: string): string {
  return action === "machinelist" ? "auditlog" : "machinelist";
}

/** Denied without the right (the admin scope has a policy), not denied with it. */
async function checkRight(row: Row): Promise<void> {
  const t = await createTestApp();
  await t.adminToken();
  const other = otherAction(row.action);
  await savePolicy(t.deps, "p", { scope: "admin", action: other });
  const denied = await send(t, row);
  assert.equal(denied.status, 403, JSON.stringify(denied.body));
  assert.equal(denied.body.result.error.code, 303);
  assert.equal(
    denied.body.result.error.message,
    row.message ?? `Admin actions are defined, but the action ${row.action} is not allowed!`,
  );
  await savePolicy(t.deps, "p", { scope: "admin", action: `${other}, ${row.action}` });
  const allowed = await send(t, row);
  // granted: past the right check (a later step may still refuse, e.g. a push token without
  // its enrolment policies, but not with the right's denial)
  assert.notEqual(
    allowed.body.result?.error?.message,
    denied.body.result.error.message,
    JSON.stringify(allowed.body),
  );
  await t.close();
}

for (const row of ROWS) {
  actionTest("admin", row.action, `${row.method} ${row.path} needs the admin right`, async () => {
    await checkRight(row);
  });
}

actionTest(
  "admin",
  "enroll{TYPE}",
  "POST /token/init of each type needs the admin right",
  async () => {
    for (const type of Object.keys(TOKEN_TYPES)) {
      await checkRight({
        method: "POST",
        path: "/token/init",
        body: { type, genkey: 1 },
        action: `enroll${type.toUpperCase()}`,
        message: ENROLL_DENIED,
      });
    }
  },
  { types: "all" },
);

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
  await createUsers(t.deps, { realm: "r1", users: [{ login: "alice", password: "a" }] });
  await savePolicy(t.deps, "p", { scope: "admin", action: "machinelist" });
  const { token } = await issueJwt(t.deps, {
    username: "alice",
    realm: "r1",
    role: "user",
    resolver: "",
    authtype: "password",
    rights: [],
  });
  assert.equal((await jsonOf(await t.get("/token/", { token }))).status, 200);
  // /system/ is for admins only, whatever the policies say
  const system = await jsonOf(await t.get("/system/", { token }));
  assert.equal(system.status, 401);
  assert.equal(system.body.result.error.code, 4306);
  await t.close();
});

Deno.test("admin token rights use the token's realms when the request names no realm", async () => {
  const t = await createTestApp();
  await createUsers(t.deps, { realm: "realm1", users: [{ login: "alice", password: "a" }] });
  await createUsers(t.deps, { realm: "realm2", users: [{ login: "bob", password: "b" }] });
  const s1 = await enrollHotp(t, { user: "alice", realm: "realm1" });
  const s2 = await enrollHotp(t, { user: "bob", realm: "realm2" });
  await savePolicy(t.deps, "p", { scope: "admin", action: "disable", realm: "realm1" });
  const ok = await jsonOf(await t.asAdmin("POST", "/token/disable", { body: { serial: s1 } }));
  assert.equal(ok.status, 200);
  const no = await jsonOf(await t.asAdmin("POST", "/token/disable", { body: { serial: s2 } }));
  assert.equal(no.status, 403);
  assert.equal(
    no.body.result.error.message,
    "Admin actions are defined, but the action disable is not allowed!",
  );
  await t.close();
});

Deno.test("user rights: a user policy limits what users may do with their tokens", async () => {
  const t = await createTestApp();
  await createUsers(t.deps, { realm: "realm1", users: [{ login: "alice", password: "alice-pw" }] });
  const serial = await enrollHotp(t, { user: "alice", realm: "realm1" });
  const login = await jsonOf(
    await t.post("/auth", { username: "alice@realm1", password: "alice-pw" }),
  );
  const token = login.body.result.value.token as string;
  await savePolicy(t.deps, "u", { scope: "user", action: "disable, enrollHOTP" });
  const ok = await jsonOf(await t.post("/token/disable", { serial }, { token }));
  assert.equal(ok.status, 200);
  const no = await jsonOf(await t.post("/token/enable", { serial }, { token }));
  assert.equal(no.status, 403);
  assert.equal(
    no.body.result.error.message,
    "User actions are defined, but the action enable is not allowed!",
  );
  const spass = await jsonOf(await t.post("/token/init", { type: "spass" }, { token }));
  assert.equal(spass.status, 403);
  assert.equal(
    spass.body.result.error.message,
    "User actions are defined, but you are not allowed to enroll this token type!",
  );
  await t.close();
});

Deno.test("GET /token/ shows a realm-limited admin only the tokens of the policy realms", async () => {
  const t = await createTestApp();
  await createUsers(t.deps, { realm: "realm1", users: [{ login: "alice", password: "a" }] });
  await createUsers(t.deps, { realm: "realm2", users: [{ login: "bob", password: "b" }] });
  const s1 = await enrollHotp(t, { user: "alice", realm: "realm1" });
  const s2 = await enrollHotp(t, { user: "bob", realm: "realm2" });
  await enrollHotp(t, {});
  const serials = async (query?: Record<string, string>) =>
    ((await jsonOf(await t.asAdmin("GET", "/token/", { query }))).body.result.value.tokens as {
      serial: string;
    }[]).map((x) => x.serial).sort();
  assert.equal((await serials()).length, 3);
  await savePolicy(t.deps, "p", { scope: "admin", action: "tokenlist", realm: "realm1" });
  assert.deepEqual(await serials(), [s1]);
  assert.deepEqual(await serials({ tokenrealm: "realm2" }), []);
  await savePolicy(t.deps, "q", { scope: "admin", action: "tokenlist", realm: "realm2" });
  assert.deepEqual(await serials(), [s1, s2].sort(), "realms of several policies add up");
  await savePolicy(t.deps, "q", { scope: "admin", action: "tokenlist", realm: "" });
  assert.equal((await serials()).length, 3, "a tokenlist policy without realm means all realms");
  await t.close();
});

Deno.test("admin rights: a userinfo condition looks at the user acted on", async () => {
  const t = await createTestApp();
  await createUsers(t.deps, {
    realm: "realm1",
    users: [
      { login: "alice", password: "a", email: "alice@corp.example" },
      { login: "bob", password: "b", email: "bob@home.example" },
    ],
  });
  await savePolicy(t.deps, "p", {
    scope: "admin",
    action: "userlist",
    conditions: [["userinfo", "email", "matches", ".*@corp\\.example", true, "condition_is_false"]],
  });
  const list = async (user: string) =>
    (await jsonOf(await t.asAdmin("GET", "/user/", { query: { user, realm: "realm1" } }))).status;
  assert.equal(await list("alice"), 200);
  assert.equal(await list("bob"), 403);
  await t.close();
});

Deno.test("multi-serial calls drop the serials outside the admin's policy realms", async () => {
  const t = await createTestApp();
  await createUsers(t.deps, { realm: "realm1", users: [{ login: "alice", password: "a" }] });
  await createUsers(t.deps, { realm: "realm2", users: [{ login: "bob", password: "b" }] });
  const s1 = await enrollHotp(t, { user: "alice", realm: "realm1" });
  const s2 = await enrollHotp(t, { user: "bob", realm: "realm2" });
  await savePolicy(t.deps, "p", { scope: "admin", action: "delete", realm: "realm1" });
  const none = await jsonOf(
    await t.asAdmin("DELETE", "/token/", { body: { serials: [s2] }, json: true }),
  );
  assert.equal(none.status, 403);
  assert.equal(
    none.body.result.error.message,
    "Admin actions are defined, but the action delete is not allowed for any of the serials provided!",
  );
  const some = await jsonOf(
    await t.asAdmin("DELETE", "/token/", { body: { serials: [s1, s2] }, json: true }),
  );
  assert.equal(some.status, 200);
  assert.equal(some.body.result.value.count_success, 1);
  assert.deepEqual(some.body.result.value.unauthorized, [s2]);
  await t.close();
});

actionTest(
  "admin",
  "hide_tokeninfo",
  "token info keys are hidden from the token list",
  async () => {
    const t = await createTestApp();
    const serial = await enrollHotp(t, {});
    await jsonOf(
      await t.asAdmin("POST", `/token/info/${serial}/secretish`, { body: { value: "x" } }),
    );
    const info = async () =>
      (await jsonOf(await t.asAdmin("GET", "/token/", { query: { serial } }))).body.result.value
        .tokens[0].info;
    assert.equal((await info()).secretish, "x");
    await savePolicy(t.deps, "p", {
      scope: "admin",
      action: "tokenlist, settokeninfo, hide_tokeninfo=secretish hashlib",
    });
    const hidden = await info();
    assert.equal(hidden.secretish, undefined);
    assert.equal(hidden.hashlib, undefined);
    await t.close();
  },
);
