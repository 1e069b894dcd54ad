/**
 * The CA connectors page in chromium (headless, playwright-core) against a real `tessera serve`
 * and a CA made by openssl: a local CA connector made in the page is what `/caconnector/` lists,
 * a changed CRL period is stored, a key file that is not there is refused and nothing is made,
 * deleting removes it; an admin with `caconnectorread` only sees them and may not change them,
 * one without it has no menu entry and the page refuses; axe finds no WCAG A/AA violation.
 *
 * Runs in the SQLite half of the test command only (the UI is engine-blind).
 */
import assert from "node:assert/strict";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { TEST_ENGINE } from "../test_db.ts";
import { makeCaDir } from "../http/_local_ca.ts";
import { axe } from "./_axe.ts";
import {
  addAdmin,
  adminJwt,
  launchChromium,
  login,
  ok,
  openPage,
  settled,
  startTessera,
  watchErrors,
} from "./_browser.ts";

Deno.test({
  name:
    "web UI: a local CA connector is made from its files, its CRL period changed and deleted; a missing key file is refused; readers may not change it, others have no entry",
  ignore: TEST_ENGINE !== "sqlite",
  sanitizeResources: false,
  sanitizeOps: false,
}, async () => {
  const server = await startTessera();
  const ca = await makeCaDir();
  let browser: Browser | undefined;
  try {
    const base = server.base;
    const jwt = await adminJwt(server);
    const listed = async () => (await ok(server, jwt, "GET", "/caconnector/")).result.value;

    browser = await launchChromium();
    const { page, errors } = await openPage(browser);
    await login(page, base, "admin", server.adminPassword);
    await page.getByRole("navigation", { name: "Main" })
      .getByRole("link", { name: "CA connectors" }).click();
    await page.getByRole("heading", { level: 1, name: "CA connectors" }).waitFor();
    await page.getByText("There is no CA connector yet.").waitFor();

    // a key file that is not there: the server's message, nothing made
    await page.getByRole("button", { name: "New CA connector" }).click();
    const form = page.getByRole("form", { name: "New CA connector" });
    await form.getByLabel("Identifier").fill("localCA");
    await form.getByLabel("CA key file (PEM)").fill(`${ca.dir}/missing.pem`);
    await form.getByLabel("CA certificate file (PEM)").fill(ca.cacert);
    await form.getByRole("button", { name: "Save CA connector" }).click();
    await form.getByRole("alert").waitFor();
    assert.deepEqual(await listed(), []);
    assert.equal(errors.splice(0).length, 1, "the refused request, logged by the browser");

    // made from the CA's files
    await form.getByLabel("CA key file (PEM)").fill(ca.cakey);
    await form.getByLabel("CA directory (serial, index.txt; relative paths)").fill(ca.dir);
    await form.getByLabel("Templates file (YAML)").fill("templates.yaml");
    await form.getByLabel("CRL validity (days)").fill("30");
    await form.getByRole("button", { name: "Save CA connector" }).click();
    await page.getByRole("cell", { name: ca.cacert }).waitFor();
    const made = await listed();
    assert.equal(made.length, 1);
    assert.equal(made[0].connectorname, "localCA");
    assert.equal(made[0].type, "local");
    assert.equal(made[0].data.cakey, ca.cakey);
    assert.equal(made[0].data.CRL_Validity_Period, "30");
    assert.deepEqual(Object.keys(made[0].templates).sort(), ["template3", "user", "webserver"]);
    const problems = await axe(page);

    // its CRL period changed
    await page.getByRole("button", { name: "Edit localCA" }).click();
    const edit = page.getByRole("form", { name: "Edit CA connector localCA" });
    assert.equal(await edit.getByLabel("CA key file (PEM)").inputValue(), ca.cakey);
    await edit.getByLabel("CRL validity (days)").fill("20");
    await edit.getByRole("button", { name: "Save CA connector" }).click();
    await edit.getByRole("status").filter({ hasText: "CA connector localCA saved" }).waitFor();
    assert.equal((await listed())[0].data.CRL_Validity_Period, "20");

    // a reader sees it and has nothing to change it with; a token admin has no entry
    await ok(server, jwt, "POST", "/policy/superadmin", {
      scope: "admin",
      action: "*",
      adminuser: "admin",
    });
    await ok(server, jwt, "POST", "/policy/careader", {
      scope: "admin",
      action: "caconnectorread",
      adminuser: "reader",
    });
    await ok(server, jwt, "POST", "/policy/tokenadmin", {
      scope: "admin",
      action: "tokenlist",
      adminuser: "tokens",
    });
    await addAdmin(server, "reader", "Reader-Pass-1");
    await addAdmin(server, "tokens", "Tokens-Pass-1");
    const others: BrowserContext[] = [];
    const as = async (name: string, password: string): Promise<[Page, string[]]> => {
      const c = await browser!.newContext({ viewport: { width: 1100, height: 900 } });
      others.push(c);
      const p = await c.newPage();
      const e = watchErrors(p);
      await login(p, base, name, password);
      return [p, e];
    };
    const [reader, readerErrors] = await as("reader", "Reader-Pass-1");
    await reader.goto(`${base}/#/caconnectors`);
    await reader.getByRole("cell", { name: ca.cacert }).waitFor();
    await settled(reader);
    assert.equal(await reader.getByRole("button", { name: "New CA connector" }).count(), 0);
    assert.equal(await reader.getByRole("button", { name: "Delete localCA" }).count(), 0);
    await reader.getByRole("button", { name: "Edit localCA" }).click();
    await reader.getByRole("form", { name: "Edit CA connector localCA" }).waitFor();
    assert.equal(await reader.getByRole("button", { name: "Save CA connector" }).count(), 0);
    const [tokens, tokensErrors] = await as("tokens", "Tokens-Pass-1");
    const nav = tokens.getByRole("navigation", { name: "Main" });
    await nav.getByRole("link", { name: "Tokens" }).waitFor();
    assert.equal(await nav.getByRole("link", { name: "CA connectors" }).count(), 0);
    await tokens.goto(`${base}/#/caconnectors`);
    await tokens.getByRole("alert").filter({ hasText: "You are not allowed to see this page." })
      .waitFor();
    assert.deepEqual([...readerErrors, ...tokensErrors], []);
    for (const c of others) await c.close();

    // deleted after the confirmation
    await page.getByRole("button", { name: "Delete localCA" }).click();
    await page.getByRole("dialog", { name: "Delete localCA" })
      .getByRole("button", { name: "Delete localCA" }).click();
    await page.getByRole("status").filter({ hasText: "CA connector localCA deleted" }).waitFor();
    assert.deepEqual(await listed(), []);

    assert.deepEqual(problems, []);
    assert.deepEqual(errors, []);
  } finally {
    await browser?.close().catch(() => {});
    await server.stop();
    await ca.remove();
  }
});
