/**
 * The audit row of an admin's token request names the user it concerns, as
 * privacyIDEA's: the user named, else the owner of the token named by serial,
 * else the realm named; and the web interface's static files write no rows.
 */
import assert from "node:assert/strict";
import { createTestApp, jsonOf, type TestApp } from "../test_app.ts";
import { createUsers } from "../fixtures/users.ts";
import { addAdmin } from "../../src/domain/admin/mod.ts";
import { savePolicy } from "../../src/domain/policy/mod.ts";

interface Row {
  action: string;
  success: number;
  serial: string;
  user: string;
  realm: string;
  resolver: string;
  administrator: string;
}

/** Every audit row, oldest first. */
async function rows(t: TestApp): Promise<Row[]> {
  const res = await jsonOf(
    await t.asAdmin("GET", "/audit/", { query: { page_size: "1000", sortorder: "asc" } }),
  );
  assert.equal(res.status, 200);
  return res.body.result.value.auditdata;
}

/** The row of the last request with `action`. */
async function last(t: TestApp, action: string): Promise<Row> {
  const row = (await rows(t)).filter((r) => r.action === action).at(-1);
  assert.ok(row, `no row for ${action}`);
  return row;
}

async function post(t: TestApp, path: string, body: Record<string, unknown>, token?: string) {
  const res = await jsonOf(
    token ? await t.post(path, body, { token }) : await t.asAdmin("POST", path, { body }),
  );
  return res;
}

Deno.test("audit: an admin's token requests record the owner (init, assign, unassign, by serial)", async () => {
  const t = await createTestApp();
  const resolver = await createUsers(t.deps, { realm: "r1", users: [{ login: "alice" }] });
  const owner = { user: "alice", realm: "r1", resolver };

  // POST /token/init for a user (privacyIDEA's request.User)
  const init = await post(t, "/token/init", { type: "hotp", genkey: "1", user: "alice@r1" });
  assert.equal(init.status, 200);
  const serial = init.body.detail.serial;
  assert.deepEqual(pick(await last(t, "POST /token/init")), { serial, ...owner });

  // by serial only: the token's owner
  assert.equal((await post(t, "/token/disable", { serial })).status, 200);
  assert.deepEqual(pick(await last(t, "POST /token/disable")), { serial, ...owner });
  // unassign: the owner it had
  assert.equal((await post(t, "/token/unassign", { serial })).status, 200);
  assert.deepEqual(pick(await last(t, "POST /token/unassign")), { serial, ...owner });
  // assign: the user it goes to
  const assigned = await post(t, "/token/assign", { serial, user: "alice", realm: "r1" });
  assert.equal(assigned.status, 200, JSON.stringify(assigned.body));
  assert.deepEqual(pick(await last(t, "POST /token/assign")), { serial, ...owner });
  // a token put into a realm without a user: the realm
  const free = await post(t, "/token/init", { type: "hotp", genkey: "1", realm: "r1" });
  assert.equal(free.status, 200);
  assert.deepEqual(pick(await last(t, "POST /token/init")), {
    serial: free.body.detail.serial,
    user: "",
    realm: "r1",
    resolver: "",
  });
  // a list filtered by user
  const list = await jsonOf(await t.asAdmin("GET", "/token/", { query: { user: "alice@r1" } }));
  assert.equal(list.status, 200);
  assert.deepEqual(pick(await last(t, "GET /token")), { serial: "", ...owner });
  await t.close();
});

Deno.test("audit: a refused token request records whom it concerned", async () => {
  const t = await createTestApp();
  await createUsers(t.deps, { realm: "r1", users: [{ login: "alice" }] });
  const resolver = await createUsers(t.deps, { realm: "r2", users: [{ login: "bob" }] });
  await t.adminToken();
  await savePolicy(t.deps, "all", { scope: "admin", action: "*", adminuser: "admin" });
  await savePolicy(t.deps, "one", {
    scope: "admin",
    action: "enrollHOTP, auditlog",
    adminuser: "one",
    realm: "r1",
  });
  await addAdmin(t.deps, "one", { password: "one-password" });
  const login = await jsonOf(await t.post("/auth", { username: "one", password: "one-password" }));
  const one = login.body.result.value.token;
  const refused = await post(t, "/token/init", { type: "hotp", genkey: "1", user: "bob@r2" }, one);
  assert.equal(refused.status, 403);
  const row = await last(t, "POST /token/init");
  assert.equal(row.success, 0);
  assert.equal(row.administrator, "one");
  assert.deepEqual(pick(row), { serial: "", user: "bob", realm: "r2", resolver });
  // a row of r2, but the admin's own action: the admin limited to r1 reads it
  const seen = await jsonOf(await t.get("/audit/", { token: one, query: { page_size: "100" } }));
  const actions = seen.body.result.value.auditdata.map((r: Row) => `${r.action} ${r.user}`);
  assert.deepEqual(actions, ["POST /token/init bob", "POST /auth one"]);
  await t.close();
});

Deno.test("audit: the web interface's static files and the health probes write no audit rows; other requests do", async () => {
  const t = await createTestApp();
  const before = (await rows(t)).length;
  for (const path of ["/", "/ui/app.js", "/ui/app.css"]) {
    const res = await t.get(path);
    assert.equal(res.status, 200, path);
    await res.body?.cancel();
  }
  for (const path of ["/healthz/", "/healthz/livez", "/healthz/readyz", "/healthz/startupz"]) {
    const res = await t.get(path);
    assert.equal(res.status, 200, path);
    await res.body?.cancel();
  }
  // a path under /healthz that is no probe is audited
  const noProbe = await t.get("/healthz/nope");
  await noProbe.body?.cancel();
  const system = await t.get("/system/");
  await system.body?.cancel();
  const missing = await t.get("/ui/nope.js");
  await missing.body?.cancel();
  assert.equal(missing.status, 404);
  const after = (await rows(t)).slice(before);
  // the search itself (one row), the unknown probe, the refused call, the unknown file; no page,
  // script, style or health probe
  assert.deepEqual(after.map((r) => r.action), [
    "GET /audit",
    "GET /healthz/nope",
    "GET /system",
    "GET /ui/nope.js",
  ]);
  await t.close();
});

function pick(r: Row) {
  return { serial: r.serial, user: r.user, realm: r.realm, resolver: r.resolver };
}
