/**
 * Every page of the web interface in chromium (headless, playwright-core, a real
 * `tessera serve` with data on every page): no serious or critical axe-core WCAG 2.1 A/AA
 * finding, no console error, no sideways scrolling at 390 px for the user's pages, and dialogs
 * that keep the keyboard inside them. With `UPDATE_DOCS=1` it writes the screenshots of
 * docs/ui.md (docs/ui/*.png, reduced to 64 colours when ImageMagick's `convert` is there).
 *
 * Runs in the SQLite half of the test command only (the UI is engine-blind).
 */
import assert from "node:assert/strict";
import type { Browser, Page } from "playwright-core";
import { TEST_ENGINE } from "../test_db.ts";
import { installVendorKey, signedFile } from "../fixtures/subscription_keys.ts";
import { axe } from "./_axe.ts";
import {
  adminJwt,
  call,
  launchChromium,
  login,
  ok,
  openPage,
  peopleRealms,
  type Server,
  settled,
  startTessera,
} from "./_browser.ts";

const DOCS = new URL("../../docs/ui/", import.meta.url).pathname;
const UPDATE = Deno.env.get("UPDATE_DOCS") === "1";
const KEY = "3132333435363738393031323334353637383930";
const ALICE_PASSWORD = "Alice-Pass-1";

/** A world with something on every page. */
async function populate(
  server: Server,
  jwt: string,
): Promise<{ eventId: number; containerSerial: string }> {
  const person = (givenname: string, surname: string, email: string) => ({
    password: ALICE_PASSWORD,
    givenname,
    surname,
    email,
  });
  await peopleRealms(server, jwt, {
    users: {
      alice: person("Alice", "Meyer", "alice@example.com"),
      bob: person("Bob", "Kraus", "bob@example.com"),
    },
  });
  const init = (p: Record<string, unknown>) => ok(server, jwt, "POST", "/token/init", p);
  await init({
    type: "hotp",
    serial: "HOTP0001",
    otpkey: KEY,
    user: "alice",
    realm: "staff",
    description: "Alice's phone",
  });
  await init({ type: "totp", serial: "TOTP0001", genkey: 1, user: "bob", realm: "staff" });
  await init({ type: "spass", serial: "SPASS001", pin: "1" });
  await init({ type: "hotp", serial: "HOTP0002", otpkey: KEY, user: "bob", realm: "staff" });
  await ok(server, jwt, "POST", "/token/set", { serial: "HOTP0002", max_failcount: 1 });
  await call(server.base, "POST", "/validate/check", { serial: "HOTP0002", pass: "000000" });
  await call(server.base, "POST", "/validate/check", {
    user: "alice",
    realm: "staff",
    pass: "755224",
  });
  await ok(server, jwt, "POST", "/policy/selfservice", {
    scope: "user",
    action: "enrollTOTP, enrollHOTP, disable, enable, setpin, delete, resync, auditlog, " +
      "userlist, updateuser",
    realm: "staff",
  });
  await ok(server, jwt, "POST", "/policy/authentication", {
    scope: "authentication",
    action: "otppin=tokenpin, challenge_response=hotp totp",
  });
  await ok(server, jwt, "POST", "/event", {
    name: "log-enrolments",
    event: "token_init",
    handlermodule: "Logging",
    action: "logging",
    position: "post",
  });
  await ok(server, jwt, "POST", "/smtpserver/mail", {
    server: "127.0.0.1",
    sender: "mfa@example.com",
  });
  await ok(server, jwt, "POST", "/smsgateway", {
    name: "sms-out",
    module: "privacyidea.lib.smsprovider.HttpSMSProvider.HttpSMSProvider",
    description: "SMS through the provider's web API",
    "option.URL": "https://sms.example.com/send",
    "option.HTTP_METHOD": "POST",
    "option.CHECK_SSL": "yes",
    "option.SEND_DATA_AS_JSON": "yes",
    "option.PASSWORD": "sms-secret",
    "option.USERNAME": "tessera",
    "option.text": "{otp}",
    "option.to": "{phone}",
  });
  await ok(server, jwt, "POST", "/periodictask/", {
    name: "token-statistics",
    taskmodule: "SimpleStats",
    interval: "0 3 * * 1",
    nodes: "node-1",
    ordering: 0,
    options: { total_tokens: "True", assigned_tokens: "True" },
  });
  await ok(server, jwt, "POST", "/tokengroup/laptops", { description: "Company laptops" });
  await ok(server, jwt, "POST", "/tokengroup/kiosks", { description: "Shared kiosk terminals" });
  const phone = await ok(server, jwt, "POST", "/container/init", {
    type: "smartphone",
    description: "Alice's phone",
    user: "alice",
    realm: "staff",
  });
  await ok(server, jwt, "POST", `/container/${phone.result.value.container_serial}/add`, {
    serial: "HOTP0001",
  });
  await ok(server, jwt, "POST", "/container/init", {
    type: "generic",
    description: "Kiosk terminal 3",
    realm: "staff",
  });
  await ok(server, jwt, "POST", "/serviceid/mail", { description: "Mail servers (IMAP, SMTP)" });
  await ok(server, jwt, "POST", "/serviceid/ssh-jump", { description: "SSH jump hosts" });
  await ok(server, jwt, "POST", "/privacyideaserver/old-server", {
    url: "https://privacyidea.example.com",
    description: "The privacyIDEA being replaced",
  });
  await ok(server, jwt, "POST", "/subscriptions/", {
    file: await signedFile({
      application: "privacyidea",
      for_name: "Example Corp",
      date_till: "2099-12-31",
      num_users: 50,
    }),
  });
  await ok(server, jwt, "POST", "/radiusserver/upstream", {
    server: "127.0.0.1",
    secret: "radius-secret",
  });
  await ok(server, jwt, "POST", "/machineresolver/hosts", {
    type: "hosts",
    filename: "/etc/hosts",
  });
  await ok(server, jwt, "POST", "/system/setConfig", { DefaultMaxFailCount: "5" });
  const events = await ok(server, jwt, "GET", "/event/");
  return {
    eventId: events.result.value[0].id,
    containerSerial: phone.result.value.container_serial,
  };
}

/** Writes the page's screenshot for docs/ui.md (only with UPDATE_DOCS=1). */
async function screenshot(page: Page, name: string) {
  if (!UPDATE) return;
  await Deno.mkdir(DOCS, { recursive: true });
  const path = `${DOCS}${name}.png`;
  await page.screenshot({ path, fullPage: false });
  // fewer colours, not dithered (dithering makes the PNG larger): a third of the size, text
  // as sharp; no time stamps, so an unchanged page gives the same file; without a working
  // ImageMagick the full-colour screenshot stays
  const reduce = await new Deno.Command("convert", {
    args: [path, "-strip", "+dither", "-colors", "64", `PNG8:${path}`],
    stdout: "null",
    stderr: "null",
  }).output().catch(() => undefined);
  if (!reduce?.success) console.warn(`${path}: kept in full colour (no working convert)`);
}

Deno.test({
  name:
    "web UI: every page, admin and user, has no serious axe finding and no console error; dialogs keep the keyboard; the user's pages fit 390 px",
  ignore: TEST_ENGINE !== "sqlite",
  sanitizeResources: false,
  sanitizeOps: false,
}, async () => {
  // a fixed node name: the periodic task form lists this node, whatever the host is called; a
  // test vendor's key, so a subscription can be installed
  const keyDir = await Deno.makeTempDir({ prefix: "tessera-ui-vendor-" });
  await installVendorKey(keyDir);
  const server = await startTessera({
    TESSERA_SERVER_NODE_NAME: "node-1",
    TESSERA_SUBSCRIPTIONS_KEY_DIR: keyDir,
  });
  let browser: Browser | undefined;
  try {
    const base = server.base;
    const jwt = await adminJwt(server);
    const { eventId, containerSerial } = await populate(server, jwt);
    browser = await launchChromium();
    const { page, errors } = await openPage(browser, { width: 1100, height: 760 });
    const problems: string[] = [];

    await page.goto(`${base}/`);
    await page.getByRole("button", { name: "Log in" }).waitFor();
    problems.push(...await axe(page, "login", { seriousOnly: true }));
    await screenshot(page, "login");

    await login(page, base, "admin", server.adminPassword);
    const adminPages: [string, string, string][] = [
      ["#/dashboard", "Dashboard", "dashboard"],
      ["#/tokens", "Tokens", "tokens"],
      ["#/tokens/HOTP0001", "Token HOTP0001", "token"],
      ["#/tokengroups", "Token groups", "tokengroups"],
      // the heading holds the random serial: "Container" finds it (not after the list's)
      [`#/containers/${containerSerial}`, "Container", "container"],
      ["#/containers", "Containers", "containers"],
      ["#/enroll", "Enrol a token", "enroll"],
      ["#/import", "Import tokens", "import"],
      ["#/users", "Users", "users"],
      ["#/users/staff/alice", "User alice@staff", "user"],
      ["#/resolvers", "Resolvers", "resolvers"],
      ["#/realms", "Realms", "realms"],
      ["#/policies", "Policies", "policies"],
      ["#/policies/selfservice", "Policy selfservice", "policy"],
      ["#/events", "Event handlers", "events"],
      [`#/events/${eventId}`, "Event handler log-enrolments", "event"],
      ["#/machines", "Machines", "machines"],
      ["#/serviceids", "Service IDs", "serviceids"],
      ["#/caconnectors", "CA connectors", "caconnectors"],
      ["#/radius", "RADIUS servers", "radius"],
      ["#/smtp", "SMTP servers", "smtp"],
      ["#/sms", "SMS gateways", "sms"],
      ["#/privacyidea", "privacyIDEA servers", "privacyidea"],
      ["#/periodic", "Periodic tasks", "periodic"],
      ["#/statistics", "Statistics", "statistics"],
      ["#/subscriptions", "Subscriptions", "subscriptions"],
      ["#/audit", "Audit log", "audit"],
      ["#/system", "System settings", "system"],
    ];
    for (const [hash, heading, name] of adminPages) {
      await page.goto(`${base}/${hash}`);
      await page.getByRole("heading", { level: 1, name: heading }).waitFor();
      await settled(page);
      problems.push(...await axe(page, hash, { seriousOnly: true }));
      await screenshot(page, name);
    }
    // the user's page lists their tokens
    await page.goto(`${base}/#/users/staff/alice`);
    await settled(page);
    await page.getByRole("region", { name: "Tokens" }).getByRole("link", { name: "HOTP0001" })
      .waitFor();
    // a form per resolver type: the LDAP one open
    await page.goto(`${base}/#/resolvers`);
    await settled(page);
    await page.getByRole("button", { name: "New resolver" }).click();
    await page.getByRole("form", { name: "New resolver" }).getByLabel("Resolver type")
      .selectOption("ldapresolver");
    await settled(page);
    problems.push(...await axe(page, "new LDAP resolver", { seriousOnly: true }));
    await screenshot(page, "resolver-ldap");

    // an SMS gateway's form: its provider's parameters typed, its free options as rows
    await page.goto(`${base}/#/sms`);
    await settled(page);
    await page.getByRole("button", { name: "Edit sms-out" }).click();
    await page.getByRole("form", { name: "Edit SMS gateway sms-out" }).getByLabel("Option 1 name")
      .waitFor();
    problems.push(...await axe(page, "SMS gateway form", { seriousOnly: true }));
    await screenshot(page, "sms-gateway");

    // a periodic task's form: the module's options typed
    await page.goto(`${base}/#/periodic`);
    await settled(page);
    await page.getByRole("button", { name: "Edit token-statistics" }).click();
    await page.getByRole("form", { name: "Edit periodic task token-statistics" })
      .getByLabel("total_tokens", { exact: true }).waitFor();
    problems.push(...await axe(page, "periodic task form", { seriousOnly: true }));
    await screenshot(page, "periodic-task");

    // a dialog keeps the keyboard: Tab and Shift+Tab stay on its buttons
    await page.goto(`${base}/#/tokens/SPASS001`);
    await settled(page);
    await page.getByRole("group", { name: "Actions on SPASS001" })
      .getByRole("button", { name: "Delete" }).click();
    const dialog = page.getByRole("dialog", { name: "Delete" });
    await dialog.waitFor();
    for (const key of ["Tab", "Tab", "Tab", "Shift+Tab", "Shift+Tab", "Shift+Tab", "Tab"]) {
      await page.keyboard.press(key);
      const inside = await page.evaluate(
        "!!document.activeElement && !!document.activeElement.closest('dialog[open]')",
      );
      assert.ok(inside, `after ${key} the focus left the dialog`);
    }
    problems.push(...await axe(page, "confirmation dialog", { seriousOnly: true }));
    await page.keyboard.press("Escape");
    await dialog.waitFor({ state: "detached" });

    // a token test answered: a real /validate/check with the serial (the RFC 4226 key's OTP of
    // counter 1; counter 0 was used above), the answer in the token's page
    await page.goto(`${base}/#/tokens/HOTP0001`);
    await settled(page);
    const test = page.getByRole("form", { name: "Test token HOTP0001" });
    await test.getByLabel("PIN and OTP value").fill("287082");
    await test.getByRole("button", { name: "Check" }).click();
    await page.getByTestId("test-result").filter({ hasText: /^Accepted/ }).waitFor();
    await page.getByTestId("token-counter").filter({ hasText: /^2$/ }).waitFor();
    problems.push(...await axe(page, "token test answered", { seriousOnly: true }));
    await test.evaluate((form) => form.closest("section")?.scrollIntoView());
    await screenshot(page, "token-test");

    // an enrolment's QR code, whose otpauth URL names the new token
    await page.goto(`${base}/#/enroll`);
    await settled(page);
    const enrol = page.getByRole("form", { name: "Enrol a token" });
    assert.equal(await enrol.getByLabel("Token type").inputValue(), "hotp");
    await enrol.getByLabel("Description").fill("Front desk");
    await enrol.getByRole("button", { name: "Enrol" }).click();
    const qr = page.getByRole("img", { name: /QR code of token/ });
    await qr.waitFor();
    const url = new URL((await qr.getAttribute("data-otpauth"))!.replace("otpauth:", "http:"));
    const enrolled = await ok(server, jwt, "GET", "/token/", {
      serial: url.searchParams.get("serial"),
    });
    assert.equal(enrolled.result.value.tokens[0]?.description, "Front desk");
    problems.push(...await axe(page, "enrolled token", { seriousOnly: true }));
    await qr.evaluate((img) => img.closest("section")?.scrollIntoView());
    await screenshot(page, "enroll-qr");
    await page.getByRole("button", { name: "Log out" }).click();

    // the user's pages, wide and at 390 px
    await login(page, base, "alice@staff", ALICE_PASSWORD);
    const userPages: [string, string, string][] = [
      ["#/", "My tokens", "user-tokens"],
      ["#/details", "My details", "user-details"],
      ["#/audit", "My audit log", "user-audit"],
    ];
    for (const width of [1100, 390]) {
      await page.setViewportSize({ width, height: width === 390 ? 844 : 760 });
      for (const [hash, heading, name] of userPages) {
        await page.goto(`${base}/${hash}`);
        await page.getByRole("heading", { level: 1, name: heading }).waitFor();
        await settled(page);
        problems.push(...await axe(page, `${hash} at ${width} px`, { seriousOnly: true }));
        const sideways = await page.evaluate(
          "document.documentElement.scrollWidth - document.documentElement.clientWidth",
        ) as number;
        if (sideways > 0) problems.push(`${hash} at ${width} px scrolls sideways by ${sideways}`);
        if (width === 1100) await screenshot(page, name);
      }
    }
    await page.setViewportSize({ width: 390, height: 844 });
    await page.getByRole("button", { name: "Menu" }).click();
    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "My details" })
      .click();
    await page.getByRole("heading", { level: 1, name: "My details" }).waitFor();
    if (UPDATE) {
      await page.goto(`${base}/#/`);
      await settled(page);
      await screenshot(page, "user-tokens-390");
    }
    assert.deepEqual(problems, []);
    assert.deepEqual(errors, []);
  } finally {
    await browser?.close().catch(() => {});
    await server.stop();
    await Deno.remove(keyDir, { recursive: true }).catch(() => {});
  }
});
