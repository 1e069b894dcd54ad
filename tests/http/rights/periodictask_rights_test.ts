/**
 * Rights of `/periodictask/` and `/monitoring/` (admins only, as in
 * privacyIDEA): a user JWT is refused on every route; once the admin scope
 * has policies, reading and writing tasks need `periodictask_read` /
 * `periodictask_write`, reading and deleting statistics `statistics_read` /
 * `statistics_delete`; a refused request changes nothing.
 */
import assert from "node:assert/strict";
import { createTestApp, jsonOf, type TestApp } from "../../test_app.ts";
import { issueJwt } from "../../../src/http/jwt.ts";
import { savePolicy } from "../../../src/domain/policy/mod.ts";
import { listPeriodicTasks } from "../../../src/domain/periodic_task/mod.ts";
import { statsValues, writeStats } from "../../../src/domain/monitoring/mod.ts";
import { actionTest } from "../../policy_actions/_registry.ts";

const TASK = {
  name: "stats",
  interval: "0 8 * * *",
  nodes: "test-node",
  taskmodule: "SimpleStats",
  ordering: 0,
  options: { total_tokens: true },
};

async function setup(): Promise<{ t: TestApp; id: number }> {
  const t = await createTestApp();
  const res = await jsonOf(await t.asAdmin("POST", "/periodictask/", { body: TASK, json: true }));
  assert.equal(res.status, 200);
  await writeStats(t.deps.db, "total_tokens", 4, t.clock.now());
  return { t, id: res.body.result.value };
}

/** The state a refused request must leave as it was. */
async function snapshot(t: TestApp) {
  return {
    tasks: await listPeriodicTasks(t.deps),
    stats: await statsValues(t.deps, "total_tokens"),
  };
}

const PATHS = (id: number): [string, string, Record<string, unknown>?][] => [
  ["GET", "/periodictask/taskmodules/"],
  ["GET", "/periodictask/nodes/"],
  ["GET", "/periodictask/options/SimpleStats"],
  ["GET", "/periodictask/"],
  ["GET", `/periodictask/${id}`],
  ["POST", "/periodictask/", { ...TASK, name: "other" }],
  ["POST", `/periodictask/disable/${id}`],
  ["POST", `/periodictask/enable/${id}`],
  ["DELETE", `/periodictask/${id}`],
  ["GET", "/monitoring/"],
  ["GET", "/monitoring/total_tokens"],
  ["GET", "/monitoring/total_tokens/last"],
  ["DELETE", "/monitoring/total_tokens"],
];

Deno.test("/periodictask/ and /monitoring/ refuse a user JWT on every route and change nothing", async () => {
  const { t, id } = await setup();
  const { token } = await issueJwt(t.deps, {
    username: "alice",
    realm: "realm1",
    role: "user",
    resolver: "",
    authtype: "password",
    rights: [],
  });
  const before = await snapshot(t);
  for (const [method, path, body] of PATHS(id)) {
    const res = await jsonOf(await t.request(method, path, { token, body, json: true }));
    assert.equal(res.status, 401, `${method} ${path}`);
    assert.equal(res.body.result.error.code, 4306, `${method} ${path}`);
  }
  // and no JWT at all
  for (const [method, path] of PATHS(id)) {
    assert.equal((await t.request(method, path)).status, 401, `${method} ${path} without JWT`);
  }
  assert.deepEqual(await snapshot(t), before);
  await t.close();
});

Deno.test("the lists of task modules, nodes and options need an admin but no policy action", async () => {
  const { t, id } = await setup();
  await savePolicy(t.deps, "p", { scope: "admin", action: "auditlog" });
  for (const [method, path] of PATHS(id).slice(0, 3)) {
    assert.equal((await t.asAdmin(method, path)).status, 200, path);
  }
  await t.close();
});

/** Denied with a policy of another action, with nothing changed; allowed with `action`. */
async function checkRight(
  action: string,
  rows: [string, (id: number) => string, Record<string, unknown>?][],
): Promise<void> {
  for (const [method, path, body] of rows) {
    const { t, id } = await setup();
    await savePolicy(t.deps, "p", { scope: "admin", action: "auditlog" });
    const before = await snapshot(t);
    const denied = await jsonOf(await t.asAdmin(method, path(id), { body, json: true }));
    assert.equal(denied.status, 403, `${method} ${path(id)}: ${JSON.stringify(denied.body)}`);
    assert.equal(denied.body.result.error.code, 303);
    assert.equal(
      denied.body.result.error.message,
      `Admin actions are defined, but the action ${action} is not allowed!`,
    );
    assert.deepEqual(await snapshot(t), before, `${method} ${path(id)}: nothing changed`);
    await savePolicy(t.deps, "p", { scope: "admin", action: `auditlog, ${action}` });
    const allowed = await jsonOf(await t.asAdmin(method, path(id), { body, json: true }));
    assert.equal(allowed.status, 200, `${method} ${path(id)}: ${JSON.stringify(allowed.body)}`);
    if (method !== "GET") assert.notDeepEqual(await snapshot(t), before, "the write happened");
    await t.close();
  }
}

actionTest(
  "admin",
  "periodictask_read",
  "GET /periodictask/[<id>] needs the admin right",
  () =>
    checkRight("periodictask_read", [
      ["GET", () => "/periodictask/"],
      ["GET", (id) => `/periodictask/${id}`],
    ]),
);

actionTest(
  "admin",
  "periodictask_write",
  "creating, disabling and deleting periodic tasks needs the admin right",
  () =>
    checkRight("periodictask_write", [
      ["POST", () => "/periodictask/", { ...TASK, name: "other" }],
      ["POST", (id) => `/periodictask/disable/${id}`],
      ["DELETE", (id) => `/periodictask/${id}`],
    ]),
);

actionTest(
  "admin",
  "statistics_read",
  "GET /monitoring/… needs the admin right",
  () =>
    checkRight("statistics_read", [
      ["GET", () => "/monitoring/"],
      ["GET", () => "/monitoring/total_tokens"],
      ["GET", () => "/monitoring/total_tokens/last"],
    ]),
);

actionTest(
  "admin",
  "statistics_delete",
  "DELETE /monitoring/<key> needs the admin right",
  () => checkRight("statistics_delete", [["DELETE", () => "/monitoring/total_tokens"]]),
);
