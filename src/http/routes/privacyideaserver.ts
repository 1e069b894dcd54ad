import { Hono } from "hono";
import type { AppEnv } from "../context.ts";
import { ok } from "../envelope.ts";
import { boolParam, pathParam, requireString, stringParam } from "../params.ts";
import {
  deletePrivacyideaServer,
  listPrivacyideaServers,
  setPrivacyideaServer,
  testPrivacyideaServer,
} from "../../domain/privacyidea_server/mod.ts";

/** `/privacyideaserver/`: remote privacyIDEA server definitions (Federation handler). */
export const privacyideaserverRoutes = new Hono<AppEnv>();

privacyideaserverRoutes.get("/", async (c) => {
  return ok(c, await listPrivacyideaServers(c.get("deps")));
});

privacyideaserverRoutes.post("/test_request", async (c) => {
  const p = c.get("params");
  // required as in privacyIDEA, though the test uses only the URL
  const identifier = requireString(p, "identifier");
  c.get("audit").info = identifier.slice(0, 200);
  const value = await testPrivacyideaServer(c.get("deps"), {
    url: requireString(p, "url"),
    isTlsVerified: boolParam(p, "tls", true),
    username: requireString(p, "username"),
    password: requireString(p, "password"),
  });
  return ok(c, value);
});

privacyideaserverRoutes.post("/:identifier", async (c) => {
  const p = c.get("params");
  const identifier = pathParam(c, "identifier");
  c.get("audit").info = identifier.slice(0, 200);
  const value = await setPrivacyideaServer(c.get("deps"), identifier, {
    url: requireString(p, "url"),
    isTlsVerified: boolParam(p, "tls", true),
    description: stringParam(p, "description"),
  });
  return ok(c, value);
});

privacyideaserverRoutes.delete("/:identifier", async (c) => {
  const identifier = pathParam(c, "identifier");
  c.get("audit").info = identifier.slice(0, 200);
  return ok(c, await deletePrivacyideaServer(c.get("deps"), identifier));
});
