/**
 * A smartphone container's registration with a passphrase and its rollover to a new device, in
 * chromium (headless, playwright-core) against a real `tessera serve`: the admin registers
 * alice's container with a passphrase prompt and answer typed in the page: the QR link carries
 * the prompt, the app double (tests/http/_container_app.ts) is refused without the answer and
 * registers with it; then **Roll over to a new device** (`container_rollover`), with the owner's
 * password as passphrase, shows a new QR code, a second app double registers from it with
 * alice's password (not without it, not with a wrong one), and the page shows the move; each step read
 * back over the API. Alice (`container_register`, no `container_rollover`) is offered no
 * rollover. No WCAG violation (axe).
 *
 * Runs in the SQLite half of the test command only (the UI is engine-blind).
 */
import assert from "node:assert/strict";
import { ContainerApp } from "../http/_container_app.ts";
import { axe } from "./_axe.ts";
import { login, ok, openPage, peopleRealms, uiTest, watchErrors } from "./_browser.ts";

uiTest(
  "web UI: a smartphone container is registered with a passphrase and rolled over to a new device from its page; without container_rollover no rollover is offered",
  async ({ server, base, jwt, browser }) => {
    await peopleRealms(server, jwt, { users: { alice: "alice-Pass-1" } });
    await ok(server, jwt, "POST", "/policy/phones", {
      scope: "container",
      action: `privacyIDEA_server_url=${base}/`,
    });
    await ok(server, jwt, "POST", "/policy/alicecontainers", {
      scope: "user",
      action: "container_list, container_register",
      realm: "staff",
    });
    const serial = (await ok(server, jwt, "POST", "/container/init", {
      type: "smartphone",
      user: "alice",
      realm: "staff",
    })).result.value.container_serial;
    // deno-lint-ignore no-explicit-any
    const info = async (): Promise<Record<string, any>> =>
      (await ok(server, jwt, "GET", "/container/", { container_serial: serial })).result.value
        .containers[0].info;

    const { page, errors } = await openPage(browser);
    await login(page, base, "admin", server.adminPassword);
    await page.goto(`${base}/#/containers/${serial}`);
    const phone = page.getByRole("region", { name: "Smartphone" });
    const state = phone.getByTestId("registration-state");
    await state.filter({ hasText: "No smartphone is registered" }).waitFor();

    // registered with a passphrase: the prompt is in the link, the answer is needed
    const register = phone.getByRole("form", { name: `Registration of container ${serial}` });
    await register.getByLabel("Passphrase prompt").fill("Enter the code of your letter");
    await register.getByLabel("Passphrase", { exact: true }).fill("Letter-123");
    const problems = await axe(page, "registration form");
    await register.getByRole("button", { name: "Register smartphone" }).click();
    const link = phone.getByTestId("container-url");
    await link.waitFor();
    const url = (await link.textContent())!;
    assert.ok(url.includes("&passphrase=Enter%20the%20code%20of%20your%20letter&"), url);
    await state.filter({ hasText: "client_wait" }).waitFor();
    // the fields are empty again for the next registration
    assert.equal(await register.getByLabel("Passphrase", { exact: true }).inputValue(), "");
    assert.equal(await register.getByLabel("Passphrase prompt").inputValue(), "");
    const old = new ContainerApp(() => Date.now());
    old.scan(url);
    assert.equal((await old.finalize({ brand: "XY", model: "OLD1" })).status, 400);
    assert.equal((await info()).registration_state, "client_wait");
    const fin = await old.finalize({ brand: "XY", model: "OLD1", passphrase: "Letter-123" });
    assert.equal(fin.status, 200, JSON.stringify(fin.body));
    await phone.getByRole("button", { name: "Refresh the registration state" }).click();
    await state.filter({ hasText: "The smartphone is registered (XY OLD1)" }).waitFor();

    // rolled over with the owner's password as passphrase: a new QR code; the new device
    // registers from it when given alice's password
    const rollover = phone.getByRole("form", { name: `Rollover of container ${serial}` });
    await rollover.getByLabel("The owner's password is the passphrase").check();
    assert.equal(await rollover.getByLabel("Passphrase", { exact: true }).isDisabled(), true);
    await rollover.getByRole("button", { name: "Roll over to a new device" }).click();
    await state.filter({ hasText: "registration state rollover)" }).waitFor();
    await link.waitFor();
    const newUrl = (await link.textContent())!;
    assert.notEqual(newUrl, url);
    assert.ok(newUrl.startsWith(`pia://container/${serial}?`), newUrl);
    assert.equal((await info()).registration_state, "rollover");
    problems.push(...await axe(page, "rollover QR code"));
    assert.ok(
      newUrl.includes(
        "&passphrase=Please%20enter%20the%20passphrase%20of%20your%20user%20store.&send_passphrase=True",
      ),
      newUrl,
    );
    const fresh = new ContainerApp(() => Date.now());
    fresh.scan(newUrl);
    assert.equal((await fresh.finalize({ brand: "XY", model: "NEW2" })).status, 400);
    assert.equal(
      (await fresh.finalize({ brand: "XY", model: "NEW2", passphrase: "wrong-Pass-1" })).status,
      400,
    );
    assert.equal((await info()).registration_state, "rollover");
    const moved = await fresh.finalize({ brand: "XY", model: "NEW2", passphrase: "alice-Pass-1" });
    assert.equal(moved.status, 200, JSON.stringify(moved.body));
    await phone.getByRole("button", { name: "Refresh the registration state" }).click();
    await state.filter({ hasText: "moved to a new device (XY NEW2)" }).waitFor();
    assert.equal(await link.count(), 0);
    assert.equal((await info()).registration_state, "rollover_completed");
    // the new device synchronises; the container is registered on it
    assert.equal((await fresh.synchronize()).status, 200);
    assert.equal((await info()).registration_state, "registered");
    await page.reload();
    await state.filter({ hasText: "The smartphone is registered (XY NEW2)" }).waitFor();

    // alice may register, not roll over: her registered container offers no form
    const other = await browser.newContext({ viewport: { width: 1100, height: 900 } });
    const alice = await other.newPage();
    const aliceErrors = watchErrors(alice);
    await login(alice, base, "alice@staff", "alice-Pass-1");
    await alice.goto(`${base}/#/containers/${serial}`);
    const hers = alice.getByRole("region", { name: "Smartphone" });
    await hers.getByTestId("registration-state")
      .filter({ hasText: "The smartphone is registered (XY NEW2)" }).waitFor();
    assert.equal(await hers.getByRole("form").count(), 0);
    assert.equal(await hers.getByRole("button").count(), 0);
    await other.close();

    assert.deepEqual(problems, []);
    assert.deepEqual([...errors, ...aliceErrors], []);
  },
);
