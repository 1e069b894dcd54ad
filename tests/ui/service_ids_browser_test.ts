/**
 * The service IDs page in chromium (headless, playwright-core) against a real `tessera serve`: a
 * service ID made and described in the page is what `/serviceid/` lists, a changed description
 * is stored, deleting removes it; an admin with `serviceid_list` only sees them and may not
 * change them, one without it has no menu entry and the page refuses; axe finds no WCAG A/AA
 * violation.
 *
 * Runs in the SQLite half of the test command only (the UI is engine-blind).
 */
import assert from "node:assert/strict";
import type { BrowserContext, Page } from "playwright-core";
import { axe } from "./_axe.ts";
import { addAdmin, login, ok, openPage, settled, uiTest, watchErrors } from "./_browser.ts";

uiTest(
  "web UI: service IDs are made, described and deleted; a reader may not change them, an admin without serviceid_list has no entry",
  async ({ server, base, jwt, browser }) => {
    const listed = async () => (await ok(server, jwt, "GET", "/serviceid/")).result.value;
    await ok(server, jwt, "POST", "/serviceid/mail", { description: "Mail servers" });

    const { page, errors } = await openPage(browser);
    await login(page, base, "admin", server.adminPassword);
    await page.getByRole("navigation", { name: "Main" })
      .getByRole("link", { name: "Service IDs" }).click();
    await page.getByRole("heading", { level: 1, name: "Service IDs" }).waitFor();
    await page.getByRole("cell", { name: "Mail servers" }).waitFor();

    // a new service ID
    await page.getByRole("button", { name: "New service ID" }).click();
    const form = page.getByRole("form", { name: "New service ID" });
    await form.getByLabel("Identifier").fill("ssh-jump");
    await form.getByLabel("Description").fill("SSH jump hosts");
    await form.getByRole("button", { name: "Save service ID" }).click();
    await page.getByRole("cell", { name: "SSH jump hosts" }).waitFor();
    assert.equal((await listed())["ssh-jump"].description, "SSH jump hosts");
    const problems = await axe(page);

    // its description changed
    await page.getByRole("button", { name: "Edit ssh-jump" }).click();
    const edit = page.getByRole("form", { name: "Edit service ID ssh-jump" });
    assert.equal(await edit.getByLabel("Description").inputValue(), "SSH jump hosts");
    await edit.getByLabel("Description").fill("Jump hosts of the data centre");
    await edit.getByRole("button", { name: "Save service ID" }).click();
    await page.getByRole("cell", { name: "Jump hosts of the data centre" }).waitFor();
    assert.equal((await listed())["ssh-jump"].description, "Jump hosts of the data centre");

    // a reader sees them and has nothing to change them with; a token admin has no entry
    await ok(server, jwt, "POST", "/policy/superadmin", {
      scope: "admin",
      action: "*",
      adminuser: "admin",
    });
    await ok(server, jwt, "POST", "/policy/sidreader", {
      scope: "admin",
      action: "serviceid_list",
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
    await reader.goto(`${base}/#/serviceids`);
    await reader.getByRole("cell", { name: "Mail servers" }).waitFor();
    await settled(reader);
    assert.equal(await reader.getByRole("button", { name: "New service ID" }).count(), 0);
    assert.equal(await reader.getByRole("button", { name: "Delete mail" }).count(), 0);
    await reader.getByRole("button", { name: "Edit mail" }).click();
    await reader.getByRole("form", { name: "Edit service ID mail" }).waitFor();
    assert.equal(await reader.getByRole("button", { name: "Save service ID" }).count(), 0);
    const [tokens, tokensErrors] = await as("tokens", "Tokens-Pass-1");
    const nav = tokens.getByRole("navigation", { name: "Main" });
    await nav.getByRole("link", { name: "Tokens" }).waitFor();
    assert.equal(await nav.getByRole("link", { name: "Service IDs" }).count(), 0);
    await tokens.goto(`${base}/#/serviceids`);
    await tokens.getByRole("alert").filter({ hasText: "You are not allowed to see this page." })
      .waitFor();
    assert.deepEqual([...readerErrors, ...tokensErrors], []);
    for (const c of others) await c.close();

    // deleted after the confirmation
    await page.getByRole("button", { name: "Delete ssh-jump" }).click();
    await page.getByRole("dialog", { name: "Delete ssh-jump" })
      .getByRole("button", { name: "Delete ssh-jump" }).click();
    await page.getByRole("status").filter({ hasText: "service ID ssh-jump deleted" }).waitFor();
    assert.deepEqual(Object.keys(await listed()), ["mail"]);

    assert.deepEqual(problems, []);
    assert.deepEqual(errors, []);
  },
);
