/**
 * Admin/user rights enforcement (spec 04 §4.10). Mount after `adminOnly` or
 * `adminOrUser`: `routes.post("/disable", adminOrUser, requireRight("disable"), …)`.
 *
 * @module
 */
import type { Context, MiddlewareHandler } from "hono";
import type { AppEnv } from "./context.ts";
import { AuthError } from "../errors.ts";
import { checkRight, type ConditionData, type RightContext } from "../domain/policy/mod.ts";

function param(c: Context<AppEnv>, name: string): string | null {
  const v = c.var.params[name];
  return typeof v === "string" ? v : typeof v === "number" ? String(v) : null;
}

/** Condition data of the request: headers, environment and parameters (no secrets). */
export function requestConditionData(c: Context<AppEnv>): ConditionData {
  return {
    "HTTP Request header": () => Promise.resolve(Object.fromEntries(c.req.raw.headers.entries())),
    "HTTP Environment": {
      REQUEST_METHOD: c.req.method,
      PATH_INFO: c.req.path,
      REMOTE_ADDR: c.var.clientIp,
      HTTP_USER_AGENT: c.var.userAgent,
    },
    "Request Data": c.var.params,
  };
}

/** The rights context of a request: the user acted on (params), client, agent, condition data. */
export function rightContextOf(c: Context<AppEnv>): RightContext {
  return {
    user: param(c, "user"),
    realm: param(c, "realm")?.toLowerCase() ?? null,
    resolver: param(c, "resolver"),
    client: c.var.clientIp,
    userAgent: c.var.userAgent,
    conditions: requestConditionData(c),
  };
}

/**
 * Middleware: the caller must hold `action` (admin scope for admins, user
 * scope for users); `action` may be computed from the request.
 */
export function requireRight(
  action: string | ((c: Context<AppEnv>) => string),
  options: { message?: string } = {},
): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const identity = c.var.identity;
    if (!identity) {
      // requireRight must run after adminOnly / adminOrUser
      throw new AuthError("Authentication failure. Missing Authorization header.", 4033);
    }
    const name = typeof action === "string" ? action : action(c);
    const granted = await checkRight(c.var.deps, identity, name, {
      ...rightContextOf(c),
      message: options.message,
    });
    if (granted.length > 0) addAuditPolicies(c, granted);
    await next();
  };
}

/** Appends policy names to the audit column `policies`. */
export function addAuditPolicies(c: Context<AppEnv>, names: readonly string[]): void {
  const audit = c.var.audit;
  const all = new Set(audit.policies ? audit.policies.split(",") : []);
  for (const n of names) all.add(n);
  audit.policies = [...all].join(",").slice(0, 1000);
}
