/**
 * The privacyIDEA servers page in chromium (headless, playwright-core) against a real
 * `tessera serve` and a stand-in remote privacyIDEA on loopback: a definition made in the form is
 * stored (read back through the API), its test request reaches the remote with the test user and
 * password and shows the remote's answer, an edit changes it, delete removes it; axe finds no
 * WCAG A/AA violation.
 *
 * Runs in the SQLite half of the test command only (the UI is engine-blind).
 */
import assert from "node:assert/strict";
import type { Browser } from "playwright-core";
import { TEST_ENGINE } from "../test_db.ts";
import { axe } from "./_axe.ts";
import { adminJwt, call, launchChromium, login, openPage, startTessera } from "./_browser.ts";

/** A remote privacyIDEA whose /validate/check accepts `remote` with `right` only. */
function startRemote() {
  const checks: { user: string | null; pass: string | null }[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
    const url = new URL(req.url);
    if (req.method !== "POST" || url.pathname !== "/validate/check") {
      return new Response("not found", { status: 404 });
    }
    const form = new URLSearchParams(await req.text());
    const check = { user: form.get("user"), pass: form.get("pass") };
    checks.push(check);
    const value = check.user === "remote" && check.pass === "right";
    return Response.json({ result: { status: true, value }, version: "privacyIDEA 3.12" });
  });
  return {
    url: `http://127.0.0.1:${server.addr.port}`,
    checks,
    close: () => server.shutdown(),
  };
}

Deno.test({
  name:
    "web UI: privacyIDEA servers made, tested against a remote, edited and deleted in the browser",
  ignore: TEST_ENGINE !== "sqlite",
  sanitizeResources: false,
  sanitizeOps: false,
}, async () => {
  const server = await startTessera();
  const remote = startRemote();
  let browser: Browser | undefined;
  try {
    const base = server.base;
    const jwt = await adminJwt(server);
    const list = async () => (await call(base, "GET", "/privacyideaserver/", {}, jwt)).result.value;
    browser = await launchChromium();
    const { page, errors } = await openPage(browser);
    await login(page, base, "admin", server.adminPassword);
    await page.getByRole("navigation", { name: "Main" })
      .getByRole("link", { name: "privacyIDEA servers" }).click();
    await page.getByRole("heading", { level: 1, name: "privacyIDEA servers" }).waitFor();
    await page.getByText("There is no privacyIDEA server yet.").waitFor();

    await page.getByRole("button", { name: "New privacyIDEA server" }).click();
    const form = page.getByRole("form", { name: "New privacyIDEA server" });
    await form.getByLabel("Identifier").fill("upstream");
    await form.getByLabel("URL").fill(remote.url);
    assert.ok(await form.getByLabel("Verify the TLS certificate").isChecked());
    await form.getByLabel("Description").fill("The old server");
    const problems = await axe(page);
    await form.getByRole("button", { name: "Save privacyIDEA server" }).click();
    await form.getByRole("status").filter({ hasText: "privacyIDEA server upstream saved" })
      .waitFor();
    await page.getByRole("cell", { name: "The old server" }).waitFor();
    const stored = await list();
    assert.deepEqual(Object.keys(stored), ["upstream"]);
    assert.equal(stored.upstream.url, remote.url);
    assert.equal(stored.upstream.tls, true);
    assert.equal(stored.upstream.description, "The old server");

    // the test request asks the remote with the test user and shows its answer
    await form.getByLabel("Test user").fill("remote");
    await form.getByLabel("Test password").fill("right");
    await form.getByRole("button", { name: "Send a test request" }).click();
    await form.getByRole("status").filter({ hasText: "The test passed" }).waitFor();
    await form.getByLabel("Test password").fill("wrong");
    await form.getByRole("button", { name: "Send a test request" }).click();
    await form.getByRole("alert").filter({ hasText: "The test failed" }).waitFor();
    assert.deepEqual(remote.checks, [
      { user: "remote", pass: "right" },
      { user: "remote", pass: "wrong" },
    ]);

    // edit: the stored values shown, the changes stored
    await page.getByRole("button", { name: "Edit upstream" }).click();
    const edit = page.getByRole("form", { name: "Edit privacyIDEA server upstream" });
    assert.equal(await edit.getByLabel("URL").inputValue(), remote.url);
    await edit.getByLabel("Verify the TLS certificate").uncheck();
    await edit.getByLabel("Description").fill("Being migrated");
    await edit.getByRole("button", { name: "Save privacyIDEA server" }).click();
    await page.getByRole("cell", { name: "Being migrated" }).waitFor();
    const edited = (await list()).upstream;
    assert.equal(edited.tls, false);
    assert.equal(edited.description, "Being migrated");
    assert.equal(edited.url, remote.url);

    // delete, after the confirmation
    await page.getByRole("button", { name: "Delete upstream" }).click();
    await page.getByRole("dialog", { name: "Delete upstream" })
      .getByRole("button", { name: "Delete upstream" }).click();
    await page.getByText("There is no privacyIDEA server yet.").waitFor();
    assert.deepEqual(await list(), {});

    assert.deepEqual(problems, []);
    assert.deepEqual(errors, []);
  } finally {
    await browser?.close().catch(() => {});
    await remote.close();
    await server.stop();
  }
});
