import { Hono } from "hono";
import type { AppEnv, Params } from "../context.ts";
import { ok } from "../envelope.ts";
import { intParam, pathParam, requireString, stringParam } from "../params.ts";
import {
  deleteRadiusServer,
  LIMITS,
  listRadiusServers,
  setRadiusServer,
  testRadiusRequest,
} from "../../domain/radius_server/mod.ts";

/** `/radiusserver/`: RADIUS server definitions (spec 08 §1). */
export const radiusserverRoutes = new Hono<AppEnv>();

function settings(p: Params) {
  return {
    port: intParam(p, "port", undefined, ...LIMITS.port),
    retries: intParam(p, "retries", undefined, ...LIMITS.retries),
    timeout: intParam(p, "timeout", undefined, ...LIMITS.timeout),
    dictionary: stringParam(p, "dictionary"),
    options: p.options,
  };
}

radiusserverRoutes.get("/", async (c) => {
  return ok(c, await listRadiusServers(c.get("deps")));
});

radiusserverRoutes.post("/test_request", async (c) => {
  const p = c.get("params");
  const identifier = requireString(p, "identifier");
  c.get("audit").info = identifier.slice(0, 200);
  const value = await testRadiusRequest(c.get("deps"), {
    identifier,
    server: requireString(p, "server"),
    secret: requireString(p, "secret"),
    username: requireString(p, "username"),
    password: requireString(p, "password"),
    ...settings(p),
  });
  return ok(c, value);
});

radiusserverRoutes.post("/:identifier", async (c) => {
  const p = c.get("params");
  const identifier = pathParam(c, "identifier");
  c.get("audit").info = identifier.slice(0, 200);
  const value = await setRadiusServer(c.get("deps"), identifier, {
    server: requireString(p, "server"),
    secret: requireString(p, "secret"),
    description: stringParam(p, "description"),
    ...settings(p),
  });
  return ok(c, value);
});

radiusserverRoutes.delete("/:identifier", async (c) => {
  const identifier = pathParam(c, "identifier");
  c.get("audit").info = identifier.slice(0, 200);
  return ok(c, await deleteRadiusServer(c.get("deps"), identifier));
});
