import { Hono } from "hono";
import type { AppEnv } from "../context.ts";
import { ok } from "../envelope.ts";
import { adminOnly } from "../auth.ts";
import { searchAudit } from "../../domain/audit/mod.ts";

/** `/audit/`: search the audit log. */
export const auditRoutes = new Hono<AppEnv>();

auditRoutes.get("/", adminOnly, async (c) => {
  return ok(c, await searchAudit(c.var.deps, c.var.params));
});
