/**
 * The web interface in a real browser: Debian's chromium, headless, driven by
 * playwright-core against a real `tessera serve` (SQLite, free port). It goes
 * through the flows as a person would, addressing every control by its role
 * and accessible name: the admin logs in, creates a resolver, a realm and a
 * user, enrols a token for the user and the QR code's otpauth URL
 * authenticates at /validate/check; the user logs in, enrols their own TOTP
 * (confirmed with its first OTP), sets its PIN and authenticates with it.
 * Also: every admin page loads without console errors, the first load stays
 * under 200 KB on the wire, actions the caller has no right to are not
 * offered, a failed call shows the API's message, and the session ends with
 * its JWT. Screenshots of the main pages go to a temporary folder.
 *
 * Runs in the SQLite half of the test command only (the UI is engine-blind).
 */
import assert from "node:assert/strict";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { type HOTP, type TOTP, URI } from "otpauth";
import { TEST_ENGINE } from "../test_db.ts";
import { call, launchChromium, login, settled, startTessera, watchErrors } from "./_browser.ts";

const ROOT = new URL("../..", import.meta.url).pathname;
const FIRST_LOAD_LIMIT = 200 * 1024;
const ALICE_PASSWORD = "Alice-Pass-1";
const HELPDESK_PASSWORD = "Helpdesk-Pass-1";

Deno.test({
  name: "web UI in chromium: admin and user flows, rights, errors, first-load size",
  ignore: TEST_ENGINE !== "sqlite",
  sanitizeResources: false,
  sanitizeOps: false,
}, async (t) => {
  const server = await startTessera();
  const shots = await Deno.makeTempDir({ prefix: "tessera-ui-screenshots-" });
  let browser: Browser | undefined;
  const contexts: BrowserContext[] = [];
  const base = server.base;
  const newPage = async () => {
    const ctx = await browser!.newContext({ viewport: { width: 1280, height: 800 } });
    contexts.push(ctx);
    return await ctx.newPage();
  };
  const shot = (page: Page, name: string) =>
    page.screenshot({ path: `${shots}/${name}.png`, fullPage: true });
  try {
    browser = await launchChromium();
    const adminPassword = server.adminPassword;
    const admin = await newPage();
    const adminErrors = watchErrors(admin);

    await t.step("the first load (page, script, style) is under 200 KB on the wire", async () => {
      const cdp = await admin.context().newCDPSession(admin);
      await cdp.send("Network.enable");
      let bytes = 0;
      const encodings: Record<string, string> = {};
      cdp.on("Network.responseReceived", (e) => {
        encodings[new URL(e.response.url).pathname] = e.response.headers["content-encoding"] ?? "";
      });
      cdp.on("Network.loadingFinished", (e) => {
        bytes += e.encodedDataLength;
      });
      await admin.goto(`${base}/`, { waitUntil: "networkidle" });
      await admin.getByRole("button", { name: "Log in" }).waitFor();
      await cdp.detach();
      assert.ok(bytes > 1000 && bytes < FIRST_LOAD_LIMIT, `first load: ${bytes} bytes`);
      assert.equal(encodings["/ui/app.js"], "br");
      console.log(`first load: ${bytes} bytes on the wire (limit ${FIRST_LOAD_LIMIT})`);
      await shot(admin, "01-login");
    });

    await t.step("a wrong password shows the API's message on the login form", async () => {
      await admin.getByLabel("Username").fill("admin");
      await admin.getByLabel("Password").fill("wrong");
      await admin.getByRole("button", { name: "Log in" }).click();
      await admin.getByRole("alert").filter({ hasText: "Wrong credentials" }).waitFor();
      adminErrors.length = 0; // the refused login's 401 is logged by the browser
    });

    await t.step("every admin page loads without console errors", async () => {
      await login(admin, base, "admin", adminPassword);
      const pages = [
        ["Dashboard", "Dashboard"],
        ["Tokens", "Tokens"],
        ["Token groups", "Token groups"],
        ["Containers", "Containers"],
        ["Users", "Users"],
        ["Resolvers", "Resolvers"],
        ["Realms", "Realms"],
        ["Policies", "Policies"],
        ["Events", "Event handlers"],
        ["Machines", "Machines"],
        ["Service IDs", "Service IDs"],
        ["CA connectors", "CA connectors"],
        ["RADIUS servers", "RADIUS servers"],
        ["SMTP servers", "SMTP servers"],
        ["SMS gateways", "SMS gateways"],
        ["privacyIDEA servers", "privacyIDEA servers"],
        ["Periodic tasks", "Periodic tasks"],
        ["Statistics", "Statistics"],
        ["Subscriptions", "Subscriptions"],
        ["Audit log", "Audit log"],
        ["System", "System settings"],
      ];
      const nav = admin.getByRole("navigation", { name: "Main" });
      for (const [link, heading] of pages) {
        await nav.getByRole("link", { name: link, exact: true }).click();
        await admin.getByRole("heading", { level: 1, name: heading }).waitFor();
        await settled(admin);
        await shot(admin, `02-${link.toLowerCase().replaceAll(" ", "-")}`);
      }
      for (
        const [hash, heading] of [
          ["#/enroll", "Enrol a token"],
          ["#/import", "Import tokens"],
          ["#/policies/new", "New policy"],
          ["#/events/new", "New event handler"],
        ]
      ) {
        await admin.goto(`${base}/${hash}`);
        await admin.getByRole("heading", { level: 1, name: heading }).waitFor();
        await settled(admin);
      }
      assert.deepEqual(adminErrors, []);
    });

    await t.step("the admin creates a resolver and a realm", async () => {
      await admin.goto(`${base}/#/resolvers`);
      await admin.getByRole("button", { name: "New resolver" }).click();
      const form = admin.getByRole("form", { name: "New resolver" });
      await form.getByLabel("Resolver name").fill("people");
      await form.getByLabel("Resolver type").selectOption("sqlresolver");
      await form.getByLabel("Database", { exact: true }).fill("people.sqlite");
      await form.getByRole("checkbox", { name: "Editable" }).check();
      await form.getByRole("button", { name: "Test resolver" }).click();
      await form.getByRole("status").filter({ hasText: "created with table" }).waitFor();
      await form.getByRole("button", { name: "Save resolver" }).click();
      await admin.getByRole("status").filter({ hasText: "Resolver people saved" }).waitFor();
      await admin.getByRole("cell", { name: "sqlresolver" }).waitFor();

      await admin.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Realms" })
        .click();
      await admin.getByRole("button", { name: "New realm" }).click();
      const realm = admin.getByRole("form", { name: "New realm" });
      await realm.getByLabel("Realm name").fill("staff");
      await realm.getByLabel("people").check();
      await realm.getByRole("button", { name: "Save realm" }).click();
      await admin.getByRole("status").filter({ hasText: "Realm staff saved" }).waitFor();
      await admin.getByRole("cell", { name: "staff" }).first().waitFor();
      await shot(admin, "03-realms");
    });

    await t.step("the admin adds a user to the realm", async () => {
      await admin.goto(`${base}/#/users`);
      const form = admin.getByRole("form", { name: "Add a user" });
      await form.getByLabel("Username").fill("alice");
      await form.getByLabel("Password").fill(ALICE_PASSWORD);
      await form.getByLabel("Email").fill("alice@example.com");
      await form.getByRole("button", { name: "Add user" }).click();
      await form.getByRole("status").filter({ hasText: "User alice added" }).waitFor();
      await admin.getByRole("link", { name: "alice" }).waitFor();
      await shot(admin, "04-users");
    });

    let hotpSerial = "";
    await t.step(
      "the admin enrols a HOTP token for alice; its QR code's URL authenticates",
      async () => {
        await admin.getByRole("link", { name: "alice" }).click();
        await admin.getByRole("heading", { level: 1, name: "User alice@staff" }).waitFor();
        await admin.getByRole("link", { name: "Enrol token for alice" }).click();
        const form = admin.getByRole("form", { name: "Enrol a token" });
        await form.getByLabel("Token type").selectOption("hotp");
        await form.getByLabel("PIN").fill("1234");
        await form.getByRole("button", { name: "Enrol" }).click();
        const qr = admin.getByRole("img", { name: /QR code of token/ });
        await qr.waitFor();
        const url = await qr.getAttribute("data-otpauth");
        assert.ok(url?.startsWith("otpauth://hotp/"), String(url));
        const otp = URI.parse(url!) as HOTP;
        hotpSerial = new URL(url!.replace("otpauth://", "http://")).searchParams.get("serial") ??
          "";
        assert.ok(hotpSerial, url!);
        await shot(admin, "05-enrolled-qr");
        const check = await call(base, "POST", "/validate/check", {
          user: "alice",
          realm: "staff",
          pass: `1234${otp.generate({ counter: 0 })}`,
        });
        assert.equal(check.result.authentication, "ACCEPT", JSON.stringify(check));
      },
    );

    await t.step(
      "the admin disables and enables the token and deletes one after confirming",
      async () => {
        await admin.goto(`${base}/#/tokens/${hotpSerial}`);
        const state = admin.getByTestId("token-state");
        await state.filter({ hasText: "active" }).waitFor();
        await admin.getByRole("button", { name: "Disable" }).click();
        await state.filter({ hasText: "disabled" }).waitFor();
        await admin.getByRole("button", { name: "Enable" }).click();
        await state.filter({ hasText: "active" }).waitFor();
        await admin.getByRole("textbox", { name: "Description", exact: true }).fill(
          "alice's phone",
        );
        await admin.getByRole("button", { name: "Save description" }).click();
        await admin.getByRole("status").filter({ hasText: "Description saved" }).waitFor();
        await shot(admin, "06-token-details");

        // a spare token, deleted through the UI with confirmation
        const adminJwt = await admin.evaluate(() => sessionStorage.getItem("tessera.jwt"));
        const spare = await call(
          base,
          "POST",
          "/token/init",
          { type: "spass", pin: "9999" },
          adminJwt!,
        );
        const serial = spare.detail.serial as string;
        await admin.goto(`${base}/#/tokens/${serial}`);
        await admin.getByRole("button", { name: "Delete" }).click();
        const dialog = admin.getByRole("dialog", { name: "Delete" });
        await dialog.getByRole("button", { name: "Cancel" }).click();
        await dialog.waitFor({ state: "detached" });
        await admin.getByRole("button", { name: "Delete" }).click();
        await admin.getByRole("dialog", { name: "Delete" }).getByRole("button", { name: "Delete" })
          .click();
        await admin.getByRole("heading", { level: 1, name: "Tokens" }).waitFor();
        await settled(admin);
        assert.equal(await admin.getByRole("link", { name: serial }).count(), 0);
        assert.equal(await admin.getByRole("link", { name: hotpSerial }).count(), 1);
      },
    );

    await t.step(
      "a failed API call shows the API's message where the action was taken",
      async () => {
        await admin.goto(`${base}/#/enroll`);
        const form = admin.getByRole("form", { name: "Enrol a token" });
        await form.getByLabel("User", { exact: true }).fill("nobody");
        await form.getByLabel("Realm", { exact: true }).fill("staff");
        await form.getByRole("button", { name: "Enrol" }).click();
        const alert = form.getByRole("alert");
        await alert.waitFor();
        assert.match(await alert.innerText(), /ERR904: .*(not|can ?not) .*(exist|found)/i);
        await shot(admin, "07-error");
        adminErrors.length = 0; // the browser logs the refused request itself
      },
    );

    await t.step(
      "the admin defines servers, an event handler and a machine resolver, and searches the audit log",
      async () => {
        await admin.goto(`${base}/#/smtp`);
        await admin.getByRole("button", { name: "New SMTP server" }).click();
        let form = admin.getByRole("form", { name: "New SMTP server" });
        await form.getByLabel("Identifier").fill("mail");
        await form.getByLabel("Server", { exact: true }).fill("127.0.0.1");
        await form.getByLabel("Sender address").fill("mfa@example.com");
        await form.getByRole("button", { name: "Save SMTP server" }).click();
        await form.getByRole("status").filter({ hasText: "saved" }).waitFor();
        await admin.getByRole("cell", { name: "mfa@example.com" }).waitFor();

        await admin.goto(`${base}/#/radius`);
        await admin.getByRole("button", { name: "New RADIUS server" }).click();
        form = admin.getByRole("form", { name: "New RADIUS server" });
        await form.getByLabel("Identifier").fill("upstream");
        await form.getByLabel("Server", { exact: true }).fill("127.0.0.1");
        await form.getByLabel("Secret").fill("radius-secret");
        await form.getByRole("button", { name: "Save RADIUS server" }).click();
        await form.getByRole("status").filter({ hasText: "saved" }).waitFor();
        await admin.getByRole("cell", { name: "upstream", exact: true }).waitFor();

        await admin.goto(`${base}/#/events/new`);
        form = admin.getByRole("form", { name: "New event handler" });
        await form.getByLabel("Name").fill("log-enrolments");
        await form.getByLabel("Events").selectOption(["token_init"]);
        await form.getByLabel("Handler module").selectOption("Logging");
        await form.getByRole("button", { name: "Save event handler" }).click();
        await admin.getByRole("heading", { level: 1, name: "Event handler log-enrolments" })
          .waitFor();
        await admin.goto(`${base}/#/events`);
        await admin.getByRole("button", { name: "Disable log-enrolments" }).click();
        await admin.getByRole("button", { name: "Enable log-enrolments" }).waitFor();

        await admin.goto(`${base}/#/machines`);
        await admin.getByRole("button", { name: "New machine resolver" }).click();
        form = admin.getByRole("form", { name: "New machine resolver" });
        await form.getByLabel("Identifier").fill("hosts");
        await form.getByLabel("Type").selectOption("hosts");
        await form.getByRole("button", { name: "Save machine resolver" }).click();
        await form.getByRole("status").filter({ hasText: "saved" }).waitFor();
        await admin.getByRole("button", { name: "Edit hosts" }).waitFor();

        await admin.goto(`${base}/#/audit`);
        const search = admin.getByRole("form", { name: "Search the audit log" });
        await search.getByLabel("Action").fill("validate/check");
        await search.getByRole("button", { name: "Search" }).click();
        await admin.getByRole("cell", { name: "POST /validate/check" }).first().waitFor();
        await shot(admin, "08-audit-search");
        assert.deepEqual(adminErrors, []);
      },
    );

    await t.step("the admin creates the user's policies in the policy editor", async () => {
      await admin.goto(`${base}/#/policies/new`);
      let form = admin.getByRole("form", { name: "New policy" });
      await form.getByLabel("Policy name").fill("selfservice");
      await form.getByLabel("Scope").selectOption("user");
      await form.getByLabel("Realms", { exact: true }).fill("staff");
      for (const action of ["enrollTOTP", "enrollHOTP", "disable", "enable", "setpin"]) {
        await form.getByLabel("Filter actions").fill(action);
        await form.getByLabel(action, { exact: true }).check();
      }
      await form.getByRole("button", { name: "Save policy" }).click();
      await admin.getByRole("heading", { level: 1, name: "Policy selfservice" }).waitFor();

      await admin.goto(`${base}/#/policies/new`);
      form = admin.getByRole("form", { name: "New policy" });
      await form.getByLabel("Policy name").fill("verify");
      await form.getByLabel("Scope").selectOption("enrollment");
      await form.getByLabel("Filter actions").fill("verify_enrollment");
      await form.getByRole("group", { name: "verify_enrollment" }).getByLabel("totp").check();
      await form.getByRole("button", { name: "Save policy" }).click();
      await admin.getByRole("heading", { level: 1, name: "Policy verify" }).waitFor();
      await admin.goto(`${base}/#/policies`);
      await admin.getByRole("link", { name: "selfservice" }).waitFor();
      await shot(admin, "08-policies");
      assert.deepEqual(adminErrors, []);
    });

    await t.step(
      "the user enrols their own TOTP, confirms it, sets its PIN and authenticates",
      async () => {
        const user = await newPage();
        const userErrors = watchErrors(user);
        await login(user, base, "alice@staff", ALICE_PASSWORD);
        await user.getByRole("heading", { level: 1, name: "My tokens" }).waitFor();
        const hotp = user.getByRole("article", { name: `Token ${hotpSerial}` });
        await hotp.waitFor();
        // the user policy grants disable but not delete: Delete is there, disabled (privacyIDEA's
        // default; policy hide_buttons hides it)
        await hotp.getByRole("button", { name: "Disable" }).waitFor();
        assert.equal(await hotp.getByRole("button", { name: "Delete" }).isDisabled(), true);

        await user.getByRole("button", { name: "Enrol a new token" }).click();
        const form = user.getByRole("form", { name: "Enrol a token" });
        await form.getByLabel("Token type").selectOption("totp");
        await form.getByRole("button", { name: "Enrol" }).click();
        const qr = user.getByRole("img", { name: /QR code of token/ });
        await qr.waitFor();
        const url = (await qr.getAttribute("data-otpauth"))!;
        assert.ok(url.startsWith("otpauth://totp/"), url);
        const totp = URI.parse(url) as TOTP;
        const serial = new URL(url.replace("otpauth://", "http://")).searchParams.get("serial")!;
        await shot(user, "09-user-enrol-qr");
        const verify = user.getByRole("form", { name: "Verify the new token" });
        await verify.getByLabel("One-time password").fill(totp.generate());
        await verify.getByRole("button", { name: "Verify" }).click();
        await user.getByRole("status").filter({ hasText: "verified" }).waitFor();
        await user.getByRole("button", { name: "Close enrolment" }).click();

        const mine = user.getByRole("article", { name: `Token ${serial}` });
        await mine.getByLabel("New PIN").fill("4321");
        await mine.getByRole("button", { name: "Set PIN" }).click();
        await mine.getByRole("status").filter({ hasText: "PIN set" }).waitFor();
        await shot(user, "10-user-tokens");
        // the verification used the current step: the next one authenticates
        const pass = `4321${totp.generate({ timestamp: Date.now() + 30_000 })}`;
        const check = await call(base, "POST", "/validate/check", {
          user: "alice",
          realm: "staff",
          pass,
        });
        assert.equal(check.result.authentication, "ACCEPT", JSON.stringify(check));
        assert.equal(check.detail.serial, serial);
        assert.deepEqual(userErrors, []);
      },
    );

    await t.step("an admin without a right is not offered the action", async () => {
      const adminJwt = await admin.evaluate(() => sessionStorage.getItem("tessera.jwt"));
      // the initial admin keeps every right; helpdesk may list, enable and disable tokens
      const all = await call(base, "POST", "/policy/superadmin", {
        scope: "admin",
        action: "*",
        adminuser: "admin",
      }, adminJwt!);
      assert.equal(all.result.status, true, JSON.stringify(all));
      const limited = await call(base, "POST", "/policy/helpdesk", {
        scope: "admin",
        action: "tokenlist, enable, disable",
        adminuser: "helpdesk",
      }, adminJwt!);
      assert.equal(limited.result.status, true, JSON.stringify(limited));
      const add = await new Deno.Command(Deno.execPath(), {
        args: [
          "run",
          "-A",
          `${ROOT}main.ts`,
          "admin",
          "add",
          "helpdesk",
          "--password",
          HELPDESK_PASSWORD,
        ],
        cwd: server.dir,
        env: { NO_COLOR: "1" },
        stdin: "null",
        stdout: "null",
        stderr: "piped",
      }).output();
      assert.ok(add.success, new TextDecoder().decode(add.stderr));

      const helpdesk = await newPage();
      const errors = watchErrors(helpdesk);
      await login(helpdesk, base, "helpdesk", HELPDESK_PASSWORD);
      await helpdesk.getByRole("heading", { level: 1, name: "Dashboard" }).waitFor();
      await helpdesk.goto(`${base}/#/tokens`);
      await helpdesk.getByRole("heading", { level: 1, name: "Tokens" }).waitFor();
      const nav = helpdesk.getByRole("navigation", { name: "Main" });
      for (const hidden of ["Policies", "Audit log", "System", "Users", "Resolvers", "Events"]) {
        assert.equal(await nav.getByRole("link", { name: hidden }).count(), 0, hidden);
      }
      assert.equal(await helpdesk.getByRole("link", { name: "Enrol token" }).count(), 0);
      await helpdesk.getByRole("link", { name: hotpSerial }).click();
      await helpdesk.getByRole("button", { name: "Disable" }).waitFor();
      // the buttons of actions helpdesk may not take are disabled (policy hide_buttons hides
      // them); forms it may not use are not there
      for (const disabled of ["Delete", "Revoke", "Reset fail counter", "Unassign"]) {
        assert.equal(await helpdesk.getByRole("button", { name: disabled }).isDisabled(), true);
      }
      assert.equal(await helpdesk.getByRole("button", { name: "Set PIN" }).count(), 0);
      await shot(helpdesk, "11-helpdesk-token");
      assert.deepEqual(errors, []);
    });

    await t.step("the session ends with its JWT and says so", async () => {
      const adminJwt = await admin.evaluate(() => sessionStorage.getItem("tessera.jwt"));
      const short = await call(base, "POST", "/policy/shortsessions", {
        scope: "webui",
        action: "jwt_validity=2",
        realm: "staff",
      }, adminJwt!);
      assert.equal(short.result.status, true, JSON.stringify(short));
      const user = await newPage();
      await login(user, base, "alice@staff", ALICE_PASSWORD);
      await user.getByRole("status").filter({ hasText: "Your session has expired" })
        .waitFor({ timeout: 10_000 });
      await user.getByRole("button", { name: "Log in" }).waitFor();
      assert.equal(await user.evaluate(() => sessionStorage.length), 0);
      await shot(user, "12-session-expired");
    });
    console.log(`screenshots: ${shots}`);
  } finally {
    for (const c of contexts) await c.close().catch(() => {});
    await browser?.close().catch(() => {});
    await server.stop();
  }
});
