import { Hono } from "hono";
import type { AppEnv } from "../context.ts";
import { ok } from "../envelope.ts";
import { requestRightValue, requestRightValues } from "../rights/rights.ts";
import { auditCsv, auditScopeOf, searchAudit } from "../../domain/audit/mod.ts";
import { pathParam } from "../params.ts";

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

// privacyIDEA's download: any file name, echoed in Content-Disposition; admins only
auditRoutes.get("/:filename", async (c) => {
  const deps = c.get("deps");
  const identity = c.get("identity")!;
  const filename = pathParam(c, "filename");
  // the realms of the admin's auditlog policies, as GET /audit/
  const scope = await auditScopeOf(deps, identity, {
    client: c.get("clientIp"),
    userAgent: c.get("userAgent"),
  });
  const lines = await auditCsv(deps, c.get("params"), {
    scope,
    age: await requestRightValue(c, "auditlog_age"),
    hiddenColumns: await requestRightValues(c, "hide_audit_columns"),
  });
  const encoder = new TextEncoder();
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      const next = await lines.next();
      if (next.done) controller.close();
      else controller.enqueue(encoder.encode(next.value));
    },
    async cancel() {
      await lines.return(undefined);
    },
  });
  // a name that would break the header is sent as a plain one
  const safe = /^[\w.\- ]{1,200}$/.test(filename) ? filename : "audit.csv";
  return c.body(body, 200, {
    "content-type": "text/csv; charset=utf-8",
    "content-disposition": `attachment; filename=${safe}`,
  });
});
