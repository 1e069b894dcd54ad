import { Hono } from "hono";
import type { AppEnv } from "../context.ts";
import { ok } from "../envelope.ts";
import { adminOnly } from "../auth.ts";
import { requireRight } from "../rights.ts";
import { searchAudit } from "../../domain/audit/mod.ts";

/** `/audit/`: search the audit log. */
export const auditRoutes = new Hono<AppEnv>();

auditRoutes.get("/", adminOnly, requireRight("auditlog", { ignoreUser: true }), async (c) => {
  return ok(c, await searchAudit(c.get("deps"), c.get("params")));
});
