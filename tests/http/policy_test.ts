import assert from "node:assert/strict";
import { ADMIN_PASSWORD, createTestApp, jsonOf, type TestApp } from "../test_app.ts";
import { createUsers } from "../fixtures/users.ts";
import { issueJwt } from "../../src/http/jwt.ts";
import { listPolicies } from "../../src/domain/policy/mod.ts";
import { addAdmin } from "../../src/domain/admin/mod.ts";

async function post(t: TestApp, name: string, body: Record<string, unknown>, json = true) {
  return await jsonOf(await t.asAdmin("POST", `/policy/${name}`, { body, json }));
}

async function getAll(t: TestApp, query?: Record<string, string>) {
  return await jsonOf(await t.asAdmin("GET", "/policy/", { query }));
}

async function tokenFor(
  t: TestApp,
  username: string,
  realm = "",
  role: "admin" | "user" = "admin",
) {
  return (await issueJwt(t.deps, {
    username,
    realm,
    role,
    resolver: "",
    authtype: "password",
    rights: [],
  }))
    .token;
}

Deno.test("POST /policy/<name> creates a policy; GET /policy/ returns a map by default", async () => {
  const t = await createTestApp();
  const created = await post(t, "pol1", {
    scope: "authorization",
    action: { no_detail_on_fail: true, tokentype: "hotp totp" },
    client: "10.1.2.3",
    priority: 3,
    check_all_resolvers: true,
    description: "This is a test policy",
    conditions: [["userinfo", "groups", "contains", "group1", true]],
  });
  assert.equal(created.status, 200);
  assert.deepEqual(created.body.result.value, { "setPolicy pol1": 1 });
  const { status, body } = await getAll(t);
  assert.equal(status, 200);
  assert.deepEqual(body.result.value, {
    pol1: {
      id: 1,
      name: "pol1",
      scope: "authorization",
      active: true,
      priority: 3,
      action: { no_detail_on_fail: true, tokentype: "hotp totp" },
      realm: [],
      resolver: [],
      user: [],
      adminrealm: [],
      adminuser: [],
      pinode: [],
      client: ["10.1.2.3"],
      time: "",
      check_all_resolvers: true,
      user_case_insensitive: false,
      description: "This is a test policy",
      user_agents: [],
      conditions: [["userinfo", "groups", "contains", "group1", true, "raise_error"]],
    },
  });
  await t.close();
});

Deno.test("GET /policy/ returns privacyIDEA's list with compat.policy_list = true", async () => {
  const t = await createTestApp({ configText: "[compat]\npolicy_list = true\n" });
  await post(t, "b", { scope: "webui", action: "login_mode=privacyIDEA" });
  await post(t, "a", { scope: "enrollment", action: "max_token_per_user=2" });
  const { body } = await getAll(t);
  assert.ok(Array.isArray(body.result.value));
  assert.deepEqual(body.result.value.map((p: { name: string }) => p.name), ["b", "a"]);
  const one = await jsonOf(await t.asAdmin("GET", "/policy/a"));
  assert.deepEqual(one.body.result.value.map((p: { name: string }) => p.name), ["a"]);
  const none = await jsonOf(await t.asAdmin("GET", "/policy/nosuch"));
  assert.equal(none.status, 200);
  assert.deepEqual(none.body.result.value, []);
  await t.close();
});

Deno.test("GET /policy/<name> gives one entry or an empty map", async () => {
  const t = await createTestApp();
  await post(t, "pol1", { scope: "webui", action: "search_on_enter" });
  const one = await jsonOf(await t.asAdmin("GET", "/policy/pol1"));
  assert.deepEqual(Object.keys(one.body.result.value), ["pol1"]);
  const none = await jsonOf(await t.asAdmin("GET", "/policy/nosuch"));
  assert.equal(none.status, 200);
  assert.deepEqual(none.body.result.value, {});
  await t.close();
});

Deno.test("GET /policy/ filters scope exactly, realm on the whole stored string, active; keys case-insensitive", async () => {
  const t = await createTestApp();
  await createUsers(t.deps, { realm: "r1", users: [] });
  await createUsers(t.deps, { realm: "r2", users: [] });
  await post(t, "a", { scope: "webui", action: "login_mode=privacyIDEA", realm: "r1" });
  await post(t, "b", { scope: "webui", action: "login_mode=privacyIDEA", realm: "r1, r2" });
  await post(t, "c", { scope: "enrollment", action: "max_token_per_user=2" });
  await post(t, "d", { scope: "enrollment", action: "max_token_per_user=2", active: false });
  const names = async (q: Record<string, string>) =>
    Object.keys((await getAll(t, q)).body.result.value);
  assert.deepEqual(await names({ realm: "r1" }), ["a"]);
  assert.deepEqual(await names({ REALM: "R1*" }), ["a", "b"]);
  assert.deepEqual(await names({ scope: "enrollment" }), ["c", "d"]);
  assert.deepEqual(await names({ Scope: "enrollment", active: "false" }), ["d"]);
  assert.deepEqual(await names({ active: "true" }), ["a", "b", "c"]);
  await t.close();
});

Deno.test("POST /policy/<name> update resets active, check_all_resolvers, user_case_insensitive and description", async () => {
  const t = await createTestApp();
  await post(t, "p", {
    scope: "user",
    action: "enable",
    priority: 4,
    client: "10.0.0.0/8",
    description: "d",
    check_all_resolvers: true,
    conditions: [["userinfo", "k", "equals", "v", true]],
  });
  await jsonOf(await t.asAdmin("POST", "/policy/disable/p"));
  const r = await post(t, "p", { scope: "user", action: "disable" });
  assert.deepEqual(r.body.result.value, { "setPolicy p": 1 });
  const p = (await getAll(t)).body.result.value.p;
  assert.equal(p.active, true, "a partial update re-enables the policy");
  assert.equal(p.description, null);
  assert.equal(p.check_all_resolvers, false);
  assert.equal(p.priority, 4, "unsent fields keep their value");
  assert.deepEqual(p.client, ["10.0.0.0/8"]);
  assert.deepEqual(p.action, { disable: true });
  assert.equal(p.conditions.length, 1, "conditions change only when sent");
  await post(t, "p", { scope: "user", action: "disable", client: "", conditions: [] });
  const q = (await getAll(t)).body.result.value.p;
  assert.deepEqual(q.client, []);
  assert.deepEqual(q.conditions, []);
  await t.close();
});

Deno.test("POST /policy/<name> accepts form fields, CSV lists and privacyIDEA booleans", async () => {
  const t = await createTestApp();
  const r = await post(t, "p", {
    scope: "user",
    action: "enable, disable",
    user: "alice, bob",
    active: "True",
    user_case_insensitive: "1",
    check_all_resolvers: "yes",
  }, false);
  assert.equal(r.status, 200);
  const p = (await getAll(t)).body.result.value.p;
  assert.deepEqual(p.user, ["alice", "bob"]);
  assert.equal(p.active, true);
  assert.equal(p.user_case_insensitive, true);
  assert.equal(p.check_all_resolvers, false, '"yes" is not true for privacyIDEA');
  const s = await post(t, "u", { scope: "user", action: "" });
  assert.equal(s.status, 200, "scope user allows an empty action");
  await t.close();
});

const REJECTIONS: {
  name: string;
  path: string;
  body: Record<string, unknown>;
  code?: number;
  message: string;
}[] = [
  {
    name: "bad characters",
    path: "a$b",
    body: { scope: "admin", action: "enable" },
    message: "ERR905: The name of the policy may only contain the characters a-zA-Z0-9_. -",
  },
  {
    name: "name check",
    path: "Check",
    body: { scope: "admin", action: "enable" },
    message: "ERR905: Invalid policy name: Check",
  },
  {
    name: "reserved prefix",
    path: "pi-update-policy-x",
    body: { scope: "admin", action: "enable" },
    message: "ERR905: Invalid policy name: pi-update-policy-x",
  },
  {
    name: "space in name",
    path: "a%20b",
    body: { scope: "admin", action: "enable" },
    message: "ERR905: Policy name must not contain white spaces!",
  },
  {
    name: "missing scope",
    path: "p",
    body: { action: "enable" },
    message: "ERR905: Missing parameter: scope",
  },
  {
    name: "bad scope",
    path: "p",
    body: { scope: "system", action: "enable" },
    message: "ERR905: Invalid scope 'system' in policy 'p'!",
  },
  {
    name: "missing action",
    path: "p",
    body: { scope: "admin" },
    message: "ERR905: Missing parameter: action",
  },
  {
    name: "priority 0",
    path: "p",
    body: { scope: "admin", action: "enable", priority: 0 },
    message: "ERR905: Priority must be at least 1",
  },
  {
    name: "priority not a number",
    path: "p",
    body: { scope: "admin", action: "enable", priority: "x" },
    message: 'ERR905: Cannot parse parameter "priority": expected an integer, got "x"',
  },
  {
    name: "unknown realm",
    path: "p",
    body: { scope: "admin", action: "enable", realm: "*, -nosuch" },
    message: "ERR905: Undefined User-realms: ['nosuch']!",
  },
  {
    name: "unknown resolver",
    path: "p",
    body: { scope: "admin", action: "enable", resolver: "res9" },
    message: "ERR905: Undefined Resolvers: ['res9']!",
  },
  {
    name: "unknown node",
    path: "p",
    body: { scope: "admin", action: "enable", pinode: "node9" },
    message: "ERR905: Undefined Privacyidea nodes: ['node9']!",
  },
  {
    name: "admin realm not a superuser realm",
    path: "p",
    body: { scope: "admin", action: "enable", adminrealm: "r1" },
    message: "ERR905: Undefined Admin realms: ['r1']!",
  },
  {
    name: "bad time",
    path: "p",
    body: { scope: "admin", action: "enable", time: "Montag: 8-12" },
    message: "ERR905: Invalid time format 'Montag: 8-12'!",
  },
  {
    name: "bad client",
    path: "p",
    body: { scope: "admin", action: "enable", client: "10.0.0.0/8, -foo" },
    code: 302,
    message: "ERR302: Invalid client definition!",
  },
  {
    name: "unknown action",
    path: "p",
    body: { scope: "admin", action: "enable, -nosuch, *, otppin=none" },
    message: "ERR905: Invalid actions ['nosuch', 'otppin']!",
  },
  {
    name: "realm_dropdown needs realms",
    path: "p",
    body: { scope: "webui", action: "realm_dropdown=nosuch" },
    message: "ERR905: Invalid actions ['realm_dropdown']!",
  },
  {
    name: "bad condition length",
    path: "p",
    body: { scope: "admin", action: "enable", conditions: [["userinfo", "k"]] },
    message: "ERR905: Condition of policy 'p' has 2 values, but should have 5 or 6.",
  },
  {
    name: "alias comparator",
    path: "p",
    body: { scope: "admin", action: "enable", conditions: [["userinfo", "k", "==", "v", true]] },
    message: "ERR905: Invalid condition of policy 'p': Unknown comparator '=='.",
  },
  {
    name: "action of wrong type",
    path: "p",
    body: { scope: "admin", action: 5 },
    message: "ERR905: Invalid actions ['5']!",
  },
  {
    name: "over-long action",
    path: "p",
    body: { scope: "admin", action: "enable, " + "x".repeat(3000) },
    message: 'ERR905: Cannot parse parameter "action": longer than 2000 characters',
  },
  {
    name: "huge priority",
    path: "p",
    body: { scope: "admin", action: "enable", priority: 1e12 },
    message: "ERR905: Priority must be at most 1000000",
  },
  {
    name: "over-long name",
    path: "a".repeat(65),
    body: { scope: "admin", action: "enable" },
    message: "ERR905: Policy name must not be longer than 64 characters",
  },
  {
    name: "list field of wrong type",
    path: "p",
    body: { scope: "admin", action: "enable", realm: { a: 1 } },
    message:
      'ERR905: Cannot parse parameter "realm": expected a comma-separated string or a list of strings',
  },
];
for (const r of REJECTIONS) {
  Deno.test(`POST /policy/<name> rejects: ${r.name}`, async () => {
    const t = await createTestApp();
    const res = await post(t, r.path, r.body);
    assert.equal(res.status, 400);
    assert.equal(res.body.result.error.code, r.code ?? 905);
    assert.equal(res.body.result.error.message, r.message);
    assert.deepEqual((await getAll(t)).body.result.value, {}, "a refused request changes nothing");
    await t.close();
  });
}

Deno.test("POST /policy/<name> accepts existing realms, resolvers, node and superuser admin realms", async () => {
  const t = await createTestApp({ configText: '[auth]\nsuperuser_realms = ["super"]\n' });
  const resolver = await createUsers(t.deps, { realm: "r1", users: [] });
  const r = await post(t, "p", {
    scope: "admin",
    action: "enable",
    realm: ["R1", "cust_.*"],
    resolver,
    pinode: "test-node",
    adminrealm: "super",
    time: "Mon-Fri: 08:00-16:30",
  });
  assert.equal(r.status, 400, "a regex realm is checked like a name");
  const ok = await post(t, "p", {
    scope: "admin",
    action: "enable",
    realm: ["R1", "*"],
    resolver,
    pinode: "test-node",
    adminrealm: "super",
    time: "Mon-Fri: 08:00-16:30",
  });
  assert.equal(ok.status, 200);
  // the new admin policy does not grant policyread to the test admin: read through the domain
  const [p] = await listPolicies(t.deps, { name: "p" });
  assert.deepEqual(p.realm, ["r1", "*"]);
  assert.deepEqual(p.resolver, [resolver]);
  await t.close();
});

Deno.test("POST /policy/enable|disable/<name> return the id; unknown name is 404/601", async () => {
  const t = await createTestApp();
  await post(t, "x", { scope: "webui", action: "login_mode=privacyIDEA" });
  await post(t, "p", { scope: "webui", action: "login_mode=privacyIDEA" });
  const d = await jsonOf(await t.asAdmin("POST", "/policy/disable/p"));
  assert.equal(d.body.result.value, 2);
  assert.equal((await getAll(t)).body.result.value.p.active, false);
  const e = await jsonOf(await t.asAdmin("POST", "/policy/enable/p"));
  assert.equal(e.body.result.value, 2);
  assert.equal((await getAll(t)).body.result.value.p.active, true);
  const nf = await jsonOf(await t.asAdmin("POST", "/policy/enable/nosuch"));
  assert.equal(nf.status, 404);
  assert.equal(nf.body.result.error.code, 601);
  assert.equal(nf.body.result.error.message, "The policy with name 'nosuch' does not exist");
  await t.close();
});

Deno.test("DELETE /policy/<name> returns the id; unknown is 404/601", async () => {
  const t = await createTestApp();
  await post(t, "p", { scope: "webui", action: "login_mode=privacyIDEA" });
  const d = await jsonOf(await t.asAdmin("DELETE", "/policy/p"));
  assert.equal(d.status, 200);
  assert.equal(d.body.result.value, 1);
  assert.deepEqual((await getAll(t)).body.result.value, {});
  const nf = await jsonOf(await t.asAdmin("DELETE", "/policy/p"));
  assert.equal(nf.status, 404);
  assert.equal(nf.body.result.error.message, "The requested Policy could not be found.");
  await t.close();
});

Deno.test("PATCH /policy/<old> renames; missing, unknown and taken names are refused", async () => {
  const t = await createTestApp();
  await post(t, "a", { scope: "webui", action: "login_mode=privacyIDEA" });
  await post(t, "b", { scope: "webui", action: "login_mode=privacyIDEA" });
  const patch = async (name: string, body: Record<string, unknown>) =>
    await jsonOf(await t.asAdmin("PATCH", `/policy/${name}`, { body, json: true }));
  const ok = await patch("a", { name: "a new" });
  assert.equal(ok.status, 200);
  assert.equal(ok.body.result.value, 1);
  assert.deepEqual(Object.keys((await getAll(t)).body.result.value), ["a new", "b"]);
  const missing = await patch("b", {});
  assert.equal(missing.status, 400);
  assert.equal(missing.body.result.error.message, "ERR905: Missing parameter: name");
  const unknown = await patch("zz", { name: "c" });
  assert.equal(unknown.body.result.error.message, "ERR905: Policy does not exist: zz");
  const taken = await patch("b", { name: "a new" });
  assert.equal(taken.body.result.error.message, "ERR905: Policy already exists: a new");
  const bad = await patch("b", { name: "x$" });
  assert.equal(bad.status, 400);
  await t.close();
});

Deno.test("GET /policy/export/<fn> writes values as Python's str(); POST /policy/import/<fn> reads them back", async () => {
  const t = await createTestApp();
  const empty = await t.asAdmin("GET", "/policy/export/policies.txt");
  assert.equal(empty.status, 200);
  assert.equal(await empty.text(), "");
  await post(t, "p1", {
    scope: "user",
    action: { enable: true, hide_tokeninfo: "a b" },
    user: "alice",
    priority: 2,
    description: "x",
  });
  const res = await t.asAdmin("GET", "/policy/export/policies.txt");
  assert.match(res.headers.get("content-type") ?? "", /^text\/plain/);
  assert.equal(res.headers.get("content-disposition"), "attachment; filename=policies.txt");
  const text = await res.text();
  assert.match(text, /^\[p1\]\n/);
  assert.match(text, /\naction = \{'enable': True, 'hide_tokeninfo': 'a b'\}\n/);
  assert.match(text, /\nuser = \['alice'\]\n/);
  assert.match(text, /\nactive = True\n/);
  // strings are plain, as privacyIDEA writes them; lists, dicts, booleans are literals
  assert.match(text, /\ndescription = x\n/);
  assert.match(text, /\nscope = user\n/);
  assert.match(text, /\nrealm = \[\]\n/);
  assert.match(text, /\n\n$/);

  const t2 = await createTestApp();
  const form = new FormData();
  form.set("file", new File([text.replace("[p1]", "[p2]")], "policies.txt"));
  const imp = await jsonOf(
    await t2.app.request("/policy/import/policies.txt", {
      method: "POST",
      headers: { "PI-Authorization": await t2.adminToken() },
      body: form,
    }),
  );
  assert.equal(imp.status, 200);
  assert.equal(imp.body.result.value, 1);
  const p2 = (await getAll(t2)).body.result.value.p2;
  assert.deepEqual(p2.action, { enable: true, hide_tokeninfo: "a b" });
  assert.deepEqual(p2.user, ["alice"]);
  assert.equal(p2.priority, 2);
  assert.equal(p2.description, null, "description is not imported");
  await t.close();
  await t2.close();
});

async function importText(t: TestApp, content: BlobPart) {
  const form = new FormData();
  form.set("file", new File([content], "f.cfg"));
  return await jsonOf(
    await t.app.request("/policy/import/f.cfg", {
      method: "POST",
      headers: { "PI-Authorization": await t.adminToken() },
      body: form,
    }),
  );
}

Deno.test("POST /policy/import/<fn>: empty and binary files, a bad section refuses the file, fixture", async () => {
  const t = await createTestApp();
  const empty = await importText(t, "  \n");
  assert.equal(empty.status, 400);
  assert.equal(empty.body.result.error.message, "ERR905: Error loading policy. File empty!");
  const binary = await importText(t, new Uint8Array([0xff, 0xfe, 0x00, 0x01]));
  assert.equal(
    binary.body.result.error.message,
    "ERR905: Unable to convert file contents. Binary data is not supported",
  );
  const partial = await importText(
    t,
    "[a]\nscope = 'webui'\naction = {'login_mode': 'privacyIDEA'}\n\n[b]\nscope = 'nosuch'\naction = 'x'\n\n[c]\nscope = 'webui'\naction = 'search_on_enter'\n",
  );
  assert.equal(partial.status, 400);
  // every section is checked before any is saved (privacyIDEA would keep "a")
  assert.deepEqual((await listPolicies(t.deps)).map((x) => x.name), []);
  const ok = await importText(
    t,
    '[importpol1]\nname=importpol1\nscope=admin\naction={"enable": True}\nactive = False\n',
  );
  assert.equal(ok.body.result.value, 1);
  // the imported admin policy locks the test admin out of policyread: read through the domain
  const [p] = await listPolicies(t.deps, { name: "importpol1" });
  assert.deepEqual(p.action, { enable: true });
  assert.equal(p.active, true, "active is ignored on import");
  await t.close();
});

Deno.test("GET /policy/check matches active policies only, by priority", async () => {
  const t = await createTestApp();
  await createUsers(t.deps, { realm: "r1", users: [] });
  await post(t, "low", {
    scope: "authentication",
    action: "otppin=none",
    realm: "r1",
    priority: 5,
  });
  await post(t, "high", { scope: "authentication", action: "otppin=none", priority: 1 });
  await post(t, "off", { scope: "authentication", action: "otppin=none", active: false });
  await post(t, "net", { scope: "authentication", action: "otppin=none", client: "10.0.0.0/8" });
  const check = async (q: Record<string, string>) =>
    await jsonOf(await t.asAdmin("GET", "/policy/check", { query: q }));
  const r = await check({ user: "alice", realm: "r1", scope: "authentication", action: "otppin" });
  assert.equal(r.body.result.value.allowed, true);
  assert.deepEqual(r.body.result.value.policy.map((p: { name: string }) => p.name), [
    "high",
    "low",
  ]);
  const c = await check({
    user: "alice",
    realm: "r1",
    scope: "authentication",
    action: "otppin",
    client: "10.1.1.1",
  });
  assert.deepEqual(c.body.result.value.policy.map((p: { name: string }) => p.name), [
    "high",
    "net",
    "low",
  ]);
  const none = await check({ user: "alice", realm: "r1", scope: "admin", action: "enable" });
  assert.deepEqual(none.body.result.value, { allowed: false, info: "No policies found" });
  const missing = await check({ user: "alice", realm: "r1", scope: "admin" });
  assert.equal(missing.status, 400);
  assert.equal(missing.body.result.error.message, "ERR905: Missing parameter: action");
  await t.close();
});

Deno.test("GET /policy/defs lists the scopes with actions; /defs/<scope>, /defs/conditions, /defs/pinodes", async () => {
  const t = await createTestApp();
  const all = (await jsonOf(await t.asAdmin("GET", "/policy/defs"))).body.result.value;
  assert.deepEqual(Object.keys(all).sort(), [
    "admin",
    "authentication",
    "authorization",
    "container",
    "enrollment",
    "register",
    "token",
    "user",
    "webui",
  ]);
  assert.equal(all.container.privacyIDEA_server_url.type, "str");
  // the scopes of features Tessera does not have: no actions, so no policy can be saved there
  for (const scope of ["hardening"]) {
    const one = await jsonOf(await t.asAdmin("GET", `/policy/defs/${scope}`));
    assert.deepEqual(one.body.result.value, {}, scope);
  }
  assert.deepEqual(all.authentication.otppin.value, ["tokenpin", "userstore", "none"]);
  assert.equal(all.authentication.otppin.type, "str");
  assert.equal(all.admin.enrollHOTP.type, "bool");
  assert.equal(all.admin.policywrite.type, "bool");
  assert.equal(all.admin.otp_pin_maxlength.type, "int");
  const admin = (await jsonOf(await t.asAdmin("GET", "/policy/defs/admin"))).body.result.value;
  assert.deepEqual(admin, all.admin);
  const unknown = await jsonOf(await t.asAdmin("GET", "/policy/defs/nosuch"));
  assert.equal(unknown.body.result.value, null);
  const cond = (await jsonOf(await t.asAdmin("GET", "/policy/defs/conditions"))).body.result.value;
  assert.ok(cond.sections.userinfo.description);
  assert.equal(Object.keys(cond.comparators).length, 16);
  assert.equal(cond.handle_missing_data.raise_error.display_value, "Raise an error");
  assert.equal(cond.handle_missing_data.condition_is_true.display_value, "Condition is true");
  const nodes = (await jsonOf(await t.asAdmin("GET", "/policy/defs/pinodes"))).body.result.value;
  assert.deepEqual(nodes, ["test-node"]);
  await t.close();
});

Deno.test("/policy/* needs an admin JWT", async () => {
  const t = await createTestApp();
  const anon = await jsonOf(await t.get("/policy/"));
  assert.equal(anon.status, 401);
  const user = await jsonOf(
    await t.get("/policy/", { token: await tokenFor(t, "alice", "r1", "user") }),
  );
  assert.equal(user.status, 401);
  assert.equal(user.body.result.error.code, 4306);
  await t.close();
});

Deno.test("admin rights: policyread/policywrite/policydelete are enforced once admin policies exist", async () => {
  const t = await createTestApp();
  await post(t, "adm", { scope: "admin", action: "policyread, policywrite", adminuser: "admin" });
  // the test admin may still read and write, but not delete
  assert.equal((await getAll(t)).status, 200);
  assert.equal((await post(t, "w", { scope: "webui", action: "search_on_enter" })).status, 200);
  const del = await jsonOf(await t.asAdmin("DELETE", "/policy/w"));
  assert.equal(del.status, 403);
  assert.equal(del.body.result.error.code, 303);
  assert.equal(
    del.body.result.error.message,
    "Admin actions are defined, but the action policydelete is not allowed!",
  );
  // another admin matches no policy
  await addAdmin(t.deps, "helpdesk", { password: "helpdesk-pass" });
  const helpdesk = await jsonOf(
    await t.post("/auth", { username: "helpdesk", password: "helpdesk-pass" }),
  );
  const other = await jsonOf(
    await t.get("/policy/", { token: helpdesk.body.result.value.token }),
  );
  assert.equal(other.status, 403);
  assert.equal(
    other.body.result.error.message,
    "Admin actions are defined, but the action policyread is not allowed!",
  );
  // audit records the granting policy
  await t.deps.audit.flush();
  const rows = await t.deps.db.selectFrom("audit").select(["action", "policies"]).where(
    "action",
    "=",
    "GET /policy",
  ).execute();
  assert.ok(rows.some((r) => r.policies === "adm"));
  await t.close();
});

Deno.test("policy changes are seen at once through the version row (as another node would)", async () => {
  const t = await createTestApp();
  const { loadPolicySet } = await import("../../src/domain/policy/mod.ts");
  const first = await loadPolicySet(t.deps);
  assert.equal(first.hasActivePolicies("webui"), false);
  assert.equal(await loadPolicySet(t.deps), first, "unchanged version reuses the compiled set");
  // a change of another cached table moves the epoch; the policies' version decides
  await jsonOf(await t.asAdmin("POST", "/system/setConfig", { body: { splitAtSign: "1" } }));
  assert.equal(await loadPolicySet(t.deps), first, "other tables' changes keep the compiled set");
  await post(t, "w", { scope: "webui", action: "search_on_enter" });
  const second = await loadPolicySet(t.deps);
  assert.notEqual(second, first);
  assert.equal(second.hasActivePolicies("webui"), true);
  await jsonOf(await t.asAdmin("POST", "/policy/disable/w"));
  assert.equal((await loadPolicySet(t.deps)).hasActivePolicies("webui"), false);
  await t.close();
});

Deno.test("two parallel creates of the same policy both succeed as create + update", async () => {
  const t = await createTestApp();
  await t.adminToken();
  const results = await Promise.all(
    [1, 2, 3].map(() => post(t, "same", { scope: "webui", action: "search_on_enter" })),
  );
  for (const r of results) assert.equal(r.status, 200);
  assert.deepEqual(Object.keys((await getAll(t)).body.result.value), ["same"]);
  await t.close();
});

Deno.test("POST /auth rights: all admin actions without policies, the granted ones with", async () => {
  const t = await createTestApp();
  await t.adminToken();
  const login = async () =>
    (await jsonOf(await t.post("/auth", { username: "admin", password: ADMIN_PASSWORD }))).body
      .result.value;
  const all = (await login()).rights as string[];
  assert.ok(all.includes("policywrite") && all.includes("enrollHOTP") && all.includes("delete"));
  await post(t, "adm", {
    scope: "admin",
    action: "policyread, policywrite, enrollHOTP, hide_tokeninfo=otpkey",
  });
  const limited = (await login()).rights as string[];
  assert.deepEqual(
    [...limited].sort(),
    ["enrollHOTP", "hide_tokeninfo=otpkey", "policyread", "policywrite"],
  );
  const types = await jsonOf(await t.get("/auth/rights", { token: await tokenFor(t, "admin") }));
  assert.deepEqual(Object.keys(types.body.result.value), ["hotp"]);
  await t.close();
});

Deno.test("POST /policy/<name> with a JSON action object keeps a comma inside a value", async () => {
  const t = await createTestApp();
  const res = await post(t, "texts", {
    scope: "authentication",
    action: { challenge_text: "Hello, please enter your OTP", otppin: "userstore" },
  });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  const all = await getAll(t);
  assert.deepEqual(all.body.result.value.texts.action, {
    challenge_text: "Hello\\, please enter your OTP",
    otppin: "userstore",
  });
  // the challenge shows the text with its comma
  await createUsers(t.deps, {
    realm: "r1",
    users: [{ login: "alice", password: "alice-password" }],
  });
  await t.asAdmin("POST", "/token/init", {
    body: {
      type: "hotp",
      serial: "H1",
      otpkey: "3132333435363738393031323334353637383930",
      user: "alice",
      realm: "r1",
      pin: "pw",
    },
  });
  await post(t, "cr", { scope: "authentication", action: "challenge_response=hotp" });
  const check = await jsonOf(
    await t.post("/validate/check", { user: "alice", realm: "r1", pass: "alice-password" }),
  );
  assert.equal(
    check.body.detail?.message,
    "Hello, please enter your OTP",
    JSON.stringify(check.body),
  );
  await t.close();
});
