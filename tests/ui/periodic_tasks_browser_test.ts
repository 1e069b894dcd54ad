/**
 * The periodic tasks page in chromium (headless, playwright-core) against a real `tessera serve`
 * that looks for due tasks every 200 ms: a task made in the form (module options typed from
 * `GET /periodictask/options/<module>`, the node from `GET /periodictask/nodes`) is stored as
 * chosen, runs on the server (its statistics read back from `/monitoring/`, its last run shown in
 * the list), is switched off and on, edited and deleted; a bad interval is refused with the
 * server's message and nothing stored; an admin with only `periodictask_read` changes nothing;
 * axe finds no WCAG A/AA violation.
 *
 * Runs in the SQLite half of the test command only (the UI is engine-blind).
 */
import assert from "node:assert/strict";
import type { Browser, Locator } from "playwright-core";
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
const NODE = "ui-node";
const READER_PASSWORD = "Reader-Pass-1";

/** The text of the elements `aria-describedby` names. */
async function description(field: Locator): Promise<string> {
  const id = await field.getAttribute("aria-describedby");
  return id ? await field.page().locator(`[id="${id}"]`).innerText() : "";
}

Deno.test({
  name:
    "web UI: periodic tasks made in the typed form run on the server; enable, disable, edit, delete; bad intervals refused; read-only admins change nothing",
  ignore: TEST_ENGINE !== "sqlite",
  sanitizeResources: false,
  sanitizeOps: false,
}, async () => {
  const server = await startTessera({
    TESSERA_SERVER_NODE_NAME: NODE,
    TESSERA_PERIODIC_TASKS_TICK: "200",
    TESSERA_PERIODIC_TASKS_TIME_ZONE: "UTC",
  });
  let browser: Browser | undefined;
  try {
    const base = server.base;
    const jwt = await adminJwt(server);
    await ok(server, jwt, "POST", "/token/init", { type: "spass", serial: "SPASS001", pin: "1" });
    browser = await launchChromium();
    const { page, errors } = await openPage(browser);
    await login(page, base, "admin", server.adminPassword);
    await page.getByRole("navigation", { name: "Main" })
      .getByRole("link", { name: "Periodic tasks" }).click();
    await page.getByRole("heading", { level: 1, name: "Periodic tasks" }).waitFor();
    await page.getByText("There is no periodic task yet.").waitFor();

    await page.getByRole("button", { name: "New periodic task" }).click();
    let form = page.getByRole("form", { name: "New periodic task" });
    assert.deepEqual(
      await form.getByLabel("Task module").locator("option").allTextContents(),
      (await ok(server, jwt, "GET", "/periodictask/taskmodules")).result.value,
    );
    // EventCounter's options: text fields, required as the server says, described
    const described = (await ok(server, jwt, "GET", "/periodictask/options/EventCounter"))
      .result.value;
    await form.getByLabel("Task module").selectOption("EventCounter");
    const counter = form.getByLabel("event_counter", { exact: true });
    assert.equal(await counter.getAttribute("required"), "");
    assert.equal(await description(counter), described.event_counter.description);
    assert.equal(
      await form.getByLabel("reset_event_counter", { exact: true }).getAttribute("type"),
      "checkbox",
    );
    // SimpleStats: one checkbox per statistic
    await form.getByLabel("Task module").selectOption("SimpleStats");
    const simple = (await ok(server, jwt, "GET", "/periodictask/options/SimpleStats")).result.value;
    for (const key of Object.keys(simple)) {
      assert.equal(await form.getByLabel(key, { exact: true }).getAttribute("type"), "checkbox");
    }
    // this node is offered and chosen
    assert.ok(await form.getByRole("checkbox", { name: NODE }).isChecked());

    // a bad interval: the server's message, nothing stored
    await form.getByLabel("Task name").fill("stats");
    await form.getByLabel("Interval").fill("every day");
    await form.getByRole("button", { name: "Save periodic task" }).click();
    await form.getByRole("alert").filter({ hasText: "Invalid interval" }).waitFor();
    assert.deepEqual((await ok(server, jwt, "GET", "/periodictask/")).result.value, []);
    errors.length = 0; // the refused save's 400 is logged by the browser

    // every second, counting the tokens
    await form.getByLabel("Interval").fill("* * * * * *");
    await form.getByLabel("total_tokens", { exact: true }).check();
    await form.getByLabel("assigned_tokens", { exact: true }).check();
    const problems = await axe(page);
    await form.getByRole("button", { name: "Save periodic task" }).click();
    await page.getByRole("status").filter({ hasText: "Periodic task stats saved" }).waitFor();
    form = page.getByRole("form", { name: "New periodic task" });
    assert.equal(await form.getByLabel("Task name").inputValue(), "", "the new form starts afresh");
    const [task] = (await ok(server, jwt, "GET", "/periodictask/")).result.value;
    assert.equal(task.name, "stats");
    assert.equal(task.taskmodule, "SimpleStats");
    assert.equal(task.interval, "* * * * * *");
    assert.deepEqual(task.nodes, [NODE]);
    assert.equal(task.active, true);
    assert.equal(task.retry_if_failed, true);
    assert.equal(task.ordering, 0);
    assert.deepEqual(
      task.options,
      Object.fromEntries(
        Object.keys(simple).map((
          k,
        ) => [k, ["total_tokens", "assigned_tokens"].includes(k) ? "True" : "False"]),
      ),
    );

    // it runs on the server: the statistics are written, the list shows the last run
    const deadline = Date.now() + 15_000;
    let values: [string, number][] = [];
    while (values.length === 0) {
      assert.ok(Date.now() < deadline, "the task did not run within 15 s");
      await new Promise((r) => setTimeout(r, 300));
      values = (await ok(server, jwt, "GET", "/monitoring/total_tokens")).result.value;
    }
    assert.equal(values[0][1], 1, JSON.stringify(values));
    await page.reload();
    await page.getByRole("heading", { level: 1, name: "Periodic tasks" }).waitFor();
    await page.getByRole("cell", { name: new RegExp(`^${NODE}: \\d{4}-`) }).waitFor();

    // off and on again
    await page.getByRole("button", { name: "Disable stats" }).click();
    await page.getByRole("button", { name: "Enable stats" }).waitFor();
    assert.equal(
      (await ok(server, jwt, "GET", `/periodictask/${task.id}`)).result.value.active,
      false,
    );
    await page.getByRole("button", { name: "Enable stats" }).click();
    await page.getByRole("button", { name: "Disable stats" }).waitFor();
    assert.equal(
      (await ok(server, jwt, "GET", `/periodictask/${task.id}`)).result.value.active,
      true,
    );

    // edit: the stored choices shown, changed ones stored under the same id
    await page.getByRole("button", { name: "Edit stats" }).click();
    const edit = page.getByRole("form", { name: "Edit periodic task stats" });
    assert.ok(await edit.getByLabel("total_tokens", { exact: true }).isChecked());
    assert.ok(!(await edit.getByLabel("hardware_tokens", { exact: true }).isChecked()));
    await edit.getByLabel("total_tokens", { exact: true }).uncheck();
    await edit.getByLabel("hardware_tokens", { exact: true }).check();
    await edit.getByLabel("Interval").fill("0 3 * * 1");
    await edit.getByLabel("Retry if failed").uncheck();
    problems.push(
      ...await axe(page, "edit"),
    );
    await edit.getByRole("button", { name: "Save periodic task" }).click();
    await page.getByRole("cell", { name: "0 3 * * 1" }).waitFor();
    const edited = (await ok(server, jwt, "GET", "/periodictask/")).result.value;
    assert.equal(edited.length, 1);
    assert.equal(edited[0].id, task.id);
    assert.equal(edited[0].interval, "0 3 * * 1");
    assert.equal(edited[0].retry_if_failed, false);
    assert.equal(edited[0].options.total_tokens, "False");
    assert.equal(edited[0].options.hardware_tokens, "True");
    assert.equal(edited[0].options.assigned_tokens, "True");

    // a read-only admin sees the task and may change nothing
    await ok(server, jwt, "POST", "/policy/superadmin", {
      scope: "admin",
      action: "*",
      adminuser: "admin",
    });
    await ok(server, jwt, "POST", "/policy/taskreader", {
      scope: "admin",
      action: "periodictask_read",
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
    await reader.goto(`${base}/#/periodic`);
    await reader.getByRole("heading", { level: 1, name: "Periodic tasks" }).waitFor();
    await settled(reader);
    for (const name of ["New periodic task", "Disable stats", "Delete stats"]) {
      assert.equal(await reader.getByRole("button", { name }).count(), 0, name);
    }
    await reader.getByRole("button", { name: "Edit stats" }).click();
    const view = reader.getByRole("form", { name: "Edit periodic task stats" });
    assert.equal(await view.getByLabel("Interval").inputValue(), "0 3 * * 1");
    assert.ok(await view.getByLabel("Interval").isDisabled());
    assert.equal(await view.getByRole("button", { name: "Save periodic task" }).count(), 0);
    assert.deepEqual(readerErrors, []);
    await readerContext.close();

    // delete, after the confirmation
    await page.getByRole("button", { name: "Delete stats" }).click();
    await page.getByRole("dialog", { name: "Delete stats" })
      .getByRole("button", { name: "Delete stats" }).click();
    await page.getByText("There is no periodic task yet.").waitFor();
    assert.deepEqual((await ok(server, jwt, "GET", "/periodictask/")).result.value, []);

    assert.deepEqual(problems, []);
    assert.deepEqual(errors, []);
  } finally {
    await browser?.close().catch(() => {});
    await server.stop();
  }
});
