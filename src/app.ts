/**
 * `createApp(deps)`: the one route table, the request middleware (parameters,
 * audit) and the error handler that turns every error into the envelope.
 *
 * @module
 */
import { type Context, Hono } from "hono";
import type { AppEnv, RequestAudit } from "./http/context.ts";
import type { Deps } from "./deps.ts";
import { errorEnvelope } from "./http/envelope.ts";
import { readParams } from "./http/params.ts";
import { AppError, AuthError, DatabaseUnavailableError, HttpError } from "./errors.ts";
import { hiddenAuthError } from "./http/auth.ts";
import { newAuditEntry } from "./domain/audit/mod.ts";
import { beginRequest, PendingCommits } from "./db/direct.ts";
import { isLostAnswer, isTransientDbError } from "./db/transient_error.ts";
import { clientAddress, inAnyNetwork, type Network, parseIp, parseNetwork } from "./lib/ip.ts";
import { withRequestId } from "./lib/logger.ts";
import { authRoutes } from "./http/routes/auth.ts";
import { systemRoutes } from "./http/routes/system.ts";
import { auditRoutes } from "./http/routes/audit.ts";
import { healthzRoutes } from "./http/routes/healthz.ts";
import { machineRoutes } from "./http/routes/machine.ts";
import { machineresolverRoutes } from "./http/routes/machineresolver.ts";
import { offlineRoutes } from "./http/routes/validate_offline.ts";
import { applicationRoutes } from "./http/routes/application.ts";
import { tokenRoutes } from "./http/routes/token.ts";
import { validateRoutes } from "./http/routes/validate.ts";
import { resolverRoutes } from "./http/routes/resolver.ts";
import { realmRoutes } from "./http/routes/realm.ts";
import { defaultrealmRoutes } from "./http/routes/defaultrealm.ts";
import { userRoutes } from "./http/routes/user.ts";
import { eventRoutes } from "./http/routes/event.ts";
import { smtpServerRoutes } from "./http/routes/smtpserver.ts";
import { eventMiddleware } from "./http/events.ts";
import { guard } from "./http/rights/guard.ts";
import type { RouteRule } from "./http/rights/route_rights.ts";
import { policyRoutes } from "./http/routes/policy.ts";
import { subscriptionRoutes } from "./http/routes/subscriptions.ts";
import { dashboardRoutes } from "./http/routes/dashboard.ts";
import { subscriptionCheck } from "./http/subscription_check.ts";
import { radiusserverRoutes } from "./http/routes/radiusserver.ts";
import { smsgatewayRoutes } from "./http/routes/smsgateway.ts";
import { caconnectorRoutes, caRoutes } from "./http/routes/caconnector.ts";
import { privacyideaserverRoutes } from "./http/routes/privacyideaserver.ts";
import { ttypeRoutes } from "./http/routes/ttype.ts";
import { containerRoutes } from "./http/routes/container.ts";
import { containerRegisterRoutes } from "./http/routes/container_register.ts";
import { openApiDocument } from "./http/openapi.ts";
import { createMetrics, metricsHandler, type MetricsPeers } from "./http/metrics.ts";
import { uiRoutes } from "./http/routes/ui.ts";
import { configRoutes } from "./http/routes/config.ts";
import { compressAnswers } from "./http/compress.ts";
import { periodictaskRoutes } from "./http/routes/periodictask.ts";
import { monitoringRoutes } from "./http/routes/monitoring.ts";
import { tokengroupRoutes } from "./http/routes/tokengroup.ts";
import { serviceidRoutes } from "./http/routes/serviceid.ts";
import { clientRoutes } from "./http/routes/client.ts";
import { infoRoutes } from "./http/routes/info.ts";
import { recoverRoutes, registerRoutes } from "./http/routes/register.ts";

const MAX_INFO = 900;
/** Audit info of a request that failed because a statement's answer never came. */
const LOST_ANSWER_INFO =
  "The database stopped answering during a statement; whether it took effect is unknown";
// an id a trusted proxy sent is kept when it is short and plain (it goes into
// log lines and the audit as it is); otherwise the request gets a new one
const REQUEST_ID = /^[A-Za-z0-9._:@-]{1,128}$/;

/** Options of {@link createApp}. */
export interface AppOptions {
  /** Rights of routes mounted on the app after it is built (tests); see `route_rights.ts`. */
  routeRules?: Readonly<Record<string, RouteRule>>;
  /** The sibling workers of `serve --workers N` whose metrics a scrape adds up. */
  metricsPeers?: MetricsPeers;
}

/** Builds the Hono app for `deps`. */
export function createApp(deps: Deps, options: AppOptions = {}): Hono<AppEnv> {
  const app = new Hono<AppEnv>({ strict: false });
  const trusted = deps.config.server.trustedProxies
    .map(parseNetwork)
    .filter((n): n is Network => n !== undefined);
  const remoteUserHeader = deps.config.server.remoteUserHeader;

  // Prometheus metrics, counted only when switched on (metrics.enabled)
  const metrics = deps.config.metrics.enabled
    ? createMetrics(deps, options.metricsPeers)
    : undefined;
  if (metrics) app.use("*", metrics.middleware);

  app.use("*", async (c, next) => {
    const started = performance.now();
    c.set("deps", deps);
    // caches look for other processes' commits afresh: nothing older than this request counts
    beginRequest(deps.db);
    c.set("authStyle", false);
    c.set("identity", undefined);
    const userAgent = c.req.header("user-agent") ?? "";
    const peer = c.env?.remoteAddr?.hostname ?? "127.0.0.1";
    const clientIp = clientAddress(peer, c.req.header("x-forwarded-for"), trusted);
    c.set("userAgent", userAgent);
    c.set("clientIp", clientIp);
    // only a proxy of server.trusted_proxies names the user it authenticated
    const remoteUser = remoteUserHeader && isTrustedPeer(peer, trusted)
      ? c.req.header(remoteUserHeader)?.trim()
      : undefined;
    c.set("remoteUser", remoteUser || undefined);
    const audit: RequestAudit = newAuditEntry(
      deps.clock.now(),
      `${c.req.method} ${c.req.path}`,
      deps.nodeName,
    );
    audit.client = clientIp;
    audit.userAgent = userAgent.slice(0, 255);
    const sent = c.req.header("x-request-id");
    // only a proxy of server.trusted_proxies names the request: anyone else could make their
    // requests look like another client's in the log and the audit
    const requestId = sent !== undefined && REQUEST_ID.test(sent) && isTrustedPeer(peer, trusted)
      ? sent
      : crypto.randomUUID();
    audit.requestId = requestId;
    c.set("audit", audit);
    const writes = new PendingCommits();
    c.set("writes", writes);
    c.set("params", {});
    try {
      // every log line written until the answer is ready carries the id
      await withRequestId(requestId, async () => {
        c.set("params", await readParams(c, deps.config.server.bodyLimit));
        await next();
      });
    } finally {
      c.header("X-Request-ID", requestId);
      audit.success = audit.outcome ?? (c.res ? c.res.status < 400 : false);
      audit.durationMs = performance.now() - started;
      audit.info = audit.info.slice(0, MAX_INFO);
      delete audit.outcome;
      // the web interface's static files and its /config are not audited (isUnaudited)
      if (!audit.isUnaudited) {
        // the row is committed before the answer leaves, with the request's writes (in one
        // commit where they still wait in the write group); a database that cannot take it
        // holds the answer at most this long. A 503 (the database is unavailable) leaves at
        // once: its row is queued and written when the database is back, and waiting for it
        // would only hold the refusal
        const waitMs = c.res?.status === 503 ? 0 : deps.config.storage.statementTimeout;
        try {
          await deps.audit.commit(audit, { timeoutMs: waitMs, after: writes });
        } catch (err) {
          // the request's writes did not commit (nor did the row that shared their commit):
          // the answer is the error, and the row says so
          await answerWritesFailed(c, err);
          await deps.audit.commit(audit, { timeoutMs: waitMs });
        }
      } else {
        try {
          await writes.settle();
        } catch (err) {
          await answerWritesFailed(c, err);
        }
      }
    }
  });

  async function answerWritesFailed(c: Context<AppEnv>, err: unknown): Promise<void> {
    const audit = c.get("audit");
    audit.info = "";
    c.res = undefined;
    c.res = await answerError(err as Error, c);
    c.header("X-Request-ID", audit.requestId);
    audit.success = false;
    audit.info = audit.info.slice(0, MAX_INFO);
  }

  // gzip for JSON and text answers of 1 KB or more when the client accepts it (compress.ts)
  app.use("*", compressAnswers);
  // runs before the route table: meters client components on /validate/check, /token/init, …
  app.use("*", subscriptionCheck);
  // the one rights step: role, the request's objects, the policy decision (route_rights.ts);
  // before the event handlers, so a refused request fires none (as privacyIDEA's prepolicies)
  app.use("*", guard(options.routeRules));
  // event handlers (spec 05): pre handlers before the route, post handlers after it
  app.use("*", eventMiddleware);
  app.route("/auth", authRoutes);
  app.route("/system", systemRoutes);
  app.route("/audit", auditRoutes);
  app.route("/healthz", healthzRoutes);
  app.route("/machine", machineRoutes);
  app.route("/machineresolver", machineresolverRoutes);
  app.route("/validate", offlineRoutes);
  app.route("/application", applicationRoutes);
  app.route("/token", tokenRoutes);
  app.route("/validate", validateRoutes);
  app.route("/resolver", resolverRoutes);
  app.route("/realm", realmRoutes);
  app.route("/defaultrealm", defaultrealmRoutes);
  app.route("/user", userRoutes);
  app.route("/event", eventRoutes);
  app.route("/smtpserver", smtpServerRoutes);
  app.route("/policy", policyRoutes);
  app.route("/subscriptions", subscriptionRoutes);
  app.route("/dashboard", dashboardRoutes);
  app.route("/radiusserver", radiusserverRoutes);
  app.route("/smsgateway", smsgatewayRoutes);
  app.route("/caconnector", caconnectorRoutes);
  app.route("/ca", caRoutes);
  app.route("/privacyideaserver", privacyideaserverRoutes);
  app.route("/ttype", ttypeRoutes);
  app.route("/container", containerRoutes);
  app.route("/container", containerRegisterRoutes);
  app.route("/config", configRoutes);
  app.route("/periodictask", periodictaskRoutes);
  app.route("/monitoring", monitoringRoutes);
  app.route("/tokengroup", tokengroupRoutes);
  app.route("/serviceid", serviceidRoutes);
  app.route("/client", clientRoutes);
  app.route("/info", infoRoutes);
  app.route("/register", registerRoutes);
  app.route("/recover", recoverRoutes);
  app.get("/metrics", metricsHandler(metrics));
  // generated from the route table above (and the rights table), never written by hand
  let openApi: string | undefined;
  app.get("/openapi.json", (c) => {
    openApi ??= JSON.stringify(openApiDocument(app.routes));
    return c.body(openApi, 200, { "content-type": "application/json" });
  });

  // the web interface: static files only; it calls the API above with its session's JWT
  app.route("/", uiRoutes);

  app.onError(answerError);

  async function answerError(err: Error, c: Context<AppEnv>): Promise<Response> {
    if (!(err instanceof AppError) && isTransientDbError(err)) {
      // the database is down, restarting or busy: the client may retry (here or on another
      // node), so a 503 with a clear message, not a 500; the cause goes to the log
      deps.log.warn("Cannot reach the database", { path: c.req.path, error: err });
      // a statement whose answer never came may have taken effect (an OTP used up): say so
      if (isLostAnswer(err) && c.get("audit")) c.get("audit").info ||= LOST_ANSWER_INFO;
      err = new DatabaseUnavailableError();
    }
    if (!(err instanceof AppError)) {
      // the cause goes to the log, never to the client
      deps.log.error("Unhandled error", { path: c.req.path, error: err, stack: err.stack ?? "" });
    } else if (c.get("audit")) {
      c.get("audit").info ||= err.message;
    }
    if (err instanceof AuthError) err = await hiddenAuthError(c, err);
    return await errorEnvelope(c, err);
  }

  const routeTable = app.routes
    .filter((r) => r.method !== "ALL")
    .map((r) => ({ method: r.method, regexp: pathRegexp(r.path) }));

  app.notFound(async (c) => {
    const path = c.req.path;
    const allowed = routeTable.some((r) => r.regexp.test(path));
    const err = allowed
      ? new HttpError(405, `The method ${c.req.method} is not allowed for the requested URL.`, 405)
      : new HttpError(404, "The requested URL was not found on the server.", 404);
    return await errorEnvelope(c, err);
  });

  return app;
}

function isTrustedPeer(peer: string, trusted: readonly Network[]): boolean {
  if (trusted.length === 0) return false;
  const addr = parseIp(peer);
  return addr !== undefined && inAnyNetwork(addr, trusted);
}

function pathRegexp(path: string): RegExp {
  const body = path
    .replace(/\/+$/, "")
    .split("/")
    .map((seg) => {
      if (seg === "*") return ".*";
      if (seg.startsWith(":")) {
        const m = seg.match(/^:[^{]+(?:\{(.+)\})?(\?)?$/);
        return m?.[1] ? `(?:${m[1]})` : "[^/]+";
      }
      return seg.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
    })
    .join("/");
  return new RegExp(`^${body}/?$`);
}
