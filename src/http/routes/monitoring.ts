import { Hono } from "hono";
import type { AppEnv } from "../context.ts";
import { ok } from "../envelope.ts";
import { pathParam, stringParam } from "../params.ts";
import {
  deleteStats,
  lastStatsValue,
  statsKeys,
  statsValues,
} from "../../domain/monitoring/mod.ts";

/** `/monitoring/`: the statistics the periodic tasks write (spec 14 §11). */
export const monitoringRoutes = new Hono<AppEnv>();

monitoringRoutes.get("/", async (c) => ok(c, await statsKeys(c.get("deps"))));

monitoringRoutes.get("/:key/last", async (c) => {
  return ok(c, await lastStatsValue(c.get("deps"), pathParam(c, "key")));
});

monitoringRoutes.get("/:key", async (c) => {
  const p = c.get("params");
  return ok(
    c,
    await statsValues(c.get("deps"), pathParam(c, "key"), {
      start: stringParam(p, "start"),
      end: stringParam(p, "end"),
    }),
  );
});

monitoringRoutes.delete("/:key", async (c) => {
  const p = c.get("params");
  const key = pathParam(c, "key");
  c.get("audit").info = key.slice(0, 200);
  return ok(
    c,
    await deleteStats(c.get("deps"), key, {
      start: stringParam(p, "start"),
      end: stringParam(p, "end"),
    }),
  );
});
