/**
 * Runtime subscription check (spec 06 §5) for requests from client components,
 * recognised by their User-Agent. `subscriptions.mode` decides what a refusal
 * does: `enforce` refuses the request (code 101), `warn` (default) lets it pass
 * and notes the refusal in the log and the audit row, `off` skips metering.
 *
 * @module
 */
import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "./context.ts";
import { authenticate } from "./auth.ts";
import { meterClientRequest } from "../domain/subscription/mod.ts";

/** The endpoints that are metered (spec 06 §5.1); no other endpoint is checked. */
export const METERED_PATHS: ReadonlySet<string> = new Set([
  "/validate/check",
  "/validate/radiuscheck",
  "/validate/polltransaction",
  "/token/init",
  "/token/assign",
]);

const ADMIN_PATHS = new Set(["/token/init", "/token/assign"]);

const WARN_INTERVAL_MS = 60_000;
/** Per logger (one per app), when each application was last logged. */
const lastWarnedByLog = new WeakMap<object, Map<string, number>>();

/** Middleware for the whole app; cheap for every request that is not metered. */
export const subscriptionCheck: MiddlewareHandler<AppEnv> = async (c, next) => {
  const deps = c.get("deps");
  if (deps.config.subscriptions.mode === "off") return await next();
  const path = c.req.path.length > 1 ? c.req.path.replace(/\/+$/, "") : c.req.path;
  if (!METERED_PATHS.has(path)) return await next();
  const result = await meterClientRequest(deps, c.req.header("user-agent"));
  if (!result?.refusal) return await next();

  const note =
    `subscription check failed (${deps.config.subscriptions.mode}): ${result.refusal.message}`;
  if (deps.config.subscriptions.mode === "enforce") {
    // token endpoints authenticate first, so an anonymous caller learns nothing about subscriptions
    if (ADMIN_PATHS.has(path)) await authenticate(c);
    c.get("audit").info = note;
    throw result.refusal;
  }
  // the audit row records every case; the log gets one line per application and minute
  const now = deps.clock.now();
  let lastWarned = lastWarnedByLog.get(deps.log);
  if (!lastWarned) {
    lastWarned = new Map();
    lastWarnedByLog.set(deps.log, lastWarned);
  }
  const last = lastWarned.get(result.application);
  if (last === undefined || now - last >= WARN_INTERVAL_MS || now < last) {
    lastWarned.set(result.application, now);
    deps.log.warn("Subscription check failed; request allowed (warn mode)", {
      application: result.application,
      reason: result.refusal.message,
    });
  }
  try {
    await next();
  } finally {
    const audit = c.get("audit");
    audit.info = audit.info ? `${note}; ${audit.info}` : note;
  }
};
