/**
 * The containers pages in chromium (headless, playwright-core) against a real `tessera serve`: a
 * container made in the page for a user is what `/container/` lists, a token is added by serial
 * and taken out again, the owner is unassigned and assigned, the description and states are
 * changed, and the container is deleted after the confirmation, each read back over the API; the
 * list pages (`token_page_size`) and searches; a wrong serial shows the server's message and
 * changes nothing; an admin with `container_list` only sees the containers and is offered no
 * change, one without it has no menu entry and the page refuses; axe finds no WCAG A/AA
 * violation, the delete dialog keeps the keyboard, and the list and a container's page do not
 * scroll sideways at 390 px.
 *
 * Runs in the SQLite half of the test command only (the UI is engine-blind).
 */
import assert from "node:assert/strict";
import type { BrowserContext, Page } from "playwright-core";
import { axe } from "./_axe.ts";
import {
  addAdmin,
  login,
  ok,
  openPage,
  peopleRealms,
  settled,
  uiTest,
  watchErrors,
} from "./_browser.ts";

async function sideways(page: Page): Promise<number> {
  return await page.evaluate(
    "document.documentElement.scrollWidth - document.documentElement.clientWidth",
  ) as number;
}

uiTest(
  "web UI: a container is made for a user, given a token, changed, emptied and deleted as /container/ then lists it; a reader may not change it, an admin without container_list has no entry",
  async ({ server, base, jwt, browser }) => {
    await peopleRealms(server, jwt, { users: { alice: "Alice-Pass-1" } });
    await ok(server, jwt, "POST", "/token/init", { type: "spass", serial: "SPASS001", pin: "1" });
    const containers = async () =>
      (await ok(server, jwt, "GET", "/container/")).result.value.containers;
    const containerOf = async () =>
      (await ok(server, jwt, "GET", "/token/", { serial: "SPASS001" })).result.value.tokens[0]
        .container_serial;

    // one container a page, so two make a second page
    await ok(server, jwt, "POST", "/policy/paging", {
      scope: "webui",
      action: "token_page_size=1",
    });
    const { page, errors } = await openPage(browser);
    await login(page, base, "admin", server.adminPassword);
    await page.getByRole("navigation", { name: "Main" })
      .getByRole("link", { name: "Containers", exact: true }).click();
    await page.getByRole("heading", { level: 1, name: "Containers" }).waitFor();
    await page.getByTestId("empty-list").filter({ hasText: "There is no container yet." })
      .waitFor();

    // a new container for alice: its page opens, the API lists it as made
    await page.getByRole("button", { name: "New container" }).click();
    const form = page.getByRole("form", { name: "New container" });
    const typeValues: string[] = [];
    for (const o of await form.getByLabel("Container type").locator("option").all()) {
      typeValues.push((await o.getAttribute("value"))!);
    }
    assert.deepEqual(typeValues, ["generic", "smartphone", "yubikey"]);
    await form.getByLabel("Container type").selectOption("generic");
    await form.getByLabel("Description").fill("Alice's laptop");
    await form.getByLabel("User").fill("alice");
    await form.getByLabel("Realm").fill("staff");
    await form.getByRole("button", { name: "Create container" }).click();
    const heading = page.getByRole("heading", { level: 1, name: /^Container CONT/ });
    await heading.waitFor();
    const serial = (await heading.textContent())!.replace("Container ", "");
    let listed = await containers();
    assert.equal(listed.length, 1);
    assert.equal(listed[0].serial, serial);
    assert.equal(listed[0].type, "generic");
    assert.equal(listed[0].description, "Alice's laptop");
    assert.deepEqual(listed[0].realms, ["staff"]);
    assert.equal(listed[0].users[0].user_name, "alice");
    await page.getByTestId("container-owner").filter({ hasText: "alice@staff" }).waitFor();

    // a token added by its serial; an unknown serial is refused with the server's message
    const tokens = page.getByRole("region", { name: "Tokens" });
    await tokens.getByText("The container holds no token.").waitFor();
    await tokens.getByLabel("Token serial").fill("NOSUCH1");
    await tokens.getByRole("button", { name: "Add token" }).click();
    await tokens.getByRole("alert").waitFor();
    assert.equal((await containers())[0].tokens.length, 0);
    assert.equal(errors.filter((e) => !e.startsWith("Failed to load resource")).length, 0);
    errors.length = 0; // the browser logs the refused request itself
    await tokens.getByLabel("Token serial").fill("SPASS001");
    await tokens.getByRole("button", { name: "Add token" }).click();
    await tokens.getByTestId("container-tokens").getByRole("link", { name: "SPASS001" }).waitFor();
    assert.equal(await containerOf(), serial);
    const problems = await axe(page, "container page");

    // the list shows it with its owner, realm, state and one token
    await page.goto(`${base}/#/containers`);
    const row = page.getByRole("row").filter({ hasText: serial });
    await row.waitFor();
    assert.deepEqual(
      (await row.getByRole("cell").allTextContents()).map((s) => s.trim()),
      [serial, "generic", "Alice's laptop", "alice@staff", "staff", "active", "1"],
    );
    problems.push(...await axe(page, "container list"));
    // a second container: one a page, the pager leads to it
    const spare = (await ok(server, jwt, "POST", "/container/init", { type: "generic" })).result
      .value.container_serial;
    await page.reload();
    const pager = page.getByRole("navigation", { name: "Pages" });
    await pager.getByText("Page 1 of 2 (2 in all)").waitFor();
    const rowSerials = async () =>
      (await page.locator("tbody tr td:first-child").allTextContents()).map((s) => s.trim());
    const first = await rowSerials();
    assert.equal(first.length, 1);
    const other = first[0] === serial ? spare : serial;
    await pager.getByRole("button", { name: "Next page" }).click();
    await pager.getByText("Page 2 of 2 (2 in all)").waitFor();
    // the pager moves before the page's rows arrive: wait for the other container's row
    await page.getByRole("row").filter({ hasText: other }).waitFor();
    await settled(page);
    const second = await rowSerials();
    assert.deepEqual([...first, ...second].sort(), [serial, spare].sort());
    await ok(server, jwt, "DELETE", `/container/${spare}`);
    // the search narrows the list
    await page.getByRole("form", { name: "Search containers" }).getByLabel("Serial").fill("XYZ");
    await page.getByTestId("empty-list").filter({ hasText: "No container matches the search." })
      .waitFor();
    await page.goto(`${base}/#/containers/${serial}`);

    // description and states changed
    const desc = page.getByRole("region", { name: "Description" });
    await desc.getByLabel("Description", { exact: true }).fill("Alice's old laptop");
    await desc.getByRole("button", { name: "Save description" }).click();
    await page.getByTestId("container-description").filter({ hasText: "Alice's old laptop" })
      .waitFor();
    const states = page.getByRole("region", { name: "States" });
    await states.getByLabel("disabled").check();
    await states.getByLabel("lost").check();
    // choosing disabled clears active: they exclude each other
    assert.equal(await states.getByLabel("active").isChecked(), false);
    await states.getByRole("button", { name: "Save states" }).click();
    await page.getByTestId("container-states").filter({ hasText: "disabled, lost" }).waitFor();
    listed = await containers();
    assert.equal(listed[0].description, "Alice's old laptop");
    assert.deepEqual([...listed[0].states].sort(), ["disabled", "lost"]);

    // a reader sees the container and is offered nothing; a token admin has no entry
    await ok(server, jwt, "POST", "/policy/superadmin", {
      scope: "admin",
      action: "*",
      adminuser: "admin",
    });
    await ok(server, jwt, "POST", "/policy/containerreader", {
      scope: "admin",
      action: "container_list",
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
    await reader.goto(`${base}/#/containers`);
    await reader.getByRole("link", { name: serial }).click();
    await reader.getByTestId("container-owner").filter({ hasText: "alice@staff" }).waitFor();
    await settled(reader);
    assert.equal(await reader.getByRole("main").getByRole("button").count(), 0);
    assert.equal(await reader.getByRole("main").getByRole("form").count(), 0);
    const [tokenAdmin, tokenAdminErrors] = await as("tokens", "Tokens-Pass-1");
    const nav = tokenAdmin.getByRole("navigation", { name: "Main" });
    await nav.getByRole("link", { name: "Tokens" }).waitFor();
    assert.equal(await nav.getByRole("link", { name: "Containers" }).count(), 0);
    await tokenAdmin.goto(`${base}/#/containers`);
    await tokenAdmin.getByRole("alert").filter({ hasText: "You are not allowed to see this page." })
      .waitFor();
    assert.deepEqual([...readerErrors, ...tokenAdminErrors], []);
    for (const c of others) await c.close();

    // the token taken out, the owner unassigned
    await tokens.getByRole("button", { name: "Remove SPASS001" }).click();
    await page.getByRole("dialog", { name: "Remove SPASS001" })
      .getByRole("button", { name: "Remove SPASS001" }).click();
    await tokens.getByText("The container holds no token.").waitFor();
    assert.equal(await containerOf(), "");
    const owner = page.getByRole("region", { name: "Owner" });
    await owner.getByRole("button", { name: "Unassign alice@staff" }).click();
    await page.getByRole("dialog", { name: "Unassign alice@staff" })
      .getByRole("button", { name: "Unassign alice@staff" }).click();
    await page.getByTestId("container-owner").filter({ hasText: "none" }).waitFor();
    assert.deepEqual((await containers())[0].users, []);
    // and assigned again through the form
    await owner.getByLabel("User").fill("alice");
    await owner.getByLabel("Realm").fill("staff");
    await owner.getByRole("button", { name: "Assign" }).click();
    await page.getByTestId("container-owner").filter({ hasText: "alice@staff" }).waitFor();
    assert.equal((await containers())[0].users[0].user_name, "alice");

    // at 390 px neither the list nor the container's page scrolls sideways
    await page.setViewportSize({ width: 390, height: 844 });
    await settled(page);
    assert.equal(await sideways(page), 0, "the container's page at 390 px");
    problems.push(...await axe(page, "container page at 390 px"));
    await page.goto(`${base}/#/containers`);
    await page.getByRole("link", { name: serial }).waitFor();
    assert.equal(await sideways(page), 0, "the list at 390 px");
    await page.goto(`${base}/#/containers/${serial}`);
    await page.setViewportSize({ width: 1100, height: 900 });

    // deleted after the confirmation, whose dialog keeps the keyboard; the token stays
    const name = `Delete container ${serial}`;
    await page.getByRole("button", { name }).click();
    const dialog = page.getByRole("dialog", { name });
    await dialog.waitFor();
    for (const key of ["Tab", "Tab", "Tab", "Shift+Tab", "Shift+Tab", "Tab"]) {
      await page.keyboard.press(key);
      const inside = await page.evaluate(
        "!!document.activeElement && !!document.activeElement.closest('dialog[open]')",
      );
      assert.ok(inside, `after ${key} the focus left the dialog`);
    }
    problems.push(...await axe(page, "delete dialog"));
    await dialog.getByRole("button", { name }).click();
    await page.getByRole("heading", { level: 1, name: "Containers" }).waitFor();
    await page.getByText("There is no container yet.").waitFor();
    assert.deepEqual(await containers(), []);
    assert.equal(
      (await ok(server, jwt, "GET", "/token/", { serial: "SPASS001" })).result.value.count,
      1,
    );

    assert.deepEqual(problems, []);
    assert.deepEqual(errors, []);
  },
);
