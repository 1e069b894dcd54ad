import { Hono } from "hono";
import type { AppEnv } from "../context.ts";
import { ok } from "../envelope.ts";
import { searchAudit } from "../../domain/audit/mod.ts";

/** `/audit/`: search the audit log. */
export const auditRoutes = new Hono<AppEnv>();

auditRoutes.get("/", async (c) => {
  return ok(c, await searchAudit(c.get("deps"), c.get("params")));
});
