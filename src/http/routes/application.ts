import { Hono } from "hono";
import type { AppEnv } from "../context.ts";
import { ok } from "../envelope.ts";
import { applicationOptions } from "../../domain/machine/mod.ts";

/** `GET /application/`: options of the machine applications per token type (spec 07 §4.6). */
export const applicationRoutes = new Hono<AppEnv>();

applicationRoutes.get("/", (c) => {
  // TODO(#6): offer defined service ids once Tessera has them (privacyIDEA's /serviceid/)
  return ok(c, applicationOptions([]));
});
