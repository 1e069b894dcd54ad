import { Hono } from "hono";
import type { AppEnv } from "../context.ts";
import { ok } from "../envelope.ts";
import { boolParam, pathParam, requireString, stringParam } from "../params.ts";
import { ParameterError } from "../../errors.ts";
import {
  deletePeriodicTask,
  getPeriodicTask,
  listPeriodicTasks,
  parsePeriodicTaskId,
  periodicTaskNodes,
  savePeriodicTask,
  setPeriodicTaskActive,
  taskModuleNames,
  taskModuleOptions,
} from "../../domain/periodic_task/mod.ts";

/** `/periodictask/`: periodic task definitions (spec 14 §10). */
export const periodictaskRoutes = new Hono<AppEnv>();

periodictaskRoutes.get("/taskmodules", (c) => ok(c, taskModuleNames()));
periodictaskRoutes.get("/nodes", (c) => ok(c, periodicTaskNodes(c.get("deps"))));
periodictaskRoutes.get("/options/:module", (c) => ok(c, taskModuleOptions(pathParam(c, "module"))));

periodictaskRoutes.get("/", async (c) => ok(c, await listPeriodicTasks(c.get("deps"))));

periodictaskRoutes.get("/:id", async (c) => {
  return ok(c, await getPeriodicTask(c.get("deps"), parsePeriodicTaskId(pathParam(c, "id"))));
});

periodictaskRoutes.post("/", async (c) => {
  const p = c.get("params");
  const idText = stringParam(p, "id");
  const orderingText = requireString(p, "ordering").trim();
  if (!/^-?\d{1,10}$/.test(orderingText)) {
    throw new ParameterError(`Invalid ordering: ${orderingText.slice(0, 50)}`);
  }
  const id = await savePeriodicTask(c.get("deps"), {
    id: idText === undefined || idText === "" ? undefined : parsePeriodicTaskId(idText),
    name: requireString(p, "name"),
    isActive: boolParam(p, "active", true),
    isRetriedIfFailed: boolParam(p, "retry_if_failed", true),
    interval: requireString(p, "interval"),
    nodes: requireString(p, "nodes"),
    taskmodule: requireString(p, "taskmodule"),
    ordering: Number(orderingText),
    options: p.options,
  });
  c.get("audit").info = String(id);
  return ok(c, id);
});

periodictaskRoutes.post("/enable/:id", async (c) => {
  const id = parsePeriodicTaskId(pathParam(c, "id"));
  return ok(c, await setPeriodicTaskActive(c.get("deps"), id, true));
});

periodictaskRoutes.post("/disable/:id", async (c) => {
  const id = parsePeriodicTaskId(pathParam(c, "id"));
  return ok(c, await setPeriodicTaskActive(c.get("deps"), id, false));
});

periodictaskRoutes.delete("/:id", async (c) => {
  const id = await deletePeriodicTask(c.get("deps"), parsePeriodicTaskId(pathParam(c, "id")));
  c.get("audit").info = String(id);
  return ok(c, id);
});
