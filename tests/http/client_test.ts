/**
 * `GET /client/` (spec 14 §16): the clients that called `/validate/check`, `radiuscheck` or
 * `samlcheck`, grouped by user agent, from the audit log; admins with `clienttype`.
 */
import assert from "node:assert/strict";
import { createTestApp, jsonOf } from "../test_app.ts";
import { issueJwt } from "../../src/http/jwt.ts";
import { savePolicy } from "../../src/domain/policy/mod.ts";
import { actionTest } from "../policy_actions/_registry.ts";

async function check(
  t: Awaited<ReturnType<typeof createTestApp>>,
  path: string,
  addr: string,
  agent?: string,
) {
  const headers: Record<string, string> = {};
  if (agent !== undefined) headers["user-agent"] = agent;
  const res = await t.post(path, { user: "nobody", pass: "x" }, { remoteAddr: addr, headers });
  await res.body?.cancel();
}

Deno.test("GET /client/: callers of the check endpoints by user agent, each address with its latest call", async () => {
  const t = await createTestApp();
  const empty = await jsonOf(await t.asAdmin("GET", "/client/"));
  assert.equal(empty.status, 200);
  assert.deepEqual(empty.body.result.value, {});
  await check(t, "/validate/check", "10.0.0.5", "privacyidea-cp/2.0 Windows/Laptop-1");
  t.clock.advance(60_000);
  await check(t, "/validate/check", "10.0.0.5", "privacyidea-cp/2.0 Windows/Laptop-1");
  await check(t, "/validate/samlcheck", "10.0.0.6", "simpleSAMLphp");
  await check(t, "/validate/check", "10.0.0.7", "");
  // not an authentication endpoint: not listed
  (await t.get("/system/", { remoteAddr: "10.0.0.9", headers: { "user-agent": "probe" } })).body
    ?.cancel();
  const res = await jsonOf(await t.asAdmin("GET", "/client/"));
  assert.equal(res.status, 200);
  const latest = new Date(t.clock.now()).toUTCString();
  assert.match(latest, /^\w{3}, \d\d \w{3} \d{4} \d\d:\d\d:\d\d GMT$/);
  assert.deepEqual(res.body.result.value["privacyidea-cp/2.0 Windows/Laptop-1"], [
    { ip: "10.0.0.5", hostname: null, lastseen: latest },
  ]);
  assert.deepEqual(res.body.result.value.simpleSAMLphp, [
    { ip: "10.0.0.6", hostname: null, lastseen: latest },
  ]);
  assert.deepEqual(res.body.result.value.unknown.map((c: { ip: string }) => c.ip), ["10.0.0.7"]);
  assert.equal(res.body.result.value.probe, undefined);
  await t.close();
});

Deno.test("GET /client/ refuses a user JWT and no JWT", async () => {
  const t = await createTestApp();
  const { token } = await issueJwt(t.deps, {
    username: "alice",
    realm: "realm1",
    role: "user",
    resolver: "",
    authtype: "password",
    rights: [],
  });
  assert.equal((await t.get("/client/", { token })).status, 401);
  assert.equal((await t.get("/client/")).status, 401);
  await t.close();
});

actionTest("admin", "clienttype", "GET /client/ needs the admin right clienttype", async () => {
  const t = await createTestApp();
  await check(t, "/validate/check", "10.0.0.5", "pam");
  await savePolicy(t.deps, "p", { scope: "admin", action: "auditlog" });
  const denied = await jsonOf(await t.asAdmin("GET", "/client/"));
  assert.equal(denied.status, 403);
  assert.equal(
    denied.body.result.error.message,
    "Admin actions are defined, but the action clienttype is not allowed!",
  );
  await savePolicy(t.deps, "p", { scope: "admin", action: "auditlog, clienttype" });
  const allowed = await jsonOf(await t.asAdmin("GET", "/client/"));
  assert.equal(allowed.status, 200);
  assert.equal(allowed.body.result.value.pam[0].ip, "10.0.0.5");
  await t.close();
});
