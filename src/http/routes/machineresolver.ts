import { Hono } from "hono";
import type { AppEnv } from "../context.ts";
import { ok } from "../envelope.ts";
import { pathParam, stringParam } from "../params.ts";
import {
  deleteMachineResolver,
  listMachineResolvers,
  saveMachineResolver,
  testMachineResolver,
} from "../../domain/machine/mod.ts";

/** `/machineresolver/`: machine resolver definitions (admin only, spec 07 §2). */
export const machineresolverRoutes = new Hono<AppEnv>();

machineresolverRoutes.get("/", async (c) => {
  const type = stringParam(c.get("params"), "type") || undefined;
  return ok(c, await listMachineResolvers(c.get("deps"), { type }));
});

machineresolverRoutes.post("/test", async (c) => {
  const result = await testMachineResolver(c.get("deps"), c.get("params"));
  return ok(c, result.ok, { detail: { description: result.description } });
});

machineresolverRoutes.get("/:name", async (c) => {
  return ok(c, await listMachineResolvers(c.get("deps"), { name: pathParam(c, "name") }));
});

machineresolverRoutes.post("/:name", async (c) => {
  const name = pathParam(c, "name");
  c.get("audit").info = name.slice(0, 900);
  return ok(c, await saveMachineResolver(c.get("deps"), name, c.get("params")));
});

machineresolverRoutes.delete("/:name", async (c) => {
  const name = pathParam(c, "name");
  c.get("audit").info = name.slice(0, 900);
  return ok(c, await deleteMachineResolver(c.get("deps"), name));
});
