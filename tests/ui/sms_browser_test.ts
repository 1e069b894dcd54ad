/**
 * The SMS gateways page in chromium (headless, playwright-core) against a real `tessera serve`:
 * a gateway made in the form built from `GET /smsgateway/providers` is stored as typed (read back
 * through the API) and delivers an sms token's code to a local HTTP sink with the secrets typed
 * in the form; an edit that leaves the secrets alone keeps them; delete; an admin with only
 * `smsgateway_read` sees the gateways and may change nothing; axe finds no WCAG A/AA violation.
 *
 * Runs in the SQLite half of the test command only (the UI is engine-blind).
 */
import assert from "node:assert/strict";
import type { Browser, Page } from "playwright-core";
import { TEST_ENGINE } from "../test_db.ts";
import { axe } from "./_axe.ts";
import {
  adminJwt,
  call,
  launchChromium,
  login,
  ok,
  openPage,
  type Server,
  settled,
  startTessera,
  watchErrors,
} from "./_browser.ts";

const ROOT = new URL("../..", import.meta.url).pathname;
const HTTP_PROVIDER = "privacyidea.lib.smsprovider.HttpSMSProvider.HttpSMSProvider";
const VIEWER_PASSWORD = "Viewer-Pass-1";

interface Sunk {
  url: URL;
  headers: Headers;
}

/** A local HTTP gateway that records each request and answers `SENT`. */
function startSink() {
  const requests: Sunk[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, (req) => {
    requests.push({ url: new URL(req.url), headers: req.headers });
    return new Response("STATUS: SENT");
  });
  return {
    url: `http://127.0.0.1:${server.addr.port}/send`,
    requests,
    close: () => server.shutdown(),
  };
}

/** The text of the help that describes the control `label` names (its aria-describedby). */
async function helpOf(page: Page, label: string): Promise<string> {
  const id = await page.getByLabel(label, { exact: true }).getAttribute("aria-describedby");
  return id ? await page.locator(`[id="${id}"]`).innerText() : "";
}

/** Sends the sms token a code (the PIN alone triggers it); returns the sink's new request. */
async function triggerSms(server: Server, sink: ReturnType<typeof startSink>): Promise<Sunk> {
  const before = sink.requests.length;
  const res = await call(server.base, "POST", "/validate/check", {
    serial: "SMS0001",
    pass: "pin",
  });
  assert.equal(res.result.value, false, JSON.stringify(res));
  assert.ok(res.detail.transaction_id, JSON.stringify(res));
  assert.equal(sink.requests.length, before + 1, "the gateway was not asked");
  return sink.requests[before];
}

Deno.test({
  name:
    "web UI: SMS gateways made and edited in the typed provider form deliver through the gateway; delete; read-only admins change nothing",
  ignore: TEST_ENGINE !== "sqlite",
  sanitizeResources: false,
  sanitizeOps: false,
}, async () => {
  const server = await startTessera();
  const sink = startSink();
  let browser: Browser | undefined;
  try {
    const base = server.base;
    const jwt = await adminJwt(server);
    await ok(server, jwt, "POST", "/smtpserver/mail", { server: "127.0.0.1" });
    browser = await launchChromium();
    const { page, errors } = await openPage(browser);
    await login(page, base, "admin", server.adminPassword);
    await page.getByRole("navigation", { name: "Main" }).getByRole("link", {
      name: "SMS gateways",
    }).click();
    await page.getByRole("heading", { level: 1, name: "SMS gateways" }).waitFor();
    await page.getByText("There is no SMS gateway yet.").waitFor();

    // a new HTTP gateway: the provider's parameters typed as the server describes them
    await page.getByRole("button", { name: "New SMS gateway" }).click();
    const form = page.getByRole("form", { name: "New SMS gateway" });
    const providers = await form.getByLabel("Provider").locator("option").allTextContents();
    // the providers the server lists, in its order, by their class names
    const modules = Object.keys(
      (await ok(server, jwt, "GET", "/smsgateway/providers")).result.value,
    );
    assert.deepEqual(providers, modules.map((m) => m.split(".").pop()));
    assert.equal(providers[0], "HttpSMSProvider");
    assert.equal(await helpOf(page, "URL"), "The base URL of the HTTP Gateway");
    assert.deepEqual(
      await form.getByLabel("HTTP_METHOD").locator("option").allTextContents(),
      ["GET", "POST"],
    );
    assert.equal(await form.getByLabel("PASSWORD").getAttribute("type"), "password");
    assert.equal(await form.getByLabel("URL").getAttribute("required"), "");
    // an SMTP gateway chooses one of the SMTP servers
    await form.getByLabel("Provider").selectOption({ label: "SmtpSMSProvider" });
    assert.deepEqual(
      await form.getByLabel("SMTPIDENTIFIER").locator("option").allTextContents(),
      ["mail"],
    );
    await form.getByLabel("Provider").selectOption({ label: "HttpSMSProvider" });
    assert.equal(await page.getByRole("button", { name: "Add a header" }).count(), 1);

    await form.getByLabel("Gateway name").fill("gw1");
    await form.getByLabel("Description").fill("Test gateway");
    await form.getByLabel("URL").fill(sink.url);
    await form.getByLabel("HTTP_METHOD").selectOption("GET");
    await form.getByLabel("SEND_DATA_AS_JSON").selectOption("no");
    await form.getByLabel("USERNAME").fill("tessera");
    await form.getByLabel("PASSWORD").fill("s3cret-pw");
    await form.getByLabel("RETURN_SUCCESS").fill("SENT");
    await form.getByRole("button", { name: "Add an option" }).click();
    await form.getByLabel("Option 1 name").fill("text");
    await form.getByLabel("Option 1 value").fill("Your code {otp}");
    await form.getByRole("button", { name: "Add an option" }).click();
    await form.getByLabel("Option 2 name").fill("to");
    await form.getByLabel("Option 2 value").fill("{phone}");
    await form.getByRole("button", { name: "Add a header" }).click();
    await form.getByLabel("Header 1 name").fill("X-Api-Key");
    assert.equal(await form.getByLabel("Header 1 value").getAttribute("type"), "password");
    await form.getByLabel("Header 1 value").fill("hdr-secret");
    const problems = await axe(page);
    await form.getByRole("button", { name: "Save SMS gateway" }).click();
    await page.getByRole("status").filter({ hasText: "SMS gateway gw1 saved" }).waitFor();
    // the new form starts afresh
    assert.equal(
      await page.getByRole("form", { name: "New SMS gateway" }).getByLabel(
        "Gateway name",
      ).inputValue(),
      "",
    );
    await page.getByRole("cell", { name: "gw1", exact: true }).waitFor();

    const stored = (await ok(server, jwt, "GET", "/smsgateway/")).result.value;
    assert.equal(stored.length, 1);
    assert.equal(stored[0].name, "gw1");
    assert.equal(stored[0].providermodule, HTTP_PROVIDER);
    assert.equal(stored[0].description, "Test gateway");
    assert.deepEqual(stored[0].options, {
      URL: sink.url,
      HTTP_METHOD: "GET",
      CHECK_SSL: "yes",
      SEND_DATA_AS_JSON: "no",
      USERNAME: "tessera",
      PASSWORD: "__CENSORED__",
      RETURN_SUCCESS: "SENT",
      text: "Your code {otp}",
      to: "{phone}",
    });
    assert.deepEqual(stored[0].headers, { "X-Api-Key": "__CENSORED__" });

    // an sms token sends its code through it, with the secrets as typed
    await ok(server, jwt, "POST", "/system/setConfig", { "sms.identifier": "gw1" });
    await ok(server, jwt, "POST", "/token/init", {
      type: "sms",
      serial: "SMS0001",
      phone: "+49 160 5550123",
      pin: "pin",
    });
    const first = await triggerSms(server, sink);
    assert.equal(first.headers.get("authorization"), `Basic ${btoa("tessera:s3cret-pw")}`);
    assert.equal(first.headers.get("x-api-key"), "hdr-secret");
    assert.match(first.url.searchParams.get("text") ?? "", /^Your code \d{6}$/);
    assert.equal(first.url.searchParams.get("to"), "+49 160 5550123");

    // an edit that leaves the secrets alone keeps them
    await page.getByRole("button", { name: "Edit gw1" }).click();
    const edit = page.getByRole("form", { name: "Edit SMS gateway gw1" });
    assert.equal(await edit.getByLabel("PASSWORD").inputValue(), "__CENSORED__");
    assert.equal(await edit.getByLabel("Option 2 name").inputValue(), "to");
    assert.ok(await edit.getByLabel("Gateway name").isDisabled());
    await edit.getByLabel("Description").fill("Changed");
    await edit.getByRole("button", { name: "Remove option 2" }).click();
    await edit.getByRole("button", { name: "Add an option" }).click();
    await edit.getByLabel("Option 2 name").fill("phone");
    await edit.getByLabel("Option 2 value").fill("{phone}");
    problems.push(
      ...await axe(page, "edit"),
    );
    await edit.getByRole("button", { name: "Save SMS gateway" }).click();
    await page.getByRole("status").filter({ hasText: "SMS gateway gw1 saved" }).waitFor();
    await page.getByRole("cell", { name: "Changed", exact: true }).waitFor();
    const edited = (await ok(server, jwt, "GET", "/smsgateway/")).result.value[0];
    assert.equal(edited.description, "Changed");
    assert.equal(edited.options.PASSWORD, "__CENSORED__");
    assert.equal(edited.options.to, undefined);
    assert.equal(edited.options.phone, "{phone}");
    const second = await triggerSms(server, sink);
    assert.equal(second.headers.get("authorization"), `Basic ${btoa("tessera:s3cret-pw")}`);
    assert.equal(second.headers.get("x-api-key"), "hdr-secret");
    assert.equal(second.url.searchParams.get("phone"), "+49 160 5550123");
    // the form after the save shows what is stored
    assert.equal(
      await page.getByRole("form", { name: "Edit SMS gateway gw1" }).getByLabel("Description")
        .inputValue(),
      "Changed",
    );

    // a read-only admin sees the gateway and its settings, and may change nothing
    await ok(server, jwt, "POST", "/policy/superadmin", {
      scope: "admin",
      action: "*",
      adminuser: "admin",
    });
    await ok(server, jwt, "POST", "/policy/smsviewer", {
      scope: "admin",
      action: "smsgateway_read",
      adminuser: "viewer",
    });
    const add = await new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "-A",
        `${ROOT}main.ts`,
        "admin",
        "add",
        "viewer",
        "--password",
        VIEWER_PASSWORD,
      ],
      cwd: server.dir,
      env: { NO_COLOR: "1" },
      stdin: "null",
      stdout: "null",
      stderr: "piped",
    }).output();
    assert.ok(add.success, new TextDecoder().decode(add.stderr));
    const viewerContext = await browser.newContext({
      viewport: { width: 1100, height: 900 },
      bypassCSP: true,
    });
    const viewer = await viewerContext.newPage();
    const viewerErrors = watchErrors(viewer);
    await login(viewer, base, "viewer", VIEWER_PASSWORD);
    await viewer.goto(`${base}/#/sms`);
    await viewer.getByRole("heading", { level: 1, name: "SMS gateways" }).waitFor();
    await settled(viewer);
    assert.equal(await viewer.getByRole("button", { name: "New SMS gateway" }).count(), 0);
    assert.equal(await viewer.getByRole("button", { name: "Delete gw1" }).count(), 0);
    await viewer.getByRole("button", { name: "Edit gw1" }).click();
    const view = viewer.getByRole("form", { name: "Edit SMS gateway gw1" });
    assert.equal(await view.getByLabel("URL").inputValue(), sink.url);
    assert.ok(await view.getByLabel("URL").isDisabled());
    assert.equal(await view.getByRole("button", { name: "Save SMS gateway" }).count(), 0);
    assert.equal(await view.getByRole("button", { name: "Add an option" }).count(), 0);
    assert.deepEqual(viewerErrors, []);
    await viewerContext.close();

    // delete, after the confirmation
    await page.getByRole("button", { name: "Delete gw1" }).click();
    const dialog = page.getByRole("dialog", { name: "Delete gw1" });
    await dialog.getByRole("button", { name: "Delete gw1" }).click();
    await page.getByText("There is no SMS gateway yet.").waitFor();
    assert.deepEqual((await ok(server, jwt, "GET", "/smsgateway/")).result.value, []);

    assert.deepEqual(problems, []);
    assert.deepEqual(errors, []);
  } finally {
    await browser?.close().catch(() => {});
    await sink.close();
    await server.stop();
  }
});
