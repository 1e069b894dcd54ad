/**
 * Push token enrolment in chromium (headless, playwright-core) against a real `tessera serve`:
 * with the two enrolment policies set through the API, an admin enrols a push token in the page,
 * which shows the QR code and URL of `detail.pushurl` and that the token waits for the app; the
 * app double (tests/http/_push_app.ts) registers at `/ttype/push` from the URL read off the
 * page, and a refresh shows the token enrolled. A user whose policies allow `enrollPUSH` does the
 * same in the self-service. Without the policies the page shows the server's refusal and no
 * token is made. axe finds no WCAG A/AA violation.
 *
 * Runs in the SQLite half of the test command only (the UI is engine-blind).
 */
import assert from "node:assert/strict";
import type { Browser, Page } from "playwright-core";
import { TEST_ENGINE } from "../test_db.ts";
import { PushApp } from "../http/_push_app.ts";
import { axe } from "./_axe.ts";
import {
  adminJwt,
  call,
  launchChromium,
  login,
  ok,
  openPage,
  peopleRealms,
  settled,
  startTessera,
  watchErrors,
} from "./_browser.ts";

const ALICE_PASSWORD = "Alice-Pass-1";

/** Enrols a push token in the open form; returns the URL and QR code the page shows. */
async function enrolPushInPage(page: Page) {
  const form = page.getByRole("form", { name: "Enrol a token" });
  await form.getByLabel("Token type").selectOption("push");
  await form.getByLabel("PIN").fill("6789");
  await form.getByRole("button", { name: "Enrol" }).click();
  const shown = page.getByTestId("pushurl");
  await shown.waitFor();
  const url = (await shown.textContent())!.trim();
  const qr = page.getByRole("img", { name: /QR code of push token/ });
  assert.equal(await qr.getAttribute("data-otpauth"), url);
  // the server's QR image (an SVG data URL), and the browser could draw it
  assert.ok((await qr.getAttribute("src"))!.startsWith("data:image/svg+xml;base64,"));
  assert.ok(
    await qr.evaluate((img) => (img as unknown as { naturalWidth: number }).naturalWidth > 0),
  );
  assert.equal(await page.locator("a.otpauth").getAttribute("href"), url);
  assert.match(
    (await page.getByTestId("rollout-state").textContent())!,
    /waits for the app \(rollout state clientwait\)/,
  );
  return url;
}

/** The app registers from the URL; a refresh in the page shows the token enrolled. */
async function finishWithApp(page: Page, url: string) {
  const app = new PushApp(() => Date.now());
  const reg = await app.enrol(url);
  assert.equal(reg.status, 200, JSON.stringify(reg.body));
  assert.equal(reg.body.detail.rollout_state, "enrolled");
  await page.getByRole("button", { name: "Refresh the token's state" }).click();
  await page.getByText("The app has registered: the token is enrolled and ready to use.")
    .waitFor();
  assert.equal(await page.getByRole("button", { name: "Refresh the token's state" }).count(), 0);
  return app.serial;
}

Deno.test({
  name:
    "web UI: a push token is enrolled in the page (QR code and URL), finished by the app and shown enrolled; without the policies the server's refusal is shown",
  ignore: TEST_ENGINE !== "sqlite",
  sanitizeResources: false,
  sanitizeOps: false,
}, async () => {
  const server = await startTessera({ TESSERA_PUSH_SERVER_KEY_BITS: "2048" });
  let browser: Browser | undefined;
  try {
    const base = server.base;
    const jwt = await adminJwt(server);
    const pushTokens = async () =>
      (await ok(server, jwt, "GET", "/token/", { type: "push" })).result.value.tokens;

    browser = await launchChromium();
    const { page, errors } = await openPage(browser);
    await login(page, base, "admin", server.adminPassword);

    // without the policies: the server refuses, the page says so, nothing is made
    await page.goto(`${base}/#/enroll`);
    const form = page.getByRole("form", { name: "Enrol a token" });
    await form.waitFor();
    const offered = await form.getByLabel("Token type").locator("option").evaluateAll((os) =>
      os.map((o) => (o as unknown as { value: string }).value)
    );
    assert.ok(offered.includes("push"), offered.join(","));
    await form.getByLabel("Token type").selectOption("push");
    await form.getByRole("button", { name: "Enrol" }).click();
    const refusal = form.getByRole("alert");
    await refusal.waitFor();
    const direct = await call(base, "POST", "/token/init", { type: "push", genkey: 1 }, jwt);
    assert.equal(direct.result.status, false);
    assert.ok(
      (await refusal.textContent())!.includes(direct.result.error.message),
      `${await refusal.textContent()} / ${direct.result.error.message}`,
    );
    assert.equal((await pushTokens()).length, 0);
    // the refused request is the only console error (the browser logs its 403)
    assert.deepEqual(errors.splice(0), [
      "Failed to load resource: the server responded with a status of 403 (Forbidden)",
    ]);

    // with them: the QR code and URL, the app registers, a refresh shows it enrolled
    await ok(server, jwt, "POST", "/policy/push", {
      scope: "enrollment",
      action: `push_firebase_configuration=poll only, push_registration_url=${base}/ttype/push`,
    });
    await page.reload();
    await page.getByRole("form", { name: "Enrol a token" }).waitFor();
    const url = await enrolPushInPage(page);
    assert.ok(url.startsWith("otpauth://pipush/PIPU"), url);
    assert.ok(
      url.includes(`url=${encodeURIComponent(`${base}/ttype/push`).replaceAll("%2F", "/")}`),
      url,
    );
    const problems = await axe(page);
    let listed = await pushTokens();
    assert.equal(listed.length, 1);
    assert.equal(listed[0].rollout_state, "clientwait");
    const serial = await finishWithApp(page, url);
    assert.equal(serial, listed[0].serial);
    listed = await pushTokens();
    assert.equal(listed[0].rollout_state, "enrolled");
    assert.equal(listed[0].active, true);
    // the token's page shows it enrolled too
    await page.goto(`${base}/#/tokens/${serial}`);
    await page.getByText("Rollout state").waitFor();
    await settled(page);
    assert.equal(
      await page.locator("dt:has-text('Rollout state') + dd").textContent(),
      "enrolled",
    );

    // a user with enrollPUSH in the self-service
    await peopleRealms(server, jwt, { users: { alice: ALICE_PASSWORD } });
    await ok(server, jwt, "POST", "/policy/self", {
      scope: "user",
      action: "enrollPUSH, enrollpin",
      realm: "staff",
    });
    const userContext = await browser.newContext({
      viewport: { width: 1100, height: 900 },
      bypassCSP: true,
    });
    const user = await userContext.newPage();
    const userErrors = watchErrors(user);
    await login(user, base, "alice@staff", ALICE_PASSWORD);
    await user.getByRole("button", { name: "Enrol a new token" }).click();
    const userForm = user.getByRole("form", { name: "Enrol a token" });
    await userForm.waitFor();
    assert.deepEqual(
      await userForm.getByLabel("Token type").locator("option").evaluateAll((os) =>
        os.map((o) => (o as unknown as { value: string }).value)
      ),
      ["push"],
    );
    const userUrl = await enrolPushInPage(user);
    problems.push(...await axe(user));
    const userSerial = await finishWithApp(user, userUrl);
    const alices = (await ok(server, jwt, "GET", "/token/", { user: "alice", realm: "staff" }))
      .result.value.tokens;
    assert.deepEqual(alices.map((t: { serial: string }) => t.serial), [userSerial]);
    assert.equal(alices[0].rollout_state, "enrolled");
    await userContext.close();

    assert.deepEqual(problems, []);
    assert.deepEqual(errors, []);
    assert.deepEqual(userErrors, []);
  } finally {
    await browser?.close();
    await server.stop();
  }
});
