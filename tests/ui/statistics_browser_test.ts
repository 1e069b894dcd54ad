/**
 * The statistics page in chromium (headless, playwright-core) against a real `tessera serve`
 * whose SimpleStats task writes token counts every second: the keys listed, a key's values and
 * newest value as `/monitoring/` has them, a time range that holds none, deleting the values;
 * an admin with only `statistics_read` may not delete; axe finds no WCAG A/AA violation.
 *
 * Runs in the SQLite half of the test command only (the UI is engine-blind).
 */
import assert from "node:assert/strict";
import type { Browser } from "playwright-core";
import { TEST_ENGINE } from "../test_db.ts";
import { axe } from "./_axe.ts";
import {
  adminJwt,
  launchChromium,
  login,
  ok,
  openPage,
  settled,
  startTessera,
  watchErrors,
} from "./_browser.ts";

const ROOT = new URL("../..", import.meta.url).pathname;
const READER_PASSWORD = "Reader-Pass-1";

Deno.test({
  name:
    "web UI: statistics written by a periodic task are listed with their newest value, filtered by time and deleted; read-only admins may not delete",
  ignore: TEST_ENGINE !== "sqlite",
  sanitizeResources: false,
  sanitizeOps: false,
}, async () => {
  const server = await startTessera({
    TESSERA_SERVER_NODE_NAME: "node-1",
    TESSERA_PERIODIC_TASKS_TICK: "200",
    TESSERA_PERIODIC_TASKS_TIME_ZONE: "UTC",
  });
  let browser: Browser | undefined;
  try {
    const base = server.base;
    const jwt = await adminJwt(server);
    for (const serial of ["SPASS001", "SPASS002"]) {
      await ok(server, jwt, "POST", "/token/init", { type: "spass", serial, pin: "1" });
    }
    const task = await ok(server, jwt, "POST", "/periodictask/", {
      name: "stats",
      taskmodule: "SimpleStats",
      interval: "* * * * * *",
      nodes: "node-1",
      ordering: 0,
      options: { total_tokens: "True", assigned_tokens: "True" },
    });
    // at least two runs, then no more
    const deadline = Date.now() + 20_000;
    let values: [string, number][] = [];
    while (values.length < 2) {
      assert.ok(Date.now() < deadline, "the task did not run twice within 20 s");
      await new Promise((r) => setTimeout(r, 300));
      values = (await ok(server, jwt, "GET", "/monitoring/total_tokens")).result.value;
    }
    await ok(server, jwt, "DELETE", `/periodictask/${task.result.value}`);
    values = (await ok(server, jwt, "GET", "/monitoring/total_tokens")).result.value;

    browser = await launchChromium();
    const { page, errors } = await openPage(browser);
    await login(page, base, "admin", server.adminPassword);
    await page.getByRole("navigation", { name: "Main" })
      .getByRole("link", { name: "Statistics" }).click();
    await page.getByRole("heading", { level: 1, name: "Statistics" }).waitFor();
    const select = page.getByLabel("Statistics key");
    // the keys arrive after the heading: wait for them before reading the list
    await select.locator("option", { hasText: "total_tokens" }).waitFor({ state: "attached" });
    assert.deepEqual(await select.locator("option").allTextContents(), [
      "assigned_tokens",
      "total_tokens",
    ]);
    await select.selectOption("total_tokens");
    const panel = page.getByRole("region", { name: "Values of total_tokens" });
    await panel.getByTestId("last-value").filter({ hasText: /^2$/ }).waitFor();
    const table = panel.getByRole("table", { name: "Values of total_tokens, newest first" });
    await table.waitFor();
    // every value the API has, newest first
    const cells = await table.locator("tbody tr").evaluateAll((rows) =>
      rows.map((r) => [...r.querySelectorAll("td")].map((td) => td.textContent ?? ""))
    );
    assert.deepEqual(cells, [...values].reverse().map(([t, v]) => [t, String(v)]));
    const problems = await axe(page);

    // a range before the values holds none
    await panel.getByLabel("Until").fill("2001-01-01");
    await panel.getByRole("button", { name: "Show" }).click();
    await panel.getByText("No value in this range.").waitFor();
    await panel.getByLabel("Until").fill("");
    await panel.getByRole("button", { name: "Show" }).click();
    await table.waitFor();

    // a read-only admin sees the values and may not delete them
    await ok(server, jwt, "POST", "/policy/superadmin", {
      scope: "admin",
      action: "*",
      adminuser: "admin",
    });
    await ok(server, jwt, "POST", "/policy/statsreader", {
      scope: "admin",
      action: "statistics_read",
      adminuser: "reader",
    });
    const add = await new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "-A",
        `${ROOT}main.ts`,
        "admin",
        "add",
        "reader",
        "--password",
        READER_PASSWORD,
      ],
      cwd: server.dir,
      env: { NO_COLOR: "1" },
      stdin: "null",
      stdout: "null",
      stderr: "piped",
    }).output();
    assert.ok(add.success, new TextDecoder().decode(add.stderr));
    const readerContext = await browser.newContext({
      viewport: { width: 1100, height: 900 },
      bypassCSP: true,
    });
    const reader = await readerContext.newPage();
    const readerErrors = watchErrors(reader);
    await login(reader, base, "reader", READER_PASSWORD);
    await reader.goto(`${base}/#/statistics`);
    await reader.getByRole("heading", { level: 1, name: "Statistics" }).waitFor();
    await settled(reader);
    await reader.getByTestId("last-value").waitFor();
    assert.equal(await reader.getByRole("button", { name: "Delete these values" }).count(), 0);
    assert.deepEqual(readerErrors, []);
    await readerContext.close();

    // delete every value of the key, after the confirmation
    await panel.getByRole("button", { name: "Delete these values" }).click();
    await page.getByRole("dialog", { name: "Delete these values" })
      .getByRole("button", { name: "Delete these values" }).click();
    await page.getByRole("status").filter({
      hasText: `${values.length} values of total_tokens deleted`,
    }).waitFor();
    assert.deepEqual((await ok(server, jwt, "GET", "/monitoring/total_tokens")).result.value, []);
    assert.ok(
      (await ok(server, jwt, "GET", "/monitoring/assigned_tokens")).result.value.length >= 2,
      "another key's values stay",
    );

    assert.deepEqual(problems, []);
    assert.deepEqual(errors, []);
  } finally {
    await browser?.close().catch(() => {});
    await server.stop();
  }
});
