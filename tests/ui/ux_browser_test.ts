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
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
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
