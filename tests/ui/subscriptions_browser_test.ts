/**
 * The subscriptions page in chromium (headless, playwright-core) against a real `tessera serve`
 * that trusts a test vendor's key: a signed subscription file chosen in the form is uploaded as
 * multipart to `POST /subscriptions/` and listed (and by the API), a file whose signed text was
 * changed is refused with the server's message and nothing installed, delete removes it; an admin
 * without `managesubscription` has no such page; axe finds no WCAG A/AA violation.
 *
 * Runs in the SQLite half of the test command only (the UI is engine-blind).
 */
import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import type { Browser } from "playwright-core";
import { TEST_ENGINE } from "../test_db.ts";
import { installVendorKey, signedFile } from "../fixtures/subscription_keys.ts";
import { axe } from "./_axe.ts";
import {
  adminJwt,
  call,
  launchChromium,
  login,
  openPage,
  settled,
  startTessera,
  watchErrors,
} from "./_browser.ts";

const ROOT = new URL("../..", import.meta.url).pathname;
const HELPER_PASSWORD = "Helper-Pass-1";

Deno.test({
  name:
    "web UI: a signed subscription uploaded in the browser is installed and listed; a changed file is refused; delete; no page without managesubscription",
  ignore: TEST_ENGINE !== "sqlite",
  sanitizeResources: false,
  sanitizeOps: false,
}, async () => {
  const keyDir = await Deno.makeTempDir({ prefix: "tessera-ui-vendor-" });
  await installVendorKey(keyDir);
  const server = await startTessera({ TESSERA_SUBSCRIPTIONS_KEY_DIR: keyDir });
  let browser: Browser | undefined;
  try {
    const base = server.base;
    const jwt = await adminJwt(server);
    const installed = async () =>
      (await call(base, "GET", "/subscriptions/", {}, jwt)).result.value;
    // valid for years, so the test does not depend on today's date
    const file = await signedFile({
      application: "privacyidea",
      for_name: "Example Corp",
      date_till: "2099-12-31",
      num_users: 50,
    });
    browser = await launchChromium();
    const { page, errors } = await openPage(browser);
    await login(page, base, "admin", server.adminPassword);
    await page.getByRole("navigation", { name: "Main" })
      .getByRole("link", { name: "Subscriptions" }).click();
    await page.getByRole("heading", { level: 1, name: "Subscriptions" }).waitFor();
    await page.getByText("No subscription is installed.").waitFor();
    const form = page.getByRole("form", { name: "Upload a subscription" });

    // a file whose signed text was changed: the server's message, nothing installed
    await form.getByLabel("Subscription file").setInputFiles({
      name: "changed.txt",
      mimeType: "text/plain",
      buffer: Buffer.from(file.replace("Example Corp", "Example Inc")),
    });
    await form.getByRole("button", { name: "Upload" }).click();
    await page.getByRole("alert").filter({
      hasText: "Signature of your subscription does not match",
    })
      .waitFor();
    assert.deepEqual(await installed(), []);
    errors.length = 0; // the refused upload's 400 is logged by the browser

    await form.getByLabel("Subscription file").setInputFiles({
      name: "subscription.txt",
      mimeType: "text/plain",
      buffer: Buffer.from(file),
    });
    await form.getByRole("button", { name: "Upload" }).click();
    await page.getByRole("status").filter({ hasText: "Subscription installed" }).waitFor();
    await page.getByRole("cell", { name: "Example Corp" }).waitFor();
    const [sub] = await installed();
    assert.equal(sub.application, "privacyidea");
    assert.equal(sub.for_name, "Example Corp");
    assert.equal(sub.num_users, 50);
    assert.ok(sub.active);
    const valid = await page.getByRole("cell", { name: /2099/ }).innerText();
    assert.match(valid, /days left/);
    assert.equal(await page.getByRole("cell", { name: "0 of 50" }).count(), 1);
    // the file input starts empty again
    assert.equal(await form.getByLabel("Subscription file").inputValue(), "");
    const problems = await axe(page);

    // an admin without managesubscription: no menu entry, the page refused
    await call(base, "POST", "/policy/superadmin", {
      scope: "admin",
      action: "*",
      adminuser: "admin",
    }, jwt);
    await call(base, "POST", "/policy/helper", {
      scope: "admin",
      action: "tokenlist",
      adminuser: "helper",
    }, jwt);
    const add = await new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "-A",
        `${ROOT}main.ts`,
        "admin",
        "add",
        "helper",
        "--password",
        HELPER_PASSWORD,
      ],
      cwd: server.dir,
      env: { NO_COLOR: "1" },
      stdin: "null",
      stdout: "null",
      stderr: "piped",
    }).output();
    assert.ok(add.success, new TextDecoder().decode(add.stderr));
    const helperContext = await browser.newContext({
      viewport: { width: 1100, height: 900 },
      bypassCSP: true,
    });
    const helper = await helperContext.newPage();
    const helperErrors = watchErrors(helper);
    await login(helper, base, "helper", HELPER_PASSWORD);
    await helper.goto(`${base}/#/subscriptions`);
    await helper.getByRole("alert").filter({ hasText: "You are not allowed to see this page." })
      .waitFor();
    await settled(helper);
    assert.equal(
      await helper.getByRole("navigation", { name: "Main" })
        .getByRole("link", { name: "Subscriptions" }).count(),
      0,
    );
    assert.deepEqual(helperErrors, []);
    await helperContext.close();

    // delete, after the confirmation
    await page.getByRole("button", { name: "Delete privacyidea" }).click();
    await page.getByRole("dialog", { name: "Delete privacyidea" })
      .getByRole("button", { name: "Delete privacyidea" }).click();
    await page.getByText("No subscription is installed.").waitFor();
    assert.deepEqual(await installed(), []);

    assert.deepEqual(problems, []);
    assert.deepEqual(errors, []);
  } finally {
    await browser?.close().catch(() => {});
    await server.stop();
    await Deno.remove(keyDir, { recursive: true }).catch(() => {});
  }
});
