/** WebUI policies at POST /auth (spec 01 §6, 04 §5 login_mode). */
import assert from "node:assert/strict";
import { ADMIN_PASSWORD, createTestApp, jsonOf, type TestApp } from "../test_app.ts";
import { createUsers } from "../fixtures/users.ts";
import { enrollHotp, hotp } from "../fixtures/tokens.ts";
import { savePolicy } from "../../src/domain/policy/mod.ts";

async function login(t: TestApp, username: string, password: string) {
  return await jsonOf(await t.post("/auth", { username, password }));
}

async function setup(): Promise<TestApp> {
  const t = await createTestApp();
  await createUsers(t.deps, { realm: "realm1", users: [{ login: "alice", password: "alice-pw" }] });
  await t.adminToken();
  return t;
}

Deno.test("login_mode=disable refuses realm users with 403, admins still log in", async () => {
  const t = await setup();
  assert.equal((await login(t, "alice@realm1", "alice-pw")).status, 200);
  await savePolicy(t.deps, "w", { scope: "webui", action: "login_mode=disable", realm: "realm1" });
  const res = await login(t, "alice@realm1", "alice-pw");
  assert.equal(res.status, 403);
  assert.equal(res.body.result.error.message, "The login for this user is disabled.");
  assert.equal((await login(t, "admin", ADMIN_PASSWORD)).status, 200);
  await t.close();
});

Deno.test("login_mode=privacyIDEA needs PIN+OTP instead of the user-store password", async () => {
  const t = await setup();
  await enrollHotp(t, { user: "alice", realm: "realm1", pin: "1234" });
  await savePolicy(t.deps, "w", { scope: "webui", action: "login_mode=privacyIDEA" });
  assert.equal((await login(t, "alice@realm1", "alice-pw")).status, 401);
  const ok = await login(t, "alice@realm1", "1234" + hotp(0));
  assert.equal(ok.status, 200, JSON.stringify(ok.body));
  assert.equal(ok.body.result.value.role, "user");
  await t.close();
});

Deno.test("jwt_validity and WebUI settings from webui policies", async () => {
  const t = await setup();
  await savePolicy(t.deps, "w", {
    scope: "webui",
    action: "jwt_validity=60, logout_time=300, tokenwizard, default_tokentype=totp",
  });
  const res = await login(t, "alice@realm1", "alice-pw");
  const v = res.body.result.value;
  const claims = JSON.parse(atob(v.token.split(".")[1].replace(/-/g, "+").replace(/_/g, "/")));
  assert.equal(claims.exp, Math.floor(t.clock.now() / 1000) + 60);
  assert.equal(v.logout_time, 300);
  assert.equal(v.token_wizard, true);
  assert.equal(v.default_tokentype, "totp");
  assert.equal(v.user_page_size, 15, "unset settings keep their defaults");
  await t.close();
});
