import { Hono } from "hono";
import type { AppEnv } from "../context.ts";
import { ok } from "../envelope.ts";
import { pathParam, stringParam } from "../params.ts";
import { missingParameter } from "../../errors.ts";
import {
  addTokenToGroup,
  deleteTokenGroup,
  listTokenGroups,
  removeTokenFromGroup,
  setGroupsOfToken,
  setTokenGroup,
} from "../../domain/token_group/mod.ts";

/** `/tokengroup/`: token group definitions (spec 14 §12). */
export const tokengroupRoutes = new Hono<AppEnv>();

tokengroupRoutes.get("/", async (c) => ok(c, await listTokenGroups(c.get("deps"))));

tokengroupRoutes.get("/:name", async (c) => {
  return ok(c, await listTokenGroups(c.get("deps"), pathParam(c, "name")));
});

tokengroupRoutes.post("/:name", async (c) => {
  const name = pathParam(c, "name");
  c.get("audit").info = name.slice(0, 255);
  const description = stringParam(c.get("params"), "description");
  return ok(c, await setTokenGroup(c.get("deps"), name, description));
});

tokengroupRoutes.delete("/:name", async (c) => {
  const name = pathParam(c, "name");
  c.get("audit").info = name.slice(0, 255);
  return ok(c, await deleteTokenGroup(c.get("deps"), name));
});

/** `/token/group/…`: the groups of a token (added to the `/token` routes). */
export function addTokenGroupRoutes(routes: Hono<AppEnv>): void {
  routes.post("/group/:serial/:group", async (c) => {
    const serial = pathParam(c, "serial");
    const group = pathParam(c, "group");
    c.get("audit").serial = serial.slice(0, 40);
    c.get("audit").info = group.slice(0, 255);
    await addTokenToGroup(c.get("deps"), serial, group);
    return ok(c, 1);
  });
  routes.post("/group/:serial", async (c) => {
    const serial = pathParam(c, "serial");
    c.get("audit").serial = serial.slice(0, 40);
    const raw = c.get("params").groups;
    if (raw === undefined || raw === null) throw missingParameter("groups");
    const groups = Array.isArray(raw) ? raw.map((g) => String(g)) : String(raw).split(",");
    const set = await setGroupsOfToken(c.get("deps"), serial, groups);
    c.get("audit").info = set.join(",").slice(0, 255);
    return ok(c, 1);
  });
  routes.delete("/group/:serial/:group", async (c) => {
    const serial = pathParam(c, "serial");
    const group = pathParam(c, "group");
    c.get("audit").serial = serial.slice(0, 40);
    c.get("audit").info = group.slice(0, 255);
    await removeTokenFromGroup(c.get("deps"), serial, group);
    return ok(c, 1);
  });
}
