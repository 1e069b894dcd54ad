import { Hono } from "hono";
import type { AppEnv } from "../context.ts";
import { ok } from "../envelope.ts";
import { requestRightValue, requestRightValues } from "../rights/rights.ts";
import { auditScopeOf, searchAudit } from "../../domain/audit/mod.ts";

/** `/audit/`: search the audit log. */
export const auditRoutes = new Hono<AppEnv>();

auditRoutes.get("/", async (c) => {
  const deps = c.get("deps");
  const identity = c.get("identity")!;
  const isUser = identity.role === "user";
  // an admin whose auditlog policies name realms reads those realms' rows and their own;
  // a user reads the rows about themselves
  const scope = isUser ? undefined : await auditScopeOf(deps, identity, {
    client: c.get("clientIp"),
    userAgent: c.get("userAgent"),
  });
  return ok(
    c,
    await searchAudit(deps, c.get("params"), {
      scope,
      owner: isUser ? { user: identity.username, realm: identity.realm } : undefined,
      // the caller's auditlog_age replaces a timelimit the client sent
      age: await requestRightValue(c, "auditlog_age"),
      hiddenColumns: await requestRightValues(c, "hide_audit_columns"),
    }),
  );
});
