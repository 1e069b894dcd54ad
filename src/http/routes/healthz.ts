import { type Context, Hono } from "hono";
import type { AppEnv } from "../context.ts";
import { ok } from "../envelope.ts";
import { checkDatabase } from "../../domain/health/mod.ts";
import { probeResolvers } from "../../domain/resolver/mod.ts";
import { loadPolicySet } from "../../domain/policy/mod.ts";
import { authenticate, tokenOf } from "../auth.ts";
import { AuthError, PolicyError } from "../../errors.ts";

/** `/healthz/`: liveness and readiness (unauthenticated). */
export const healthzRoutes = new Hono<AppEnv>();

// the probes write no audit row, as privacyIDEA audits none of them: a load balancer's probe
// every second would fill the log and cost each probe a commit (a path that is not one of them
// is audited)
function unaudited(c: Context<AppEnv>): void {
  c.get("audit").isUnaudited = true;
}

healthzRoutes.get("/", (c) => {
  unaudited(c);
  return ok(c, { status: "OK" });
});
healthzRoutes.get("/livez", (c) => {
  unaudited(c);
  return ok(c, { status: "OK" });
});

async function ready(c: Context<AppEnv>): Promise<Response> {
  unaudited(c);
  const problem = await checkDatabase(c.get("deps"));
  if (problem) {
    c.get("deps").log.warn("Readiness check failed", { reason: problem });
    return ok(c, { status: "NOT OK", database: "unreachable" }, { status: 503 });
  }
  return ok(c, { status: "OK", database: "OK" });
}
healthzRoutes.get("/readyz", ready);
healthzRoutes.get("/startupz", ready);

/**
 * Whether the request shows an admin JWT. Without an Authorization header: anonymous. A JWT that
 * is invalid or not an admin's: anonymous too, unless the authorization policy
 * `require_auth_for_resolver_details` is set, which refuses it (401), as privacyIDEA 3.13.
 * The policy is matched as privacyIDEA's probe does, on the client alone: a condition finds no
 * user, token or request data (its handle_missing_data decides; `raise_error` fails the probe).
 */
async function isAdminCaller(c: Context<AppEnv>): Promise<boolean> {
  if (tokenOf(c) === undefined) return false;
  const deps = c.get("deps");
  const set = await loadPolicySet(deps);
  const isStrict = set.hasActivePolicies("authorization") &&
    (await set.actionBool({
        scope: "authorization",
        action: "require_auth_for_resolver_details",
        client: c.get("clientIp"),
        conditions: {},
      })).length > 0;
  try {
    const identity = await authenticate(c);
    if (identity.role === "admin") return true;
    if (isStrict) {
      throw new AuthError(
        "Authentication failure. You do not have the necessary role ('admin') to access this resource!",
        4306,
      );
    }
    return false;
  } catch (err) {
    if (isStrict || !(err instanceof AuthError)) throw err;
    return false;
  }
}

// privacyIDEA 3.13: the overall status for anyone, the resolver names for an admin
healthzRoutes.get("/resolversz", async (c) => {
  unaudited(c);
  let isAdmin: boolean;
  try {
    isAdmin = await isAdminCaller(c);
  } catch (err) {
    // privacyIDEA answers a failed policy match like a failed probe
    if (!(err instanceof PolicyError)) throw err;
    c.get("deps").log.warn("Resolver probe: the policy match failed", { reason: err.message });
    return ok(c, { status: "error" }, { status: 503 });
  }
  try {
    const probe = await probeResolvers(c.get("deps"));
    return ok(c, isAdmin ? { status: probe.status, ...probe.details } : { status: probe.status });
  } catch (err) {
    c.get("deps").log.warn("Resolver probe failed", { reason: String(err) });
    return ok(c, { status: "error" }, { status: 503 });
  }
});
