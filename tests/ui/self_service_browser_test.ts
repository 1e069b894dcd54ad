/**
 * A user's self-service in chromium (headless, playwright-core, a real `tessera serve`): the
 * pages, token actions and forms are exactly those the user's policies allow (the rights list of
 * /auth), each allowed one works through the API, and a forbidden one is neither offered nor
 * reachable by its address.
 *
 * Runs in the SQLite half of the test command only (the UI is engine-blind).
 */
import assert from "node:assert/strict";
import { axe } from "./_axe.ts";
import { call, login, ok, openPage, peopleRealms, settled, uiTest } from "./_browser.ts";

const KEY = "3132333435363738393031323334353637383930";
const HOTP = ["755224", "287082", "359152", "969429"];
const ALICE_PASSWORD = "Alice-Pass-1";

uiTest(
  "web UI: a user's self-service shows exactly what their policies allow, and each allowed action works",
  async ({ server, base, jwt, browser }) => {
    await peopleRealms(server, jwt, {
      users: { alice: { password: ALICE_PASSWORD, email: "alice@example.com" } },
    });
    await ok(server, jwt, "POST", "/token/init", {
      type: "hotp",
      serial: "ALICE1",
      otpkey: KEY,
      user: "alice",
      realm: "staff",
    });
    await ok(server, jwt, "POST", "/token/init", {
      type: "spass",
      serial: "SPARE1",
      pin: "1",
      user: "alice",
      realm: "staff",
    });
    await ok(server, jwt, "POST", "/policy/self", {
      scope: "user",
      action: "enrollHOTP, disable, setpin, auditlog",
      realm: "staff",
    });

    const { page, errors } = await openPage(browser, { width: 1280, height: 900 });
    await login(page, base, "alice@staff", ALICE_PASSWORD);
    await page.getByRole("heading", { level: 1, name: "My tokens" }).waitFor();
    await settled(page);
    const nav = page.getByRole("navigation", { name: "Main" });
    assert.deepEqual(await nav.getByRole("link").allInnerTexts(), ["My tokens", "My audit log"]);

    // the token: the allowed actions; the forbidden buttons disabled (privacyIDEA's default)
    const token = page.getByRole("article", { name: "Token ALICE1" });
    assert.equal(await token.getByRole("button", { name: "Disable" }).isEnabled(), true);
    for (const b of ["Delete", "Revoke", "Reset fail counter"]) {
      assert.equal(await token.getByRole("button", { name: b }).isDisabled(), true, b);
    }
    // the forbidden forms and actions are not offered at all
    assert.equal(await token.getByRole("form", { name: "Set PIN of ALICE1" }).count(), 1);
    for (const f of ["Resynchronise ALICE1", "Description of ALICE1"]) {
      assert.equal(await token.getByRole("form", { name: f }).count(), 0, f);
    }
    for (const b of ["Unassign", "Set a random PIN", "Lost token"]) {
      assert.equal(await token.getByRole("button", { name: b }).count(), 0, b);
    }
    assert.deepEqual(await axe(page, "", { seriousOnly: true }), []);
    // the enrolment offers the one allowed type
    await page.getByRole("button", { name: "Enrol a new token" }).click();
    const enrol = page.getByRole("form", { name: "Enrol a token" });
    await settled(page);
    assert.deepEqual(
      await enrol.getByLabel("Token type").locator("option").evaluateAll((os) =>
        os.map((o) => (o as unknown as { value: string }).value)
      ),
      ["hotp"],
    );
    await page.getByRole("button", { name: "Close enrolment" }).click();

    // set PIN and disable work
    await token.getByLabel("New PIN").fill("4711");
    await token.getByRole("button", { name: "Set PIN" }).click();
    await token.getByRole("status").filter({ hasText: "PIN set" }).waitFor();
    const check = await call(base, "POST", "/validate/check", {
      user: "alice",
      realm: "staff",
      pass: `4711${HOTP[0]}`,
    });
    assert.equal(check.result.value, true, JSON.stringify(check));

    // the audit log: the rows about alice only
    await nav.getByRole("link", { name: "My audit log" }).click();
    await page.getByRole("heading", { level: 1, name: "My audit log" }).waitFor();
    await settled(page);
    const users = await page.locator('td[data-label="user"]').allInnerTexts();
    assert.ok(users.length > 0);
    assert.ok(users.every((u) => u === "alice"), JSON.stringify(users));
    assert.deepEqual(await axe(page, "", { seriousOnly: true }), []);
    // a page the policies do not allow is refused by its address too
    await page.goto(`${base}/#/details`);
    await page.getByRole("alert").filter({ hasText: "not allowed" }).waitFor();

    // other policies: details and a random PIN, unassigning; hide_buttons hides the forbidden
    await ok(server, jwt, "POST", "/policy/self", {
      scope: "user",
      action: "userlist, updateuser, setrandompin, otp_pin_set_random=8, unassign",
      realm: "staff",
    });
    await ok(server, jwt, "POST", "/policy/ui", { scope: "webui", action: "hide_buttons" });
    await page.getByRole("button", { name: "Log out" }).click();
    await login(page, base, "alice@staff", ALICE_PASSWORD);
    await page.getByRole("heading", { level: 1, name: "My tokens" }).waitFor();
    await settled(page);
    assert.deepEqual(await nav.getByRole("link").allInnerTexts(), ["My tokens", "My details"]);
    assert.equal(await page.getByRole("button", { name: "Enrol a new token" }).count(), 0);
    const alice1 = page.getByRole("article", { name: "Token ALICE1" });
    for (const b of ["Disable", "Delete", "Revoke", "Reset fail counter"]) {
      assert.equal(await alice1.getByRole("button", { name: b }).count(), 0, b);
    }
    assert.equal(await alice1.getByRole("form", { name: "Set PIN of ALICE1" }).count(), 0);
    // a random PIN, shown once, works with the next OTP
    await alice1.getByRole("button", { name: "Set a random PIN" }).click();
    const pin = await alice1.getByTestId("random-pin").innerText();
    assert.ok(pin.length > 0);
    const withPin = await call(base, "POST", "/validate/check", {
      user: "alice",
      realm: "staff",
      pass: `${pin}${HOTP[1]}`,
    });
    assert.equal(withPin.result.value, true, JSON.stringify(withPin));
    // unassign the second token
    const spareArticle = page.getByRole("article", { name: "Token SPARE1" });
    await spareArticle.getByRole("button", { name: "Unassign" }).click();
    await page.getByRole("dialog").getByRole("button", { name: "Unassign" }).click();
    await spareArticle.waitFor({ state: "detached" });
    assert.equal(
      (await ok(server, jwt, "GET", "/token/", { serial: "SPARE1" })).result.value.tokens[0]
        .username,
      "",
    );
    assert.deepEqual(await axe(page, "", { seriousOnly: true }), []);

    // my details: read, changed, the new password logs in
    await nav.getByRole("link", { name: "My details" }).click();
    await page.getByRole("heading", { level: 1, name: "My details" }).waitFor();
    await settled(page);
    const details = page.getByRole("form", { name: "My details" });
    assert.equal(await details.getByLabel("Email").inputValue(), "alice@example.com");
    await details.getByLabel("Email").fill("alice@example.org");
    await details.getByLabel("New password").fill("Alice-Pass-2");
    await details.getByRole("button", { name: "Save my details" }).click();
    await details.getByRole("status").filter({ hasText: "Your details are saved" }).waitFor();
    const stored = await ok(server, jwt, "GET", "/user/", { realm: "staff", username: "alice" });
    assert.equal(stored.result.value[0].email, "alice@example.org");
    const relogin = await call(base, "POST", "/auth", {
      username: "alice@staff",
      password: "Alice-Pass-2",
    });
    assert.equal(relogin.result.status, true, JSON.stringify(relogin));
    assert.deepEqual(await axe(page, "", { seriousOnly: true }), []);
    // the audit log is no longer theirs to read
    await page.goto(`${base}/#/audit`);
    await page.getByRole("alert").filter({ hasText: "not allowed" }).waitFor();
    assert.deepEqual(errors, []);
  },
);
