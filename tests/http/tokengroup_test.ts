/**
 * Token groups (spec 14 §12): `/tokengroup/` CRUD, `/token/group/…`, the token list's
 * `tokengroup` column and filter, and their rights (admins only; `tokengroup_list`,
 * `tokengroup_add`, `tokengroup_delete`, and `tokengroups` under the token's realm rules).
 */
import assert from "node:assert/strict";
import { createTestApp, jsonOf, type TestApp } from "../test_app.ts";
import { createUsers } from "../fixtures/users.ts";
import { issueJwt } from "../../src/http/jwt.ts";
import { savePolicy } from "../../src/domain/policy/mod.ts";
import { actionTest } from "../policy_actions/_registry.ts";

async function post(t: TestApp, path: string, body?: Record<string, unknown>) {
  const res = await jsonOf(await t.asAdmin("POST", path, { body }));
  assert.equal(res.status, 200, `${path}: ${JSON.stringify(res.body)}`);
  return res.body.result.value;
}

/** Realm r1 with alice's spass A1, realm r2 with bob's spass B1; groups g1 and g2. */
async function world(): Promise<TestApp> {
  const t = await createTestApp();
  await createUsers(t.deps, { realm: "r1", users: [{ login: "alice", password: "a" }] });
  await createUsers(t.deps, { realm: "r2", users: [{ login: "bob", password: "b" }] });
  await post(t, "/token/init", {
    type: "spass",
    serial: "A1",
    pin: "1",
    user: "alice",
    realm: "r1",
  });
  await post(t, "/token/init", { type: "spass", serial: "B1", pin: "1", user: "bob", realm: "r2" });
  await post(t, "/tokengroup/g1", { description: "first" });
  await post(t, "/tokengroup/g2");
  return t;
}

async function groupsOf(t: TestApp, serial: string): Promise<string[]> {
  const res = await jsonOf(await t.asAdmin("GET", "/token/", { query: { serial } }));
  return res.body.result.value.tokens[0].tokengroup;
}

/** The groups and memberships, read without the routes (an admin policy may forbid them). */
async function state(t: TestApp) {
  const groups = await t.deps.db.selectFrom("tokengroup").select(["name", "description"])
    .orderBy("name").execute();
  const members = await t.deps.db.selectFrom("tokentokengroup")
    .innerJoin("token", "token.id", "tokentokengroup.token_id")
    .innerJoin("tokengroup", "tokengroup.id", "tokentokengroup.tokengroup_id")
    .select(["token.serial as serial", "tokengroup.name as name"])
    .orderBy("token.serial").orderBy("tokengroup.name").execute();
  return { groups, members };
}

Deno.test("/tokengroup/: create, update the description, list, one, delete; unknown and in-use refusals", async () => {
  const t = await world();
  const list = await jsonOf(await t.asAdmin("GET", "/tokengroup/"));
  assert.equal(list.status, 200);
  const g1 = list.body.result.value.g1;
  assert.deepEqual(list.body.result.value, {
    g1: { description: "first", id: g1.id },
    g2: { description: "", id: list.body.result.value.g2.id },
  });
  // POST again: the same id, the new description
  assert.equal(await post(t, "/tokengroup/g1", { description: "changed" }), g1.id);
  const one = await jsonOf(await t.asAdmin("GET", "/tokengroup/g1"));
  assert.deepEqual(one.body.result.value, { g1: { description: "changed", id: g1.id } });
  const unknown = await jsonOf(await t.asAdmin("GET", "/tokengroup/nosuch"));
  assert.deepEqual(unknown.body.result.value, {});
  const gone = await jsonOf(await t.asAdmin("DELETE", "/tokengroup/nosuch"));
  assert.equal(gone.status, 404);
  assert.equal(gone.body.result.error.message, "The requested Tokengroup could not be found.");
  // a group with tokens stays
  await post(t, "/token/group/A1/g1");
  const inUse = await jsonOf(await t.asAdmin("DELETE", "/tokengroup/g1"));
  assert.equal(inUse.status, 400);
  assert.equal(
    inUse.body.result.error.message,
    "ERR10: The tokengroup with name g1 still has 1 tokens assigned.",
  );
  assert.ok((await state(t)).groups.some((g) => g.name === "g1"), "still there");
  const deleted = await jsonOf(await t.asAdmin("DELETE", "/tokengroup/g2"));
  assert.equal(deleted.body.result.value, 1);
  assert.deepEqual((await state(t)).groups.map((g) => g.name), ["g1"]);
  // a deleted token leaves its groups: the group can go then
  await jsonOf(await t.asAdmin("DELETE", "/token/A1"));
  assert.equal((await jsonOf(await t.asAdmin("DELETE", "/tokengroup/g1"))).body.result.value, 1);
  await t.close();
});

Deno.test("/token/group/: add, replace (unknown names skipped), remove; the list's tokengroup column and filter", async () => {
  const t = await world();
  assert.equal(await post(t, "/token/group/A1/g1"), 1);
  assert.equal(await post(t, "/token/group/A1/g1"), 1, "twice: still one membership");
  assert.deepEqual(await groupsOf(t, "A1"), ["g1"]);
  assert.deepEqual(await groupsOf(t, "B1"), []);
  const noGroup = await jsonOf(await t.asAdmin("POST", "/token/group/A1/nosuch"));
  assert.equal(noGroup.status, 404);
  assert.equal(noGroup.body.result.error.message, "The tokengroup does not exist.");
  const noToken = await jsonOf(await t.asAdmin("POST", "/token/group/NOSUCH/g1"));
  assert.equal(noToken.status, 404);
  // replace: g2 and an unknown name; g1 goes
  assert.equal(await post(t, "/token/group/A1", { groups: "g2, nosuch" }), 1);
  assert.deepEqual(await groupsOf(t, "A1"), ["g2"]);
  const json = await jsonOf(
    await t.asAdmin("POST", "/token/group/B1", { body: { groups: ["g1", "g2"] }, json: true }),
  );
  assert.equal(json.status, 200);
  assert.deepEqual(await groupsOf(t, "B1"), ["g1", "g2"]);
  const missing = await jsonOf(await t.asAdmin("POST", "/token/group/B1"));
  assert.equal(missing.status, 400);
  // the filter
  const inG2 = await jsonOf(await t.asAdmin("GET", "/token/", { query: { tokengroup: "g2" } }));
  assert.deepEqual(inG2.body.result.value.tokens.map((x: { serial: string }) => x.serial), [
    "A1",
    "B1",
  ]);
  const inG1 = await jsonOf(await t.asAdmin("GET", "/token/", { query: { tokengroup: "g1" } }));
  assert.deepEqual(inG1.body.result.value.tokens.map((x: { serial: string }) => x.serial), ["B1"]);
  assert.equal(inG1.body.result.value.count, 1);
  // remove
  const removed = await jsonOf(await t.asAdmin("DELETE", "/token/group/B1/g1"));
  assert.equal(removed.body.result.value, 1);
  assert.deepEqual(await groupsOf(t, "B1"), ["g2"]);
  assert.equal((await jsonOf(await t.asAdmin("DELETE", "/token/group/B1/nosuch"))).status, 404);
  await t.close();
});

const ROUTES: [string, string, Record<string, unknown>?][] = [
  ["GET", "/tokengroup/"],
  ["GET", "/tokengroup/g1"],
  ["POST", "/tokengroup/g3", { description: "x" }],
  ["DELETE", "/tokengroup/g2"],
  ["POST", "/token/group/A1/g2"],
  ["POST", "/token/group/A1", { groups: "g2" }],
  ["DELETE", "/token/group/A1/g1"],
];

Deno.test("token group routes refuse a user JWT (also for the user's own token) and no JWT, changing nothing", async () => {
  const t = await world();
  await post(t, "/token/group/A1/g1");
  const { token } = await issueJwt(t.deps, {
    username: "alice",
    realm: "r1",
    role: "user",
    resolver: "",
    authtype: "password",
    rights: [],
  });
  const before = await state(t);
  for (const [method, path, body] of ROUTES) {
    const res = await jsonOf(await t.request(method, path, { token, body }));
    assert.equal(res.status, 401, `${method} ${path}`);
    assert.equal((await t.request(method, path, { body })).status, 401, `${method} ${path}`);
  }
  assert.deepEqual(await state(t), before);
  await t.close();
});

/** Each route: 403 with another action (nothing changed), 200 with `action`. */
async function checkRight(action: string, rows: typeof ROUTES): Promise<void> {
  for (const [method, path, body] of rows) {
    const t = await world();
    await post(t, "/token/group/A1/g1");
    await savePolicy(t.deps, "p", { scope: "admin", action: "tokenlist" });
    const before = await state(t);
    const denied = await jsonOf(await t.asAdmin(method, path, { body }));
    assert.equal(denied.status, 403, `${method} ${path}: ${JSON.stringify(denied.body)}`);
    assert.equal(
      denied.body.result.error.message,
      `Admin actions are defined, but the action ${action} is not allowed!`,
    );
    assert.deepEqual(await state(t), before, `${method} ${path}: nothing changed`);
    await savePolicy(t.deps, "p", { scope: "admin", action: `tokenlist, ${action}` });
    const allowed = await jsonOf(await t.asAdmin(method, path, { body }));
    assert.equal(allowed.status, 200, `${method} ${path}: ${JSON.stringify(allowed.body)}`);
    if (method !== "GET") assert.notDeepEqual(await state(t), before, "the write happened");
    await t.close();
  }
}

actionTest(
  "admin",
  "tokengroup_list",
  "GET /tokengroup/[<name>] needs the admin right",
  () => checkRight("tokengroup_list", ROUTES.slice(0, 2)),
);
actionTest(
  "admin",
  "tokengroup_add",
  "POST /tokengroup/<name> needs the admin right",
  () => checkRight("tokengroup_add", ROUTES.slice(2, 3)),
);
actionTest(
  "admin",
  "tokengroup_delete",
  "DELETE /tokengroup/<name> needs the admin right",
  () => checkRight("tokengroup_delete", ROUTES.slice(3, 4)),
);
actionTest(
  "admin",
  "tokengroups",
  "/token/group/… needs the admin right, only for tokens of the policy's realms",
  async () => {
    await checkRight("tokengroups", ROUTES.slice(4));
    // an admin whose tokengroups policy names r1: A1 yes, B1 (r2) no, nothing changed
    const t = await world();
    await savePolicy(t.deps, "p", { scope: "admin", action: "tokenlist" });
    await savePolicy(t.deps, "r1", { scope: "admin", action: "tokengroups", realm: "r1" });
    assert.equal((await t.asAdmin("POST", "/token/group/A1/g1")).status, 200);
    const before = await state(t);
    const other = await jsonOf(await t.asAdmin("POST", "/token/group/B1/g1"));
    assert.equal(other.status, 403, JSON.stringify(other.body));
    assert.equal(
      (await t.asAdmin("POST", "/token/group/B1", { body: { groups: "g1" } })).status,
      403,
    );
    assert.deepEqual(await state(t), before);
    await t.close();
  },
);
