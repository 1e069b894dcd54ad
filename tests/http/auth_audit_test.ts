/**
 * The audit row of `POST /auth` names the user and realm that were tried,
 * also when the login fails, however the client sends its parameters (the
 * web UI sends JSON, other clients form fields).
 */
import assert from "node:assert/strict";
import { setDefaultRealm } from "../../src/domain/realm/mod.ts";
import { createUsers } from "../fixtures/users.ts";
import { createTestApp, type Json, jsonOf } from "../test_app.ts";

Deno.test("POST /auth audits the attempted user and realm of a failed login", async () => {
  const t = await createTestApp();
  await createUsers(t.deps, { realm: "staff", users: [{ login: "alice", password: "alice-pw" }] });
  await createUsers(t.deps, { realm: "guests", users: [{ login: "gus", password: "gus-pw" }] });
  await setDefaultRealm(t.deps, "staff");
  await t.adminToken();
  const cases: {
    name: string;
    body: Record<string, string>;
    json: boolean;
    status: number;
    user: string;
    realm: string;
    success: number;
  }[] = [
    {
      name: "web UI (JSON), wrong password, realm field",
      body: { username: "gus", password: "nope", realm: "guests" },
      json: true,
      status: 401,
      user: "gus",
      realm: "guests",
      success: 0,
    },
    {
      name: "web UI (JSON), name@realm",
      body: { username: "gus@guests", password: "nope" },
      json: true,
      status: 401,
      user: "gus",
      realm: "guests",
      success: 0,
    },
    {
      name: "form fields, unknown user in the default realm",
      body: { username: "ghost", password: "nope" },
      json: false,
      status: 401,
      user: "ghost",
      realm: "staff",
      success: 0,
    },
    {
      name: "form fields, unknown realm",
      body: { username: "alice", password: "alice-pw", realm: "Nowhere" },
      json: false,
      status: 401,
      user: "alice",
      realm: "nowhere",
      success: 0,
    },
    {
      name: "a local admin's wrong password",
      body: { username: "admin", password: "nope" },
      json: true,
      status: 401,
      user: "admin",
      realm: "staff",
      success: 0,
    },
    {
      name: "a successful login keeps the resolved user",
      body: { username: "alice", password: "alice-pw" },
      json: true,
      status: 200,
      user: "alice",
      realm: "staff",
      success: 1,
    },
  ];
  const ids: string[] = [];
  for (const c of cases) {
    const res = await t.post("/auth", c.body, { json: c.json });
    assert.equal(res.status, c.status, c.name);
    ids.push(res.headers.get("x-request-id") ?? "");
    await res.body?.cancel();
  }
  for (const [i, c] of cases.entries()) {
    const res = await jsonOf(await t.asAdmin("GET", "/audit/", { query: { request_id: ids[i] } }));
    assert.equal(res.status, 200);
    const rows = res.body.result.value.auditdata as Json[];
    assert.equal(rows.length, 1, c.name);
    const row = rows[0];
    assert.equal(row.action, "POST /auth", c.name);
    assert.equal(row.success, c.success, c.name);
    assert.equal(row.user, c.user, c.name);
    assert.equal(row.realm, c.realm, c.name);
    assert.ok(!JSON.stringify(row).includes("nope"), "no password in the audit");
  }
  await t.close();
});
