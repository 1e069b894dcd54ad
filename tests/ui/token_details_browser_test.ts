/**
 * A token's page in chromium (headless, playwright-core, a real `tessera serve`): testing an OTP
 * value (a real /validate/check: accepted, rejected, a challenge and its answer, and nothing
 * changed but what a check changes), the settings of /token/set, the token info, the open
 * challenges, the lost-token action, machines; the token list's empty state, the audit log's
 * success column in words; and an admin whose policies name one realm, who sees that realm's
 * tokens and users only and is offered only the actions their policies allow.
 *
 * Runs in the SQLite half of the test command only (the UI is engine-blind).
 */
import assert from "node:assert/strict";
import type { Browser, Page } from "playwright-core";
import { TEST_ENGINE } from "../test_db.ts";
import { axe } from "./_axe.ts";
import {
  adminJwt,
  call,
  launchChromium,
  login,
  ok,
  peopleRealms,
  type Server,
  settled,
  startTessera,
  watchErrors,
} from "./_browser.ts";

const ROOT = new URL("../..", import.meta.url).pathname;
// RFC 4226's key and its first values
const KEY = "3132333435363738393031323334353637383930";
const HOTP = ["755224", "287082", "359152", "969429", "338314"];

const browserTest = (name: string, fn: () => Promise<void>) =>
  Deno.test({
    name,
    ignore: TEST_ENGINE !== "sqlite",
    sanitizeResources: false,
    sanitizeOps: false,
    fn,
  });

/** Runs `fn` with a fresh server and a browser, and closes both. */
async function withServer(
  fn: (ctx: { server: Server; browser: Browser; jwt: string }) => Promise<void>,
) {
  const server = await startTessera();
  let browser: Browser | undefined;
  try {
    browser = await launchChromium();
    await fn({ server, browser, jwt: await adminJwt(server) });
  } finally {
    await browser?.close().catch(() => {});
    await server.stop();
  }
}

async function newPage(browser: Browser): Promise<Page> {
  const context = await browser.newContext({
    viewport: { width: 1280, height: 900 },
    bypassCSP: true,
  });
  return await context.newPage();
}

// deno-lint-ignore no-explicit-any
async function tokenOf(server: Server, jwt: string, serial: string): Promise<any> {
  const res = await ok(server, jwt, "GET", "/token/", { serial });
  return res.result.value.tokens[0];
}

browserTest(
  "web UI: testing a token's OTP value shows the check's answer and changes only what a check changes",
  () =>
    withServer(async ({ server, browser, jwt }) => {
      const base = server.base;
      await peopleRealms(server, jwt, { users: { alice: "Pass-1" } });
      await ok(server, jwt, "POST", "/token/init", {
        type: "hotp",
        serial: "HOTP1",
        otpkey: KEY,
        pin: "1234",
        user: "alice",
        realm: "staff",
        description: "alice's phone",
      });
      const before = await tokenOf(server, jwt, "HOTP1");
      const page = await newPage(browser);
      const errors = watchErrors(page);
      await login(page, base, "admin", server.adminPassword);
      await page.goto(`${base}/#/tokens/HOTP1`);
      await settled(page);
      const test = page.getByRole("form", { name: "Test token HOTP1" });
      const result = page.getByTestId("test-result");
      const value = test.getByLabel("PIN and OTP value");

      // a wrong value: rejected, and the fail counter counts it (as any check does)
      await value.fill(`1234${HOTP[1]}x`);
      await test.getByRole("button", { name: "Check" }).click();
      await result.filter({ hasText: /^Rejected/ }).waitFor();
      await page.getByTestId("token-failcount").filter({ hasText: "1 of 10" }).waitFor();
      assert.equal(await value.inputValue(), "");
      // the right value: accepted; the counter moves past it and the fail counter is cleared
      await value.fill(`1234${HOTP[0]}`);
      await test.getByRole("button", { name: "Check" }).click();
      await result.filter({ hasText: /^Accepted/ }).waitFor();
      await page.getByTestId("token-counter").filter({ hasText: /^1$/ }).waitFor();
      await page.getByTestId("token-failcount").filter({ hasText: "0 of 10" }).waitFor();
      // the same value again: a used OTP is refused
      await value.fill(`1234${HOTP[0]}`);
      await test.getByRole("button", { name: "Check" }).click();
      await result.filter({ hasText: /^Rejected/ }).waitFor();
      const after = await tokenOf(server, jwt, "HOTP1");
      assert.equal(after.count, 1);
      assert.equal(after.failcount, 1);
      // nothing else of the token changed
      for (const k of ["active", "revoked", "description", "username", "user_realm", "maxfail"]) {
        assert.deepEqual(after[k], before[k], k);
      }
      // the audit has the checks as the checks they are
      const audit = await ok(server, jwt, "GET", "/audit/", {
        serial: "HOTP1",
        action: "*validate/check*",
        page_size: 10,
      });
      assert.equal(audit.result.value.count, 3);

      // a challenge: with challenge_response for HOTP the PIN alone triggers one, the answer
      // completes it
      await ok(server, jwt, "POST", "/policy/chalresp", {
        scope: "authentication",
        action: "challenge_response=hotp",
      });
      await value.fill("1234");
      await test.getByRole("button", { name: "Check" }).click();
      await result.filter({ hasText: /^Challenge triggered/ }).waitFor();
      const challenges = page.getByRole("region", { name: "Open challenges" });
      await challenges.getByRole("cell", { name: "no" }).first().waitFor();
      assert.equal(await challenges.getByRole("row").count(), 2);
      await test.getByLabel("Answer to the challenge").fill(HOTP[1]);
      await test.getByRole("button", { name: "Check" }).click();
      await result.filter({ hasText: /^Accepted/ }).waitFor();
      assert.equal((await tokenOf(server, jwt, "HOTP1")).count, 2);
      assert.deepEqual(await axe(page, "", { seriousOnly: true }), []);
      assert.deepEqual(errors, []);
    }),
);

browserTest(
  "web UI: a token's settings, info, lost-token action and machines; the token list's empty state and the audit's success in words",
  () =>
    withServer(async ({ server, browser, jwt }) => {
      const base = server.base;
      await peopleRealms(server, jwt, { users: { alice: "Pass-1" } });
      await ok(server, jwt, "POST", "/token/init", {
        type: "hotp",
        serial: "HOTP2",
        otpkey: KEY,
        user: "alice",
        realm: "staff",
      });
      await ok(server, jwt, "POST", "/machineresolver/hosts", {
        type: "hosts",
        filename: "/etc/hosts",
      });
      const page = await newPage(browser);
      const errors = watchErrors(page);
      await login(page, base, "admin", server.adminPassword);

      // an empty list says so
      await page.goto(`${base}/#/tokens`);
      await settled(page);
      await page.getByRole("form", { name: "Search tokens" }).getByLabel("Serial").fill("NOPE");
      await page.getByTestId("empty-list").filter({ hasText: "No token matches the search." })
        .waitFor();

      await page.goto(`${base}/#/tokens/HOTP2`);
      await settled(page);
      // settings: numbers with help, only changed keys saved
      const settings = page.getByRole("form", { name: "Settings of HOTP2" });
      const maxFail = settings.getByRole("spinbutton", { name: "Maximum fail counter" });
      assert.equal(await maxFail.inputValue(), "10");
      await maxFail.fill("5");
      await settings.getByLabel("Valid until").fill("2099-12-31T18:00+0000");
      await settings.getByRole("button", { name: "Save settings" }).click();
      await page.getByTestId("token-failcount").filter({ hasText: "0 of 5" }).waitFor();
      let t = await tokenOf(server, jwt, "HOTP2");
      assert.equal(t.maxfail, 5);
      assert.equal(t.count_window, 10);
      assert.equal(t.info.validity_period_end, "2099-12-31T18:00+0000");

      // token info: set and delete an entry
      const info = page.getByRole("region", { name: "Token info" });
      const set = page.getByRole("form", { name: "Set token info of HOTP2" });
      await set.getByLabel("Info key").fill("location");
      await set.getByLabel("Info value").fill("desk 4");
      await set.getByRole("button", { name: "Set info" }).click();
      await info.getByRole("cell", { name: "desk 4" }).waitFor();
      assert.equal((await tokenOf(server, jwt, "HOTP2")).info.location, "desk 4");
      await info.getByRole("button", { name: "Remove location" }).click();
      await page.getByRole("dialog").getByRole("button", { name: "Remove location" }).click();
      await info.getByRole("cell", { name: "desk 4" }).waitFor({ state: "detached" });
      assert.equal((await tokenOf(server, jwt, "HOTP2")).info.location, undefined);

      // machines: attach to a host of the hosts resolver, then detach
      const machines = page.getByRole("region", { name: "Machines" });
      await machines.getByText("This token is not attached to a machine.").waitFor();
      const attach = page.getByRole("form", { name: "Attach HOTP2 to a machine" });
      await attach.getByLabel("Application").selectOption("offline");
      await attach.getByLabel("Hostname").fill("localhost");
      await attach.getByRole("button", { name: "Attach token" }).click();
      await machines.getByRole("cell", { name: "offline", exact: true }).waitFor();
      const bound = await ok(server, jwt, "GET", "/machine/token", { serial: "HOTP2" });
      assert.equal(bound.result.value.length, 1);
      assert.equal(bound.result.value[0].application, "offline");
      assert.deepEqual(await axe(page, "", { seriousOnly: true }), []);

      // lost token: the temporary token and its password are shown once
      await page.getByRole("button", { name: "Lost token" }).click();
      await page.getByRole("dialog").getByRole("button", { name: "Mark as lost" }).click();
      const lost = page.getByTestId("lost-token");
      await lost.waitFor();
      const text = await lost.innerText();
      assert.match(text, /temporary token lostHOTP2/);
      const password = await lost.locator("code").innerText();
      assert.ok(password.length >= 8, password);
      t = await tokenOf(server, jwt, "HOTP2");
      assert.equal(t.active, false);
      const replacement = await tokenOf(server, jwt, "lostHOTP2");
      assert.equal(replacement.tokentype, "pw");
      assert.equal(replacement.username, "alice");
      // the password works at /validate/check (the old PIN: none)
      const check = await call(base, "POST", "/validate/check", {
        user: "alice",
        realm: "staff",
        pass: password,
      });
      assert.equal(check.result.value, true, JSON.stringify(check));

      // the audit log says success or failed, not 1 or 0
      await page.goto(`${base}/#/audit`);
      await settled(page);
      const cells = await page.locator('td[data-label="success"]').allInnerTexts();
      assert.ok(cells.length > 0);
      for (const c of cells) assert.match(c, /^[✓✗] (success|failed)$/, c);
      assert.deepEqual(errors, []);
    }),
);

browserTest(
  "web UI: an admin whose policies name one realm sees that realm's tokens, users and realm only, and only the actions the policies allow",
  () =>
    withServer(async ({ server, browser, jwt }) => {
      const base = server.base;
      await peopleRealms(server, jwt, {
        realms: ["staff", "guests"],
        users: { alice: "Pass-1", gina: "Pass-1" },
      });
      await ok(server, jwt, "POST", "/token/init", {
        type: "hotp",
        serial: "STAFF1",
        otpkey: KEY,
        user: "alice",
        realm: "staff",
      });
      await ok(server, jwt, "POST", "/token/init", {
        type: "hotp",
        serial: "GUEST1",
        otpkey: KEY,
        user: "gina",
        realm: "guests",
      });
      await ok(server, jwt, "POST", "/policy/superadmin", {
        scope: "admin",
        action: "*",
        adminuser: "admin",
      });
      await ok(server, jwt, "POST", "/policy/helpdesk", {
        scope: "admin",
        action: "tokenlist, userlist, enable, disable, reset",
        adminuser: "helpdesk",
        realm: "staff",
      });
      const add = await new Deno.Command(Deno.execPath(), {
        args: [
          "run",
          "-A",
          `${ROOT}main.ts`,
          "admin",
          "add",
          "helpdesk",
          "--password",
          "Helpdesk-Pass-1",
        ],
        cwd: server.dir,
        env: { NO_COLOR: "1" },
        stdin: "null",
        stdout: "null",
        stderr: "piped",
      }).output();
      assert.ok(add.success, new TextDecoder().decode(add.stderr));

      const page = await newPage(browser);
      const errors = watchErrors(page);
      await login(page, base, "helpdesk", "Helpdesk-Pass-1");
      const nav = page.getByRole("navigation", { name: "Main" });
      // pages of rights the admin lacks are not in the menu
      for (const absent of ["Policies", "Resolvers", "System", "Audit log", "Events"]) {
        assert.equal(await nav.getByRole("link", { name: absent, exact: true }).count(), 0, absent);
      }
      // tokens of the admin's realm only
      await page.goto(`${base}/#/tokens`);
      await settled(page);
      await page.getByRole("link", { name: "STAFF1" }).waitFor();
      assert.equal(await page.getByRole("link", { name: "GUEST1" }).count(), 0);
      // a token of another realm is not found
      await page.goto(`${base}/#/tokens/GUEST1`);
      await settled(page);
      await page.getByText("The token could not be found.").waitFor();
      // realms and users: the admin's realm only
      await page.goto(`${base}/#/realms`);
      await settled(page);
      await page.getByRole("cell", { name: "staff", exact: true }).waitFor();
      assert.equal(await page.getByRole("cell", { name: "guests", exact: true }).count(), 0);
      assert.equal(await page.getByRole("button", { name: "New realm" }).count(), 0);
      await page.goto(`${base}/#/users`);
      await settled(page);
      assert.deepEqual(
        await page.getByRole("combobox", { name: "Realm" }).locator("option").allTextContents(),
        ["staff"],
      );

      // the token's page: the allowed actions; the others are not offered
      await page.goto(`${base}/#/tokens/STAFF1`);
      await settled(page);
      const actions = page.getByRole("group", { name: "Actions on STAFF1" });
      assert.equal(await actions.getByRole("button", { name: "Disable" }).isEnabled(), true);
      assert.equal(
        await actions.getByRole("button", { name: "Reset fail counter" }).isEnabled(),
        true,
      );
      // without hide_buttons a forbidden button is there but disabled (privacyIDEA's default)
      assert.equal(await actions.getByRole("button", { name: "Delete" }).isDisabled(), true);
      assert.equal(await actions.getByRole("button", { name: "Revoke" }).isDisabled(), true);
      assert.equal(await actions.getByRole("button", { name: "Lost token" }).count(), 0);
      for (const region of ["Settings", "Open challenges", "Machines"]) {
        assert.equal(await page.getByRole("region", { name: region }).count(), 0, region);
      }
      for (const form of ["Set PIN of STAFF1", "Set token info of STAFF1", "Realms of STAFF1"]) {
        assert.equal(await page.getByRole("form", { name: form }).count(), 0, form);
      }
      // token info is shown, not editable
      await page.getByRole("region", { name: "Token info" }).waitFor();
      assert.deepEqual(await axe(page, "", { seriousOnly: true }), []);
      await actions.getByRole("button", { name: "Disable" }).click();
      await page.getByTestId("token-state").filter({ hasText: "disabled" }).waitFor();

      // with hide_buttons the forbidden buttons are gone
      await ok(server, jwt, "POST", "/policy/ui", { scope: "webui", action: "hide_buttons" });
      await page.getByRole("button", { name: "Log out" }).click();
      await login(page, base, "helpdesk", "Helpdesk-Pass-1");
      await page.goto(`${base}/#/tokens/STAFF1`);
      await settled(page);
      await actions.getByRole("button", { name: "Enable" }).waitFor();
      assert.equal(await actions.getByRole("button", { name: "Delete" }).count(), 0);
      assert.equal(await actions.getByRole("button", { name: "Revoke" }).count(), 0);
      assert.deepEqual(errors, []);
    }),
);
