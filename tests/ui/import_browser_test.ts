/**
 * Importing tokens in chromium (headless, playwright-core) against a real `tessera serve`: an
 * OATH CSV file chosen in the form is uploaded as multipart to `POST /token/load/<filename>`,
 * its tokens land in the chosen realm and authenticate; a broken file shows the server's message
 * and imports nothing; the PSKC fields show for PSKC only; an admin without `importtokens` is
 * offered neither the link nor the page; axe finds no WCAG A/AA violation.
 *
 * Runs in the SQLite half of the test command only (the UI is engine-blind).
 */
import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import { axe } from "./_axe.ts";
import {
  call,
  login,
  ok,
  openPage,
  peopleRealms,
  settled,
  uiTest,
  watchErrors,
} from "./_browser.ts";

const ROOT = new URL("../..", import.meta.url).pathname;
// RFC 4226's key; its first values are 755224, 287082
const KEY = "3132333435363738393031323334353637383930";
const HELPER_PASSWORD = "Helper-Pass-1";

uiTest(
  "web UI: an OATH CSV imported in the browser lands in the chosen realm and authenticates; a broken file imports nothing; no link or page without importtokens",
  async ({ server, base, jwt, browser }) => {
    await peopleRealms(server, jwt, { realms: ["staff", "guests"] });
    const { page, errors } = await openPage(browser);
    await login(page, base, "admin", server.adminPassword);
    await page.goto(`${base}/#/tokens`);
    await page.getByRole("heading", { level: 1, name: "Tokens" }).waitFor();
    await page.getByRole("link", { name: "Import tokens" }).click();
    await page.getByRole("heading", { level: 1, name: "Import tokens" }).waitFor();
    await settled(page);
    const form = page.getByRole("form", { name: "Import tokens" });

    // PSKC's own fields only for PSKC
    assert.equal(await form.getByLabel("Pre-shared key (hex)").count(), 0);
    await form.getByLabel("File type").selectOption("pskc");
    await form.getByLabel("Pre-shared key (hex)").waitFor();
    assert.deepEqual(
      await form.getByLabel("MAC check").locator("option").evaluateAll((os) =>
        os.map((o) => o.getAttribute("value"))
      ),
      ["check_fail_hard", "check_fail_soft", "no_check"],
    );
    await form.getByLabel("File type").selectOption("oathcsv");

    // a broken file: the server's message, nothing imported
    await form.getByLabel("Token file").setInputFiles({
      name: "broken.csv",
      mimeType: "text/csv",
      buffer: Buffer.from("IMP0009, not-hex, hotp, 6\n"),
    });
    await form.getByRole("button", { name: "Import" }).click();
    await form.getByRole("alert").filter({ hasText: "not a hex string" }).waitFor();
    assert.equal((await ok(server, jwt, "GET", "/token/")).result.value.count, 0);
    errors.length = 0; // the refused upload's 400 is logged by the browser

    // two HOTP tokens into realm staff
    await form.getByLabel("Token file").setInputFiles({
      name: "seeds.csv",
      mimeType: "text/csv",
      buffer: Buffer.from(
        `# serial, key, type, otplen\nIMP0001, ${KEY}, hotp, 6\nIMP0002, ${KEY}, hotp, 8\n`,
      ),
    });
    await form.getByRole("checkbox", { name: "staff" }).check();
    const problems = await axe(page);
    await form.getByRole("button", { name: "Import" }).click();
    await form.getByRole("status").filter({ hasText: "2 imported, 0 not imported" }).waitFor();
    const tokens = (await ok(server, jwt, "GET", "/token/", { sortby: "serial" })).result.value
      .tokens;
    assert.deepEqual(
      tokens.map((t: { serial: string; tokentype: string; otplen: number; realms: string[] }) => [
        t.serial,
        t.tokentype,
        t.otplen,
        t.realms,
      ]),
      [["IMP0001", "hotp", 6, ["staff"]], ["IMP0002", "hotp", 8, ["staff"]]],
    );
    // the imported key is the file's
    const check = await call(base, "POST", "/validate/check", {
      serial: "IMP0001",
      pass: "755224",
    });
    assert.equal(check.result.value, true, JSON.stringify(check));
    // the audit row names the file
    const audit = await ok(server, jwt, "GET", "/audit/", { action: "*token/load*" });
    assert.ok(
      audit.result.value.auditdata.some((r: { info: string }) =>
        r.info.includes("seeds.csv (imported: 2")
      ),
      JSON.stringify(audit.result.value.auditdata),
    );
    await page.getByRole("link", { name: "Show the tokens" }).click();
    await page.getByRole("link", { name: "IMP0002" }).waitFor();

    // an admin without importtokens: no link, and the page refuses
    await ok(server, jwt, "POST", "/policy/superadmin", {
      scope: "admin",
      action: "*",
      adminuser: "admin",
    });
    await ok(server, jwt, "POST", "/policy/helper", {
      scope: "admin",
      action: "tokenlist, enrollHOTP",
      adminuser: "helper",
    });
    const add = await new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "-A",
        `${ROOT}main.ts`,
        "admin",
        "add",
        "helper",
        "--password",
        HELPER_PASSWORD,
      ],
      cwd: server.dir,
      env: { NO_COLOR: "1" },
      stdin: "null",
      stdout: "null",
      stderr: "piped",
    }).output();
    assert.ok(add.success, new TextDecoder().decode(add.stderr));
    const helperContext = await browser.newContext({
      viewport: { width: 1100, height: 900 },
      bypassCSP: true,
    });
    const helper = await helperContext.newPage();
    const helperErrors = watchErrors(helper);
    await login(helper, base, "helper", HELPER_PASSWORD);
    await helper.goto(`${base}/#/tokens`);
    await helper.getByRole("heading", { level: 1, name: "Tokens" }).waitFor();
    await settled(helper);
    assert.equal(await helper.getByRole("link", { name: "Enrol token" }).count(), 1);
    assert.equal(await helper.getByRole("link", { name: "Import tokens" }).count(), 0);
    await helper.goto(`${base}/#/import`);
    await helper.getByRole("alert").filter({ hasText: "You are not allowed to import tokens." })
      .waitFor();
    assert.equal(await helper.getByLabel("Token file").count(), 0);
    assert.deepEqual(helperErrors, []);
    await helperContext.close();

    assert.deepEqual(problems, []);
    assert.deepEqual(errors, []);
  },
);
