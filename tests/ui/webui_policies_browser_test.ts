/**
 * The webui policies in Tessera's own web interface (chromium, headless, a real `tessera serve`):
 * each setting is seen first without its policy, then with it.
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
  peopleRealms,
  type Server,
  settled,
  startTessera,
  watchErrors,
} from "./_browser.ts";

const ALICE_PASSWORD = "Alice-Pass-1";

/** Saves the one webui policy `ui` (replacing it): one policy, so no two values conflict. */
async function uiPolicy(server: Server, jwt: string, action: string, scope = "webui") {
  const res = await call(server.base, "POST", `/policy/ui-${scope}`, { scope, action }, jwt);
  assert.equal(res.result.status, true, JSON.stringify(res));
}

async function logout(page: Page) {
  await page.getByRole("button", { name: "Log out" }).click();
  await page.getByRole("button", { name: "Log in" }).waitFor();
}

Deno.test({
  name:
    "web UI in chromium: the webui policies (login page, admin and user settings, idle timeout)",
  ignore: TEST_ENGINE !== "sqlite",
  sanitizeResources: false,
  sanitizeOps: false,
}, async (t) => {
  // the browser on this machine is the trusted proxy that names its user (policy remote_user)
  const server = await startTessera({
    TESSERA_SERVER_TRUSTED_PROXIES: "127.0.0.1/32",
    TESSERA_SERVER_REMOTE_USER_HEADER: "X-Remote-User",
  });
  const base = server.base;
  let browser: Browser | undefined;
  try {
    browser = await launchChromium();
    const page = await (await browser.newContext({ viewport: { width: 1280, height: 800 } }))
      .newPage();
    const errors = watchErrors(page);
    const jwt = await adminJwt(server);
    await peopleRealms(server, jwt, { users: { alice: ALICE_PASSWORD } });

    await t.step("the login page: login_text, realm_dropdown, privacy_statement_link", async () => {
      await page.goto(`${base}/`);
      const text = page.getByTestId("login-text");
      await text.filter({ hasText: "Multi-factor authentication server" }).waitFor();
      assert.equal(await page.getByRole("textbox", { name: "Realm" }).count(), 1);
      assert.equal(await page.getByRole("link", { name: "Privacy statement" }).count(), 0);

      // a policy's text is text: markup in it is shown, never run; a javascript: link is no link
      await uiPolicy(
        server,
        jwt,
        "login_text=<b>Use your ACME account</b>, privacy_statement_link=javascript:alert(1)",
      );
      await page.reload();
      await text.filter({ hasText: "<b>Use your ACME account</b>" }).waitFor();
      assert.equal(await text.locator("b").count(), 0);
      assert.equal(await page.getByRole("link", { name: "Privacy statement" }).count(), 0);

      await uiPolicy(
        server,
        jwt,
        "login_text=Use your ACME account, realm_dropdown=staff, " +
          "privacy_statement_link=https://example.com/privacy",
      );
      await page.reload();
      await text.filter({ hasText: "Use your ACME account" }).waitFor();
      const realm = page.getByRole("combobox", { name: "Realm" });
      assert.deepEqual(await realm.locator("option").allTextContents(), ["staff"]);
      assert.equal(
        await page.getByRole("link", { name: "Privacy statement" }).getAttribute("href"),
        "https://example.com/privacy",
      );
      // the dropdown's realm is sent: alice logs in by her name alone
      await page.getByLabel("Username").fill("alice");
      await page.getByLabel("Password").fill(ALICE_PASSWORD);
      await page.getByRole("button", { name: "Log in" }).click();
      await page.getByRole("heading", { level: 1, name: "My tokens" }).waitFor();
      // the link stays in the logged-in pages' footer
      await page.getByRole("contentinfo").getByRole("link", { name: "Privacy statement" })
        .waitFor();
      await logout(page);
      const gone = await call(base, "DELETE", "/policy/ui-webui", {}, jwt);
      assert.equal(gone.result.status, true, JSON.stringify(gone));
    });

    await t.step(
      "admin: page size, default token type, show_seed, show_node, user_details, welcome",
      async () => {
        for (const serial of ["PAGE1", "PAGE2", "PAGE3"]) {
          const r = await call(
            base,
            "POST",
            "/token/init",
            { type: "spass", serial, pin: "1" },
            jwt,
          );
          assert.equal(r.result.status, true, JSON.stringify(r));
        }
        // without the policies
        await login(page, base, "admin", server.adminPassword);
        await page.getByRole("region", { name: "Welcome" }).waitFor();
        await page.goto(`${base}/#/tokens`);
        await settled(page);
        await page.getByText("Page 1 of 1 (3 in all)").waitFor();
        assert.equal(await page.getByRole("columnheader", { name: "User ID" }).count(), 0);
        assert.equal(await page.locator(".top .node").count(), 0);
        await page.goto(`${base}/#/enroll`);
        const form = page.getByRole("form", { name: "Enrol a token" });
        assert.equal(await form.getByLabel("Token type").inputValue(), "hotp");
        await form.getByRole("button", { name: "Enrol" }).click();
        await page.getByRole("img", { name: /QR code of token/ }).waitFor();
        assert.equal(await page.getByTestId("seed").count(), 0, "no key as text by default");
        assert.equal(await page.getByRole("img", { name: /privacyIDEA Authenticator/ }).count(), 0);
        await logout(page);

        await uiPolicy(
          server,
          jwt,
          "token_page_size=2, default_tokentype=totp, show_seed, show_node, user_details, " +
            "hide_welcome_info, show_android_privacyidea_authenticator",
        );
        await login(page, base, "admin", server.adminPassword);
        await settled(page);
        assert.equal(await page.getByRole("region", { name: "Welcome" }).count(), 0);
        await page.goto(`${base}/#/tokens`);
        await settled(page);
        await page.getByText("Page 1 of 2 (4 in all)").waitFor();
        await page.getByRole("columnheader", { name: "User ID" }).waitFor();
        await page.getByRole("columnheader", { name: "Resolver" }).waitFor();
        const node = (await call(base, "POST", "/auth", {
          username: "admin",
          password: server.adminPassword,
        })).result.value.show_node as string;
        assert.ok(node !== "", "show_node names the node");
        assert.equal(await page.locator(".top .node").innerText(), node);
        await page.goto(`${base}/#/enroll`);
        assert.equal(await form.getByLabel("Token type").inputValue(), "totp");
        await page.getByRole("img", { name: /privacyIDEA Authenticator for Android/ }).waitFor();
        await form.getByRole("button", { name: "Enrol" }).click();
        const seed = page.getByTestId("seed");
        await seed.waitFor();
        assert.match(await seed.innerText(), /^[A-Z2-7]{16,}=*$/);
        // a reload keeps the session's settings
        await page.goto(`${base}/#/tokens`);
        await page.reload();
        await settled(page);
        await page.getByText("Page 1 of 3 (5 in all)").waitFor();
        await logout(page);
      },
    );

    await t.step(
      "search_on_enter: the token list searches on Enter only; without it, while typing",
      async () => {
        await uiPolicy(server, jwt, "search_on_enter");
        await login(page, base, "admin", server.adminPassword);
        await page.goto(`${base}/#/tokens`);
        await settled(page);
        const rows = page.getByRole("table").getByRole("row");
        const count = await rows.count();
        const search = page.getByRole("form", { name: "Search tokens" });
        await search.getByLabel("Serial").fill("PAGE2");
        await new Promise((r) => setTimeout(r, 1000));
        await settled(page);
        assert.equal(await rows.count(), count, "no search before Enter");
        await search.getByLabel("Serial").press("Enter");
        await page.getByText("Page 1 of 1 (1 in all)").waitFor();
        await logout(page);

        await uiPolicy(server, jwt, "hide_welcome_info");
        await login(page, base, "admin", server.adminPassword);
        await page.goto(`${base}/#/tokens`);
        await settled(page);
        await page.getByRole("form", { name: "Search tokens" }).getByLabel("Serial").fill("PAGE3");
        await page.getByText("Page 1 of 1 (1 in all)").waitFor();
        await logout(page);
      },
    );

    await t.step(
      "user: dialog_no_token, then hide_buttons hides what the policies forbid",
      async () => {
        const rights = await call(base, "POST", "/policy/selfservice", {
          scope: "user",
          action: "enrollHOTP, disable",
          realm: "staff",
        }, jwt);
        assert.equal(rights.result.status, true, JSON.stringify(rights));
        await uiPolicy(server, jwt, "dialog_no_token");
        await login(page, base, "alice@staff", ALICE_PASSWORD);
        const dialog = page.getByRole("dialog", { name: "You have no token" });
        await dialog.waitFor();
        await dialog.getByRole("button", { name: "Enrol a token" }).click();
        const form = page.getByRole("form", { name: "Enrol a token" });
        await form.getByRole("button", { name: "Enrol" }).click();
        await page.getByRole("img", { name: /QR code of token/ }).waitFor();
        await page.getByRole("button", { name: "Close enrolment" }).click();
        const token = page.getByRole("article");
        await token.getByRole("button", { name: "Disable" }).waitFor();
        assert.equal(await token.getByRole("button", { name: "Delete" }).isDisabled(), true);
        await logout(page);

        // alice has a token now: no dialog; the forbidden buttons are gone
        await uiPolicy(server, jwt, "dialog_no_token, hide_buttons");
        await login(page, base, "alice@staff", ALICE_PASSWORD);
        await token.getByRole("button", { name: "Disable" }).waitFor();
        assert.equal(await token.getByRole("button", { name: "Delete" }).count(), 0);
        assert.equal(await token.getByRole("button", { name: "Reset fail counter" }).count(), 0);
        assert.equal(await page.getByRole("dialog").count(), 0);
        await logout(page);
      },
    );

    await t.step(
      "remote_user=force: the user the proxy names is logged in without a password",
      async () => {
        const context = await browser!.newContext({
          viewport: { width: 1280, height: 800 },
          extraHTTPHeaders: { "X-Remote-User": "alice@staff" },
        });
        const proxied = await context.newPage();
        await proxied.goto(`${base}/`);
        await proxied.getByRole("button", { name: "Log in", exact: true }).waitFor();
        assert.equal(await proxied.getByRole("button", { name: /Log in as/ }).count(), 0);
        await uiPolicy(server, jwt, "remote_user=force");
        await proxied.reload();
        await proxied.getByRole("heading", { level: 1, name: "My tokens" }).waitFor();
        await context.close();
        await uiPolicy(server, jwt, "remote_user=disable");
      },
    );

    await t.step("logout_time and timeout_action: the lock screen, then the logout", async () => {
      await uiPolicy(server, jwt, "logout_time=3");
      await login(page, base, "admin", server.adminPassword);
      await page.getByRole("heading", { level: 1, name: "Dashboard" }).waitFor();
      const lock = page.getByRole("dialog", { name: "Session locked" });
      await lock.waitFor({ timeout: 10_000 });
      // the JWT is gone while locked: a reload would ask for a login
      assert.equal(await page.evaluate(() => sessionStorage.getItem("tessera.jwt")), null);
      await lock.getByLabel("Password").fill("wrong");
      await lock.getByRole("button", { name: "Unlock" }).click();
      await lock.getByRole("alert").waitFor();
      // the unlocked session takes the settings of its new login
      await uiPolicy(server, jwt, "logout_time=120");
      await lock.getByLabel("Password").fill(server.adminPassword);
      await lock.getByRole("button", { name: "Unlock" }).click();
      await lock.waitFor({ state: "detached" });
      await page.getByRole("heading", { level: 1, name: "Dashboard" }).waitFor();
      assert.ok(await page.evaluate(() => sessionStorage.getItem("tessera.jwt")));
      await logout(page);

      await uiPolicy(server, jwt, "logout_time=3, timeout_action=logout");
      await login(page, base, "admin", server.adminPassword);
      await page.getByText("You were logged out after 3 seconds without activity.").waitFor({
        timeout: 10_000,
      });
      await page.getByRole("button", { name: "Log in" }).waitFor();
      // activity keeps the session: one key press a second for longer than the logout time
      await login(page, base, "admin", server.adminPassword);
      for (let i = 0; i < 5; i++) {
        await page.keyboard.press("Shift");
        await new Promise((r) => setTimeout(r, 1000));
      }
      assert.equal(await page.getByRole("button", { name: "Log out" }).count(), 1);
      await uiPolicy(server, jwt, "logout_time=120");
    });
    // the refused unlock's 401 is the browser's own log line
    assert.deepEqual(errors.filter((e) => !e.includes("401")), []);
  } finally {
    await browser?.close().catch(() => {});
    await server.stop();
  }
});
