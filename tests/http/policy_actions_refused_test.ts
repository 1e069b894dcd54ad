/**
 * Tessera accepts exactly the actions `/policy/defs` lists (privacyIDEA's `Invalid actions
 * [..]!`, 905): through `POST /policy/<name>`, `/policy/import`, and `enable`. A policy stored
 * before its actions left the list is shown with `unsupported_actions`, cannot be enabled, and
 * is logged when the policies are loaded.
 */
import assert from "node:assert/strict";
import { createTestApp, jsonOf, type TestApp } from "../test_app.ts";
import { FEATURE_DEFS } from "../../src/domain/policy/defs.ts";
import { knownTokenTypes } from "../../src/domain/policy/_known.ts";
import { listPolicies, loadPolicySet } from "../../src/domain/policy/mod.ts";
import * as store from "../../src/domain/policy/policy_store.ts";

async function post(t: TestApp, name: string, body: Record<string, unknown>) {
  return await jsonOf(await t.asAdmin("POST", `/policy/${name}`, { body, json: true }));
}

/** An admin policy that keeps the test admin's policy rights once admin policies exist. */
async function keepPolicyRights(t: TestApp): Promise<void> {
  const res = await post(t, "base", {
    scope: "admin",
    action: "policyread, policywrite, policydelete",
  });
  assert.equal(res.status, 200, JSON.stringify(res.body));
}

async function importText(t: TestApp, content: string) {
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

Deno.test("POST /policy/<name> accepts every action /policy/defs lists, each in its scope", async () => {
  const t = await createTestApp();
  await keepPolicyRights(t);
  const defs = (await jsonOf(await t.asAdmin("GET", "/policy/defs"))).body.result.value as Record<
    string,
    Record<string, unknown>
  >;
  let n = 0;
  for (const [scope, actions] of Object.entries(defs)) {
    for (const action of Object.keys(actions)) {
      const res = await post(t, `p${n++}`, { scope, action, active: false });
      assert.equal(res.status, 200, `${scope}:${action} ${JSON.stringify(res.body)}`);
    }
  }
  assert.equal((await listPolicies(t.deps)).length, n + 1);
  await t.close();
});

Deno.test("POST /policy/<name> refuses every action of a feature Tessera does not have", async () => {
  const t = await createTestApp();
  await keepPolicyRights(t);
  const ctx = { realms: [], resolvers: [], tokenTypes: knownTokenTypes() };
  for (const defs of Object.values(FEATURE_DEFS)) {
    // a built feature's actions are listed, and the test above saves each of them
    if (defs.isBuilt) continue;
    for (const [scope, actions] of Object.entries(defs.actions(ctx))) {
      for (const action of Object.keys(actions ?? {})) {
        const res = await post(t, "x", { scope, action: `${action}` });
        assert.equal(res.status, 400, `${scope}:${action}`);
        assert.equal(res.body.result.error.code, 905);
        assert.equal(res.body.result.error.message, `ERR905: Invalid actions ['${action}']!`);
      }
    }
  }
  assert.deepEqual((await listPolicies(t.deps)).map((p) => p.name), ["base"]);
  await t.close();
});

Deno.test("POST /policy/<name>: one unlisted action refuses the whole policy; an update changes nothing", async () => {
  const t = await createTestApp();
  await keepPolicyRights(t);
  // per-type actions are checked against the same generated list /policy/defs answers
  const typed = await post(t, "ct", {
    scope: "authentication",
    action: "email_challenge_text=Mail, hotp_challenge_text=x, !remember_device",
  });
  assert.equal(typed.status, 400);
  assert.equal(
    typed.body.result.error.message,
    "ERR905: Invalid actions ['hotp_challenge_text', 'remember_device']!",
  );
  assert.equal((await listPolicies(t.deps, { name: "ct" })).length, 0);
  const ok = await post(t, "ct", { scope: "authentication", action: "email_challenge_text=Mail" });
  assert.equal(ok.status, 200);
  const update = await post(t, "ct", {
    scope: "authentication",
    action: "email_challenge_text=Other, passthru_ignore_rollout_state=clientwait",
  });
  assert.equal(update.status, 400);
  const [kept] = await listPolicies(t.deps, { name: "ct" });
  assert.deepEqual(kept.action, { email_challenge_text: "Mail" });
  await t.close();
});

Deno.test("POST /policy/import/<fn>: a section with an unlisted action refuses the file, nothing is saved", async () => {
  const t = await createTestApp();
  await keepPolicyRights(t);
  const res = await importText(
    t,
    "[good]\nscope = authentication\naction = {'otppin': 'userstore'}\n\n" +
      "[bad]\nscope = admin\naction = {'enable': True, 'set_hsm_password': True}\n",
  );
  assert.equal(res.status, 400);
  assert.equal(res.body.result.error.message, "ERR905: Invalid actions ['set_hsm_password']!");
  assert.deepEqual((await listPolicies(t.deps)).map((p) => p.name), ["base"], "not even 'good'");
  const fixed = await importText(
    t,
    "[good]\nscope = authentication\naction = {'otppin': 'userstore'}\n\n" +
      "[bad]\nscope = admin\naction = {'enable': True}\n",
  );
  assert.equal(fixed.body.result.value, 2);
  assert.deepEqual((await listPolicies(t.deps)).map((p) => p.name), ["base", "good", "bad"]);
  await t.close();
});

Deno.test("a stored policy with an action no longer listed: shown, not enabled, logged", async () => {
  const t = await createTestApp();
  await keepPolicyRights(t);
  // as a database of an older version holds it: written without the checks of savePolicy
  await store.upsert(t.deps.db, "old", () => ({
    name: "old",
    scope: "admin",
    action: "enable, !set_hsm_password",
    active: false,
    priority: 1,
    realm: "",
    resolver: "",
    user: "",
    adminrealm: "",
    adminuser: "",
    pinode: "",
    client: "",
    time: "",
    checkAllResolvers: false,
    userCaseInsensitive: false,
    conditions: "[]",
    description: null,
    userAgents: "",
  }));
  const listed = (await jsonOf(await t.asAdmin("GET", "/policy/"))).body.result.value;
  assert.deepEqual(listed.old.unsupported_actions, ["set_hsm_password"]);
  assert.equal(listed.base.unsupported_actions, undefined);

  const enable = await jsonOf(await t.asAdmin("POST", "/policy/enable/old"));
  assert.equal(enable.status, 400);
  assert.equal(
    enable.body.result.error.message,
    "ERR905: Invalid actions ['set_hsm_password']!",
  );
  assert.equal((await listPolicies(t.deps, { name: "old" }))[0].active, false);
  assert.equal((await jsonOf(await t.asAdmin("POST", "/policy/disable/old"))).status, 200);

  // an active one (as an older version left it) is named in the log when the policies load
  await store.setActive(t.deps.db, "old", true);
  t.log.lines.length = 0;
  await loadPolicySet(t.deps);
  const warning = t.log.lines.filter((l) => l.includes("Tessera does not have"));
  assert.equal(warning.length, 1, t.log.lines.join("\n"));
  assert.match(warning[0], /policy=old/);
  assert.match(warning[0], / actions=set_hsm_password$/);
  await t.close();
});
