/**
 * Container templates in chromium (headless, playwright-core) against a real `tessera serve`:
 * the admin makes a template of a HOTP token for the owner and a TOTP token for nobody (the
 * default of generic containers), which `/container/templates` then lists as made; a taken name
 * cannot be saved; the New container form starts with that default template, and the container
 * made from it has the two tokens, shown with their QR codes; with "No template" a container
 * gets none; the template is deleted after a confirmation. A user without
 * `container_template_list` has no template field and no templates page. Each step is read back
 * over the API; axe finds no WCAG violation; nothing scrolls sideways at 390 px.
 *
 * Runs in the SQLite half of the test command only (the UI is engine-blind).
 */
import assert from "node:assert/strict";
import { axe } from "./_axe.ts";
import { login, ok, openPage, peopleRealms, settled, uiTest, watchErrors } from "./_browser.ts";

uiTest(
  "web UI: a container template is made, used by the New container form (its tokens enrolled and shown) and deleted; a user without container_template_list is offered none",
  async ({ server, base, jwt, browser }) => {
    await peopleRealms(server, jwt, { users: { alice: "alice-Pass-1" } });
    await ok(server, jwt, "POST", "/policy/alicecontainers", {
      scope: "user",
      action: "container_list, container_create",
      realm: "staff",
    });
    // deno-lint-ignore no-explicit-any
    const templates = async (): Promise<any[]> =>
      (await ok(server, jwt, "GET", "/container/templates")).result.value.templates;

    const { page, errors } = await openPage(browser);
    await login(page, base, "admin", server.adminPassword);
    await page.getByRole("navigation", { name: "Main" })
      .getByRole("link", { name: "Container templates" }).click();
    await page.getByRole("heading", { level: 1, name: "Container templates" }).waitFor();
    await page.getByTestId("empty-list").waitFor();

    // a new template: a HOTP token for the owner, a TOTP token for nobody; the default
    await page.getByRole("button", { name: "New template" }).click();
    const form = page.getByRole("form", { name: "New template" });
    await form.getByLabel("Container type").locator("option[value=yubikey]").waitFor({
      state: "attached",
    });
    await form.getByLabel("Name").fill("laptop");
    await form.getByLabel("Container type").selectOption("generic");
    await form.getByLabel("Token type to add").selectOption("hotp");
    await form.getByRole("button", { name: "Add token" }).click();
    await form.getByLabel("Token type to add").selectOption("totp");
    await form.getByRole("button", { name: "Add token" }).click();
    await form.getByLabel("Token type to add").selectOption("spass");
    await form.getByRole("button", { name: "Add token" }).click();
    await form.getByRole("button", { name: "Remove token 3" }).click();
    await form.getByLabel("Token 2 (totp) for the container's owner").uncheck();
    await form.getByLabel("Default template").check();
    const problems = await axe(page, "new template form");
    await page.setViewportSize({ width: 390, height: 844 });
    await settled(page);
    assert.equal(
      await page.evaluate(
        "document.documentElement.scrollWidth - document.documentElement.clientWidth",
      ),
      0,
      "the template form at 390 px",
    );
    await page.setViewportSize({ width: 1100, height: 900 });
    await form.getByRole("button", { name: "Save template" }).click();
    const row = page.getByRole("row").filter({ hasText: "laptop" });
    await row.waitFor();
    assert.deepEqual(
      (await row.getByRole("cell").allTextContents()).map((s) => s.trim()),
      ["laptop", "generic", "yes", "hotp (owner), totp", "Delete template laptop"],
    );
    const saved = await templates();
    assert.equal(saved.length, 1);
    assert.equal(saved[0].name, "laptop");
    assert.equal(saved[0].container_type, "generic");
    assert.equal(saved[0].default, true);
    assert.deepEqual(saved[0].template_options.tokens, [
      { type: "hotp", genkey: true, user: true },
      { type: "totp", genkey: true, user: false },
    ]);
    problems.push(...await axe(page, "template list"));
    // a taken name is not saved again (the server would overwrite it)
    await page.getByRole("button", { name: "New template" }).click();
    await form.getByLabel("Name").fill("laptop");
    assert.equal(await form.getByRole("button", { name: "Save template" }).isDisabled(), true);
    await form.getByRole("button", { name: "Cancel" }).click();

    // the New container form starts with the default template; its tokens are enrolled
    await page.goto(`${base}/#/containers`);
    await page.getByRole("button", { name: "New container" }).click();
    const create = page.getByRole("form", { name: "New container" });
    await create.getByLabel("Template").locator("option[value=laptop]").waitFor({
      state: "attached",
    });
    assert.equal(await create.getByLabel("Template").inputValue(), "laptop");
    await create.getByLabel("User").fill("alice");
    await create.getByLabel("Realm").fill("staff");
    await create.getByRole("button", { name: "Create container" }).click();
    const made = page.getByRole("status").filter({
      hasText: "is created with the template's tokens",
    });
    await made.waitFor();
    const serial = (await made.getByRole("link").textContent())!;
    const c = (await ok(server, jwt, "GET", "/container/", { container_serial: serial })).result
      .value.containers[0];
    assert.equal(c.template, "laptop");
    // deno-lint-ignore no-explicit-any
    assert.deepEqual(c.tokens.map((t: any) => t.tokentype).sort(), ["hotp", "totp"]);
    // deno-lint-ignore no-explicit-any
    const hotp = c.tokens.find((t: any) => t.tokentype === "hotp");
    // deno-lint-ignore no-explicit-any
    const totp = c.tokens.find((t: any) => t.tokentype === "totp");
    const owners = async (s: string) =>
      (await ok(server, jwt, "GET", "/token/", { serial: s })).result.value.tokens[0].username;
    assert.equal(await owners(hotp.serial), "alice");
    assert.equal(await owners(totp.serial), "");
    for (const t of [hotp, totp]) {
      const href = await page.getByRole("region", { name: `Token ${t.serial}` })
        .getByRole("link", { name: "Open in an authenticator app" }).getAttribute("href");
      assert.ok(href!.startsWith(`otpauth://${t.tokentype}/`), href!);
    }
    problems.push(...await axe(page, "container made from a template"));

    // with No template the container has no token, and its page opens
    await page.getByRole("button", { name: "Close" }).click();
    await page.getByRole("button", { name: "New container" }).click();
    await create.getByLabel("Template").locator("option[value=laptop]").waitFor({
      state: "attached",
    });
    await create.getByLabel("Template").selectOption("");
    await create.getByRole("button", { name: "Create container" }).click();
    const heading = page.getByRole("heading", { level: 1, name: /^Container CONT/ });
    await heading.waitFor();
    const plain = (await heading.textContent())!.replace("Container ", "");
    const p = (await ok(server, jwt, "GET", "/container/", { container_serial: plain })).result
      .value.containers[0];
    assert.deepEqual(p.tokens, []);
    assert.equal(p.template, "");

    // deleted after the confirmation
    await page.goto(`${base}/#/containertemplates`);
    await row.waitFor();
    await page.getByRole("button", { name: "Delete template laptop" }).click();
    await page.getByRole("dialog", { name: "Delete template laptop" })
      .getByRole("button", { name: "Delete template laptop" }).click();
    await page.getByTestId("empty-list").waitFor();
    assert.deepEqual(await templates(), []);

    // alice (no container_template_list): no template field, no templates page
    const other = await browser.newContext({ viewport: { width: 1100, height: 900 } });
    const alice = await other.newPage();
    const aliceErrors = watchErrors(alice);
    await login(alice, base, "alice@staff", "alice-Pass-1");
    await alice.getByRole("navigation", { name: "Main" })
      .getByRole("link", { name: "My containers" }).click();
    await alice.getByRole("button", { name: "New container" }).click();
    const hers = alice.getByRole("form", { name: "New container" });
    await hers.getByLabel("Container type").locator("option[value=yubikey]").waitFor({
      state: "attached",
    });
    assert.equal(await hers.getByLabel("Template").count(), 0);
    await alice.goto(`${base}/#/containertemplates`);
    await alice.getByRole("alert").filter({ hasText: "You are not allowed to see this page." })
      .waitFor();
    await other.close();

    assert.deepEqual(problems, []);
    assert.deepEqual([...errors, ...aliceErrors], []);
  },
);
