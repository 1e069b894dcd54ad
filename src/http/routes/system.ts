import { Hono } from "hono";
import type { AppEnv } from "../context.ts";
import { ok } from "../envelope.ts";
import { pathParam, stringParam } from "../params.ts";
import { HttpError } from "../../errors.ts";
import {
  deleteSystemConfig,
  readSystemConfig,
  setSystemConfig,
} from "../../domain/system_config/mod.ts";
import {
  caConnectorNameList,
  randomText,
  setTokenDefaults,
  systemNodes,
  testTokenConfig,
} from "../../domain/system_config/extras.ts";
import { radiusServerIdentifiers } from "../../domain/radius_server/mod.ts";
import { flushUserCache } from "../../domain/user_cache/mod.ts";
import { importPublicKeys } from "../../domain/import/mod.ts";
import { configurationDocument } from "../../domain/documentation/mod.ts";

/** `/system/`: key-value system configuration and privacyIDEA's other system routes. */
export const systemRoutes = new Hono<AppEnv>();

systemRoutes.get("/", async (c) => {
  return ok(c, await readSystemConfig(c.get("deps"), stringParam(c.get("params"), "key")));
});

systemRoutes.post("/setConfig", async (c) => {
  const result = await setSystemConfig(c.get("deps"), c.get("params"));
  c.get("audit").info = Object.keys(result).join(", ").slice(0, 900);
  return ok(c, result);
});

// privacyIDEA's routes below are registered before "/:key", which would take them for config keys

systemRoutes.post("/setDefault", async (c) => {
  const result = await setTokenDefaults(c.get("deps"), c.get("params"));
  c.get("audit").info = Object.keys(result).join(", ");
  return ok(c, result);
});

systemRoutes.get("/random", (c) => {
  const p = c.get("params");
  return ok(c, randomText(c.get("deps"), stringParam(p, "len"), stringParam(p, "encode")));
});

systemRoutes.get("/nodes", async (c) => ok(c, await systemNodes(c.get("deps"))));

systemRoutes.post("/test/:tokentype", async (c) => {
  const type = pathParam(c, "tokentype");
  c.get("audit").tokenType = type.slice(0, 30);
  const result = await testTokenConfig(c.get("deps"), type, c.get("params"));
  return ok(c, result.value, { detail: { message: result.message } });
});

systemRoutes.get("/names/radius", async (c) => {
  return ok(c, await radiusServerIdentifiers(c.get("deps")));
});

systemRoutes.get("/names/caconnector", async (c) => {
  return ok(c, await caConnectorNameList(c.get("deps")));
});

// the public keys vendors encrypt token files to (POST /token/load decrypts them)
systemRoutes.get("/gpgkeys", async (c) => ok(c, await importPublicKeys(c.get("deps"))));

// the whole configuration as one reStructuredText file (secrets censored as the read routes do)
systemRoutes.get("/documentation", async (c) => {
  const text = await configurationDocument(c.get("deps"));
  c.get("audit").outcome = true;
  return c.body(text, 200, {
    "content-type": "text/plain; charset=utf-8",
    "content-disposition": "attachment; filename=documentation.rst",
  });
});

/** privacyIDEA routes Tessera refuses: the route, and why. */
export const REFUSED_SYSTEM_ROUTES: Readonly<Record<string, string>> = {
  "GET /system/hsm": "Tessera has no hardware security module: its keys are in the key file",
  "POST /system/hsm": "Tessera has no hardware security module: its keys are in the key file",
};

for (const [route, why] of Object.entries(REFUSED_SYSTEM_ROUTES)) {
  const [method, path] = route.split(" ");
  systemRoutes.on(method, path.slice("/system".length), () => {
    throw new HttpError(404, `${route} is not available in Tessera: ${why}.`, 404);
  });
}

// privacyIDEA's route
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
