import { Hono } from "hono";
import type { AppEnv } from "../context.ts";
import { ok } from "../envelope.ts";
import { auditScopeOf, searchAudit } from "../../domain/audit/mod.ts";

/** `/audit/`: search the audit log. */
export const auditRoutes = new Hono<AppEnv>();

auditRoutes.get("/", async (c) => {
  const deps = c.get("deps");
  // an admin whose auditlog policies name realms reads those realms' rows and their own
  const scope = await auditScopeOf(deps, c.get("identity")!, {
    client: c.get("clientIp"),
    userAgent: c.get("userAgent"),
  });
  return ok(c, await searchAudit(deps, c.get("params"), { scope }));
});
