/**
 * Shared parts of the browser tests: Debian's chromium driven by
 * playwright-core against a real `tessera serve` on a free port (SQLite, its
 * own folder), and the API calls the tests make around the browser.
 *
 * @module
 */
import assert from "node:assert/strict";
import { createServer } from "node:net";
import { type Browser, chromium, type Page } from "playwright-core";
import { TEST_ENGINE } from "../test_db.ts";

const ROOT = new URL("../..", import.meta.url).pathname;
const CHROMIUM_CANDIDATES = ["/usr/bin/chromium", "/usr/bin/chromium-browser"];

/** Debian's chromium (or `CHROMIUM_PATH`). */
export function chromiumPath(): string {
  const configured = Deno.env.get("CHROMIUM_PATH");
  for (const p of configured ? [configured] : CHROMIUM_CANDIDATES) {
    try {
      if (Deno.statSync(p).isFile) return p;
    } catch { /* next */ }
  }
  throw new Error(
    "chromium not found: install Debian's chromium package (.ci/setup-extra) or set CHROMIUM_PATH",
  );
}

/** Headless chromium as the browser tests launch it. */
export async function launchChromium(): Promise<Browser> {
  return await chromium.launch({
    executablePath: chromiumPath(),
    headless: true,
    args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"],
  });
}

async function freePort(): Promise<number> {
  return await new Promise((resolve) => {
    const srv = createServer();
    srv.listen(0, "127.0.0.1", () => {
      const port = (srv.address() as { port: number }).port;
      srv.close(() => resolve(port));
    });
  });
}

/** A running Tessera in its own folder, with the initial admin's password. */
export interface Server {
  base: string;
  dir: string;
  adminPassword: string;
  stop(): Promise<void>;
}

/**
 * Starts `tessera serve` on a free loopback port in a new temporary folder; `env` adds
 * configuration (`TESSERA_<SECTION>_<KEY>`).
 */
export async function startTessera(env: Record<string, string> = {}): Promise<Server> {
  const dir = await Deno.makeTempDir({ prefix: "tessera-ui-" });
  const port = await freePort();
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", `${ROOT}main.ts`, "serve", "--listen", `127.0.0.1:${port}`],
    cwd: dir,
    env: { NO_COLOR: "1", TESSERA_SIGNING_ENABLED: "false", ...env },
    stdin: "null",
    stdout: "null",
    stderr: "null",
  }).spawn();
  const base = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 30_000;
  for (;;) {
    const ok = await fetch(`${base}/healthz/`).then(async (r) => {
      await r.body?.cancel();
      return r.ok;
    }).catch(() => false);
    if (ok) break;
    if (Date.now() > deadline) {
      child.kill("SIGTERM");
      await child.status;
      throw new Error("the server did not start within 30 s");
    }
    await new Promise((r) => setTimeout(r, 150));
  }
  const adminPassword = (await Deno.readTextFile(`${dir}/data/initial-admin-password`)).trim();
  return {
    base,
    dir,
    adminPassword,
    async stop() {
      try {
        child.kill("SIGTERM");
      } catch { /* gone */ }
      await child.status;
      await Deno.remove(dir, { recursive: true }).catch(() => {});
    },
  };
}

/** What a browser test is given: a running server, its base URL, an admin JWT and chromium. */
export interface UiTestContext {
  server: Server;
  base: string;
  jwt: string;
  browser: Browser;
}

/**
 * A browser test with a fresh `tessera serve` and chromium, both stopped at the end; it runs in
 * the SQLite half of the test command only (the UI is engine-blind).
 */
export function uiTest(name: string, fn: (ctx: UiTestContext) => Promise<void>): void {
  Deno.test({
    name,
    ignore: TEST_ENGINE !== "sqlite",
    sanitizeResources: false,
    sanitizeOps: false,
  }, async () => {
    const server = await startTessera();
    let browser: Browser | undefined;
    try {
      const jwt = await adminJwt(server);
      browser = await launchChromium();
      await fn({ server, base: server.base, jwt, browser });
    } finally {
      await browser?.close().catch(() => {});
      await server.stop();
    }
  });
}

/** Calls the API directly (test setup and checks), as curl would; returns the envelope. */
export async function call(
  base: string,
  method: string,
  path: string,
  params: Record<string, unknown> = {},
  token?: string,
  // deno-lint-ignore no-explicit-any
): Promise<any> {
  const hasBody = method !== "GET" && method !== "DELETE";
  const query = hasBody
    ? ""
    : `?${new URLSearchParams(Object.entries(params).map(([k, v]) => [k, String(v)]))}`;
  const res = await fetch(base + path + query, {
    method,
    headers: {
      "content-type": "application/json",
      ...(token ? { authorization: token } : {}),
    },
    body: hasBody ? JSON.stringify(params) : undefined,
  });
  return await res.json();
}

/** Calls the API with `jwt` and asserts that it succeeded (`result.status` true); returns the envelope. */
export async function ok(
  server: Server,
  jwt: string,
  method: string,
  path: string,
  params: Record<string, unknown> = {},
  // deno-lint-ignore no-explicit-any
): Promise<any> {
  const res = await call(server.base, method, path, params, jwt);
  assert.equal(res.result.status, true, `${method} ${path}: ${JSON.stringify(res)}`);
  return res;
}

/** Users to add: name → password, or name → the fields of `POST /user/` (with `password`). */
export type PeopleUsers = Record<string, string | Record<string, unknown>>;

/**
 * Makes the editable SQL resolver "people" (`people.sqlite` in the server's folder, the default
 * table and columns), the realms over it (default: "staff") and its users, each call asserted.
 */
export async function peopleRealms(
  server: Server,
  jwt: string,
  options: { realms?: string[]; users?: PeopleUsers } = {},
): Promise<void> {
  const defaults = await ok(server, jwt, "GET", "/resolver/sqlresolver/default");
  await ok(server, jwt, "POST", "/resolver/people", {
    ...defaults.result.value,
    type: "sqlresolver",
    Database: "people.sqlite",
    Editable: "1",
  });
  for (const realm of options.realms ?? ["staff"]) {
    await ok(server, jwt, "POST", `/realm/${realm}`, { resolvers: "people" });
  }
  for (const [user, fields] of Object.entries(options.users ?? {})) {
    const more = typeof fields === "string" ? { password: fields } : fields;
    await ok(server, jwt, "POST", "/user/", { user, resolver: "people", ...more });
  }
}

/** An admin JWT through the API. */
export async function adminJwt(server: Server): Promise<string> {
  const res = await call(server.base, "POST", "/auth", {
    username: "admin",
    password: server.adminPassword,
  });
  assert.equal(res.result.status, true, JSON.stringify(res));
  return res.result.value.token as string;
}

/** Console errors and uncaught exceptions of a page. */
export function watchErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on("console", (m) => {
    if (m.type() === "error") errors.push(m.text());
  });
  page.on("pageerror", (e) => errors.push(`uncaught: ${e.message}`));
  return errors;
}

/**
 * A new page in a context of its own (CSP bypassed so that axe can be added to it), sized
 * `viewport` (default 1100 × 900), with its console errors and uncaught exceptions collected.
 */
export async function openPage(
  browser: Browser,
  viewport = { width: 1100, height: 900 },
): Promise<{ page: Page; errors: string[] }> {
  const context = await browser.newContext({ viewport, bypassCSP: true });
  const page = await context.newPage();
  return { page, errors: watchErrors(page) };
}

/** Logs in through the login form and waits for the logged-in page. */
export async function login(page: Page, base: string, username: string, password: string) {
  await page.goto(`${base}/`);
  await page.getByLabel("Username").fill(username);
  await page.getByLabel("Password").fill(password);
  await page.getByRole("button", { name: "Log in" }).click();
  await page.getByRole("button", { name: "Log out" }).waitFor();
}

/** Waits until no part of the page is still loading. */
export async function settled(page: Page) {
  const deadline = Date.now() + 10_000;
  while (await page.getByText("Loading…").count() > 0) {
    assert.ok(Date.now() < deadline, "the page is still loading after 10 s");
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Adds an admin `name` to the server's database with `tessera admin add`, as an operator would. */
export async function addAdmin(server: Server, name: string, password: string) {
  const add = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", `${ROOT}main.ts`, "admin", "add", name, "--password", password],
    cwd: server.dir,
    env: { NO_COLOR: "1" },
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).output();
  assert.ok(add.success, new TextDecoder().decode(add.stderr));
}
