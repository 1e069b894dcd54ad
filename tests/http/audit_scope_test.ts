/**
 * `GET /audit/` for an admin whose `auditlog` policies name realms: the rows
 * of those realms and the admin's own actions, never another realm's rows,
 * whatever the filters say; an admin whose policies name no realm sees all.
 */
import assert from "node:assert/strict";
import { createTestApp, jsonOf, type TestApp } from "../test_app.ts";
import { createUsers } from "../fixtures/users.ts";
import { addAdmin } from "../../src/domain/admin/mod.ts";
import { savePolicy } from "../../src/domain/policy/mod.ts";

interface Row {
  action: string;
  user: string;
  realm: string;
  administrator: string;
  client: string;
}

async function login(t: TestApp, username: string, password: string): Promise<string> {
  const res = await jsonOf(await t.post("/auth", { username, password }));
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body.result.value.token;
}

async function auditRows(
  t: TestApp,
  token: string,
  query: Record<string, string> = {},
): Promise<Row[]> {
  const res = await jsonOf(
    await t.get("/audit/", { token, query: { page_size: "1000", ...query } }),
  );
  assert.equal(res.status, 200, JSON.stringify(res.body));
  assert.equal(res.body.result.value.count, res.body.result.value.auditdata.length);
  return res.body.result.value.auditdata;
}

/**
 * Realms r1, r2 (alice, bob) and r3; admin `admin` with every right; `one` limited to r1;
 * `notr2` granted every realm but r2; logins of alice and bob from their own addresses.
 */
async function world() {
  const t = await createTestApp();
  await createUsers(t.deps, { realm: "r1", users: [{ login: "alice", password: "a-pass" }] });
  await createUsers(t.deps, { realm: "r2", users: [{ login: "bob", password: "b-pass" }] });
  await createUsers(t.deps, { realm: "r3", users: [{ login: "carol", password: "c-pass" }] });
  const admin = await t.adminToken();
  await savePolicy(t.deps, "all", { scope: "admin", action: "*", adminuser: "admin" });
  await savePolicy(t.deps, "one", {
    scope: "admin",
    action: "auditlog, tokenlist",
    adminuser: "one",
    realm: "r1",
  });
  await savePolicy(t.deps, "notr2", {
    scope: "admin",
    action: "auditlog",
    adminuser: "notr2",
    realm: "*, !r2",
  });
  await addAdmin(t.deps, "one", { password: "one-password" });
  await addAdmin(t.deps, "notr2", { password: "notr2-password" });
  for (const [user, realm, addr] of [["alice", "r1", "192.0.2.1"], ["bob", "r2", "192.0.2.2"]]) {
    const res = await t.post("/validate/check", { user, realm, pass: "wrong" }, {
      remoteAddr: addr,
    });
    await res.body?.cancel();
  }
  // the superuser admin changes something; the limited admin acts too
  const set = await t.post("/system/setConfig", { secretish: "1" }, { token: admin });
  await set.body?.cancel();
  const one = await login(t, "one", "one-password");
  const own = await t.get("/token/", { token: one });
  await own.body?.cancel();
  return { t, admin, one, notr2: await login(t, "notr2", "notr2-password") };
}

Deno.test("GET /audit/: an admin limited to r1 sees r1's rows and their own actions, never r2's", async () => {
  const { t, admin, one } = await world();
  const rows = await auditRows(t, one);
  // alice's check in r1 is there; bob's in r2, with his client address, is not
  assert.ok(rows.some((r) => r.action === "POST /validate/check" && r.user === "alice"));
  assert.ok(!rows.some((r) => r.realm === "r2" || r.user === "bob" || r.client === "192.0.2.2"));
  // the admin's own login and token list are there; the other admin's setConfig is not
  assert.ok(rows.some((r) => r.action === "GET /token" && r.administrator === "one"));
  assert.ok(!rows.some((r) => r.administrator === "admin"));
  assert.ok(rows.every((r) => r.realm === "r1" || r.administrator === "one"), JSON.stringify(rows));

  // the superuser admin sees every row, bob's and both admins' included
  const all = await auditRows(t, admin);
  assert.ok(all.some((r) => r.user === "bob" && r.realm === "r2" && r.client === "192.0.2.2"));
  assert.ok(all.some((r) => r.action === "POST /system/setConfig" && r.administrator === "admin"));
  assert.ok(all.some((r) => r.administrator === "one"));
  assert.ok(all.length > rows.length);

  // a user's JWT reads only the rows about that user (privacyIDEA's user right auditlog)
  const alice = await login(t, "alice@r1", "a-pass");
  const own = await auditRows(t, alice, { user: "bob", realm: "r2" });
  assert.ok(own.length > 0);
  assert.ok(own.every((r) => r.user === "alice" && r.realm === "r1"));
  await t.close();
});

Deno.test("GET /audit/: filters cannot widen a limited admin's scope", async () => {
  const { t, one } = await world();
  for (
    const query of [
      { realm: "r2" },
      { realm: "R2" },
      { realm: "*" },
      { realm: "r*" },
      { user: "bob" },
      { user: "*" },
      { client: "192.0.2.2" },
      { administrator: "admin" },
      { administrator: "*" },
      { action: "*", realm: "r2", user: "bob" },
    ] as Record<string, string>[]
  ) {
    const rows = await auditRows(t, one, query);
    assert.ok(
      !rows.some((r) => r.realm === "r2" || r.user === "bob" || r.administrator === "admin"),
      JSON.stringify(query),
    );
  }
  assert.equal((await auditRows(t, one, { realm: "r2" })).length, 0);
  assert.equal((await auditRows(t, one, { user: "bob" })).length, 0);
  await t.close();
});

Deno.test("GET /audit/: a policy for every realm but r2 (realm *, !r2) hides r2's rows", async () => {
  const { t, notr2 } = await world();
  const rows = await auditRows(t, notr2);
  assert.ok(rows.some((r) => r.user === "alice" && r.realm === "r1"));
  assert.ok(!rows.some((r) => r.realm === "r2" || r.user === "bob"));
  assert.ok(!rows.some((r) => r.administrator === "admin"));
  await t.close();
});
