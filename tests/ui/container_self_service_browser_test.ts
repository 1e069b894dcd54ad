/**
 * A user's containers in chromium (headless, playwright-core) against a real `tessera serve`: a
 * user with the container rights makes a smartphone container in "My containers", adds their
 * token, sets its description and registers it: the page shows the QR code and the `pia://` link,
 * the app double (tests/http/_container_app.ts) completes the registration from that link over
 * HTTP, and the page then shows the smartphone registered; unregistered after the confirmation,
 * the app is refused; each step is read back over the API.
 * A user with `container_list` only sees their own container and is offered no button or form,
 * and another user's container is not shown. No WCAG violation (axe), the registration button
 * is reached and pressed with the keyboard, and the pages do not scroll sideways at 390 px.
 *
 * Runs in the SQLite half of the test command only (the UI is engine-blind).
 */
import assert from "node:assert/strict";
import type { Page } from "playwright-core";
import { ContainerApp } from "../http/_container_app.ts";
import { axe } from "./_axe.ts";
import { login, ok, openPage, peopleRealms, settled, uiTest, watchErrors } from "./_browser.ts";

const KEY = "3132333435363738393031323334353637383930";

async function sideways(page: Page): Promise<number> {
  return await page.evaluate(
    "document.documentElement.scrollWidth - document.documentElement.clientWidth",
  ) as number;
}

uiTest(
  "web UI: a user makes a smartphone container in My containers, adds a token, and registers it with the app from the QR link; a user with container_list only is offered nothing",
  async ({ server, base, jwt, browser }) => {
    await peopleRealms(server, jwt, { users: { alice: "alice-Pass-1", bob: "bob-Pass-1" } });
    await ok(server, jwt, "POST", "/token/init", {
      type: "hotp",
      serial: "ALICE1",
      otpkey: KEY,
      user: "alice",
      realm: "staff",
    });
    await ok(server, jwt, "POST", "/policy/alicecontainers", {
      scope: "user",
      action: "container_list, container_create, container_add_token, " +
        "container_remove_token, container_description, container_register, " +
        "container_unregister",
      user: "alice",
      realm: "staff",
    });
    await ok(server, jwt, "POST", "/policy/bobcontainers", {
      scope: "user",
      action: "container_list",
      user: "bob",
      realm: "staff",
    });
    await ok(server, jwt, "POST", "/policy/phones", {
      scope: "container",
      action: `privacyIDEA_server_url=${base}/`,
    });
    const containers = async () =>
      (await ok(server, jwt, "GET", "/container/")).result.value.containers;
    // deno-lint-ignore no-explicit-any
    const containerOf = async (serial: string): Promise<any> =>
      // deno-lint-ignore no-explicit-any
      (await containers()).find((c: any) => c.serial === serial);

    const { page, errors } = await openPage(browser);
    await login(page, base, "alice@staff", "alice-Pass-1");
    await page.getByRole("navigation", { name: "Main" })
      .getByRole("link", { name: "My containers" }).click();
    await page.getByRole("heading", { level: 1, name: "My containers" }).waitFor();
    await page.getByTestId("empty-list").filter({ hasText: "There is no container yet." })
      .waitFor();

    // a new smartphone container: the user's form has no owner or realm; the container is hers
    await page.getByRole("button", { name: "New container" }).click();
    const form = page.getByRole("form", { name: "New container" });
    assert.equal(await form.getByLabel("User").count(), 0);
    assert.equal(await form.getByLabel("Realm").count(), 0);
    await form.getByLabel("Container type").selectOption("smartphone");
    await form.getByLabel("Description").fill("Alice's phone");
    await form.getByRole("button", { name: "Create container" }).click();
    const heading = page.getByRole("heading", { level: 1, name: /^Container SMPH/ });
    await heading.waitFor();
    const serial = (await heading.textContent())!.replace("Container ", "");
    let c = await containerOf(serial);
    assert.equal(c.type, "smartphone");
    assert.equal(c.description, "Alice's phone");
    assert.equal(c.users[0].user_name, "alice");
    assert.equal(c.users[0].user_realm, "staff");
    // her own: no owner panel, no link to the admin's token page
    assert.equal(await page.getByRole("region", { name: "Owner" }).count(), 0);

    // her token added by its serial
    const tokens = page.getByRole("region", { name: "Tokens" });
    await tokens.getByLabel("Token serial").fill("ALICE1");
    await tokens.getByRole("button", { name: "Add token" }).click();
    await tokens.getByRole("cell", { name: "ALICE1", exact: true }).waitFor();
    assert.equal(await tokens.getByRole("link", { name: "ALICE1" }).count(), 0);
    assert.deepEqual(
      // deno-lint-ignore no-explicit-any
      (await containerOf(serial)).tokens.map((t: any) => t.serial),
      ["ALICE1"],
    );

    // the description changed
    const described = page.getByRole("region", { name: "Description" });
    await described.getByRole("textbox", { name: "Description" }).fill("Work phone");
    await described.getByRole("button", { name: "Save description" }).click();
    await page.getByTestId("container-description").filter({ hasText: "Work phone" }).waitFor();
    assert.equal((await containerOf(serial)).description, "Work phone");

    // the registration, started with the keyboard: the QR code and the pia:// link
    const phone = page.getByRole("region", { name: "Smartphone" });
    await phone.getByTestId("registration-state")
      .filter({ hasText: "No smartphone is registered for this container." }).waitFor();
    const problems = await axe(page, "my container");
    await page.getByRole("link", { name: "Back to my containers" }).focus();
    let reached = false;
    for (let i = 0; i < 40 && !reached; i++) {
      await page.keyboard.press("Tab");
      reached = await page.evaluate(
        "document.activeElement?.textContent === 'Register smartphone'",
      ) as boolean;
    }
    assert.ok(reached, "the Register smartphone button is not reached with Tab");
    await page.keyboard.press("Enter");
    const link = phone.getByTestId("container-url");
    await link.waitFor();
    const url = (await link.textContent())!;
    assert.ok(url.startsWith(`pia://container/${serial}?`), url);
    assert.equal(
      await phone.getByRole("link", { name: "Open in the app" }).getAttribute("href"),
      url,
    );
    const qr = phone.locator("img");
    assert.ok((await qr.getAttribute("src"))!.startsWith("data:image/svg+xml;base64,"));
    assert.match((await qr.getAttribute("alt"))!, new RegExp(`^QR code of container ${serial}`));
    await phone.getByTestId("registration-state").filter({ hasText: "client_wait" }).waitFor();
    assert.equal((await containerOf(serial)).info.registration_state, "client_wait");
    problems.push(...await axe(page, "registration QR code"));

    // the app completes the registration from the link on the page; refreshed, it shows
    const app = new ContainerApp(() => Date.now());
    app.scan(url);
    const fin = await app.finalize({ brand: "XY", model: "ABC123" });
    assert.equal(fin.status, 200, JSON.stringify(fin.body));
    await phone.getByRole("button", { name: "Refresh the registration state" }).click();
    await phone.getByTestId("registration-state")
      .filter({ hasText: "The smartphone is registered (XY ABC123)" }).waitFor();
    assert.equal(await phone.locator("img").count(), 0);
    assert.deepEqual(await phone.getByRole("button").allInnerTexts(), ["Unregister smartphone"]);
    c = await containerOf(serial);
    assert.equal(c.info.registration_state, "registered");
    assert.equal(c.info.device, "XY ABC123");
    // the app synchronises and receives her token
    const sync = await app.synchronize();
    assert.equal(sync.status, 200, JSON.stringify(sync.body));
    assert.deepEqual([...app.tokens.keys()], ["ALICE1"]);
    problems.push(...await axe(page, "registered container"));

    // unregistered after the confirmation: the app is refused, the token stays in the container
    await phone.getByRole("button", { name: "Unregister smartphone" }).click();
    await page.getByRole("dialog", { name: "Unregister smartphone" })
      .getByRole("button", { name: "Unregister smartphone" }).click();
    await phone.getByTestId("registration-state")
      .filter({ hasText: "No smartphone is registered for this container." }).waitFor();
    c = await containerOf(serial);
    assert.equal(c.info.registration_state, undefined);
    // deno-lint-ignore no-explicit-any
    assert.deepEqual(c.tokens.map((t: any) => t.serial), ["ALICE1"]);
    assert.notEqual((await app.synchronize()).status, 200);
    await phone.getByRole("button", { name: "Register smartphone" }).waitFor();

    // at 390 px neither the container's page nor the list scrolls sideways
    await page.setViewportSize({ width: 390, height: 844 });
    await settled(page);
    assert.equal(await sideways(page), 0, "the container's page at 390 px");
    await page.goto(`${base}/#/containers`);
    await page.getByRole("link", { name: serial }).waitFor();
    assert.equal(await sideways(page), 0, "the list at 390 px");
    problems.push(...await axe(page, "my containers at 390 px"));

    // bob (container_list only): his own container, shown without any button or form
    const bobs = (await ok(server, jwt, "POST", "/container/init", {
      type: "smartphone",
      user: "bob",
      realm: "staff",
    })).result.value.container_serial;
    const other = await browser.newContext({ viewport: { width: 1100, height: 900 } });
    const bobPage = await other.newPage();
    const bobErrors = watchErrors(bobPage);
    await login(bobPage, base, "bob@staff", "bob-Pass-1");
    await bobPage.getByRole("navigation", { name: "Main" })
      .getByRole("link", { name: "My containers" }).click();
    await bobPage.getByRole("heading", { level: 1, name: "My containers" }).waitFor();
    await bobPage.getByRole("link", { name: bobs }).waitFor();
    assert.equal(await bobPage.getByRole("link", { name: serial }).count(), 0);
    assert.equal(await bobPage.getByRole("button", { name: "New container" }).count(), 0);
    await bobPage.getByRole("link", { name: bobs }).click();
    await bobPage.getByRole("region", { name: "Smartphone" }).getByTestId("registration-state")
      .filter({ hasText: "No smartphone is registered" }).waitFor();
    await settled(bobPage);
    assert.equal(await bobPage.getByRole("main").getByRole("button").count(), 0);
    assert.equal(await bobPage.getByRole("main").getByRole("form").count(), 0);
    // alice's container is not his: not found
    await bobPage.goto(`${base}/#/containers/${serial}`);
    await bobPage.getByRole("alert").filter({ hasText: "The container could not be found." })
      .waitFor();
    assert.equal((await containerOf(bobs)).info.registration_state, undefined);
    await other.close();

    assert.deepEqual(problems, []);
    assert.deepEqual([...errors, ...bobErrors], []);
  },
);
