/**
 * Effect tests of the `webui` actions (spec 15 §7): the settings a successful `POST /auth`
 * hands the web interface and the login page's configuration at `GET /config`. Each test
 * reads the value without the policy (privacyIDEA's default), then with it.
 *
 * @module
 */
import assert from "node:assert/strict";
import { actionTest } from "./_registry.ts";
import { ADMIN_PASSWORD, createTestApp, type Json, jsonOf, type TestApp } from "../test_app.ts";
import { createUsers } from "../fixtures/users.ts";
import { enrollHotp, hotp } from "../fixtures/tokens.ts";
import { qrSvgDataUri } from "../../src/lib/qr.ts";
import { AUTHENTICATOR_APP_URL } from "../../src/domain/webui/mod.ts";

/** realm1 with alice (a HOTP token, PIN 1234) and bob (no token); the admin's JWT made. */
async function setup(): Promise<TestApp> {
  const t = await createTestApp();
  await createUsers(t.deps, {
    realm: "realm1",
    users: [{ login: "alice", password: "alicepw" }, { login: "bob", password: "bobpw" }],
  });
  await enrollHotp(t, { user: "alice", realm: "realm1", pin: "1234" });
  await t.adminToken();
  return t;
}

async function policy(t: TestApp, name: string, body: Record<string, unknown>): Promise<void> {
  const res = await jsonOf(await t.asAdmin("POST", `/policy/${name}`, { body, json: true }));
  assert.equal(res.status, 200, JSON.stringify(res.body));
}

type Who = "admin" | "alice" | "bob";

const CREDENTIALS: Record<Who, { username: string; password: string }> = {
  admin: { username: "admin", password: ADMIN_PASSWORD },
  alice: { username: "alice@realm1", password: "alicepw" },
  bob: { username: "bob@realm1", password: "bobpw" },
};

async function login(t: TestApp, who: Who): Promise<{ status: number; body: Json }> {
  return await jsonOf(await t.post("/auth", CREDENTIALS[who]));
}

/** The `/auth` answer's value of a successful login. */
async function settings(t: TestApp, who: Who): Promise<Json> {
  const res = await login(t, who);
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body.result.value;
}

/** One `/auth` setting: its key, the default, and the value a policy gives it. */
interface SettingCase {
  action: string;
  /** The policy's action text. */
  policyAction: string;
  key: string;
  who: Who;
  before: unknown;
  after: unknown;
}

const AUTH_SETTINGS: SettingCase[] = [
  {
    action: "logout_time",
    policyAction: "logout_time=300",
    key: "logout_time",
    who: "admin",
    before: 120,
    after: 300,
  },
  {
    action: "token_page_size",
    policyAction: "token_page_size=50",
    key: "token_page_size",
    who: "alice",
    before: 15,
    after: 50,
  },
  {
    action: "user_page_size",
    policyAction: "user_page_size=40",
    key: "user_page_size",
    who: "admin",
    before: 15,
    after: 40,
  },
  {
    action: "audit_page_size",
    policyAction: "audit_page_size=25",
    key: "audit_page_size",
    who: "admin",
    before: 10,
    after: 25,
  },
  {
    action: "timeout_action",
    policyAction: "timeout_action=logout",
    key: "timeout_action",
    who: "alice",
    before: "lockscreen",
    after: "logout",
  },
  {
    action: "default_tokentype",
    policyAction: "default_tokentype=totp",
    key: "default_tokentype",
    who: "admin",
    before: "hotp",
    after: "totp",
  },
  {
    action: "logout_redirect",
    policyAction: "logout_redirect=https://sso.example.com/logout",
    key: "logout_redirect_url",
    who: "alice",
    before: "",
    after: "https://sso.example.com/logout",
  },
  {
    action: "policy_template_url",
    policyAction: "policy_template_url=https://templates.example.com/",
    key: "policy_template_url",
    who: "admin",
    before: "https://raw.githubusercontent.com/privacyidea/policy-templates/master/templates/",
    after: "https://templates.example.com/",
  },
  {
    action: "user_details",
    policyAction: "user_details",
    key: "user_details",
    who: "admin",
    before: false,
    after: true,
  },
  {
    action: "search_on_enter",
    policyAction: "search_on_enter",
    key: "search_on_enter",
    who: "admin",
    before: false,
    after: true,
  },
  {
    action: "hide_welcome_info",
    policyAction: "hide_welcome_info",
    key: "hide_welcome",
    who: "admin",
    before: false,
    after: true,
  },
  {
    action: "hide_buttons",
    policyAction: "hide_buttons",
    key: "hide_buttons",
    who: "alice",
    before: false,
    after: true,
  },
  {
    action: "deletion_confirmation",
    policyAction: "deletion_confirmation",
    key: "deletion_confirmation",
    who: "admin",
    before: false,
    after: true,
  },
  {
    action: "show_seed",
    policyAction: "show_seed",
    key: "show_seed",
    who: "alice",
    before: false,
    after: true,
  },
  {
    action: "show_node",
    policyAction: "show_node",
    key: "show_node",
    who: "admin",
    before: "",
    after: "test-node",
  },
  {
    action: "show_android_privacyidea_authenticator",
    policyAction: "show_android_privacyidea_authenticator",
    key: "qr_image_android",
    who: "alice",
    before: null,
    after: qrSvgDataUri(AUTHENTICATOR_APP_URL.android),
  },
  {
    action: "show_ios_privacyidea_authenticator",
    policyAction: "show_ios_privacyidea_authenticator",
    key: "qr_image_ios",
    who: "alice",
    before: null,
    after: qrSvgDataUri(AUTHENTICATOR_APP_URL.ios),
  },
  {
    action: "show_custom_authenticator",
    policyAction: "show_custom_authenticator=https://apps.example.com/otp",
    key: "qr_image_custom",
    who: "alice",
    before: null,
    after: qrSvgDataUri("https://apps.example.com/otp"),
  },
  {
    action: "token_rollover",
    policyAction: "token_rollover=hotp totp",
    key: "token_rollover",
    who: "admin",
    before: {},
    after: { hotp: ["pol"], totp: ["pol"] },
  },
  {
    action: "rss_age",
    policyAction: "rss_age=30",
    key: "rss_age",
    who: "alice",
    before: 0,
    after: 30,
  },
];

/** A value for a test's name: a QR code's data URL is named, not spelled out. */
function shown(value: unknown): string {
  const text = JSON.stringify(value);
  return text.startsWith('"data:') ? "a QR code (SVG data URL)" : text;
}

for (const c of AUTH_SETTINGS) {
  actionTest(
    "webui",
    c.action,
    `POST /auth answers ${c.key} ${shown(c.after)} (default ${shown(c.before)})`,
    async () => {
      const t = await setup();
      try {
        assert.deepEqual((await settings(t, c.who))[c.key], c.before);
        await policy(t, "pol", { scope: "webui", action: c.policyAction });
        assert.deepEqual((await settings(t, c.who))[c.key], c.after);
      } finally {
        await t.close();
      }
    },
  );
}

Deno.test("POST /auth: without webui policies the settings are privacyIDEA's defaults, in its order", async () => {
  const t = await setup();
  try {
    const v = await settings(t, "admin");
    const keys = Object.keys(v);
    const settingKeys = keys.slice(keys.indexOf("logout_time"));
    assert.deepEqual(settingKeys, [
      "logout_time",
      "audit_page_size",
      "token_page_size",
      "user_page_size",
      "policy_template_url",
      "default_tokentype",
      "default_container_type",
      "user_details",
      "token_wizard",
      "token_wizard_2nd",
      "admin_dashboard",
      "dialog_no_token",
      "search_on_enter",
      "timeout_action",
      "token_rollover",
      "hide_welcome",
      "hide_buttons",
      "deletion_confirmation",
      "show_seed",
      "show_node",
      "subscription_status",
      "subscription_status_push",
      "qr_image_android",
      "qr_image_ios",
      "qr_image_custom",
      "logout_redirect_url",
      "require_description",
      "rss_age",
      "container_wizard",
    ]);
    assert.equal(v.rss_age, 180, "admins see half a year of news by default");
    assert.deepEqual(v.container_wizard, { enabled: false });
    assert.equal("indexedsecret_preset_attribute" in v, false);
    assert.equal("indexedsecret_force_attribute" in v, false);
  } finally {
    await t.close();
  }
});

actionTest(
  "webui",
  "logout_time",
  "two logout_time values at one priority fail the login with 303 and issue no JWT",
  async () => {
    const t = await setup();
    try {
      await policy(t, "a", { scope: "webui", action: "logout_time=300" });
      await policy(t, "b", { scope: "webui", action: "logout_time=600" });
      const res = await login(t, "alice");
      assert.equal(res.status, 403, JSON.stringify(res.body));
      assert.equal(res.body.result.error.code, 303);
      assert.equal(
        res.body.result.error.message,
        "There are policies with conflicting actions: ['a', 'b']",
      );
      assert.equal(res.body.result.value, undefined);
      // a lower priority number wins: no conflict
      await policy(t, "a", { scope: "webui", action: "logout_time=300", priority: 2 });
      assert.equal((await settings(t, "alice")).logout_time, 600);
    } finally {
      await t.close();
    }
  },
);

actionTest(
  "webui",
  "token_page_size",
  "a policy for realm1 sets the page size of realm1's users only, not the local admin's",
  async () => {
    const t = await setup();
    try {
      await policy(t, "pol", { scope: "webui", action: "token_page_size=50", realm: "realm1" });
      assert.equal((await settings(t, "alice")).token_page_size, 50);
      assert.equal((await settings(t, "admin")).token_page_size, 15);
    } finally {
      await t.close();
    }
  },
);

actionTest(
  "webui",
  "tokenwizard",
  "token_wizard is true only for a user without tokens",
  async () => {
    const t = await setup();
    try {
      assert.equal((await settings(t, "bob")).token_wizard, false);
      await policy(t, "pol", { scope: "webui", action: "tokenwizard" });
      assert.equal((await settings(t, "bob")).token_wizard, true);
      assert.equal((await settings(t, "alice")).token_wizard, false, "alice has a token");
      assert.equal((await settings(t, "admin")).token_wizard, false);
    } finally {
      await t.close();
    }
  },
);

actionTest(
  "webui",
  "dialog_no_token",
  "dialog_no_token is true only for a user without tokens",
  async () => {
    const t = await setup();
    try {
      assert.equal((await settings(t, "bob")).dialog_no_token, false);
      await policy(t, "pol", { scope: "webui", action: "dialog_no_token" });
      assert.equal((await settings(t, "bob")).dialog_no_token, true);
      assert.equal((await settings(t, "alice")).dialog_no_token, false, "alice has a token");
      assert.equal((await settings(t, "admin")).dialog_no_token, false);
    } finally {
      await t.close();
    }
  },
);

actionTest(
  "webui",
  "tokenwizard_2nd_token",
  "token_wizard_2nd is true for users only",
  async () => {
    const t = await setup();
    try {
      assert.equal((await settings(t, "alice")).token_wizard_2nd, false);
      await policy(t, "pol", { scope: "webui", action: "tokenwizard_2nd_token" });
      assert.equal((await settings(t, "alice")).token_wizard_2nd, true);
      assert.equal((await settings(t, "admin")).token_wizard_2nd, false);
    } finally {
      await t.close();
    }
  },
);

actionTest(
  "webui",
  "admin_dashboard",
  "admin_dashboard is true for admins only",
  async () => {
    const t = await setup();
    try {
      assert.equal((await settings(t, "admin")).admin_dashboard, false);
      await policy(t, "pol", { scope: "webui", action: "admin_dashboard" });
      assert.equal((await settings(t, "admin")).admin_dashboard, true);
      assert.equal((await settings(t, "alice")).admin_dashboard, false);
    } finally {
      await t.close();
    }
  },
);

actionTest(
  "webui",
  "rss_age",
  "an admin's default is 180 days; the policy's value replaces it",
  async () => {
    const t = await setup();
    try {
      assert.equal((await settings(t, "admin")).rss_age, 180);
      await policy(t, "pol", { scope: "webui", action: "rss_age=0" });
      assert.equal((await settings(t, "admin")).rss_age, 0);
    } finally {
      await t.close();
    }
  },
);

actionTest(
  "webui",
  "indexedsecret_preset_attribute",
  "the key appears only with a policy, matched by the login realm",
  async () => {
    const t = await setup();
    try {
      assert.equal("indexedsecret_preset_attribute" in await settings(t, "alice"), false);
      await policy(t, "pol", {
        scope: "webui",
        action: "indexedsecret_preset_attribute=email",
        realm: "realm1",
      });
      assert.equal((await settings(t, "alice")).indexedsecret_preset_attribute, "email");
      // a local admin logs in without a realm: a realm1 policy is not theirs
      assert.equal("indexedsecret_preset_attribute" in await settings(t, "admin"), false);
    } finally {
      await t.close();
    }
  },
);

actionTest(
  "webui",
  "jwt_validity",
  "the JWT expires after the policy's seconds instead of the configured hour",
  async () => {
    const t = await setup();
    try {
      const exp = async () => {
        const token = (await settings(t, "alice")).token as string;
        const part = token.split(".")[1].replace(/-/g, "+").replace(/_/g, "/");
        return JSON.parse(atob(part)).exp as number;
      };
      const now = Math.floor(t.clock.now() / 1000);
      assert.equal(await exp(), now + 3600);
      await policy(t, "pol", { scope: "webui", action: "jwt_validity=60" });
      assert.equal(await exp(), now + 60);
    } finally {
      await t.close();
    }
  },
);

actionTest(
  "webui",
  "login_mode",
  "privacyIDEA: the user logs in with PIN and OTP, not the user store's password; disable: refused",
  async () => {
    const t = await setup();
    try {
      assert.equal((await login(t, "alice")).status, 200);
      await policy(t, "pol", { scope: "webui", action: "login_mode=privacyIDEA" });
      const refused = await login(t, "alice");
      assert.equal(refused.status, 401);
      assert.equal(refused.body.result.error.message, "Authentication failure. Wrong credentials");
      const ok = await jsonOf(
        await t.post("/auth", { username: "alice@realm1", password: `1234${hotp(0)}` }),
      );
      assert.equal(ok.status, 200, JSON.stringify(ok.body));
      await policy(t, "pol", { scope: "webui", action: "login_mode=disable" });
      const disabled = await login(t, "alice");
      assert.equal(disabled.status, 403);
      assert.equal(disabled.body.result.error.message, "The login for this user is disabled.");
      // local admins are not realm users: they still log in
      assert.equal((await login(t, "admin")).status, 200);
    } finally {
      await t.close();
    }
  },
);

// --- the login page: GET /config ------------------------------------------------------------

/** `GET /config`'s value, as a browser before the login gets it. */
async function loginPage(t: TestApp, options: Parameters<TestApp["get"]>[1] = {}): Promise<Json> {
  const res = await jsonOf(await t.get("/config", options));
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body.result.value;
}

/** One login-page key: its default and the value a policy gives it. */
const PAGE_SETTINGS: SettingCase[] = [
  {
    action: "login_text",
    policyAction: "login_text=Use your ACME account and password",
    key: "login_text",
    who: "admin",
    before: "",
    after: "Use your ACME account and password",
  },
  {
    action: "custom_menu",
    policyAction: "custom_menu=static/customize/menu.html",
    key: "customization_menu_file",
    who: "admin",
    before: "templates/menu.html",
    after: "static/customize/menu.html",
  },
  {
    action: "custom_baseline",
    policyAction: "custom_baseline=static/customize/baseline.html",
    key: "customization_baseline_file",
    who: "admin",
    before: "templates/baseline.html",
    after: "static/customize/baseline.html",
  },
  {
    action: "privacy_statement_link",
    policyAction: "privacy_statement_link=https://example.com/privacy",
    key: "gdpr_link",
    who: "admin",
    before: "",
    after: "https://example.com/privacy",
  },
  {
    action: "passkey_login",
    policyAction: "passkey_login=hide",
    key: "passkey_login",
    who: "admin",
    before: "show",
    after: "hide",
  },
  {
    action: "show_node",
    policyAction: "show_node",
    key: "show_node",
    who: "admin",
    before: "",
    after: "test-node",
  },
];

for (const c of PAGE_SETTINGS) {
  actionTest(
    "webui",
    c.action,
    `GET /config answers ${c.key} ${shown(c.after)} (default ${shown(c.before)})`,
    async () => {
      const t = await setup();
      try {
        assert.deepEqual((await loginPage(t))[c.key], c.before);
        // nobody is logged in: a policy limited to a realm or a user applies all the same
        await policy(t, "pol", { scope: "webui", action: c.policyAction, realm: "realm1" });
        assert.deepEqual((await loginPage(t))[c.key], c.after);
      } finally {
        await t.close();
      }
    },
  );
}

actionTest(
  "webui",
  "realm_dropdown",
  "GET /config offers the realms of every realm_dropdown policy, joined with commas",
  async () => {
    const t = await setup();
    try {
      await createUsers(t.deps, { realm: "realm2", users: [{ login: "carol", password: "x" }] });
      await createUsers(t.deps, { realm: "hidden", users: [{ login: "dave", password: "x" }] });
      assert.equal((await loginPage(t)).realms, "");
      await policy(t, "a", { scope: "webui", action: "realm_dropdown=realm1 realm2" });
      assert.equal((await loginPage(t)).realms, "realm1,realm2");
      // a realm no policy names stays unknown to the login page
      assert.doesNotMatch(JSON.stringify(await loginPage(t)), /hidden/);
    } finally {
      await t.close();
    }
  },
);

actionTest(
  "webui",
  "login_text",
  "a login_text policy for other clients leaves the default; client 10.0.0.0/8 gets the text",
  async () => {
    const t = await setup();
    try {
      await policy(t, "pol", { scope: "webui", action: "login_text=Hello", client: "10.0.0.0/8" });
      assert.equal((await loginPage(t)).login_text, "");
      assert.equal((await loginPage(t, { remoteAddr: "10.1.2.3" })).login_text, "Hello");
    } finally {
      await t.close();
    }
  },
);

/** A server behind a proxy at 10.0.0.1 that names the user it authenticated. */
const PROXIED = '[server]\ntrusted_proxies = ["10.0.0.1"]\nremote_user_header = "X-Remote-User"\n';

async function proxiedSetup(): Promise<TestApp> {
  const t = await createTestApp({ configText: PROXIED });
  await createUsers(t.deps, { realm: "realm1", users: [{ login: "alice", password: "alicepw" }] });
  await t.adminToken();
  return t;
}

/** A password-less login the proxy vouches for. */
async function proxiedLogin(
  t: TestApp,
  username: string,
  options: { remoteUser?: string; from?: string } = {},
) {
  return await jsonOf(
    await t.post("/auth", { username }, {
      remoteAddr: options.from ?? "10.0.0.1",
      headers: { "X-Remote-User": options.remoteUser ?? username },
    }),
  );
}

actionTest(
  "webui",
  "remote_user",
  "allowed: the user the trusted proxy names logs in without a password; disable (default): refused",
  async () => {
    const t = await proxiedSetup();
    try {
      const refused = await proxiedLogin(t, "alice@realm1");
      assert.equal(refused.status, 401, JSON.stringify(refused.body));
      assert.equal(refused.body.result.error.message, "Authentication failure. Wrong credentials");
      await policy(t, "pol", { scope: "webui", action: "remote_user=allowed", realm: "realm1" });
      const ok = await proxiedLogin(t, "alice@realm1");
      assert.equal(ok.status, 200, JSON.stringify(ok.body));
      assert.equal(ok.body.result.value.role, "user");
      assert.equal(ok.body.result.value.username, "alice");
      const claims = JSON.parse(atob(ok.body.result.value.token.split(".")[1]));
      assert.equal(claims.authtype, "remote_user ");
      // the JWT works
      const me = await jsonOf(await t.get("/token/", { token: ok.body.result.value.token }));
      assert.equal(me.status, 200);
      // a name other than the proxy's, a client that is not the proxy, a missing header: no
      for (
        const res of [
          await proxiedLogin(t, "alice@realm1", { remoteUser: "bob@realm1" }),
          await proxiedLogin(t, "alice@realm1", { from: "10.0.0.2" }),
          await jsonOf(
            await t.post("/auth", { username: "alice@realm1" }, {
              remoteAddr: "10.0.0.1",
            }),
          ),
        ]
      ) {
        assert.equal(res.status, 401, JSON.stringify(res.body));
      }
      // a name that is nobody is refused as a wrong password is
      await policy(t, "pol", { scope: "webui", action: "remote_user=allowed" });
      const nobody = await proxiedLogin(t, "nobody@realm1");
      assert.equal(nobody.status, 401);
      assert.equal(nobody.body.result.error.message, "Authentication failure. Wrong credentials");
    } finally {
      await t.close();
    }
  },
);

actionTest(
  "webui",
  "remote_user",
  "a local admin named by the proxy logs in as admin; login_mode=disable still refuses a realm user",
  async () => {
    const t = await proxiedSetup();
    try {
      assert.equal((await proxiedLogin(t, "admin")).status, 401);
      await policy(t, "pol", { scope: "webui", action: "remote_user=force" });
      const admin = await proxiedLogin(t, "admin");
      assert.equal(admin.status, 200, JSON.stringify(admin.body));
      assert.equal(admin.body.result.value.role, "admin");
      assert.equal(admin.body.result.value.realm, "");
      await policy(t, "off", { scope: "webui", action: "login_mode=disable", realm: "realm1" });
      const disabled = await proxiedLogin(t, "alice@realm1");
      assert.equal(disabled.status, 403);
      assert.equal(disabled.body.result.error.message, "The login for this user is disabled.");
    } finally {
      await t.close();
    }
  },
);

actionTest(
  "webui",
  "remote_user",
  "GET /config: remote_user is the proxy's user unless disable; force_remote_user for force",
  async () => {
    const t = await proxiedSetup();
    try {
      const fromProxy = { remoteAddr: "10.0.0.1", headers: { "X-Remote-User": "alice@realm1" } };
      let page = await loginPage(t, fromProxy);
      assert.equal(page.remote_user, "");
      assert.equal(page.force_remote_user, false);
      await policy(t, "pol", { scope: "webui", action: "remote_user=allowed" });
      page = await loginPage(t, fromProxy);
      assert.equal(page.remote_user, "alice@realm1");
      assert.equal(page.force_remote_user, false);
      await policy(t, "pol", { scope: "webui", action: "remote_user=force" });
      page = await loginPage(t, fromProxy);
      assert.equal(page.remote_user, "alice@realm1");
      assert.equal(page.force_remote_user, true);
      // the same header from anyone but the proxy is not believed
      page = await loginPage(t, { ...fromProxy, remoteAddr: "10.0.0.2" });
      assert.equal(page.remote_user, "");
    } finally {
      await t.close();
    }
  },
);
