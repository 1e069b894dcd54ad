/**
 * The rights table covers the app exactly: every route has an entry, every
 * entry names a route, and an admin or user route says which policy action
 * it needs (or why none). Unknown routes are refused by the guard.
 */
import assert from "node:assert/strict";
import { createTestApp, jsonOf } from "../../test_app.ts";
import { ROUTE_RIGHTS, routeKey } from "../../../src/http/rights/route_rights.ts";
import { issueJwt } from "../../../src/http/jwt.ts";

Deno.test("every route of the app has an entry in the rights table, and every entry a route", async () => {
  const t = await createTestApp();
  const keys = new Set<string>();
  for (const r of t.app.routes) {
    // middleware (use("*")) is not a route; an all("/path") handler would be one
    if (r.method === "ALL" && r.path.endsWith("*")) continue;
    assert.notEqual(r.method, "ALL", `route ${r.path} answers every method: declare each one`);
    keys.add(routeKey(r.method, r.path));
  }
  const missing = [...keys].filter((k) => !Object.hasOwn(ROUTE_RIGHTS, k));
  assert.deepEqual(missing, [], "routes without a declared right");
  const stale = Object.keys(ROUTE_RIGHTS).filter((k) => !keys.has(k));
  assert.deepEqual(stale, [], "rights of routes that do not exist");
  for (const [key, rule] of Object.entries(ROUTE_RIGHTS)) {
    if (rule.roles === "public") continue;
    assert.ok(rule.action !== undefined || rule.why, `${key}: no action and no reason for none`);
  }
  await t.close();
});

Deno.test("a route without a declared right is refused, whatever the caller", async () => {
  const t = await createTestApp();
  t.app.get("/undeclared", (c) => c.text("reached"));
  for (const token of [undefined, await t.adminToken()]) {
    const res = await jsonOf(await t.get("/undeclared", { token }));
    assert.equal(res.status, 401);
    assert.match(res.body.result.error.message, /No right is declared for GET \/undeclared/);
  }
  await t.close();
});

Deno.test("admin-only routes refuse a user JWT; public ones need none", async () => {
  const t = await createTestApp();
  const { token } = await issueJwt(t.deps, {
    username: "alice",
    realm: "r1",
    role: "user",
    resolver: "",
    authtype: "password",
    rights: [],
  });
  for (
    const path of ["/system/", "/system/random", "/realm/", "/resolver/", "/policy/"]
  ) {
    const res = await jsonOf(await t.get(path, { token }));
    assert.equal(res.status, 401, path);
    assert.equal(res.body.result.error.code, 4306, path);
  }
  assert.equal((await jsonOf(await t.get("/healthz/"))).status, 200);
  // the login page's configuration is read before anyone logs in
  assert.equal((await jsonOf(await t.get("/config"))).status, 200);
  // no JWT needed: the answer is about the credentials, not about authorization
  const check = await jsonOf(await t.get("/validate/check?user=x&pass=y"));
  assert.notEqual(check.status, 401);
  assert.notEqual(check.body.result.error?.code, 4033);
  await t.close();
});
