/**
 * `GET /metrics` (Prometheus text format), switched on by `metrics.enabled`:
 * requests by route, method and status, request latency, `/validate` outcomes,
 * the audit queue, cache lookups and the PostgreSQL pool. Answered to an
 * admin JWT or to `Authorization: Bearer <metrics.token>`. When metrics are
 * off, nothing is counted and the route answers 404.
 *
 * @module
 */
import type { Context, MiddlewareHandler } from "hono";
import { matchedRoutes } from "hono/route";
import { Counter, Gauge, Histogram, Registry } from "prom-client";
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
}

function routeOf(c: Context<AppEnv>): string {
  const r = matchedRoutes(c).find((m) => m.method !== "ALL" || !m.path.endsWith("*"));
  return r ? r.path.replace(/(.)\/+$/, "$1") : "unmatched";
}

/** Builds the registry and the counting middleware for `deps`. */
export function createMetrics(deps: Deps): Metrics {
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
  const middleware: MiddlewareHandler<AppEnv> = async (c, next) => {
    const started = performance.now();
    try {
      await next();
    } finally {
      const route = routeOf(c);
      const status = String(c.res?.status ?? 500);
      requests.inc({ route, method: c.req.method, status });
      duration.observe({ route, method: c.req.method }, (performance.now() - started) / 1000);
      if (route.startsWith("/validate/")) {
        const body = c.res ? ENVELOPE_BODIES.get(c.res) : undefined;
        const result = body?.result as Record<string, unknown> | undefined;
        const auth = typeof result?.authentication === "string" ? result.authentication : undefined;
        outcomes.inc({ outcome: auth ?? (result?.status === false ? "ERROR" : "OTHER") });
      }
    }
  };
  return { registry, middleware };
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
    return c.body(await metrics.registry.metrics(), 200, {
      "content-type": metrics.registry.contentType,
      "cache-control": "no-store",
    });
  };
}
