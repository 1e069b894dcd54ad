/**
 * `GET /metrics` (Prometheus text format), switched on by `metrics.enabled`:
 * requests by route, method and status, request latency, `/validate` outcomes,
 * the audit queue, cache lookups and the PostgreSQL pool. Answered to an
 * admin JWT or to `Authorization: Bearer <metrics.token>`. When metrics are
 * off, nothing is counted and the route answers 404.
 *
 * Every label value comes from a fixed set (the route table's paths, the
 * standard methods, the statuses Tessera answers with; anything else is
 * `other`), so no client can add series. Under `serve --workers N` each worker
 * answers its own counters on a Unix socket in a directory only the service
 * user can open; the worker a scrape reaches adds up every worker's counters,
 * so the numbers are the server's, whichever worker answers.
 *
 * @module
 */
import type { Context, MiddlewareHandler } from "hono";
import { matchedRoutes } from "hono/route";
import type { Registry } from "prom-client";
import type { AppEnv } from "./context.ts";
import type { Deps } from "../deps.ts";
import { ENVELOPE_BODIES } from "./envelope.ts";
import { authenticate } from "./auth.ts";
import { AuthError, HttpError } from "../errors.ts";
import { cacheLookups } from "../db/direct.ts";
import { poolStats } from "../db/postgres.ts";
import { safeEqual } from "../lib/crypto.ts";

/** The metrics of one app. */
export interface Metrics {
  registry: Registry;
  middleware: MiddlewareHandler<AppEnv>;
  /** The text of a scrape: this process's metrics, summed with its sibling workers'. */
  scrape(): Promise<string>;
}

/** The sibling workers of `serve --workers N` a scrape adds up. */
export interface MetricsPeers {
  /** A directory only the service user can open; worker `i` answers on `<dir>/<i>.sock`. */
  dir: string;
  /** This worker's number. */
  worker: number;
}

let promClient: typeof import("prom-client") | undefined;

/**
 * Loads prom-client, which {@link createMetrics} needs: only a server with
 * metrics on loads it (about 2 MB resident), before it creates its app.
 */
export async function loadMetricsLibrary(): Promise<void> {
  promClient ??= await import("prom-client");
}

/** The label value of anything outside a label's fixed set. */
export const OTHER_LABEL = "other";

const METHODS: ReadonlySet<string> = new Set([
  "GET",
  "HEAD",
  "POST",
  "PUT",
  "DELETE",
  "PATCH",
  "OPTIONS",
]);
const OUTCOMES: ReadonlySet<string> = new Set(["ACCEPT", "REJECT", "CHALLENGE", "DECLINED"]);
// a sibling that does not answer within this long is left out of the scrape
const PEER_TIMEOUT_MS = 2000;
// a sibling's answer is its own metrics: a few kB; anything far larger is not one
const PEER_MAX_BYTES = 4 * 1024 * 1024;
const PEER_SOCKET_REGEXP = /^(\d+)\.sock$/;

// the matched route's path (from the route table), so the set of values is the table's
function routeOf(c: Context<AppEnv>): string {
  const r = matchedRoutes(c).find((m) => m.method !== "ALL" || !m.path.endsWith("*"));
  return r ? r.path.replace(/(.)\/+$/, "$1") : OTHER_LABEL;
}

// the client chooses the method: only the standard ones are kept as they are
function methodOf(c: Context<AppEnv>): string {
  const m = c.req.method;
  return METHODS.has(m) ? m : OTHER_LABEL;
}

function statusOf(c: Context<AppEnv>): string {
  const s = c.res?.status ?? 500;
  return Number.isInteger(s) && s >= 100 && s <= 599 ? String(s) : OTHER_LABEL;
}

/** Builds the registry and the counting middleware for `deps`. */
export function createMetrics(deps: Deps, peers?: MetricsPeers): Metrics {
  if (!promClient) throw new Error("metrics: loadMetricsLibrary() must run before createMetrics");
  const { AggregatorRegistry, Counter, Gauge, Histogram, Registry } = promClient;
  const registry = new Registry();
  const requests = new Counter({
    name: "tessera_http_requests_total",
    help: "HTTP requests by route, method and status",
    labelNames: ["route", "method", "status"],
    registers: [registry],
  });
  const duration = new Histogram({
    name: "tessera_http_request_duration_seconds",
    help: "HTTP request latency by route and method",
    labelNames: ["route", "method"],
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [registry],
  });
  const outcomes = new Counter({
    name: "tessera_validate_results_total",
    help: "/validate answers by outcome (ACCEPT, REJECT, CHALLENGE, ERROR)",
    labelNames: ["outcome"],
    registers: [registry],
  });
  new Gauge({
    name: "tessera_audit_queue_rows",
    help: "audit rows waiting to be written",
    registers: [registry],
    collect() {
      this.set(deps.audit.pending);
    },
  });
  new Gauge({
    name: "tessera_cache_lookups",
    help: "lookups of this process's configuration caches since start, by result",
    labelNames: ["result"],
    registers: [registry],
    collect() {
      const { hits, misses } = cacheLookups();
      this.set({ result: "hit" }, hits);
      this.set({ result: "miss" }, misses);
    },
  });
  new Gauge({
    name: "tessera_db_pool_connections",
    help: "PostgreSQL pool connections by state (total, idle, waiting clients)",
    labelNames: ["state"],
    registers: [registry],
    collect() {
      const stats = poolStats(deps.db);
      if (!stats) return;
      this.set({ state: "total" }, stats.total);
      this.set({ state: "idle" }, stats.idle);
      this.set({ state: "waiting" }, stats.waiting);
    },
  });
  new Gauge({
    name: "tessera_metrics_workers",
    help: "processes whose metrics this scrape adds up (serve --workers N: N when all answered)",
    registers: [registry],
    collect() {
      this.set(1);
    },
  });
  const middleware: MiddlewareHandler<AppEnv> = async (c, next) => {
    const started = performance.now();
    try {
      await next();
    } finally {
      const route = routeOf(c);
      const method = methodOf(c);
      requests.inc({ route, method, status: statusOf(c) });
      duration.observe({ route, method }, (performance.now() - started) / 1000);
      if (route.startsWith("/validate/")) {
        const body = c.res ? ENVELOPE_BODIES.get(c.res) : undefined;
        const result = body?.result as Record<string, unknown> | undefined;
        const auth = result?.authentication;
        outcomes.inc({
          outcome: typeof auth === "string"
            ? (OUTCOMES.has(auth) ? auth : "OTHER")
            : result?.status === false
            ? "ERROR"
            : "OTHER",
        });
      }
    }
  };
  if (peers) servePeers(registry, peers, deps);
  const scrape = async () => {
    if (!peers) return await registry.metrics();
    const own = await registry.getMetricsAsJSON();
    const others = await readPeers(peers, deps);
    return await AggregatorRegistry.aggregate([own, ...others]).metrics();
  };
  return { registry, middleware, scrape };
}

// Answers this worker's metrics (prom-client's JSON form) to each connection on its socket.
// The listener does not keep the process alive; it goes with the process (Deno removes the
// file when the listener closes, a restarted worker replaces a stale one).
function servePeers(registry: Registry, peers: MetricsPeers, deps: Deps): void {
  const path = `${peers.dir}/${peers.worker}.sock`;
  try {
    Deno.removeSync(path);
  } catch {
    // none left behind
  }
  const listener = Deno.listen({ transport: "unix", path });
  listener.unref();
  (async () => {
    for await (const conn of listener) {
      (async () => {
        try {
          const text = JSON.stringify(await registry.getMetricsAsJSON());
          const bytes = new TextEncoder().encode(text);
          for (let off = 0; off < bytes.length;) off += await conn.write(bytes.subarray(off));
        } catch (err) {
          deps.log.warn("Cannot answer a sibling worker's metrics request", {
            error: err as Error,
          });
        } finally {
          conn.close();
        }
      })();
    }
  })().catch((err) => {
    deps.log.warn("Metrics socket closed", { error: err as Error });
  });
}

// The metrics of every other worker whose socket answers; one that does not is left out (and
// logged): a scrape never waits long for a worker that hangs or restarts.
async function readPeers(peers: MetricsPeers, deps: Deps): Promise<object[][]> {
  const paths: string[] = [];
  for (const e of Deno.readDirSync(peers.dir)) {
    const m = PEER_SOCKET_REGEXP.exec(e.name);
    if (m && Number(m[1]) !== peers.worker) paths.push(`${peers.dir}/${e.name}`);
  }
  const answers = await Promise.all(paths.map(async (path) => {
    try {
      return JSON.parse(await readSocket(path)) as object[];
    } catch (err) {
      deps.log.warn("A sibling worker did not answer the metrics request", {
        socket: path,
        error: err as Error,
      });
      return undefined;
    }
  }));
  return answers.filter((a): a is object[] => a !== undefined);
}

async function readSocket(path: string): Promise<string> {
  const conn = await Deno.connect({ transport: "unix", path });
  const timer = setTimeout(() => conn.close(), PEER_TIMEOUT_MS);
  try {
    const chunks: Uint8Array[] = [];
    let size = 0;
    const buf = new Uint8Array(64 * 1024);
    for (;;) {
      const n = await conn.read(buf);
      if (n === null) break;
      size += n;
      if (size > PEER_MAX_BYTES) throw new Error("answer too large");
      chunks.push(buf.slice(0, n));
    }
    const all = new Uint8Array(size);
    let off = 0;
    for (const c of chunks) {
      all.set(c, off);
      off += c.length;
    }
    return new TextDecoder().decode(all);
  } finally {
    clearTimeout(timer);
    try {
      conn.close();
    } catch {
      // closed by the timer
    }
  }
}

/** The `GET /metrics` handler: admin JWT or the metrics token; 404 while metrics are off. */
export function metricsHandler(metrics: Metrics | undefined) {
  return async (c: Context<AppEnv>): Promise<Response> => {
    if (!metrics) throw new HttpError(404, "The requested URL was not found on the server.", 404);
    const token = c.get("deps").config.metrics.token;
    const header = c.req.header("authorization") ?? "";
    const bearer = header.toLowerCase().startsWith("bearer ") ? header.slice(7).trim() : "";
    if (!(token !== "" && bearer !== "" && safeEqual(bearer, token))) {
      const identity = await authenticate(c);
      if (identity.role !== "admin") {
        throw new AuthError(
          "Authentication failure. You do not have the necessary role (['admin']) to access this resource!",
          4306,
        );
      }
    }
    return c.body(await metrics.scrape(), 200, {
      "content-type": metrics.registry.contentType,
      "cache-control": "no-store",
    });
  };
}
