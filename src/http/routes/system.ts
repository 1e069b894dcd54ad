import { Hono } from "hono";
import type { AppEnv } from "../context.ts";
import { ok } from "../envelope.ts";
import { pathParam, stringParam } from "../params.ts";
import {
  deleteSystemConfig,
  readSystemConfig,
  setSystemConfig,
} from "../../domain/system_config/mod.ts";
import { flushUserCache } from "../../domain/user_cache/mod.ts";

/** `/system/`: key-value system configuration. */
export const systemRoutes = new Hono<AppEnv>();

systemRoutes.get("/", async (c) => {
  return ok(c, await readSystemConfig(c.get("deps"), stringParam(c.get("params"), "key")));
});

systemRoutes.post("/setConfig", async (c) => {
  const result = await setSystemConfig(c.get("deps"), c.get("params"));
  c.get("audit").info = Object.keys(result).join(", ").slice(0, 900);
  return ok(c, result);
});

// privacyIDEA's route; registered before "/:key", which would take it for a config key
systemRoutes.delete("/user-cache", async (c) => {
  const deleted = await flushUserCache(c.get("deps"));
  c.get("audit").info = `Deleted ${deleted} entries from user cache`;
  return ok(c, { status: true, deleted });
});

systemRoutes.delete("/:key", async (c) => {
  const key = pathParam(c, "key");
  c.get("audit").info = key.slice(0, 900);
  return ok(c, await deleteSystemConfig(c.get("deps"), key));
});

systemRoutes.get("/:key", async (c) => {
  return ok(c, await readSystemConfig(c.get("deps"), pathParam(c, "key")));
});
