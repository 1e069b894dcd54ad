/**
 * `createTestApp()`: an app on an in-memory database, migrated, with a fixed
 * clock, plus small request helpers. Every test builds its own.
 *
 * @module
 */
import type { Hono } from "hono";
import { createApp } from "../src/app.ts";
import { loadMetricsLibrary } from "../src/http/metrics.ts";
import { type Config, loadConfig } from "../src/config.ts";
import type { Deps } from "../src/deps.ts";
import { openTestDatabase } from "./test_db.ts";
import { AuditWriter } from "../src/domain/audit/mod.ts";
import { keysFromKeyFile } from "../src/domain/keys/mod.ts";
import { addAdmin } from "../src/domain/admin/mod.ts";
import { FixedClock } from "../src/lib/clock.ts";
import { memoryLogger } from "../src/lib/logger.ts";
import { secureRandom } from "../src/lib/random.ts";
import type { AppEnv } from "../src/http/context.ts";
import type { RouteRule } from "../src/http/rights/route_rights.ts";

/** Fixed start time of test clocks: 2026-01-01T00:00:00Z. */
export const TEST_EPOCH_MS = Date.UTC(2026, 0, 1);

/** The password of the `admin` every test app has. */
export const ADMIN_PASSWORD = "test-admin-password";

/** Request body: form fields (urlencoded) or JSON. */
export type Body = Record<string, unknown> | undefined;

/** A test app with its dependencies and helpers. */
export interface TestApp {
  app: Hono<AppEnv>;
  deps: Deps;
  clock: FixedClock;
  log: ReturnType<typeof memoryLogger>;
  /** JWT of the `admin` test admin (created lazily). */
  adminToken(): Promise<string>;
  /** Sends a request; `body` goes as form fields unless `json` is set. */
  request(method: string, path: string, options?: RequestOptions): Promise<Response>;
  get(path: string, options?: RequestOptions): Promise<Response>;
  post(path: string, body?: Body, options?: RequestOptions): Promise<Response>;
  put(path: string, body?: Body, options?: RequestOptions): Promise<Response>;
  delete(path: string, options?: RequestOptions): Promise<Response>;
  /** Like `request`, authenticated as the test admin. */
  asAdmin(method: string, path: string, options?: RequestOptions): Promise<Response>;
  close(): Promise<void>;
}

/** Options of a test request. */
export interface RequestOptions {
  body?: Body;
  /** Send the body as JSON instead of form fields. */
  json?: boolean;
  query?: Record<string, string>;
  headers?: Record<string, string>;
  /** JWT for the PI-Authorization header. */
  token?: string;
  /** Peer address seen by the app. */
  remoteAddr?: string;
}

/** Builds a fresh test app. `configText` is TOML merged over the defaults. */
export async function createTestApp(
  options: {
    configText?: string;
    deps?: Partial<Deps>;
    /** Rights of routes the test mounts on the app (see src/http/rights/route_rights.ts). */
    routeRules?: Readonly<Record<string, RouteRule>>;
  } = {},
): Promise<TestApp> {
  const config: Config = loadConfig({
    fileText: options.configText,
    overrides: { dataDir: await Deno.makeTempDir({ prefix: "tessera-test-" }) },
  });
  config.signing.enabled = false;
  const testDb = await openTestDatabase();
  config.storage.databaseUrl = testDb.url;
  const db = testDb.db;
  const log = memoryLogger();
  const clock = new FixedClock(TEST_EPOCH_MS);
  const deps: Deps = {
    config,
    db,
    clock,
    random: secureRandom,
    keys: keysFromKeyFile(secureRandom.bytes(96)),
    log,
    audit: new AuditWriter(db, log),
    nodeName: "test-node",
    ...options.deps,
  };
  if (deps.config.metrics.enabled) await loadMetricsLibrary();
  const app = createApp(deps, { routeRules: options.routeRules });
  let adminToken: string | undefined;

  const request = async (method: string, path: string, opts: RequestOptions = {}) => {
    let url = `http://localhost${path}`;
    if (opts.query) url += (path.includes("?") ? "&" : "?") + new URLSearchParams(opts.query);
    const headers: Record<string, string> = { ...opts.headers };
    if (opts.token) headers["PI-Authorization"] = opts.token;
    let body: BodyInit | undefined;
    if (opts.body !== undefined) {
      if (opts.json) {
        body = JSON.stringify(opts.body);
        headers["content-type"] ??= "application/json";
      } else {
        const form = new URLSearchParams();
        for (const [k, v] of Object.entries(opts.body)) form.set(k, String(v));
        body = form.toString();
        headers["content-type"] ??= "application/x-www-form-urlencoded";
      }
    }
    return await app.request(url, { method, headers, body }, {
      remoteAddr: { hostname: opts.remoteAddr ?? "127.0.0.1" },
    });
  };

  const t: TestApp = {
    app,
    deps,
    clock,
    log,
    async adminToken() {
      if (adminToken) return adminToken;
      await addAdmin(deps, "admin", { password: ADMIN_PASSWORD });
      const res = await request("POST", "/auth", {
        body: { username: "admin", password: ADMIN_PASSWORD },
      });
      const json = await res.json();
      if (res.status !== 200) throw new Error(`admin login failed: ${JSON.stringify(json)}`);
      adminToken = json.result.value.token as string;
      return adminToken;
    },
    request,
    get: (path, o) => request("GET", path, o),
    post: (path, body, o) => request("POST", path, { ...o, body }),
    put: (path, body, o) => request("PUT", path, { ...o, body }),
    delete: (path, o) => request("DELETE", path, o),
    async asAdmin(method, path, o = {}) {
      return await request(method, path, { ...o, token: await t.adminToken() });
    },
    async close() {
      await deps.audit.flush();
      await testDb.drop();
      await Deno.remove(config.storage.dataDir, { recursive: true }).catch(() => {});
    },
  };
  return t;
}

/** A parsed JSON response body (tests read arbitrary paths of it). */
// deno-lint-ignore no-explicit-any
export type Json = Record<string, any>;

/** Reads a response as JSON and returns it with the status. */
export async function jsonOf(res: Response): Promise<{ status: number; body: Json }> {
  const text = await res.text();
  try {
    return { status: res.status, body: JSON.parse(text) };
  } catch {
    throw new Error(`expected JSON, got status ${res.status}: ${text.slice(0, 200)}`);
  }
}
