import { Hono } from "hono";
import type { AppEnv } from "../context.ts";
import { ok } from "../envelope.ts";
import { boolParam, pathParam, requireString, stringParam } from "../params.ts";
import { adminOnly } from "../auth.ts";
import { requireRight } from "../rights.ts";
import {
  deleteResolver,
  listResolvers,
  resolverDefaults,
  saveResolver,
  testResolver,
} from "../../domain/resolver/mod.ts";

/** `/resolver/`: user resolver definitions (admin only). */
export const resolverRoutes = new Hono<AppEnv>();

resolverRoutes.use("*", adminOnly);

resolverRoutes.get("/", requireRight("resolverread"), async (c) => {
  const p = c.var.params;
  const editable = p.editable === undefined || p.editable === ""
    ? undefined
    : boolParam(p, "editable");
  return ok(c, await listResolvers(c.var.deps, { type: stringParam(p, "type"), editable }));
});

resolverRoutes.post("/test", requireRight("resolverwrite"), async (c) => {
  const p = c.var.params;
  const result = await testResolver(c.var.deps, {
    type: requireString(p, "type"),
    params: p,
    resolver: stringParam(p, "resolver") || undefined,
  });
  return ok(c, result.success, { detail: { description: result.description } });
});

resolverRoutes.get("/:type/default", (c) => {
  return ok(c, resolverDefaults(pathParam(c, "type")));
});

resolverRoutes.get("/:name", requireRight("resolverread"), async (c) => {
  return ok(c, await listResolvers(c.var.deps, { name: pathParam(c, "name") }));
});

resolverRoutes.post("/:name", requireRight("resolverwrite"), async (c) => {
  const name = pathParam(c, "name");
  c.var.audit.info = `resolver ${name}`;
  const id = await saveResolver(c.var.deps, name, {
    type: requireString(c.var.params, "type"),
    params: c.var.params,
  });
  return ok(c, id);
});

resolverRoutes.delete("/:name", requireRight("resolverdelete"), async (c) => {
  const name = pathParam(c, "name");
  c.var.audit.info = `resolver ${name}`;
  return ok(c, await deleteResolver(c.var.deps, name));
});
