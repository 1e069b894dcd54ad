/**
 * `GET /config`: the login page's configuration, public before any login (privacyIDEA's
 * `get_ui_config`). What it may reveal: the keys privacyIDEA's login page has, from the webui
 * policies an operator made for the login page, and nothing else.
 */
import assert from "node:assert/strict";
import { createTestApp, jsonOf, type TestApp } from "../test_app.ts";
import { createUsers } from "../fixtures/users.ts";
import { savePolicy } from "../../src/domain/policy/mod.ts";

async function config(t: TestApp, token?: string) {
  return await jsonOf(await t.get("/config", { token }));
}

Deno.test("GET /config answers without a JWT: privacyIDEA's login page keys, Tessera's values", async () => {
  const t = await createTestApp();
  try {
    const res = await config(t);
    assert.equal(res.status, 200);
    assert.equal(res.body.result.status, true);
    assert.deepEqual(res.body.result.value, {
      instance: "",
      backendUrl: "",
      browser_lang: "en",
      remote_user: "",
      force_remote_user: false,
      theme: "",
      translation_warning: false,
      password_reset: false,
      hsm_ready: true,
      has_job_queue: "False",
      customization: "",
      custom_css: "",
      customization_menu_file: "templates/menu.html",
      customization_baseline_file: "templates/baseline.html",
      realms: "",
      show_node: "",
      external_links: true,
      login_text: "",
      gdpr_link: "",
      logo: "",
      page_title: "Tessera",
      otp_pin_set_random_user: [],
      privacyideaVersionNumber: t.deps.config.compat.versionnumber,
      passkey_login: "show",
    });
    // an admin's JWT changes nothing: the page is the same for everyone
    const asAdmin = await config(t, await t.adminToken());
    assert.deepEqual(asAdmin.body.result.value, res.body.result.value);
  } finally {
    await t.close();
  }
});

Deno.test("GET /config names realms only as realm_dropdown policies list them", async () => {
  const t = await createTestApp();
  try {
    await createUsers(t.deps, { realm: "staff", users: [{ login: "alice", password: "x" }] });
    await createUsers(t.deps, { realm: "ops", users: [{ login: "bob", password: "x" }] });
    const before = JSON.stringify((await config(t)).body);
    assert.doesNotMatch(before, /staff|ops|alice|bob/);
    await savePolicy(t.deps, "dd", { scope: "webui", action: "realm_dropdown=staff" });
    const after = JSON.stringify((await config(t)).body);
    assert.match(after, /"realms":"staff"/);
    assert.doesNotMatch(after, /ops|alice|bob/);
  } finally {
    await t.close();
  }
});

Deno.test("GET /config shows of an otp_pin_set_random user policy its name, priority and length only", async () => {
  const t = await createTestApp();
  try {
    await createUsers(t.deps, { realm: "staff", users: [{ login: "alice", password: "x" }] });
    await savePolicy(t.deps, "pins", {
      scope: "user",
      action: "otp_pin_set_random=6, setpin, delete",
      realm: "staff",
      user: "alice",
      description: "internal note",
    });
    const res = await config(t);
    assert.deepEqual(res.body.result.value.otp_pin_set_random_user, [
      {
        name: "pins",
        scope: "user",
        active: true,
        priority: 1,
        action: { otp_pin_set_random: "6" },
      },
    ]);
    // privacyIDEA sends the whole policy; Tessera leaves out its realms, users, other actions
    assert.doesNotMatch(JSON.stringify(res.body), /staff|alice|setpin|delete|internal note/);
  } finally {
    await t.close();
  }
});

Deno.test("GET /config writes no audit row (privacyIDEA audits none of its login page)", async () => {
  const t = await createTestApp();
  try {
    const token = await t.adminToken();
    const count = async () =>
      (await jsonOf(await t.get("/audit/", { token, query: { action: "*config*" } }))).body
        .result.value.count;
    assert.equal(await count(), 0);
    for (let i = 0; i < 3; i++) assert.equal((await config(t)).status, 200);
    assert.equal(await count(), 0);
  } finally {
    await t.close();
  }
});

Deno.test("GET /config ignores a remote-user header unless server.remote_user_header names it and a trusted proxy sends it", async () => {
  const t = await createTestApp();
  try {
    await savePolicy(t.deps, "ru", { scope: "webui", action: "remote_user=allowed" });
    const res = await jsonOf(
      await t.get("/config", { headers: { "X-Remote-User": "admin", "Remote-User": "admin" } }),
    );
    assert.equal(res.body.result.value.remote_user, "");
  } finally {
    await t.close();
  }
});
