import { Hono } from "hono";
import type { AppEnv } from "../context.ts";
import { ok } from "../envelope.ts";
import { boolParam, pathParam, requireString, stringParam } from "../params.ts";
import {
  deleteResolver,
  listResolvers,
  resolverDefaults,
  saveResolver,
  testResolver,
} from "../../domain/resolver/mod.ts";

/** `/resolver/`: user resolver definitions (admin only). */
export const resolverRoutes = new Hono<AppEnv>();

resolverRoutes.get("/", async (c) => {
  const p = c.get("params");
  const editable = p.editable === undefined || p.editable === ""
    ? undefined
    : boolParam(p, "editable");
  return ok(c, await listResolvers(c.get("deps"), { type: stringParam(p, "type"), editable }));
});

resolverRoutes.post("/test", async (c) => {
  const p = c.get("params");
  const result = await testResolver(c.get("deps"), {
    type: requireString(p, "type"),
    params: p,
    resolver: stringParam(p, "resolver") || undefined,
  });
  return ok(c, result.value ?? result.success, { detail: { description: result.description } });
});

resolverRoutes.get("/:type/default", (c) => {
  return ok(c, resolverDefaults(pathParam(c, "type")));
});

resolverRoutes.get("/:name", async (c) => {
  return ok(c, await listResolvers(c.get("deps"), { name: pathParam(c, "name") }));
});

resolverRoutes.post("/:name", async (c) => {
  const name = pathParam(c, "name");
  c.get("audit").info = `resolver ${name}`;
  const id = await saveResolver(c.get("deps"), name, {
    type: requireString(c.get("params"), "type"),
    params: c.get("params"),
  });
  return ok(c, id);
});

resolverRoutes.delete("/:name", async (c) => {
  const name = pathParam(c, "name");
  c.get("audit").info = `resolver ${name}`;
  return ok(c, await deleteResolver(c.get("deps"), name));
});
