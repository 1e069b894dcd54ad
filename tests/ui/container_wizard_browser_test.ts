/**
 * The web interface's container policies in chromium (headless, playwright-core) against a real
 * `tessera serve`: `default_container_type` preselects the admin's create form's type; with
 * `container_wizard_type`, `container_wizard_template` and `container_wizard_registration` a
 * user without a container sees only the wizard: it creates a smartphone container from the
 * template (its HOTP token enrolled and shown to scan), shows the registration QR code, and
 * says so once the app double (tests/http/_container_app.ts) has registered it from that link;
 * each step read back over the API. After a reload the wizard shows the made container; after
 * a new login (she has a container now) the usual self-service is back. No WCAG violation
 * (axe); nothing scrolls sideways at 390 px.
 *
 * Runs in the SQLite half of the test command only (the UI is engine-blind).
 */
import assert from "node:assert/strict";
import type { Page } from "playwright-core";
import { ContainerApp } from "../http/_container_app.ts";
import { axe } from "./_axe.ts";
import { login, ok, openPage, peopleRealms, settled, uiTest } from "./_browser.ts";

async function logout(page: Page) {
  await page.getByRole("banner").getByRole("button", { name: "Log out" }).click();
  await page.getByRole("button", { name: "Log in" }).waitFor();
}

uiTest(
  "web UI: default_container_type preselects the create form's type; the container wizard makes a user's smartphone container from the template and registers it with the app",
  async ({ server, base, jwt, browser }) => {
    await peopleRealms(server, jwt, { users: { alice: "alice-Pass-1" } });
    await ok(server, jwt, "POST", "/policy/alicecontainers", {
      scope: "user",
      action: "container_list, container_create, container_register, enrollHOTP",
      realm: "staff",
    });
    await ok(server, jwt, "POST", "/policy/phones", {
      scope: "container",
      action: `privacyIDEA_server_url=${base}/`,
    });
    await ok(server, jwt, "POST", "/container/smartphone/template/phone", {
      template_options: JSON.stringify({ tokens: [{ type: "hotp", genkey: true }] }),
    });
    // deno-lint-ignore no-explicit-any
    const containers = async (): Promise<any[]> =>
      (await ok(server, jwt, "GET", "/container/")).result.value.containers;

    const { page, errors } = await openPage(browser);
    const typeOfNewForm = async () => {
      await page.goto(`${base}/#/containers`);
      await page.getByRole("button", { name: "New container" }).click();
      const form = page.getByRole("form", { name: "New container" });
      // the types arrive after the form: wait for them before reading the choice
      await form.getByLabel("Container type").locator("option[value=yubikey]").waitFor({
        state: "attached",
      });
      return await form.getByLabel("Container type").inputValue();
    };

    // default_container_type: generic without the policy, smartphone with it
    await login(page, base, "admin", server.adminPassword);
    assert.equal(await typeOfNewForm(), "generic");
    await logout(page);
    await ok(server, jwt, "POST", "/policy/containerui", {
      scope: "webui",
      action: "default_container_type=smartphone",
    });
    await login(page, base, "admin", server.adminPassword);
    assert.equal(await typeOfNewForm(), "smartphone");
    await logout(page);

    // without the wizard policies alice sees her usual pages
    await login(page, base, "alice@staff", "alice-Pass-1");
    const nav = page.getByRole("navigation", { name: "Main" });
    await nav.getByRole("link", { name: "My containers" }).waitFor();
    assert.equal(await page.getByRole("heading", { name: "Set up your container" }).count(), 0);
    await logout(page);

    // the wizard: only its page, the type and template fixed by the policies
    await ok(server, jwt, "POST", "/policy/wizard", {
      scope: "webui",
      action: "container_wizard_type=smartphone, container_wizard_template=phone(smartphone), " +
        "container_wizard_registration",
    });
    await login(page, base, "alice@staff", "alice-Pass-1");
    await page.getByRole("heading", { level: 1, name: "Set up your container" }).waitFor();
    assert.equal(await nav.getByRole("link").count(), 0);
    await page.goto(`${base}/#/containers`);
    await page.getByRole("heading", { level: 1, name: "Set up your container" }).waitFor();
    const form = page.getByRole("form", { name: "Create your container" });
    assert.equal(await form.getByLabel("Container type").inputValue(), "smartphone");
    assert.equal(await form.getByLabel("Template").inputValue(), "phone");
    assert.equal(
      (await page.getByTestId("wizard-intro").textContent())!.replace(/\s+/g, " ").trim(),
      "Before you go on, create your smartphone container from the template phone and " +
        "register it with the privacyIDEA Authenticator app.",
    );
    assert.deepEqual(await containers(), []);
    const problems = await axe(page, "wizard form");
    await form.getByLabel("Description").fill("Alice's phone");
    await form.getByRole("button", { name: "Create container" }).click();

    // made: the container with the template's token, and the registration QR code
    const link = page.getByTestId("container-url");
    await link.waitFor();
    const listed = await containers();
    assert.equal(listed.length, 1);
    const c = listed[0];
    assert.equal(c.type, "smartphone");
    assert.equal(c.description, "Alice's phone");
    assert.equal(c.template, "phone");
    assert.equal(c.users[0].user_name, "alice");
    assert.equal(c.info.registration_state, "client_wait");
    assert.equal(c.tokens.length, 1);
    assert.equal(c.tokens[0].tokentype, "hotp");
    await page.getByTestId("wizard-done")
      .filter({ hasText: `Your container ${c.serial} is created.` }).waitFor();
    const token = page.getByRole("region", { name: `Token ${c.tokens[0].serial}` });
    const otpauth = await token.getByRole("link", { name: "Open in an authenticator app" })
      .getAttribute("href");
    assert.ok(otpauth!.startsWith("otpauth://hotp/"), otpauth!);
    const url = (await link.textContent())!;
    assert.ok(url.startsWith(`pia://container/${c.serial}?`), url);
    problems.push(...await axe(page, "wizard with the QR code"));

    // the app registers from the link: the wizard sees it by itself
    const app = new ContainerApp(() => Date.now());
    app.scan(url);
    const fin = await app.finalize({ brand: "XY", model: "ABC123" });
    assert.equal(fin.status, 200, JSON.stringify(fin.body));
    await page.getByTestId("wizard-done")
      .filter({ hasText: "Registration completed successfully." }).waitFor();
    assert.equal(await page.getByTestId("container-url").count(), 0);
    assert.equal((await containers())[0].info.registration_state, "registered");
    problems.push(...await axe(page, "wizard done"));
    await page.setViewportSize({ width: 390, height: 844 });
    await settled(page);
    assert.equal(
      await page.evaluate(
        "document.documentElement.scrollWidth - document.documentElement.clientWidth",
      ),
      0,
      "the wizard at 390 px",
    );
    await page.setViewportSize({ width: 1100, height: 900 });

    // a reload keeps the wizard of this login, which shows the container made
    await page.reload();
    await page.getByTestId("wizard-done")
      .filter({ hasText: `Your container ${c.serial} is created.` }).waitFor();
    assert.equal(await page.getByRole("form", { name: "Create your container" }).count(), 0);

    // finished: the next login has no wizard (she has a container)
    await page.getByRole("button", { name: "Finish and log out" }).click();
    await page.getByRole("button", { name: "Log in" }).waitFor();
    await login(page, base, "alice@staff", "alice-Pass-1");
    await nav.getByRole("link", { name: "My containers" }).click();
    await page.getByRole("link", { name: c.serial }).waitFor();
    assert.equal((await containers()).length, 1);

    assert.deepEqual(problems, []);
    assert.deepEqual(errors, []);
  },
);
