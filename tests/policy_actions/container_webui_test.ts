/**
 * Effect tests of the web interface's container actions (spec 13 §2.13, webui scope): the
 * create form's preselected type (`default_container_type`) and the container wizard of a user
 * without a container (`container_wizard_type`, `_template`, `_registration`), as `POST /auth`
 * hands them to the web interface. tests/ui/container_wizard_browser_test.ts shows the UI
 * following them.
 *
 * @module
 */
import assert from "node:assert/strict";
import { actionTest } from "./_registry.ts";
import { ADMIN_PASSWORD, createTestApp, type Json, jsonOf, type TestApp } from "../test_app.ts";
import { createUsers } from "../fixtures/users.ts";

/** realm1 with alice and bob (no containers yet); the admin's JWT made. */
async function setup(): Promise<TestApp> {
  const t = await createTestApp();
  await createUsers(t.deps, {
    realm: "realm1",
    users: [{ login: "alice", password: "alicepw" }, { login: "bob", password: "bobpw" }],
  });
  await t.adminToken();
  return t;
}

async function admin(
  t: TestApp,
  method: string,
  path: string,
  body: Record<string, unknown>,
): Promise<Json> {
  const res = await jsonOf(await t.asAdmin(method, path, { body, json: true }));
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body.result.value;
}

async function policy(t: TestApp, name: string, body: Record<string, unknown>): Promise<void> {
  await admin(t, "POST", `/policy/${name}`, body);
}

const CREDENTIALS = {
  admin: { username: "admin", password: ADMIN_PASSWORD },
  alice: { username: "alice@realm1", password: "alicepw" },
  bob: { username: "bob@realm1", password: "bobpw" },
};

/** The `/auth` answer's value of a successful login. */
async function settings(t: TestApp, who: keyof typeof CREDENTIALS): Promise<Json> {
  const res = await jsonOf(await t.post("/auth", CREDENTIALS[who]));
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body.result.value;
}

actionTest(
  "webui",
  "default_container_type",
  "POST /auth answers default_container_type smartphone (default generic), for admins and users",
  async () => {
    const t = await setup();
    try {
      assert.equal((await settings(t, "admin")).default_container_type, "generic");
      assert.equal((await settings(t, "alice")).default_container_type, "generic");
      await policy(t, "pol", { scope: "webui", action: "default_container_type=smartphone" });
      assert.equal((await settings(t, "admin")).default_container_type, "smartphone");
      assert.equal((await settings(t, "alice")).default_container_type, "smartphone");
      // only realm1's users: the local admin keeps the default
      await policy(t, "pol", {
        scope: "webui",
        action: "default_container_type=yubikey",
        realm: "realm1",
      });
      assert.equal((await settings(t, "alice")).default_container_type, "yubikey");
      assert.equal((await settings(t, "admin")).default_container_type, "generic");
    } finally {
      await t.close();
    }
  },
);

actionTest(
  "webui",
  "container_wizard_type",
  "container_wizard is on, with the type, for a user without a container only (not for admins, not once the user has one)",
  async () => {
    const t = await setup();
    try {
      assert.deepEqual((await settings(t, "alice")).container_wizard, { enabled: false });
      await policy(t, "pol", { scope: "webui", action: "container_wizard_type=smartphone" });
      assert.deepEqual((await settings(t, "alice")).container_wizard, {
        enabled: true,
        type: "smartphone",
        template: null,
        registration: false,
      });
      assert.deepEqual((await settings(t, "admin")).container_wizard, { enabled: false });
      // a container of any type ends the wizard for its owner, not for others
      await admin(t, "POST", "/container/init", {
        type: "generic",
        user: "alice",
        realm: "realm1",
      });
      assert.deepEqual((await settings(t, "alice")).container_wizard, { enabled: false });
      assert.equal((await settings(t, "bob")).container_wizard.enabled, true);
      // a container without owner (only in the realm) is nobody's
      await admin(t, "POST", "/container/init", { type: "generic", realm: "realm1" });
      assert.equal((await settings(t, "bob")).container_wizard.enabled, true);
    } finally {
      await t.close();
    }
  },
);

actionTest(
  "webui",
  "container_wizard_template",
  "container_wizard names the template (privacyIDEA's name(type) value cut to the name); nothing without container_wizard_type",
  async () => {
    const t = await setup();
    try {
      await policy(t, "tpl", {
        scope: "webui",
        action: "container_wizard_template=phone(smartphone)",
      });
      assert.deepEqual((await settings(t, "alice")).container_wizard, { enabled: false });
      await policy(t, "pol", { scope: "webui", action: "container_wizard_type=smartphone" });
      assert.equal((await settings(t, "alice")).container_wizard.template, "phone");
      await policy(t, "tpl", { scope: "webui", action: "container_wizard_template=laptop" });
      assert.equal((await settings(t, "alice")).container_wizard.template, "laptop");
    } finally {
      await t.close();
    }
  },
);

actionTest(
  "webui",
  "container_wizard_registration",
  "container_wizard asks for the registration (registration true, default false)",
  async () => {
    const t = await setup();
    try {
      await policy(t, "pol", { scope: "webui", action: "container_wizard_type=smartphone" });
      assert.equal((await settings(t, "alice")).container_wizard.registration, false);
      await policy(t, "reg", { scope: "webui", action: "container_wizard_registration" });
      assert.equal((await settings(t, "alice")).container_wizard.registration, true);
    } finally {
      await t.close();
    }
  },
);
