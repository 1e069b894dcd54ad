import { Hono } from "hono";
import type { AppEnv } from "../context.ts";
import { ok } from "../envelope.ts";
import { pathParam } from "../params.ts";
import { clearDefaultRealm, readDefaultRealm, setDefaultRealm } from "../../domain/realm/mod.ts";

/** `/defaultrealm`: the realm of logins without a realm (admin only). */
export const defaultrealmRoutes = new Hono<AppEnv>();

defaultrealmRoutes.get("/", async (c) => {
  return ok(c, await readDefaultRealm(c.get("deps")));
});

defaultrealmRoutes.post("/:realm", async (c) => {
  const realm = pathParam(c, "realm");
  c.get("audit").info = `realm ${realm}`;
  return ok(c, await setDefaultRealm(c.get("deps"), realm));
});

defaultrealmRoutes.delete("/", async (c) => {
  return ok(c, await clearDefaultRealm(c.get("deps")));
});
