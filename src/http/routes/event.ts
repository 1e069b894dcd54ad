import { Hono } from "hono";
import type { AppEnv } from "../context.ts";
import { ok } from "../envelope.ts";
import { pathParam } from "../params.ts";
import {
  availableEvents,
  deleteEventDefinition,
  handlerModuleNames,
  listEventDefinitions,
  moduleActions,
  moduleConditions,
  moduleDefaults,
  modulePositions,
  parseEventId,
  saveEventDefinition,
  setEventActive,
} from "../../domain/event/mod.ts";

/** `/event/`: event handler definitions (spec 05 §3). */
export const eventRoutes = new Hono<AppEnv>();

eventRoutes.get("/", async (c) => ok(c, await listEventDefinitions(c.get("deps"))));
eventRoutes.get("/available", (c) => ok(c, availableEvents()));
eventRoutes.get("/handlermodules", (c) => ok(c, handlerModuleNames()));

eventRoutes.get("/actions/:module", async (c) => {
  return ok(c, await moduleActions(c.get("deps"), pathParam(c, "module")));
});
eventRoutes.get("/conditions/:module", (c) => ok(c, moduleConditions(pathParam(c, "module"))));
eventRoutes.get("/positions/:module", (c) => ok(c, modulePositions(pathParam(c, "module"))));
eventRoutes.get("/defaults/:module", (c) => ok(c, moduleDefaults(pathParam(c, "module"))));

eventRoutes.post("/", async (c) => {
  const id = await saveEventDefinition(c.get("deps"), c.get("params"));
  c.get("audit").info = `${id}`;
  return ok(c, id);
});

eventRoutes.post("/enable/:id", async (c) => {
  c.get("audit").info = pathParam(c, "id").slice(0, 50);
  return ok(c, await setEventActive(c.get("deps"), parseEventId(pathParam(c, "id")), true));
});

eventRoutes.post("/disable/:id", async (c) => {
  c.get("audit").info = pathParam(c, "id").slice(0, 50);
  return ok(c, await setEventActive(c.get("deps"), parseEventId(pathParam(c, "id")), false));
});

eventRoutes.get("/:id", async (c) => {
  return ok(c, await listEventDefinitions(c.get("deps"), parseEventId(pathParam(c, "id"))));
});

eventRoutes.delete("/:id", async (c) => {
  c.get("audit").info = pathParam(c, "id").slice(0, 50);
  return ok(c, await deleteEventDefinition(c.get("deps"), parseEventId(pathParam(c, "id"))));
});
