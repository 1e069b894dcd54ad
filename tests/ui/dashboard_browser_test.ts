/**
 * The admin's dashboard in chromium (headless, playwright-core, a real `tessera serve`): the
 * first page after the login, with token counts by type and state, the checks and rejections of
 * the last hour and day, subscriptions, and links to what needs attention (locked tokens,
 * failing resolvers); for an admin limited to one realm, that realm's figures only.
 *
 * Runs in the SQLite half of the test command only (the UI is engine-blind).
 */
import assert from "node:assert/strict";
import type { Page } from "playwright-core";
import { axe } from "./_axe.ts";
import { call, login, ok, openPage, settled, uiTest } from "./_browser.ts";

const ROOT = new URL("../..", import.meta.url).pathname;
const KEY = "3132333435363738393031323334353637383930";
const HOTP0 = "755224";

/** The table's rows as lists of cell texts (row headings first). */
async function rows(page: Page, testId: string): Promise<string[][]> {
  const out: string[][] = [];
  const trs = page.getByTestId(testId).locator("tbody tr");
  for (let i = 0; i < await trs.count(); i++) {
    out.push((await trs.nth(i).locator("th, td").allInnerTexts()).map((c) => c.trim()));
  }
  return out;
}

uiTest(
  "web UI: the dashboard is the admin's first page: token counts, checks of the last hour and day, subscriptions, what needs attention; a realm-limited admin sees their realm's figures",
  async ({ server, base, jwt, browser }) => {
    const defaults = await call(base, "GET", "/resolver/sqlresolver/default", {}, jwt);
    await ok(server, jwt, "POST", "/resolver/people", {
      ...defaults.result.value,
      type: "sqlresolver",
      Database: "people.sqlite",
      Editable: "1",
    });
    // a resolver whose database server does not answer: the probe reports it
    await ok(server, jwt, "POST", "/resolver/shop", {
      ...defaults.result.value,
      type: "sqlresolver",
      Driver: "mysql+pymysql",
      Server: "127.0.0.1",
      Port: "1",
      Database: "shop",
      User: "reader",
      Password: "secret",
      poolTimeout: "2",
    });
    await ok(server, jwt, "POST", "/realm/staff", { resolvers: "people" });
    await ok(server, jwt, "POST", "/realm/guests", { resolvers: "people" });
    for (const user of ["alice", "gina"]) {
      await ok(server, jwt, "POST", "/user/", { user, resolver: "people", password: "Pass-1" });
    }
    const init = (params: Record<string, unknown>) =>
      ok(server, jwt, "POST", "/token/init", params);
    await init({ type: "hotp", serial: "HOTP1", otpkey: KEY, user: "alice", realm: "staff" });
    await init({ type: "hotp", serial: "HOTP2", otpkey: KEY, user: "alice", realm: "staff" });
    await init({ type: "spass", serial: "SPASS1", pin: "1", user: "gina", realm: "guests" });
    await ok(server, jwt, "POST", "/token/disable", { serial: "SPASS1" });
    await ok(server, jwt, "POST", "/token/set", { serial: "HOTP2", max_failcount: 2 });
    // five checks in the last hour: one accepted, four rejected (HOTP2 is then locked); four of
    // staff's tokens, one of guests' (disabled)
    const check = (serial: string, pass: string) =>
      call(base, "POST", "/validate/check", { serial, pass });
    assert.equal((await check("HOTP1", HOTP0)).result.value, true);
    assert.equal((await check("HOTP1", "000000")).result.value, false);
    await check("HOTP2", "000000");
    await check("HOTP2", "111111");
    assert.equal((await check("SPASS1", "1")).result.value, false);

    const { page, errors } = await openPage(browser, { width: 1280, height: 900 });
    await login(page, base, "admin", server.adminPassword);
    // the first page, its heading focused
    await page.getByRole("heading", { level: 1, name: "Dashboard" }).waitFor();
    await settled(page);
    assert.equal(
      await page.evaluate("document.activeElement && document.activeElement.textContent"),
      "Dashboard",
    );
    assert.deepEqual(await rows(page, "token-counts"), [
      // type, all, active, locked, disabled, revoked
      ["hotp", "2", "1", "1", "0", "0"],
      ["spass", "1", "0", "0", "1", "0"],
      ["all types", "3", "1", "1", "1", "0"],
    ]);
    assert.deepEqual(await rows(page, "check-counts"), [
      ["last hour", "5", "4"],
      ["last 24 hours", "5", "4"],
    ]);
    const subscriptions = page.getByRole("region", { name: "Subscriptions" });
    await subscriptions.getByText("No subscription is installed.").waitFor();
    const attention = page.getByTestId("attention");
    await attention.getByText("Resolvers that fail: shop").waitFor();
    assert.deepEqual(
      await axe(page, "dashboard", { seriousOnly: true }),
      [],
    );
    // the locked token's link opens the token list filtered to locked tokens
    await attention.getByRole("link", { name: "1 token is locked" }).click();
    await page.getByRole("heading", { level: 1, name: "Tokens" }).waitFor();
    await settled(page);
    assert.equal(
      await page.getByRole("form", { name: "Search tokens" }).getByLabel("State")
        .inputValue(),
      "locked",
    );
    assert.deepEqual(await page.locator("table tbody tr td:first-child").allInnerTexts(), [
      "HOTP2",
    ]);
    // a type's link lists that type
    await page.goto(`${base}/#/dashboard`);
    await settled(page);
    await page.getByTestId("token-counts").getByRole("link", { name: "spass" }).click();
    await page.getByRole("heading", { level: 1, name: "Tokens" }).waitFor();
    await settled(page);
    assert.deepEqual(await page.locator("table tbody tr td:first-child").allInnerTexts(), [
      "SPASS1",
    ]);

    // an admin limited to staff: staff's tokens and checks, no subscriptions
    await ok(server, jwt, "POST", "/policy/superadmin", {
      scope: "admin",
      action: "*",
      adminuser: "admin",
    });
    await ok(server, jwt, "POST", "/policy/helpdesk", {
      scope: "admin",
      action: "tokenlist, auditlog",
      adminuser: "helpdesk",
      realm: "staff",
    });
    const add = await new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", `${ROOT}main.ts`, "admin", "add", "helpdesk", "--password", "Helpdesk-1"],
      cwd: server.dir,
      env: { NO_COLOR: "1" },
      stdin: "null",
      stdout: "null",
      stderr: "piped",
    }).output();
    assert.ok(add.success, new TextDecoder().decode(add.stderr));
    await page.getByRole("button", { name: "Log out" }).click();
    await login(page, base, "helpdesk", "Helpdesk-1");
    await page.getByRole("heading", { level: 1, name: "Dashboard" }).waitFor();
    await settled(page);
    assert.deepEqual(await rows(page, "token-counts"), [
      ["hotp", "2", "1", "1", "0", "0"],
      ["all types", "2", "1", "1", "0", "0"],
    ]);
    // the checks of staff's tokens only (the audit's realm rule)
    assert.deepEqual(await rows(page, "check-counts"), [
      ["last hour", "4", "3"],
      ["last 24 hours", "4", "3"],
    ]);
    assert.equal(await page.getByRole("region", { name: "Subscriptions" }).count(), 0);
    assert.deepEqual(errors, []);
  },
);
