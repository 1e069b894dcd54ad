import { Hono } from "hono";
import type { AppEnv } from "../context.ts";
import { ok } from "../envelope.ts";
import { pathParam, stringParam } from "../params.ts";
import { deleteServiceId, listServiceIds, setServiceId } from "../../domain/service_id/mod.ts";

/** `/serviceid/`: service ID definitions (spec 14 §13). */
export const serviceidRoutes = new Hono<AppEnv>();

serviceidRoutes.get("/", async (c) => ok(c, await listServiceIds(c.get("deps"))));

serviceidRoutes.get("/:name", async (c) => {
  return ok(c, await listServiceIds(c.get("deps"), pathParam(c, "name")));
});

serviceidRoutes.post("/:name", async (c) => {
  const name = pathParam(c, "name");
  c.get("audit").info = name.slice(0, 255);
  const description = stringParam(c.get("params"), "description");
  return ok(c, await setServiceId(c.get("deps"), name, description));
});

serviceidRoutes.delete("/:name", async (c) => {
  const name = pathParam(c, "name");
  c.get("audit").info = name.slice(0, 255);
  return ok(c, await deleteServiceId(c.get("deps"), name));
});
