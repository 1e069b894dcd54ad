import { Hono } from "hono";
import type { AppEnv } from "../context.ts";
import { ok } from "../envelope.ts";
import { applicationOptions } from "../../domain/machine/mod.ts";
import { serviceIdNames } from "../../domain/service_id/mod.ts";

/** `GET /application/`: options of the machine applications per token type (spec 07 §4.6). */
export const applicationRoutes = new Hono<AppEnv>();

applicationRoutes.get("/", async (c) => {
  // the ssh application offers the defined service ids (privacyIDEA's /serviceid/)
  return ok(c, applicationOptions(await serviceIdNames(c.get("deps"))));
});
