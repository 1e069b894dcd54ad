import { Hono } from "hono";
import type { AppEnv } from "../context.ts";
import { ok } from "../envelope.ts";
import { pathParam, stringParam } from "../params.ts";
import { adminOnly, adminOrUser } from "../auth.ts";
import { requireAdminRight, requireRight } from "../rights.ts";
import { deleteSystemConfig, readSystemConfig, setSystemConfig } from "../../domain/system/mod.ts";

/** `/system/`: key-value system configuration. */
export const systemRoutes = new Hono<AppEnv>();

systemRoutes.get("/", adminOrUser, requireAdminRight("configread"), async (c) => {
  return ok(c, await readSystemConfig(c.get("deps"), stringParam(c.get("params"), "key")));
});

systemRoutes.post("/setConfig", adminOnly, requireRight("configwrite"), async (c) => {
  const result = await setSystemConfig(c.get("deps"), c.get("params"));
  c.get("audit").info = Object.keys(result).join(", ").slice(0, 900);
  return ok(c, result);
});

systemRoutes.delete("/:key", adminOnly, requireRight("configdelete"), async (c) => {
  const key = pathParam(c, "key");
  c.get("audit").info = key.slice(0, 900);
  return ok(c, await deleteSystemConfig(c.get("deps"), key));
});

systemRoutes.get("/:key", adminOrUser, requireAdminRight("configread"), async (c) => {
  return ok(c, await readSystemConfig(c.get("deps"), pathParam(c, "key")));
});
