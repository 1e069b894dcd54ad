/**
 * The token groups page and a token's groups in chromium (headless, playwright-core) against a
 * real `tessera serve`: a group made in the page is what `/tokengroup/` lists, a token is put into
 * it and taken out on its page as `/token/` then lists it, a group with a token is not deleted,
 * an empty one is; an admin without the token group rights has no menu entry, the page refuses
 * and the token page offers no change; axe finds no WCAG A/AA violation.
 *
 * Runs in the SQLite half of the test command only (the UI is engine-blind).
 */
import assert from "node:assert/strict";
import { axe } from "./_axe.ts";
import { addAdmin, login, ok, openPage, settled, uiTest, watchErrors } from "./_browser.ts";

const READER_PASSWORD = "Reader-Pass-1";

uiTest(
  "web UI: token groups are made, given to a token, taken back and deleted; admins without the rights see no entry and may not change a token's groups",
  async ({ server, base, jwt, browser }) => {
    await ok(server, jwt, "POST", "/token/init", { type: "spass", serial: "SPASS001", pin: "1" });
    await ok(server, jwt, "POST", "/tokengroup/other", { description: "another group" });

    const { page, errors } = await openPage(browser);
    await login(page, base, "admin", server.adminPassword);
    await page.getByRole("navigation", { name: "Main" })
      .getByRole("link", { name: "Token groups" }).click();
    await page.getByRole("heading", { level: 1, name: "Token groups" }).waitFor();
    await page.getByRole("cell", { name: "another group" }).waitFor();

    // a new group, as the API then lists it
    await page.getByRole("button", { name: "New token group" }).click();
    const form = page.getByRole("form", { name: "New token group" });
    await form.getByLabel("Identifier").fill("laptops");
    await form.getByLabel("Description").fill("Company laptops");
    await form.getByRole("button", { name: "Save token group" }).click();
    await page.getByRole("cell", { name: "Company laptops" }).waitFor();
    const listed = (await ok(server, jwt, "GET", "/tokengroup/")).result.value;
    assert.equal(listed.laptops.description, "Company laptops");
    assert.deepEqual(Object.keys(listed).sort(), ["laptops", "other"]);
    const problems = await axe(page);

    // the token joins the group on its page
    await page.goto(`${base}/#/tokens/SPASS001`);
    const panel = page.getByRole("region", { name: "Token groups" });
    await panel.getByText("The token is in no group.").waitFor();
    await panel.getByLabel("Group", { exact: true }).selectOption("laptops");
    await panel.getByRole("button", { name: "Add to group" }).click();
    await panel.getByTestId("token-groups").getByText("laptops").waitFor();
    const groupsOf = async () =>
      (await ok(server, jwt, "GET", "/token/", { serial: "SPASS001" })).result.value.tokens[0]
        .tokengroup;
    assert.deepEqual(await groupsOf(), ["laptops"]);
    // the one left to choose is the other group
    assert.deepEqual(
      await panel.getByLabel("Group", { exact: true }).locator("option").allTextContents(),
      [
        "other",
      ],
    );
    problems.push(...await axe(page));

    // a group with a token in it stays
    await page.goto(`${base}/#/tokengroups`);
    await page.getByRole("button", { name: "Delete laptops" }).click();
    await page.getByRole("dialog", { name: "Delete laptops" })
      .getByRole("button", { name: "Delete laptops" }).click();
    await page.getByRole("alert").filter({ hasText: "still has 1 tokens assigned" }).waitFor();
    assert.ok((await ok(server, jwt, "GET", "/tokengroup/")).result.value.laptops);
    // the browser logs the refused request itself; nothing else went wrong
    assert.deepEqual(errors.splice(0), [
      "Failed to load resource: the server responded with a status of 400 (Bad Request)",
    ]);

    // an admin with token rights only: no entry, the page refuses, the token's groups are shown
    await ok(server, jwt, "POST", "/policy/superadmin", {
      scope: "admin",
      action: "*",
      adminuser: "admin",
    });
    await ok(server, jwt, "POST", "/policy/tokenreader", {
      scope: "admin",
      action: "tokenlist",
      adminuser: "reader",
    });
    await addAdmin(server, "reader", READER_PASSWORD);
    const readerContext = await browser.newContext({
      viewport: { width: 1100, height: 900 },
      bypassCSP: true,
    });
    const reader = await readerContext.newPage();
    const readerErrors = watchErrors(reader);
    await login(reader, base, "reader", READER_PASSWORD);
    const nav = reader.getByRole("navigation", { name: "Main" });
    await nav.getByRole("link", { name: "Tokens" }).waitFor();
    assert.equal(await nav.getByRole("link", { name: "Token groups" }).count(), 0);
    await reader.goto(`${base}/#/tokengroups`);
    await reader.getByRole("alert").filter({ hasText: "You are not allowed to see this page." })
      .waitFor();
    await reader.goto(`${base}/#/tokens/SPASS001`);
    const readerPanel = reader.getByRole("region", { name: "Token groups" });
    await readerPanel.getByTestId("token-groups").getByText("laptops").waitFor();
    await settled(reader);
    assert.equal(await readerPanel.getByRole("button").count(), 0);
    assert.deepEqual(readerErrors, []);
    await readerContext.close();

    // out of the group, then the group is deleted
    await page.goto(`${base}/#/tokens/SPASS001`);
    await panel.getByRole("button", { name: "Remove from laptops" }).click();
    await page.getByRole("dialog", { name: "Remove from laptops" })
      .getByRole("button", { name: "Remove from laptops" }).click();
    await panel.getByText("The token is in no group.").waitFor();
    assert.deepEqual(await groupsOf(), []);
    await page.goto(`${base}/#/tokengroups`);
    await page.getByRole("button", { name: "Delete laptops" }).click();
    await page.getByRole("dialog", { name: "Delete laptops" })
      .getByRole("button", { name: "Delete laptops" }).click();
    await page.getByRole("status").filter({ hasText: "token group laptops deleted" }).waitFor();
    assert.deepEqual(Object.keys((await ok(server, jwt, "GET", "/tokengroup/")).result.value), [
      "other",
    ]);

    assert.deepEqual(problems, []);
    assert.deepEqual(errors, []);
  },
);
