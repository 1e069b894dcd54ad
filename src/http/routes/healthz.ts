import { type Context, Hono } from "hono";
import type { AppEnv } from "../context.ts";
import { ok } from "../envelope.ts";
import { checkDatabase } from "../../domain/health.ts";

/** `/healthz/`: liveness and readiness (unauthenticated). */
export const healthzRoutes = new Hono<AppEnv>();

healthzRoutes.get("/", (c) => ok(c, { status: "OK" }));
healthzRoutes.get("/livez", (c) => ok(c, { status: "OK" }));

async function ready(c: Context<AppEnv>): Promise<Response> {
  const problem = await checkDatabase(c.get("deps"));
  if (problem) {
    c.get("deps").log.warn("Readiness check failed", { reason: problem });
    return ok(c, { status: "NOT OK", database: "unreachable" }, { status: 503 });
  }
  return ok(c, { status: "OK", database: "OK" });
}
healthzRoutes.get("/readyz", ready);
healthzRoutes.get("/startupz", ready);
