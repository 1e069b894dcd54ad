import { Hono } from "hono";
import type { AppEnv } from "../context.ts";
import { ok } from "../envelope.ts";
import { visibleRealms } from "../rights/rights.ts";
import { tokenCounts } from "../../domain/dashboard/mod.ts";

/**
 * `/dashboard/`: figures of the web interface's dashboard that no list gives without reading
 * every row (Tessera's own; privacyIDEA's dashboard counts through the lists).
 */
export const dashboardRoutes = new Hono<AppEnv>();

dashboardRoutes.get("/tokens", async (c) => {
  // an admin whose tokenlist policies name realms counts those realms' tokens only, as the
  // token list shows them
  const realms = await visibleRealms(c, "tokenlist");
  return ok(c, await tokenCounts(c.get("deps"), { realms }));
});
