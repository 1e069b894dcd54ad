/**
 * The typed forms of the web interface in chromium (headless, playwright-core, a real
 * `tessera serve`): fields built from what the server says about them (the policy editor from
 * `/policy/defs`, the system settings from the known keys, a form per resolver type, realms with
 * priorities), each value round-tripping through the API, help texts as the fields' accessible
 * descriptions, and new-object forms that start afresh after saving.
 *
 * Runs in the SQLite half of the test command only (the UI is engine-blind).
 */
import assert from "node:assert/strict";
import type { Browser, Locator, Page } from "playwright-core";
import { TEST_ENGINE } from "../test_db.ts";
import { axe } from "./_axe.ts";
import {
  adminJwt,
  call,
  launchChromium,
  login,
  openPage,
  type Server,
  settled,
  startTessera,
} from "./_browser.ts";

/** Runs `fn` with a fresh server and a logged-in admin page, and closes both. */
async function withAdmin(
  fn: (ctx: { server: Server; page: Page; jwt: string; browser: Browser }) => Promise<void>,
) {
  const server = await startTessera();
  let browser: Browser | undefined;
  try {
    browser = await launchChromium();
    const { page, errors } = await openPage(browser, { width: 1280, height: 900 });
    const jwt = await adminJwt(server);
    await login(page, server.base, "admin", server.adminPassword);
    await fn({ server, page, jwt, browser });
    assert.deepEqual(errors, []);
  } finally {
    await browser?.close().catch(() => {});
    await server.stop();
  }
}

const browserTest = (name: string, fn: () => Promise<void>) =>
  Deno.test({
    name,
    ignore: TEST_ENGINE !== "sqlite",
    sanitizeResources: false,
    sanitizeOps: false,
    fn,
  });

/** The text of the elements `aria-describedby` names: the field's help as a screen reader has it. */
async function description(field: Locator): Promise<string> {
  const ids = (await field.getAttribute("aria-describedby") ?? "").split(" ").filter((id) => id);
  const page = field.page();
  const texts = await Promise.all(ids.map((id) => page.locator(`[id="${id}"]`).innerText()));
  return texts.join(" ");
}

/** Waits until the field holds `value`. */
async function waitForValue(field: Locator, value: string) {
  const deadline = Date.now() + 5_000;
  for (;;) {
    const now = await field.inputValue();
    if (now === value) return;
    assert.ok(Date.now() < deadline, `the field holds "${now}", expected "${value}"`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The one policy named `name` as the API lists it. */
// deno-lint-ignore no-explicit-any
async function policyOf(server: Server, jwt: string, name: string): Promise<any> {
  const res = await call(server.base, "GET", `/policy/${name}`, {}, jwt);
  assert.equal(res.result.status, true, JSON.stringify(res));
  const v = res.result.value;
  return (Array.isArray(v) ? v : Object.values(v)).find((p: { name: string }) => p.name === name);
}

browserTest(
  "web UI: the policy editor's fields follow /policy/defs (checkbox, number with limits, select, checkboxes) and round-trip",
  () =>
    withAdmin(async ({ server, page, jwt }) => {
      const defs = (await call(server.base, "GET", "/policy/defs", {}, jwt)).result.value;
      // the admin keeps every right once admin policies exist
      const all = await call(server.base, "POST", "/policy/superadmin", {
        scope: "admin",
        action: "*",
        adminuser: "admin",
      }, jwt);
      assert.equal(all.result.status, true, JSON.stringify(all));
      await page.goto(`${server.base}/#/policies/new`);
      const form = page.getByRole("form", { name: "New policy" });
      await form.getByLabel("Policy name").fill("typed");
      await form.getByLabel("Scope").selectOption("admin");
      const filter = form.getByLabel("Filter actions");

      // a flag: a checkbox whose help is the definition's description
      await filter.fill("enable");
      const enable = form.getByRole("checkbox", { name: "enable", exact: true });
      assert.equal(await description(enable), defs.admin.enable.desc);
      await enable.check();
      // an integer of a range: a number field with the range's limits
      await filter.fill("otp_pin_maxlength");
      const maxlen = form.getByRole("spinbutton", { name: "otp_pin_maxlength", exact: true });
      assert.equal(await maxlen.getAttribute("min"), "0");
      assert.equal(await maxlen.getAttribute("max"), "31");
      assert.equal(await description(maxlen), defs.admin.otp_pin_maxlength.desc);
      await maxlen.fill("12");
      // a list of values: a select
      await filter.fill("hotp_hashlib");
      const hashlib = form.getByRole("combobox", { name: "hotp_hashlib" });
      assert.deepEqual(await hashlib.locator("option").allTextContents(), [
        "not set",
        "sha1",
        "sha256",
        "sha512",
      ]);
      await hashlib.selectOption("sha256");
      assert.deepEqual(await axe(page, "", { seriousOnly: true }), []);
      await form.getByRole("button", { name: "Save policy" }).click();
      await page.getByRole("heading", { level: 1, name: "Policy typed" }).waitFor();

      const saved = await policyOf(server, jwt, "typed");
      assert.deepEqual(saved.action, {
        enable: true,
        otp_pin_maxlength: "12",
        hotp_hashlib: "sha256",
      });

      // read back: the editor shows the stored values in the same fields
      await page.reload();
      await settled(page);
      const edit = page.getByRole("form", { name: "Edit policy typed" });
      assert.equal(
        await edit.getByRole("checkbox", { name: "enable", exact: true }).isChecked(),
        true,
      );
      assert.equal(
        await edit.getByRole("spinbutton", { name: "otp_pin_maxlength", exact: true }).inputValue(),
        "12",
      );
      assert.equal(
        await edit.getByRole("combobox", { name: "hotp_hashlib" }).inputValue(),
        "sha256",
      );
      // several values: one checkbox each (an enrollment action listing token types)
      await edit.getByLabel("Scope").selectOption("enrollment");
      await edit.getByLabel("Filter actions").fill("verify_enrollment");
      const group = edit.getByRole("group", { name: "verify_enrollment" });
      await group.getByRole("checkbox", { name: "hotp" }).check();
      await group.getByRole("checkbox", { name: "totp" }).check();
      await edit.getByRole("button", { name: "Save policy" }).click();
      await edit.getByRole("status").filter({ hasText: "Policy typed saved" }).waitFor();
      const enrollment = await policyOf(server, jwt, "typed");
      assert.equal(enrollment.scope, "enrollment");
      assert.deepEqual(enrollment.action, { verify_enrollment: "hotp totp" });
    }),
);

browserTest(
  "web UI: system settings are typed, saved together in one request, with their help, and reset",
  () =>
    withAdmin(async ({ server, page, jwt }) => {
      const requests: string[] = [];
      page.on("request", (r) => {
        if (r.url().endsWith("/system/setConfig")) requests.push(r.postData() ?? "");
      });
      await page.goto(`${server.base}/#/system`);
      await settled(page);
      const form = page.getByRole("form", { name: "System settings" });
      const maxFail = form.getByRole("spinbutton", { name: "DefaultMaxFailCount" });
      assert.equal(await maxFail.inputValue(), "10");
      assert.match(await description(maxFail), /Default: 10\./);
      const resync = form.getByRole("checkbox", { name: "AutoResync", exact: true });
      assert.equal(await resync.isChecked(), false);
      const step = form.getByRole("combobox", { name: "totp.timeStep" });
      assert.deepEqual(await step.locator("option").allTextContents(), ["30", "60"]);
      assert.equal(
        await form.getByRole("spinbutton", { name: "SerialLength" }).getAttribute("max"),
        "32",
      );
      assert.deepEqual(await axe(page, "", { seriousOnly: true }), []);

      await maxFail.fill("7");
      await resync.check();
      await step.selectOption("60");
      await form.getByRole("button", { name: "Save settings" }).click();
      await form.getByRole("status").filter({
        hasText: "Saved: DefaultMaxFailCount, totp.timeStep, AutoResync",
      }).waitFor();
      // one request with the three changed keys, nothing else
      assert.equal(requests.length, 1);
      assert.deepEqual(JSON.parse(requests[0]), {
        DefaultMaxFailCount: "7",
        "totp.timeStep": "60",
        AutoResync: "True",
      });
      const stored = (await call(server.base, "GET", "/system/", {}, jwt)).result.value;
      assert.equal(stored.DefaultMaxFailCount, "7");
      assert.equal(stored.AutoResync, "True");
      assert.equal(stored["totp.timeStep"], "60");

      // read back after a reload; the stored values are listed and can be reset
      await page.reload();
      await settled(page);
      assert.equal(await maxFail.inputValue(), "7");
      assert.equal(await resync.isChecked(), true);
      assert.equal(await step.inputValue(), "60");
      await page.getByRole("button", { name: "Reset DefaultMaxFailCount" }).click();
      await page.getByRole("dialog").getByRole("button", { name: "Reset DefaultMaxFailCount" })
        .click();
      await page.getByText("DefaultMaxFailCount reset to its default").waitFor();
      const after = (await call(server.base, "GET", "/system/", {}, jwt)).result.value;
      assert.equal(after.DefaultMaxFailCount, undefined);
      assert.equal(after.AutoResync, "True");
      await waitForValue(maxFail, "10");

      // nothing changed: nothing is sent
      await form.getByRole("button", { name: "Save settings" }).click();
      await form.getByRole("status").filter({ hasText: "Nothing changed" }).waitFor();
      assert.equal(requests.length, 1);
    }),
);

browserTest(
  "web UI: a form per resolver type; secrets kept as __CENSORED__; Editable a checkbox; the New resolver and New realm forms start afresh after saving",
  () =>
    withAdmin(async ({ server, page, jwt }) => {
      const base = server.base;
      await page.goto(`${base}/#/resolvers`);
      await settled(page);
      await page.getByRole("button", { name: "New resolver" }).click();
      let form = page.getByRole("form", { name: "New resolver" });
      await settled(page);
      // SQLite: the file, no server fields; Editable is a checkbox
      await form.getByLabel("Resolver type").selectOption("sqlresolver");
      await settled(page);
      assert.equal(await form.getByLabel("Server", { exact: true }).count(), 0);
      const editable = form.getByRole("checkbox", { name: "Editable" });
      assert.equal(await editable.isChecked(), false);
      // a database server: its connection fields appear
      await form.getByLabel("Driver").selectOption("mysql+pymysql");
      await form.getByLabel("Server", { exact: true }).waitFor();
      assert.equal(
        await form.getByLabel("Password", { exact: true }).getAttribute("type"),
        "password",
      );
      assert.equal(
        await form.getByRole("spinbutton", { name: "Port" }).getAttribute("max"),
        "65535",
      );
      await form.getByLabel("Driver").selectOption("sqlite");
      await form.getByLabel("Resolver name").fill("people");
      await form.getByLabel("Database", { exact: true }).fill("people.sqlite");
      await editable.check();
      // Editable brings the hash format of written passwords
      await form.getByLabel("Password_Hash_Type").selectOption("BCRYPT");
      assert.deepEqual(await axe(page, "", { seriousOnly: true }), []);
      await form.getByRole("button", { name: "Save resolver" }).click();
      await page.getByRole("status").filter({ hasText: "Resolver people saved" }).waitFor();
      const people = (await call(base, "GET", "/resolver/people", {}, jwt)).result.value.people;
      assert.equal(people.type, "sqlresolver");
      assert.equal(people.data.Editable, "1");
      assert.equal(people.data.Password_Hash_Type, "BCRYPT");
      assert.equal(people.data.Server, undefined);
      // the form starts afresh: its title and values are a new resolver's
      form = page.getByRole("form", { name: "New resolver" });
      await settled(page);
      assert.equal(await form.getByLabel("Resolver name").inputValue(), "");
      assert.equal(await form.getByLabel("Resolver type").inputValue(), "passwdresolver");
      await page.getByRole("region", { name: "New resolver" }).waitFor();

      // LDAP: its fields, the bind password stored and listed as __CENSORED__
      const ldapDefaults = await call(base, "GET", "/resolver/ldapresolver/default", {}, jwt);
      const ldap = await call(base, "POST", "/resolver/directory", {
        ...ldapDefaults.result.value,
        type: "ldapresolver",
        LDAPURI: "ldap://127.0.0.1:1",
        LDAPBASE: "dc=example,dc=org",
        BINDDN: "cn=reader,dc=example,dc=org",
        BINDPW: "bind-secret",
        TIMEOUT: "2",
      }, jwt);
      assert.equal(ldap.result.status, true, JSON.stringify(ldap));
      await page.reload();
      await settled(page);
      await page.getByRole("button", { name: "Edit directory" }).click();
      form = page.getByRole("form", { name: "Edit resolver directory" });
      await settled(page);
      const bindpw = form.getByLabel("BINDPW");
      assert.equal(await bindpw.getAttribute("type"), "password");
      assert.equal(await bindpw.inputValue(), "__CENSORED__");
      assert.equal(await form.getByLabel("SCOPE").inputValue(), "SUBTREE");
      assert.equal(await form.getByRole("checkbox", { name: "START_TLS" }).isChecked(), false);
      assert.match(await description(form.getByLabel("LDAPURI")), /pool with failover/);
      await form.getByRole("spinbutton", { name: "TIMEOUT", exact: true }).fill("3");
      await form.getByRole("checkbox", { name: "EDITABLE" }).check();
      await form.getByLabel("OBJECT_CLASSES").fill("top, inetOrgPerson");
      await form.getByRole("button", { name: "Save resolver" }).click();
      await page.getByRole("status").filter({ hasText: "Resolver directory saved" }).waitFor();
      const dir = (await call(base, "GET", "/resolver/directory", {}, jwt)).result.value.directory;
      assert.equal(dir.data.TIMEOUT, "3");
      assert.equal(dir.data.EDITABLE, "1");
      assert.equal(dir.data.OBJECT_CLASSES, "top, inetOrgPerson");
      // the stored secret is kept: never sent back, still there
      assert.equal(dir.data.BINDPW, "__CENSORED__");
      assert.deepEqual(dir.censor_keys, ["BINDPW"]);

      // the HTTP resolver: endpoint configurations are objects of typed sub-fields
      await page.getByRole("button", { name: "New resolver" }).click();
      form = page.getByRole("form", { name: "New resolver" });
      await form.getByLabel("Resolver name").fill("api");
      await form.getByLabel("Resolver type").selectOption("httpresolver");
      await settled(page);
      await form.getByLabel("base_url").fill("https://users.example.org/api");
      await form.getByLabel("Get user by ID: method").selectOption("GET");
      await form.getByLabel("Get user by ID: endpoint").fill("/users/{userid}");
      await form.getByLabel("attribute_mapping").fill('{"username": "login", "userid": "id"}');
      await form.getByLabel("password", { exact: true }).fill("service-secret");
      await form.getByRole("button", { name: "Save resolver" }).click();
      await page.getByRole("status").filter({ hasText: "Resolver api saved" }).waitFor();
      const api = (await call(base, "GET", "/resolver/api", {}, jwt)).result.value.api;
      assert.deepEqual(api.data.config_get_user_by_id, {
        method: "GET",
        endpoint: "/users/{userid}",
      });
      assert.deepEqual(api.data.attribute_mapping, { username: "login", userid: "id" });
      assert.equal(api.data.password, "__CENSORED__");
      assert.ok(["true", "True"].includes(api.data.verify_tls), api.data.verify_tls);

      // realms: resolvers with priorities; the New realm form starts afresh after saving
      await page.goto(`${base}/#/realms`);
      await settled(page);
      await page.getByRole("button", { name: "New realm" }).click();
      let realm = page.getByRole("form", { name: "New realm" });
      await realm.getByLabel("Realm name").fill("staff");
      await realm.getByRole("checkbox", { name: "people" }).check();
      await realm.getByRole("checkbox", { name: "directory" }).check();
      await realm.getByRole("spinbutton", { name: "Priority of people" }).fill("2");
      await realm.getByRole("spinbutton", { name: "Priority of directory" }).fill("1");
      assert.deepEqual(await axe(page, "", { seriousOnly: true }), []);
      await realm.getByRole("button", { name: "Save realm" }).click();
      await page.getByRole("status").filter({ hasText: "Realm staff saved" }).waitFor();
      realm = page.getByRole("form", { name: "New realm" });
      assert.equal(await realm.getByLabel("Realm name").inputValue(), "");
      assert.equal(await realm.getByRole("checkbox", { name: "people" }).isChecked(), false);
      const realms = (await call(base, "GET", "/realm/", {}, jwt)).result.value;
      assert.deepEqual(
        realms.staff.resolver.map((r: { name: string; priority: number }) => [r.name, r.priority])
          .sort(),
        [["directory", 1], ["people", 2]],
      );
      // the list shows them in the order a lookup asks them
      await page.getByRole("cell", { name: "directory (1), people (2)" }).waitFor();
      // editing shows the priorities
      await page.getByRole("button", { name: "Edit staff" }).click();
      const edit = page.getByRole("form", { name: "Edit realm staff" });
      assert.equal(
        await edit.getByRole("spinbutton", { name: "Priority of people" }).inputValue(),
        "2",
      );
    }),
);

browserTest(
  "web UI: event handler options and conditions are typed fields from /event/actions and /event/conditions, and round-trip",
  () =>
    withAdmin(async ({ server, page, jwt }) => {
      const base = server.base;
      const actions = (await call(base, "GET", "/event/actions/Token", {}, jwt)).result.value;
      await page.goto(`${base}/#/events/new`);
      await settled(page);
      const form = page.getByRole("form", { name: "New event handler" });
      await form.getByLabel("Name").fill("lock-realm");
      await form.getByLabel("Events").selectOption(["validate_check"]);
      await form.getByLabel("Handler module").selectOption("Token");
      await settled(page);
      // an integer option: a number field with its description as help
      await form.getByLabel("Action").selectOption("set max failcount");
      const max = form.getByRole("spinbutton", { name: "max failcount" });
      assert.equal(await max.getAttribute("required"), "");
      assert.equal(
        await description(max),
        actions["set max failcount"]["max failcount"].description,
      );
      // a text option and a flag
      await form.getByLabel("Action").selectOption("set tokenrealm");
      await form.getByRole("textbox", { name: "realm" }).fill("staff");
      const only = form.getByRole("checkbox", { name: "only_realm" });
      assert.equal(await description(only), actions["set tokenrealm"].only_realm.description);
      await only.check();
      // a condition with listed values is a select; one without, a text field with its help
      await form.getByLabel("Add a condition").selectOption("token_locked");
      await form.getByRole("button", { name: "Add condition" }).click();
      const locked = form.getByRole("combobox", { name: "token_locked" });
      assert.deepEqual(await locked.locator("option").allTextContents(), [
        "choose…",
        "True",
        "False",
      ]);
      await locked.selectOption("True");
      await form.getByLabel("Add a condition").selectOption("serial");
      await form.getByRole("button", { name: "Add condition" }).click();
      const serial = form.getByRole("textbox", { name: "serial", exact: true });
      assert.match(await description(serial), /regular expression/);
      await serial.fill("^HOTP");
      assert.deepEqual(await axe(page, "", { seriousOnly: true }), []);
      await form.getByRole("button", { name: "Save event handler" }).click();
      await page.getByRole("heading", { level: 1, name: "Event handler lock-realm" }).waitFor();

      const stored = (await call(base, "GET", "/event/", {}, jwt)).result.value[0];
      assert.equal(stored.handlermodule, "Token");
      assert.equal(stored.action, "set tokenrealm");
      assert.deepEqual(stored.event, ["validate_check"]);
      assert.equal(stored.options.realm, "staff");
      assert.ok(
        ["1", "True", "true"].includes(stored.options.only_realm),
        stored.options.only_realm,
      );
      assert.deepEqual(stored.conditions, { token_locked: "True", serial: "^HOTP" });

      // read back into the same fields
      await page.reload();
      await settled(page);
      const edit = page.getByRole("form", { name: "Edit event handler lock-realm" });
      assert.equal(await edit.getByRole("textbox", { name: "realm" }).inputValue(), "staff");
      assert.equal(await edit.getByRole("checkbox", { name: "only_realm" }).isChecked(), true);
      assert.equal(await edit.getByRole("combobox", { name: "token_locked" }).inputValue(), "True");
    }),
);
