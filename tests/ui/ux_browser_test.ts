/**
 * Usability and accessibility of the web interface in chromium (headless,
 * playwright-core, a real `tessera serve`): what a person at the screen, with
 * a keyboard or a screen reader, or on a phone, gets.
 *
 * Runs in the SQLite half of the test command only (the UI is engine-blind).
 */
import assert from "node:assert/strict";
import type { Browser, Page } from "playwright-core";
import { TEST_ENGINE } from "../test_db.ts";
import { type Finding, focusRingViolations, wcagViolations } from "./_axe.ts";
import {
  adminJwt,
  call,
  launchChromium,
  login,
  type Server,
  settled,
  startTessera,
  watchErrors,
} from "./_browser.ts";

/** Runs `fn` with a fresh server and browser, and closes both. */
async function withUi(
  fn: (ctx: { server: Server; browser: Browser; page: Page; jwt: string }) => Promise<void>,
) {
  const server = await startTessera();
  let browser: Browser | undefined;
  try {
    browser = await launchChromium();
    // axe-core goes into the page as an inline script, which the page's CSP would refuse
    const context = await browser.newContext({
      viewport: { width: 1280, height: 800 },
      bypassCSP: true,
    });
    const page = await context.newPage();
    await fn({ server, browser, page, jwt: await adminJwt(server) });
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

/** Realms over one passwd-file resolver (policies may only name realms that exist). */
async function makeRealms(server: Server, jwt: string, ...names: string[]) {
  const r = await call(server.base, "POST", "/resolver/passwd", {
    type: "passwdresolver",
    fileName: "/etc/passwd",
  }, jwt);
  assert.equal(r.result.status, true, JSON.stringify(r));
  for (const name of names) {
    const res = await call(server.base, "POST", `/realm/${name}`, { resolvers: "passwd" }, jwt);
    assert.equal(res.result.status, true, JSON.stringify(res));
  }
}

/** The policy as the API lists it (actions, realms: what a silent replacement would change). */
// deno-lint-ignore no-explicit-any
async function policyOf(server: Server, jwt: string, name: string): Promise<any> {
  const res = await call(server.base, "GET", `/policy/${name}`, {}, jwt);
  const v = res.result.value;
  return (Array.isArray(v) ? v : Object.values(v)).find((p: { name: string }) => p.name === name);
}

browserTest(
  "web UI: New policy refuses the name of an existing policy and leaves it unchanged",
  () =>
    withUi(async ({ server, page, jwt }) => {
      const errors = watchErrors(page);
      await makeRealms(server, jwt, "staff", "guests");
      const actions = "enrollTOTP, enrollHOTP, disable, enable, setpin, delete, reset, resync";
      const made = await call(server.base, "POST", "/policy/selfservice", {
        scope: "user",
        action: actions,
        realm: "staff, guests",
        priority: 3,
      }, jwt);
      assert.equal(made.result.status, true, JSON.stringify(made));
      const before = await policyOf(server, jwt, "selfservice");
      assert.equal(Object.keys(before.action).length, 8);
      assert.deepEqual(before.realm, ["staff", "guests"]);

      await login(page, server.base, "admin", server.adminPassword);
      await page.goto(`${server.base}/#/policies/new`);
      const form = page.getByRole("form", { name: "New policy" });
      await form.getByLabel("Policy name").fill("selfservice");
      await form.getByLabel("Scope").selectOption("user");
      await form.getByLabel("Filter actions").fill("enrollTOTP");
      await form.getByLabel("enrollTOTP", { exact: true }).check();
      await form.getByRole("button", { name: "Save policy" }).click();
      const alert = form.getByRole("alert");
      await alert.waitFor();
      assert.match(await alert.innerText(), /A policy named "selfservice" already exists/);
      // the refused create changed nothing, not even the priority
      assert.deepEqual(await policyOf(server, jwt, "selfservice"), before);

      // offered: open the existing policy; saving it there says so
      await form.getByRole("link", { name: "Open policy selfservice" }).click();
      await page.getByRole("heading", { level: 1, name: "Policy selfservice" }).waitFor();
      await settled(page);
      const edit = page.getByRole("form", { name: "Edit policy selfservice" });
      assert.equal(await edit.getByLabel("Priority").inputValue(), "3");
      await edit.getByLabel("Priority").fill("4");
      await edit.getByRole("button", { name: "Save policy" }).click();
      await edit.getByRole("status").filter({ hasText: "Policy selfservice saved" }).waitFor();
      const after = await policyOf(server, jwt, "selfservice");
      assert.equal(after.priority, 4);
      assert.deepEqual(after.action, before.action);
      assert.deepEqual(after.realm, before.realm);

      // a new name is created, and the page it lands on says so
      await page.goto(`${server.base}/#/policies/new`);
      const fresh = page.getByRole("form", { name: "New policy" });
      await fresh.getByLabel("Policy name").fill("SelfService");
      await fresh.getByLabel("Scope").selectOption("user");
      await fresh.getByLabel("Filter actions").fill("disable");
      await fresh.getByLabel("disable", { exact: true }).check();
      await fresh.getByRole("button", { name: "Save policy" }).click();
      await page.getByRole("heading", { level: 1, name: "Policy SelfService" }).waitFor();
      await page.getByRole("status").filter({ hasText: "Policy SelfService created" }).waitFor();
      assert.deepEqual((await policyOf(server, jwt, "SelfService")).action, { disable: true });
      assert.deepEqual(await policyOf(server, jwt, "selfservice"), after);

      // New policy opened from a policy's page starts empty, not as that policy
      await page.goto(`${server.base}/#/policies/selfservice`);
      await page.getByRole("form", { name: "Edit policy selfservice" }).waitFor();
      await page.getByRole("link", { name: "Back to policies" }).click();
      await page.getByRole("link", { name: "New policy" }).click();
      const empty = page.getByRole("form", { name: "New policy" });
      assert.equal(await empty.getByLabel("Policy name").inputValue(), "");
      assert.match(
        await empty.getByRole("group", { name: /^Actions of scope/ }).innerText(),
        /0 set/,
      );

      // the same for event handlers: New event handler after a handler's page does not edit it
      const ev = await call(server.base, "POST", "/event", {
        name: "log-enrol",
        event: "token_init",
        handlermodule: "Logging",
        action: "logging",
        position: "post",
      }, jwt);
      assert.equal(ev.result.status, true, JSON.stringify(ev));
      await page.goto(`${server.base}/#/events/${ev.result.value}`);
      await page.getByRole("form", { name: "Edit event handler log-enrol" }).waitFor();
      await page.goto(`${server.base}/#/events/new`);
      const newEvent = page.getByRole("form", { name: "New event handler" });
      await newEvent.waitFor();
      assert.equal(await newEvent.getByLabel("Name").inputValue(), "");
      await newEvent.getByLabel("Name").fill("log-assign");
      await newEvent.getByLabel("Events").selectOption(["token_assign"]);
      await newEvent.getByLabel("Handler module").selectOption("Logging");
      await newEvent.getByRole("button", { name: "Save event handler" }).click();
      await page.getByRole("heading", { level: 1, name: "Event handler log-assign" }).waitFor();
      const events = await call(server.base, "GET", "/event/", {}, jwt);
      assert.deepEqual(
        events.result.value.map((e: { name: string; event: string[] }) => [e.name, e.event]),
        [["log-enrol", ["token_init"]], ["log-assign", ["token_assign"]]],
      );
      assert.deepEqual(errors, []);
    }),
);

/** The serials of the token list's rows, in order. */
async function rowSerials(page: Page): Promise<string[]> {
  return await page.locator("table tbody tr td:first-child").allInnerTexts();
}

/** Waits until the token list shows exactly these serials, in this order. */
async function waitForRows(page: Page, expected: string[]) {
  const deadline = Date.now() + 10_000;
  for (;;) {
    await settled(page);
    const rows = await rowSerials(page);
    if (JSON.stringify(rows) === JSON.stringify(expected)) return;
    assert.ok(Date.now() < deadline, `rows ${JSON.stringify(rows)}, expected ${expected}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

browserTest(
  "web UI: a token at its maximum fail counter shows as locked; the list filters and sorts by state and fail counter",
  () =>
    withUi(async ({ server, page, jwt }) => {
      const errors = watchErrors(page);
      const key = "3132333435363738393031323334353637383930";
      for (const serial of ["HOTP1", "HOTP2", "HOTP3", "HOTP4"]) {
        const r = await call(server.base, "POST", "/token/init", {
          type: "hotp",
          serial,
          otpkey: key,
        }, jwt);
        assert.equal(r.result.status, true, JSON.stringify(r));
      }
      // HOTP2 is locked: two wrong OTPs against a maximum of two
      await call(server.base, "POST", "/token/set", { serial: "HOTP2", max_failcount: 2 }, jwt);
      for (let i = 0; i < 2; i++) {
        await call(server.base, "POST", "/validate/check", { serial: "HOTP2", pass: "000000" });
      }
      // HOTP3 has one failure and is disabled
      await call(server.base, "POST", "/validate/check", { serial: "HOTP3", pass: "000000" });
      await call(server.base, "POST", "/token/disable", { serial: "HOTP3" }, jwt);

      await login(page, server.base, "admin", server.adminPassword);
      await page.goto(`${server.base}/#/tokens`);
      await waitForRows(page, ["HOTP1", "HOTP2", "HOTP3", "HOTP4"]);
      const row = (serial: string) => page.getByRole("row").filter({ hasText: serial });
      assert.equal(await row("HOTP2").getByRole("cell").nth(2).innerText(), "locked");
      assert.equal(await row("HOTP1").getByRole("cell").nth(2).innerText(), "active");
      assert.equal(await row("HOTP3").getByRole("cell").nth(2).innerText(), "disabled");
      assert.equal(await row("HOTP2").getByRole("cell").nth(4).innerText(), "2 / 2");

      // filter by state
      const search = page.getByRole("form", { name: "Search tokens" });
      await search.getByLabel("State").selectOption("locked");
      await search.getByRole("button", { name: "Search" }).click();
      await waitForRows(page, ["HOTP2"]);
      await search.getByLabel("State").selectOption("active");
      await search.getByRole("button", { name: "Search" }).click();
      await waitForRows(page, ["HOTP1", "HOTP4"]);
      await search.getByLabel("State").selectOption("");
      await search.getByRole("button", { name: "Search" }).click();
      await waitForRows(page, ["HOTP1", "HOTP2", "HOTP3", "HOTP4"]);

      // sort by fail counter (twice: descending) and by state
      const failHeading = page.getByRole("columnheader", { name: /Fail counter/ });
      await failHeading.getByRole("button").click();
      await waitForRows(page, ["HOTP1", "HOTP4", "HOTP3", "HOTP2"]);
      assert.equal(await failHeading.getAttribute("aria-sort"), "ascending");
      await failHeading.getByRole("button").click();
      await waitForRows(page, ["HOTP2", "HOTP3", "HOTP1", "HOTP4"]);
      assert.equal(await failHeading.getAttribute("aria-sort"), "descending");
      await page.getByRole("columnheader", { name: /State/ }).getByRole("button").click();
      await waitForRows(page, ["HOTP1", "HOTP4", "HOTP2", "HOTP3"]);
      assert.equal(await failHeading.getAttribute("aria-sort"), null);

      // the details say locked and why; a reset unlocks
      await page.getByRole("link", { name: "HOTP2" }).click();
      const state = page.getByTestId("token-state");
      await state.filter({ hasText: /^locked/ }).waitFor();
      assert.match(await state.innerText(), /fail counter is at its maximum/);
      await page.getByRole("button", { name: "Reset fail counter" }).click();
      await state.filter({ hasText: /^active$/ }).waitFor();
      assert.deepEqual(errors, []);
    }),
);

/** The focused element as "TAG text" (the body when nothing has focus). */
async function focused(page: Page): Promise<string> {
  return await page.evaluate(`(() => {
    const el = document.activeElement;
    if (!el || el === document.body) return "BODY";
    return (el.tagName + " " + (el.innerText || el.getAttribute("aria-label") || el.value || ""))
      .trim().replace(/\\s+/g, " ").slice(0, 60);
  })()`);
}

/** Waits until the focused element is `expected` ("TAG text"). */
async function focusIs(page: Page, expected: string) {
  const deadline = Date.now() + 5_000;
  for (;;) {
    const now = await focused(page);
    if (now === expected) return;
    assert.ok(Date.now() < deadline, `focus is on "${now}", expected "${expected}"`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * Tabs through the page from its top (after a reload), checking the focus ring
 * at every stop; returns the stops and the ring's failures.
 */
async function keyboardWalk(page: Page, maxStops: number) {
  await page.reload();
  await page.locator("h1").first().waitFor();
  await settled(page);
  const stops: string[] = [];
  const failures: Finding[] = [];
  for (let i = 0; i < maxStops; i++) {
    await page.keyboard.press("Tab");
    const now = await focused(page);
    if (now === "BODY" || (i > 0 && now === stops[0])) break;
    stops.push(now);
    failures.push(...await focusRingViolations(page));
  }
  return { stops, failures };
}

browserTest(
  "web UI: focus rings of 3:1 (axe), focus after login, page changes and dialogs, a skip link, no WCAG A/AA violation, deletions announced",
  () =>
    withUi(async ({ server, page, jwt }) => {
      const errors = watchErrors(page);
      const base = server.base;
      for (const serial of ["SPARE1", "SPARE2", "SPARE3"]) {
        const r = await call(base, "POST", "/token/init", { type: "spass", serial, pin: "1" }, jwt);
        assert.equal(r.result.status, true, JSON.stringify(r));
      }

      // the login page: axe, its focus rings, then a login by keyboard alone
      await page.goto(`${base}/`);
      await page.getByRole("button", { name: "Log in" }).waitFor();
      assert.deepEqual(await wcagViolations(page), [], "login page");
      await focusIs(page, "INPUT");
      assert.deepEqual(await focusRingViolations(page), [], "the username field's ring");
      await page.keyboard.type("admin");
      await page.keyboard.press("Tab");
      await page.keyboard.type(server.adminPassword);
      await page.keyboard.press("Tab");
      await page.keyboard.press("Tab");
      await focusIs(page, "BUTTON Log in");
      assert.deepEqual(await focusRingViolations(page), [], "the login button's ring");
      await page.keyboard.press("Enter");
      await page.getByRole("button", { name: "Log out" }).waitFor();
      // the first page of an admin is the dashboard
      await focusIs(page, "H1 Dashboard");

      // a page change by keyboard lands on the new page's heading
      await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Policies" })
        .focus();
      assert.deepEqual(await focusRingViolations(page), [], "a link in the dark header");
      await page.keyboard.press("Enter");
      await focusIs(page, "H1 Policies");

      // every admin page: no WCAG A/AA violation; from the top, the skip link is the first stop
      // and leads into the content; every stop's focus ring has 3:1
      const pages: [string, string, number][] = [
        ["#/dashboard", "Dashboard", 30],
        ["#/tokens", "Tokens", 40],
        ["#/tokens/SPARE3", "Token SPARE3", 40],
        ["#/tokengroups", "Token groups", 25],
        ["#/containers", "Containers", 25],
        ["#/users", "Users", 30],
        ["#/resolvers", "Resolvers", 25],
        ["#/realms", "Realms", 25],
        ["#/policies", "Policies", 25],
        ["#/policies/new", "New policy", 40],
        ["#/events", "Event handlers", 25],
        ["#/events/new", "New event handler", 25],
        ["#/machines", "Machines", 25],
        ["#/serviceids", "Service IDs", 25],
        ["#/caconnectors", "CA connectors", 25],
        ["#/radius", "RADIUS servers", 25],
        ["#/smtp", "SMTP servers", 25],
        ["#/sms", "SMS gateways", 25],
        ["#/privacyidea", "privacyIDEA servers", 25],
        ["#/periodic", "Periodic tasks", 25],
        ["#/statistics", "Statistics", 25],
        ["#/subscriptions", "Subscriptions", 25],
        ["#/audit", "Audit log", 40],
        ["#/system", "System settings", 40],
        ["#/enroll", "Enrol a token", 25],
        ["#/import", "Import tokens", 25],
      ];
      const problems: string[] = [];
      for (const [hash, heading, maxStops] of pages) {
        await page.goto(`${base}/${hash}`);
        await page.getByRole("heading", { level: 1, name: heading }).waitFor();
        await settled(page);
        for (const v of await wcagViolations(page)) {
          problems.push(`${hash}: ${v.rule} (${v.impact}) at ${v.target}: ${v.summary}`);
        }
        const walk = await keyboardWalk(page, maxStops);
        assert.equal(walk.stops[0], "A Skip to content", `${hash}: first stop`);
        assert.ok(walk.stops.length > 3, `${hash}: ${JSON.stringify(walk.stops)}`);
        for (const f of walk.failures) {
          problems.push(`${hash}: ${f.rule} at ${f.target}: ${f.summary}`);
        }
        // the skip link: Tab, Enter, Tab reaches the first control of the page
        await page.reload();
        await page.getByRole("heading", { level: 1, name: heading }).waitFor();
        await page.keyboard.press("Tab");
        const skip = page.getByRole("link", { name: "Skip to content" });
        const box = await skip.boundingBox();
        assert.ok(
          box && box.y >= 0 && box.height > 10,
          `${hash}: the skip link shows when focused`,
        );
        await page.keyboard.press("Enter");
        await focusIs(page, `H1 ${heading}`);
        await page.keyboard.press("Tab");
        assert.ok(
          await page.evaluate("document.querySelector('main').contains(document.activeElement)"),
          `${hash}: after the skip link, Tab stays in the content (${await focused(page)})`,
        );
      }
      assert.deepEqual(problems, []);

      // a dialog gives focus back to the button that opened it
      await page.goto(`${base}/#/tokens/SPARE1`);
      await page.getByRole("heading", { level: 1, name: "Token SPARE1" }).waitFor();
      await settled(page);
      await page.getByRole("button", { name: "Delete" }).focus();
      await page.keyboard.press("Enter");
      const dialog = page.getByRole("dialog", { name: "Delete" });
      await dialog.waitFor();
      await focusIs(page, "BUTTON Cancel");
      assert.deepEqual(await focusRingViolations(page), [], "a button in the dialog");
      await page.keyboard.press("Escape");
      await dialog.waitFor({ state: "detached" });
      await focusIs(page, "BUTTON Delete");
      await page.keyboard.press("Enter");
      await dialog.waitFor();
      await page.keyboard.press("Tab");
      await focusIs(page, "BUTTON Delete");
      assert.deepEqual(await focusRingViolations(page), [], "the dialog's red button");
      // confirmed: the token list, focus on its heading, and the deletion said in the status line
      await page.keyboard.press("Enter");
      await page.getByRole("heading", { level: 1, name: "Tokens" }).waitFor();
      await page.getByRole("status").filter({ hasText: "Token SPARE1 deleted" }).waitFor();
      await focusIs(page, "H1 Tokens");
      const gone = await call(base, "GET", "/token/", { serial: "SPARE1" }, jwt);
      assert.equal(gone.result.value.count, 0);

      // Disable keeps the focus on the button (now Enable); Revoke removes its button: focus
      // goes to the heading, not to the body
      await page.goto(`${base}/#/tokens/SPARE2`);
      await page.getByRole("heading", { level: 1, name: "Token SPARE2" }).waitFor();
      await settled(page);
      await page.getByRole("button", { name: "Disable" }).focus();
      await page.keyboard.press("Enter");
      await page.getByTestId("token-state").filter({ hasText: "disabled" }).waitFor();
      await focusIs(page, "BUTTON Enable");
      await page.getByRole("button", { name: "Revoke" }).focus();
      await page.keyboard.press("Enter");
      await page.getByRole("dialog", { name: "Revoke" }).waitFor();
      await page.keyboard.press("Tab");
      await focusIs(page, "BUTTON Revoke");
      await page.keyboard.press("Enter");
      await page.getByTestId("token-state").filter({ hasText: "revoked" }).waitFor();
      await focusIs(page, "H1 Token SPARE2");
      assert.deepEqual(errors, []);
    }),
);

/** How far the page scrolls sideways (0: not at all). */
async function sidewaysScroll(page: Page): Promise<number> {
  return await page.evaluate(
    "document.documentElement.scrollWidth - document.documentElement.clientWidth",
  );
}

/** The elements that reach past the right edge of the viewport (for the failure message). */
async function overflowing(page: Page): Promise<string[]> {
  return await page.evaluate(`(() => {
    const out = [];
    for (const el of document.querySelectorAll("body *")) {
      const r = el.getBoundingClientRect();
      if (r.right > document.documentElement.clientWidth + 1 && r.width > 0) {
        out.push(el.tagName.toLowerCase() + (el.className ? "." + el.className : "") + " " +
          Math.round(r.width) + "px");
      }
    }
    return out.slice(0, 8);
  })()`);
}

browserTest(
  "web UI at 390 px wide: no page scrolls sideways, the header is short, the menu opens and closes",
  () =>
    withUi(async ({ server, browser, page, jwt }) => {
      const base = server.base;
      const errors = watchErrors(page);
      // data for every page: a user with tokens, a policy, an event handler, servers, audit rows
      const setup: [string, string, Record<string, unknown>][] = [
        ["POST", "/resolver/people", {
          type: "sqlresolver",
          Database: "people.sqlite",
          Table: "users",
          Editable: "1",
          Map: JSON.stringify({
            userid: "id",
            username: "username",
            email: "email",
            givenname: "givenname",
            surname: "surname",
            password: "password",
          }),
        }],
        ["POST", "/realm/staff", { resolvers: "people" }],
        ["POST", "/user/", {
          user: "alice",
          resolver: "people",
          password: "Alice-Pass-1",
          email: "alice.with.a.rather.long.address@example.com",
        }],
        ["POST", "/token/init", {
          type: "hotp",
          serial: "OATH0001",
          user: "alice",
          realm: "staff",
          description: "a description long enough to need some room in a narrow table cell",
          genkey: 1,
        }],
        ["POST", "/token/init", { type: "spass", serial: "SPASS001", pin: "1" }],
        ["POST", "/policy/selfservice", {
          scope: "user",
          action: "enrollTOTP, enrollHOTP, disable, enable, setpin, delete, reset, resync",
          realm: "staff",
        }],
        ["POST", "/policy/admin-with-a-long-name", {
          scope: "admin",
          action: "*",
          adminuser: "admin",
        }],
        ["POST", "/event", {
          name: "log-enrol",
          event: "token_init",
          handlermodule: "Logging",
          action: "logging",
          position: "post",
        }],
        ["POST", "/smtpserver/mail", { server: "127.0.0.1", sender: "mfa@example.com" }],
        ["POST", "/radiusserver/upstream", { server: "127.0.0.1", secret: "radius-secret" }],
        ["POST", "/privacyideaserver/privacyidea-server-with-a-long-name", {
          url: "https://privacyidea-with-a-long-host-name.example.com/a/long/path",
          description: "The privacyIDEA being replaced, with a long description",
        }],
        ["POST", "/periodictask/", {
          name: "periodic-task-with-a-long-name",
          taskmodule: "SimpleStats",
          interval: "0 3 * * 1",
          nodes: "node-with-a-long-name, another-node-with-a-long-name",
          ordering: 0,
          options: { total_tokens: "True" },
        }],
        ["POST", "/smsgateway", {
          name: "sms-gateway-with-a-long-name",
          module: "privacyidea.lib.smsprovider.HttpSMSProvider.HttpSMSProvider",
          description: "SMS through the provider's web API, with a long description",
          "option.URL": "https://sms.example.com/send",
          "option.HTTP_METHOD": "GET",
          "option.CHECK_SSL": "yes",
          "option.SEND_DATA_AS_JSON": "no",
        }],
        ["POST", "/machineresolver/hosts", { type: "hosts", filename: "/etc/hosts" }],
      ];
      for (const [method, path, params] of setup) {
        const r = await call(base, method, path, params, jwt);
        assert.equal(r.result.status, true, `${path}: ${JSON.stringify(r)}`);
      }
      const events = await call(base, "GET", "/event/", {}, jwt);
      const eventId = events.result.value[0].id;

      await page.setViewportSize({ width: 390, height: 844 });
      await page.goto(`${base}/`);
      await page.getByRole("button", { name: "Log in" }).waitFor();
      assert.equal(await sidewaysScroll(page), 0, "login page");
      await login(page, base, "admin", server.adminPassword);

      // the header: one short row; the pages are behind a Menu button
      const header = page.getByRole("banner");
      const height = (await header.boundingBox())!.height;
      assert.ok(height <= 64, `the header is ${height} px high`);
      const menu = page.getByRole("button", { name: "Menu" });
      assert.equal(await menu.getAttribute("aria-expanded"), "false");
      const nav = page.getByRole("navigation", { name: "Main" });
      assert.equal(await nav.getByRole("link", { name: "Policies" }).isVisible(), false);
      await menu.click();
      assert.equal(await menu.getAttribute("aria-expanded"), "true");
      await nav.getByRole("link", { name: "Policies" }).click();
      await page.getByRole("heading", { level: 1, name: "Policies" }).waitFor();
      // choosing a page closes the menu
      assert.equal(await menu.getAttribute("aria-expanded"), "false");
      assert.equal(await nav.getByRole("link", { name: "Users" }).isVisible(), false);
      // Escape closes it too, and focus goes back to the button
      await menu.click();
      await nav.getByRole("link", { name: "Users" }).waitFor();
      await page.keyboard.press("Escape");
      assert.equal(await menu.getAttribute("aria-expanded"), "false");
      assert.equal(await page.evaluate("document.activeElement.textContent"), "Menu");

      const pages: [string, string][] = [
        ["#/dashboard", "Dashboard"],
        ["#/tokens", "Tokens"],
        ["#/tokens/OATH0001", "Token OATH0001"],
        ["#/tokengroups", "Token groups"],
        ["#/containers", "Containers"],
        ["#/enroll", "Enrol a token"],
        ["#/import", "Import tokens"],
        ["#/users", "Users"],
        ["#/users/staff/alice", "User alice@staff"],
        ["#/resolvers", "Resolvers"],
        ["#/realms", "Realms"],
        ["#/policies", "Policies"],
        ["#/policies/new", "New policy"],
        ["#/policies/selfservice", "Policy selfservice"],
        ["#/events", "Event handlers"],
        ["#/events/new", "New event handler"],
        [`#/events/${eventId}`, "Event handler log-enrol"],
        ["#/machines", "Machines"],
        ["#/serviceids", "Service IDs"],
        ["#/caconnectors", "CA connectors"],
        ["#/radius", "RADIUS servers"],
        ["#/smtp", "SMTP servers"],
        ["#/sms", "SMS gateways"],
        ["#/privacyidea", "privacyIDEA servers"],
        ["#/periodic", "Periodic tasks"],
        ["#/statistics", "Statistics"],
        ["#/subscriptions", "Subscriptions"],
        ["#/audit", "Audit log"],
        ["#/system", "System settings"],
      ];
      const wide: string[] = [];
      const shots = await Deno.makeTempDir({ prefix: "tessera-ui-390-" });
      for (const [hash, heading] of pages) {
        await page.goto(`${base}/${hash}`);
        await page.getByRole("heading", { level: 1, name: heading }).waitFor();
        await settled(page);
        const scroll = await sidewaysScroll(page);
        if (scroll > 0) wide.push(`${hash}: ${scroll} px (${await overflowing(page)})`);
        for (const v of await wcagViolations(page)) wide.push(`${hash}: ${v.rule} at ${v.target}`);
        const name = hash.replace(/[^a-z0-9]+/gi, "-").replace(/^-|-$/g, "");
        await page.screenshot({ path: `${shots}/${name}.png`, fullPage: true });
      }
      console.log(`screenshots at 390 px: ${shots}`);
      // the policies table's buttons are on screen
      await page.goto(`${base}/#/policies`);
      await settled(page);
      const disable = page.getByRole("button", { name: "Disable selfservice" });
      const box = (await disable.boundingBox())!;
      assert.ok(box.x >= 0 && box.x + box.width <= 390, `the Disable button is at ${box.x}`);

      // the user's own page
      const user = await (await browser.newContext({ viewport: { width: 390, height: 844 } }))
        .newPage();
      await login(user, base, "alice@staff", "Alice-Pass-1");
      await user.getByRole("heading", { level: 1, name: "My tokens" }).waitFor();
      await settled(user);
      const userScroll = await sidewaysScroll(user);
      if (userScroll > 0) wide.push(`self-service: ${userScroll} px (${await overflowing(user)})`);
      assert.deepEqual(wide, []);
      assert.deepEqual(errors, []);
    }),
);
