import { Hono } from "hono";
import type { AppEnv } from "../context.ts";
import { ok } from "../envelope.ts";
import { clientApplications } from "../../domain/audit/mod.ts";

/** `/client/`: the client applications that authenticated users (spec 14 §16). */
export const clientRoutes = new Hono<AppEnv>();

clientRoutes.get("/", async (c) => ok(c, await clientApplications(c.get("deps"))));
