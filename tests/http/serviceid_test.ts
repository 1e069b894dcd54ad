/**
 * Service IDs (spec 14 §13): `/serviceid/` CRUD, the names offered for the ssh application's
 * `service_id` option by `GET /application/`, and the rights (admins only; `serviceid_list`,
 * `serviceid_add`, `serviceid_delete`).
 */
import assert from "node:assert/strict";
import { createTestApp, jsonOf, type TestApp } from "../test_app.ts";
import { issueJwt } from "../../src/http/jwt.ts";
import { savePolicy } from "../../src/domain/policy/mod.ts";
import { actionTest } from "../policy_actions/_registry.ts";

async function post(t: TestApp, path: string, body?: Record<string, unknown>) {
  const res = await jsonOf(await t.asAdmin("POST", path, { body }));
  assert.equal(res.status, 200, `${path}: ${JSON.stringify(res.body)}`);
  return res.body.result.value;
}

async function state(t: TestApp) {
  return await t.deps.db.selectFrom("serviceid").select(["name", "description"]).orderBy("name")
    .execute();
}

Deno.test("/serviceid/: create, update the description, list, one, delete; unknown: {} and 404", async () => {
  const t = await createTestApp();
  const id = await post(t, "/serviceid/mailserver", { description: "the mail servers" });
  assert.equal(typeof id, "number");
  await post(t, "/serviceid/webserver");
  assert.equal(await post(t, "/serviceid/mailserver", { description: "changed" }), id);
  const list = await jsonOf(await t.asAdmin("GET", "/serviceid/"));
  assert.deepEqual(list.body.result.value, {
    mailserver: { description: "changed", id },
    webserver: { description: "", id: list.body.result.value.webserver.id },
  });
  const one = await jsonOf(await t.asAdmin("GET", "/serviceid/mailserver"));
  assert.deepEqual(one.body.result.value, { mailserver: { description: "changed", id } });
  assert.deepEqual(
    (await jsonOf(await t.asAdmin("GET", "/serviceid/nosuch"))).body.result.value,
    {},
  );
  const gone = await jsonOf(await t.asAdmin("DELETE", "/serviceid/nosuch"));
  assert.equal(gone.status, 404);
  assert.equal(gone.body.result.error.message, "The requested Serviceid could not be found.");
  const long = await jsonOf(await t.asAdmin("POST", `/serviceid/${"x".repeat(256)}`));
  assert.equal(long.status, 400);
  assert.equal(
    (await jsonOf(await t.asAdmin("DELETE", "/serviceid/webserver"))).body.result.value,
    1,
  );
  assert.deepEqual((await state(t)).map((r) => r.name), ["mailserver"]);
  await t.close();
});

Deno.test("GET /application/ offers the defined service ids for the ssh application's service_id", async () => {
  const t = await createTestApp();
  const before = await jsonOf(await t.asAdmin("GET", "/application/"));
  assert.deepEqual(before.body.result.value.ssh.options.sshkey.service_id.value, []);
  await post(t, "/serviceid/webserver");
  await post(t, "/serviceid/mailserver");
  const after = await jsonOf(await t.asAdmin("GET", "/application/"));
  assert.deepEqual(after.body.result.value.ssh.options.sshkey.service_id.value, [
    "mailserver",
    "webserver",
  ]);
  await t.close();
});

const ROUTES: [string, string, Record<string, unknown>?][] = [
  ["GET", "/serviceid/"],
  ["GET", "/serviceid/s1"],
  ["POST", "/serviceid/s2", { description: "x" }],
  ["DELETE", "/serviceid/s1"],
];

Deno.test("/serviceid/ refuses a user JWT and no JWT, changing nothing", async () => {
  const t = await createTestApp();
  await post(t, "/serviceid/s1");
  const { token } = await issueJwt(t.deps, {
    username: "alice",
    realm: "realm1",
    role: "user",
    resolver: "",
    authtype: "password",
    rights: [],
  });
  const before = await state(t);
  for (const [method, path, body] of ROUTES) {
    assert.equal((await t.request(method, path, { token, body })).status, 401, path);
    assert.equal((await t.request(method, path, { body })).status, 401, path);
  }
  assert.deepEqual(await state(t), before);
  await t.close();
});

/** Each route: 403 with another action (nothing changed), 200 with `action`. */
async function checkRight(action: string, rows: typeof ROUTES): Promise<void> {
  for (const [method, path, body] of rows) {
    const t = await createTestApp();
    await post(t, "/serviceid/s1");
    await savePolicy(t.deps, "p", { scope: "admin", action: "tokenlist" });
    const before = await state(t);
    const denied = await jsonOf(await t.asAdmin(method, path, { body }));
    assert.equal(denied.status, 403, `${method} ${path}`);
    assert.equal(
      denied.body.result.error.message,
      `Admin actions are defined, but the action ${action} is not allowed!`,
    );
    assert.deepEqual(await state(t), before);
    await savePolicy(t.deps, "p", { scope: "admin", action: `tokenlist, ${action}` });
    const allowed = await jsonOf(await t.asAdmin(method, path, { body }));
    assert.equal(allowed.status, 200, `${method} ${path}: ${JSON.stringify(allowed.body)}`);
    if (method !== "GET") assert.notDeepEqual(await state(t), before, "the write happened");
    else assert.ok(allowed.body.result.value.s1, "the list");
    await t.close();
  }
}

actionTest(
  "admin",
  "serviceid_list",
  "GET /serviceid/[<name>] needs the admin right",
  () => checkRight("serviceid_list", ROUTES.slice(0, 2)),
);
actionTest(
  "admin",
  "serviceid_add",
  "POST /serviceid/<name> needs the admin right",
  () => checkRight("serviceid_add", ROUTES.slice(2, 3)),
);
actionTest(
  "admin",
  "serviceid_delete",
  "DELETE /serviceid/<name> needs the admin right",
  () => checkRight("serviceid_delete", ROUTES.slice(3, 4)),
);
