import assert from "node:assert/strict";
import { sign } from "hono/jwt";
import { createApp } from "../../src/app.ts";
import { loadConfig } from "../../src/config.ts";
import type { Deps } from "../../src/deps.ts";
import { migrateToLatest, openDatabase } from "../../src/db/database.ts";
import { EXTERNAL_CHECK_MS } from "../../src/db/sqlite_adapter.ts";
import {
  addAdmin,
  adminHashLoad,
  deleteAdmin,
  setAdminPassword,
} from "../../src/domain/admin/mod.ts";
import { FAILED_LOGIN_MIN_MS } from "../../src/domain/auth/mod.ts";
import { AuditWriter } from "../../src/domain/audit/mod.ts";
import { keysFromKeyFile } from "../../src/domain/keys/mod.ts";
import { FixedClock } from "../../src/lib/clock.ts";
import { memoryLogger } from "../../src/lib/logger.ts";
import { secureRandom, toHex } from "../../src/lib/random.ts";
import { closeRuntime, openRuntime } from "../../src/runtime.ts";
import { createUsers } from "../fixtures/users.ts";
import {
  ADMIN_PASSWORD,
  createTestApp,
  type Json,
  jsonOf,
  TEST_EPOCH_MS,
  type TestApp,
} from "../test_app.ts";

const MAIN = new URL("../../main.ts", import.meta.url).pathname;

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** A login through `t` from `remoteAddr`, with its answer time. */
async function timedLogin(
  t: TestApp,
  body: Record<string, string>,
  remoteAddr: string,
): Promise<{ status: number; body: Json; ms: number }> {
  const started = performance.now();
  const res = await jsonOf(await t.post("/auth", body, { remoteAddr }));
  return { ...res, ms: performance.now() - started };
}

/** Logs in through any app and returns the JWT (asserting success). */
async function tokenOf(
  request: (body: Record<string, string>) => Promise<Response>,
  username: string,
  password: string,
): Promise<string> {
  const res = await jsonOf(await request({ username, password }));
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body.result.value.token as string;
}

function loginVia(t: TestApp, remoteAddr = "127.0.0.1") {
  return (body: Record<string, string>) => t.post("/auth", body, { remoteAddr });
}

function assertTooMany(res: { status: number; body: Json }, message: RegExp): void {
  assert.equal(res.status, 429, JSON.stringify(res.body));
  assert.equal(res.body.result.status, false);
  assert.equal(res.body.result.error.code, 429);
  assert.match(res.body.result.error.message, message);
}

function assertRevoked(res: { status: number; body: Json }): void {
  assert.equal(res.status, 401, JSON.stringify(res.body));
  assert.equal(res.body.result.error.code, 4304);
  assert.match(
    res.body.result.error.message,
    /^Authentication failure\. Error decoding the Authorization token: the admin was deleted or changed the password/,
  );
}

// --- login limits ---------------------------------------------------------

Deno.test("POST /auth over a real listener: a flood from one address gets 429 at once, an admin from another address logs in without waiting for it", async () => {
  const t = await createTestApp();
  await addAdmin(t.deps, "admin", { password: ADMIN_PASSWORD });
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    (req, info) => t.app.fetch(req, info),
  );
  // a second loopback address: another client as the app sees it
  const otherClient = Deno.createHttpClient({ localAddress: "127.0.0.2" });
  const url = `http://127.0.0.1:${server.addr.port}/auth`;
  async function login(password: string, client?: Deno.HttpClient) {
    const started = performance.now();
    const res = await fetch(url, {
      method: "POST",
      body: new URLSearchParams({ username: "admin", password }),
      client,
    });
    const body = await res.json();
    return { status: res.status, body, ms: performance.now() - started };
  }
  try {
    // one login alone: what a hash costs on this machine right now (CI machines are busy)
    const alone = await login(ADMIN_PASSWORD, otherClient);
    assert.equal(alone.status, 200);
    const flood = Array.from({ length: 300 }, (_, i) => login(`wrong-${i}`));
    // the admin arrives while the flood is under way
    await Promise.race(flood);
    const admin = await login(ADMIN_PASSWORD, otherClient);
    const answers = await Promise.all(flood);

    assert.equal(admin.status, 200, JSON.stringify(admin.body));
    assert.equal(admin.body.result.value.role, "admin");
    // it may wait behind the few hashes the flooding address is allowed (4 at once), never
    // behind the flood (300 hashes: ~27 s on a quiet machine before the limits existed)
    const bound = Math.max(3000, 8 * alone.ms);
    assert.ok(
      admin.ms < bound,
      `the admin waited ${Math.round(admin.ms)} ms (one login alone: ${Math.round(alone.ms)} ms)`,
    );

    const refused = answers.filter((a) => a.status === 429);
    const failed = answers.filter((a) => a.status === 401);
    assert.equal(refused.length + failed.length, 300);
    // at most login_failures (10) attempts of the flooding address were checked
    assert.ok(failed.length <= 10, `${failed.length} bogus logins were checked`);
    assertTooMany(refused[0], /^Cannot log in: too many (failed )?logins from "127\.0\.0\.1"/);
    // refusals cost no hash and no waiting: quicker than any checked failure
    const fastest401 = Math.min(...failed.map((a) => a.ms));
    const quickRefusals = refused.filter((a) => a.ms < fastest401).length;
    assert.ok(quickRefusals >= 150, `${quickRefusals} refusals came before the first 401`);
  } finally {
    otherClient.close();
    await server.shutdown();
    await t.close();
  }
});

Deno.test("POST /auth: a full admin password queue answers 429 at once, for admin and unknown names alike", async () => {
  const t = await createTestApp({ configText: "[auth]\nlogin_queue = 3\n" });
  await addAdmin(t.deps, "admin", { password: ADMIN_PASSWORD });
  // 40 clients at once, each from its own address (the per-address limits do not apply)
  const answers = await Promise.all(
    Array.from(
      { length: 40 },
      (_, i) =>
        timedLogin(
          t,
          { username: i % 2 ? "admin" : `ghost${i}`, password: "wrong" },
          `10.1.0.${i}`,
        ),
    ),
  );
  const refused = answers.filter((a) => a.status === 429);
  const failed = answers.filter((a) => a.status === 401);
  assert.equal(refused.length + failed.length, 40);
  // one hash runs, three wait; a freed place may take one more late arrival
  assert.ok(failed.length >= 4 && failed.length <= 8, `${failed.length} were checked`);
  for (const r of refused) {
    assertTooMany(r, /^Cannot log in: the server is busy with other logins/);
  }
  for (const f of failed) assert.equal(f.body.result.error.code, 4031);
  // a refusal never waits in the line: it comes before the last checked login ends (which
  // waited for the hashes ahead of it). Compared with the last, not the first, checked
  // login: under CPU load or on PostgreSQL, arrival order at the line is the scheduler's.
  assert.ok(
    Math.max(...refused.map((a) => a.ms)) < Math.max(...failed.map((a) => a.ms)),
    "every refusal came before the last checked login ended",
  );
  assert.deepEqual(adminHashLoad(), { running: 0, waiting: 0 });
  // once the line is short again the admin gets in
  const ok = await timedLogin(t, { username: "admin", password: ADMIN_PASSWORD }, "10.1.1.1");
  assert.equal(ok.status, 200);
  await t.close();
});

Deno.test("POST /auth: after login_failures failures an address gets 429 until the window ends; the admin logs in from elsewhere", async () => {
  const t = await createTestApp({
    configText: "[auth]\nlogin_failures = 3\nlogin_failure_window = 60\n",
  });
  await addAdmin(t.deps, "admin", { password: ADMIN_PASSWORD });
  const right = { username: "admin", password: ADMIN_PASSWORD };
  for (let i = 0; i < 3; i++) {
    const r = await timedLogin(t, { username: "admin", password: `guess-${i}` }, "10.0.0.1");
    assert.equal(r.status, 401);
    assert.equal(r.body.result.error.code, 4031);
  }
  // the address is refused, even with the right password
  assertTooMany(
    await timedLogin(t, right, "10.0.0.1"),
    /^Cannot log in: too many failed logins from "10\.0\.0\.1", try again in 60 seconds$/,
  );
  // the account is not locked: the same admin from another address
  const elsewhere = await timedLogin(t, right, "10.0.0.2");
  assert.equal(elsewhere.status, 200);
  assert.equal(elsewhere.body.result.value.username, "admin");
  t.clock.advance(30_000);
  assertTooMany(await timedLogin(t, right, "10.0.0.1"), /try again in 30 seconds$/);
  t.clock.advance(30_000);
  assert.equal((await timedLogin(t, right, "10.0.0.1")).status, 200);
  // the refusals are audited as failures
  await t.deps.audit.flush();
  const rows = await t.deps.db.selectFrom("audit").select(["client", "success", "info"])
    .where("action", "=", "POST /auth").where("client", "=", "10.0.0.1").execute();
  assert.equal(rows.filter((r) => !r.success && /too many failed/.test(r.info)).length, 2);
  await t.close();
});

Deno.test("POST /auth: an IPv6 client is counted by its /64", async () => {
  const t = await createTestApp({ configText: "[auth]\nlogin_failures = 2\n" });
  await addAdmin(t.deps, "admin", { password: ADMIN_PASSWORD });
  const right = { username: "admin", password: ADMIN_PASSWORD };
  for (const addr of ["2001:db8::1", "2001:db8::2"]) {
    assert.equal((await timedLogin(t, { username: "nobody", password: "x" }, addr)).status, 401);
  }
  assertTooMany(await timedLogin(t, right, "2001:db8::ffff"), /too many failed logins/);
  assert.equal((await timedLogin(t, right, "2001:db8:0:1::1")).status, 200);
  await t.close();
});

Deno.test("POST /auth: a realm user's login does not wait behind admin password hashes", async () => {
  const t = await createTestApp();
  await addAdmin(t.deps, "admin", { password: ADMIN_PASSWORD });
  await createUsers(t.deps, { realm: "r1", users: [{ login: "alice", password: "alice-pw" }] });
  const flood = Array.from(
    { length: 12 },
    (_, i) => timedLogin(t, { username: "admin", password: "wrong" }, `10.2.0.${i}`),
  );
  for (let i = 0; adminHashLoad().waiting === 0; i++) {
    assert.ok(i < 2000, "the admin password line never filled");
    await delay(1);
  }
  const alice = await timedLogin(
    t,
    { username: "alice", realm: "r1", password: "alice-pw" },
    "10.3.0.1",
  );
  const load = adminHashLoad();
  assert.equal(alice.status, 200, JSON.stringify(alice.body));
  assert.equal(alice.body.result.value.role, "user");
  assert.ok(load.running + load.waiting > 0, "alice was answered while admin hashes still queued");
  await Promise.all(flood);
  await t.close();
});

Deno.test("POST /auth: unknown name, wrong admin password and wrong realm password fail alike and no quicker than the floor", async () => {
  const t = await createTestApp();
  await addAdmin(t.deps, "admin", { password: ADMIN_PASSWORD });
  await createUsers(t.deps, { realm: "r1", users: [{ login: "alice", password: "alice-pw" }] });
  const cases: Record<string, string>[] = [
    { username: "ghost", password: "x" },
    { username: "admin", password: "x" },
    { username: "alice", realm: "r1", password: "x" },
  ];
  for (const [i, body] of cases.entries()) {
    const r = await timedLogin(t, body, `10.4.0.${i}`);
    assert.equal(r.status, 401, body.username);
    assert.equal(r.body.result.error.message, "Authentication failure. Wrong credentials");
    assert.deepEqual(r.body.detail, {});
    assert.ok(r.ms >= FAILED_LOGIN_MIN_MS, `${body.username}: ${r.ms} ms`);
  }
  await t.close();
});

// --- JWT invalidation -------------------------------------------------------

Deno.test("admin JWT: deleting the admin refuses it at once (401) and changes nothing; another admin's JWT works", async () => {
  const t = await createTestApp();
  const token = await t.adminToken();
  await addAdmin(t.deps, "bob", { password: "bob-password" });
  const bob = await tokenOf(loginVia(t), "bob", "bob-password");
  assert.equal((await t.get("/system/", { token })).status, 200);

  await deleteAdmin(t.deps, "admin");
  assertRevoked(
    await jsonOf(await t.post("/system/setConfig", { revokedKey: "1" }, { token })),
  );
  assertRevoked(await jsonOf(await t.get("/system/", { token })));
  const seen = await jsonOf(await t.get("/system/", { token: bob }));
  assert.equal(seen.status, 200);
  assert.equal(seen.body.result.value.revokedKey, undefined, "the refused call changed nothing");

  // an admin of the same name created again does not revive the old JWT
  await addAdmin(t.deps, "admin", { password: ADMIN_PASSWORD });
  assertRevoked(await jsonOf(await t.get("/system/", { token })));
  const fresh = await tokenOf(loginVia(t), "admin", ADMIN_PASSWORD);
  assert.equal((await t.get("/system/", { token: fresh })).status, 200);
  await t.close();
});

Deno.test("admin JWT: a password change refuses earlier JWTs; the new password logs in; other admins are unaffected", async () => {
  const t = await createTestApp();
  const token = await t.adminToken();
  await addAdmin(t.deps, "bob", { password: "bob-password" });
  const bob = await tokenOf(loginVia(t), "bob", "bob-password");
  assert.equal((await t.get("/system/", { token })).status, 200);

  await setAdminPassword(t.deps, "admin", "a-new-password");
  assertRevoked(await jsonOf(await t.get("/system/", { token })));
  assert.equal(
    (await t.post("/auth", { username: "admin", password: ADMIN_PASSWORD })).status,
    401,
  );
  const fresh = await tokenOf(loginVia(t), "admin", "a-new-password");
  assert.equal((await t.get("/system/", { token: fresh })).status, 200);
  assert.equal((await t.get("/system/", { token: bob })).status, 200);
  await t.close();
});

Deno.test("admin JWT: one without a credential version (issued before migration 0011) is refused", async () => {
  const t = await createTestApp();
  await t.adminToken();
  const key = toHex(t.deps.keys.jwtSecret);
  const old = await sign(
    {
      username: "admin",
      realm: "",
      nonce: "0".repeat(40),
      role: "admin",
      authtype: "password",
      rights: [],
      resolver: "",
      exp: Math.floor(t.clock.now() / 1000) + 600,
    },
    key,
    "HS256",
  );
  assertRevoked(await jsonOf(await t.get("/system/", { token: old })));
  await t.close();
});

Deno.test("realm users' JWTs (user role and superuser realm admins) carry no credential version and keep working", async () => {
  const t = await createTestApp({ configText: '[auth]\nsuperuser_realms = ["helpdesk"]\n' });
  await createUsers(t.deps, { realm: "r1", users: [{ login: "alice", password: "alice-pw" }] });
  await createUsers(t.deps, { realm: "helpdesk", users: [{ login: "carl", password: "carl-pw" }] });
  const alice = await tokenOf(loginVia(t), "alice@r1", "alice-pw");
  const carl = await tokenOf(loginVia(t), "carl@helpdesk", "carl-pw");
  for (const token of [alice, carl]) {
    const claims = JSON.parse(atob(token.split(".")[1].replace(/-/g, "+").replace(/_/g, "/")));
    assert.equal(claims.credential_version, undefined);
  }
  // admins come and go; realm users are not in the admin table
  await t.adminToken();
  await deleteAdmin(t.deps, "admin");
  assert.equal((await t.get("/auth/rights", { token: alice })).status, 200);
  assert.equal((await t.get("/system/", { token: carl })).status, 200);
  await t.close();
});

type RequestFn = (
  method: string,
  path: string,
  opts?: { token?: string; body?: Record<string, string> },
) => Promise<Response>;

/** Form requests to `app` from 127.0.0.1, with an optional JWT. */
function requesterOf(app: ReturnType<typeof createApp>): RequestFn {
  return async (method, path, opts = {}) =>
    await app.request(`http://localhost${path}`, {
      method,
      headers: {
        ...(opts.token ? { "PI-Authorization": opts.token } : {}),
        ...(opts.body ? { "content-type": "application/x-www-form-urlencoded" } : {}),
      },
      body: opts.body ? new URLSearchParams(opts.body).toString() : undefined,
    }, { remoteAddr: { hostname: "127.0.0.1" } });
}

/** Two apps on one SQLite file through two connections, as two processes would be. */
async function withTwoApps(
  fn: (
    a: { deps: Deps; request: RequestFn },
    b: { deps: Deps; request: RequestFn },
  ) => Promise<void>,
): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "tessera-auth-security-" });
  const keyBytes = secureRandom.bytes(96);
  const clock = new FixedClock(TEST_EPOCH_MS);
  const nodes: { deps: Deps; request: RequestFn }[] = [];
  try {
    for (const name of ["a", "b"]) {
      const config = loadConfig({ overrides: { dataDir: dir } });
      config.signing.enabled = false;
      const db = openDatabase(`sqlite:${dir}/tessera.sqlite`);
      if (name === "a") await migrateToLatest(db);
      const log = memoryLogger();
      const deps: Deps = {
        config,
        db,
        clock,
        random: secureRandom,
        keys: keysFromKeyFile(keyBytes),
        log,
        audit: new AuditWriter(db, log),
        nodeName: name,
      };
      nodes.push({ deps, request: requesterOf(createApp(deps)) });
    }
    await fn(nodes[0], nodes[1]);
  } finally {
    for (const n of nodes) {
      await n.deps.audit.flush();
      await n.deps.db.destroy();
    }
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("admin JWT: another connection to the same SQLite file sees a password change and a deletion on its next request", async () => {
  await withTwoApps(async (a, b) => {
    await addAdmin(a.deps, "admin", { password: ADMIN_PASSWORD });
    const token = await tokenOf(
      (body) => a.request("POST", "/auth", { body }),
      "admin",
      ADMIN_PASSWORD,
    );
    // both caches hold the admin's credential version now
    assert.equal((await a.request("GET", "/system/", { token })).status, 200);
    assert.equal((await b.request("GET", "/system/", { token })).status, 200);

    await setAdminPassword(a.deps, "admin", "a-new-password");
    assertRevoked(await jsonOf(await a.request("GET", "/system/", { token })));
    assertRevoked(await jsonOf(await b.request("GET", "/system/", { token })));

    const fresh = await tokenOf(
      (body) => b.request("POST", "/auth", { body }),
      "admin",
      "a-new-password",
    );
    assert.equal((await a.request("GET", "/system/", { token: fresh })).status, 200);
    assert.equal((await b.request("GET", "/system/", { token: fresh })).status, 200);

    await deleteAdmin(b.deps, "admin");
    // another connection's commit is noticed once EXTERNAL_CHECK_MS has passed (direct.ts)
    await delay(EXTERNAL_CHECK_MS + 1);
    assertRevoked(await jsonOf(await a.request("GET", "/system/", { token: fresh })));
  });
});

Deno.test("admin JWT: the CLI's `admin password` and `admin delete` (another process) refuse a running server's JWTs", async () => {
  const dir = `${await Deno.makeTempDir({ prefix: "tessera-auth-cli-" })}/data`;
  const config = loadConfig({ overrides: { dataDir: dir } });
  config.signing.enabled = false;
  const deps = await openRuntime(config, memoryLogger());
  const request = requesterOf(createApp(deps));
  async function cli(...args: string[]) {
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", MAIN, ...args, "--data-dir", dir],
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
      env: { NO_COLOR: "1" },
    }).output();
    assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
  }
  try {
    await addAdmin(deps, "admin", { password: ADMIN_PASSWORD });
    const login = (body: Record<string, string>) => request("POST", "/auth", { body });
    const token = await tokenOf(login, "admin", ADMIN_PASSWORD);
    assert.equal((await request("GET", "/system/", { token })).status, 200);

    await cli("admin", "password", "admin", "--password", "a-new-password");
    assertRevoked(await jsonOf(await request("GET", "/system/", { token })));
    const fresh = await tokenOf(login, "admin", "a-new-password");
    assert.equal((await request("GET", "/system/", { token: fresh })).status, 200);

    await cli("admin", "delete", "admin");
    assertRevoked(await jsonOf(await request("GET", "/system/", { token: fresh })));
  } finally {
    await closeRuntime(deps);
    await Deno.remove(dir.replace(/\/data$/, ""), { recursive: true });
  }
});
