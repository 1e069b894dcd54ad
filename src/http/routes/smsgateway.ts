import { Hono } from "hono";
import type { AppEnv } from "../context.ts";
import { ok } from "../envelope.ts";
import { pathParam, stringParam } from "../params.ts";
import {
  deleteSmsGateway,
  deleteSmsGatewayOption,
  listSmsGateways,
  saveSmsGateway,
  smsProviders,
} from "../../domain/smsgateway/mod.ts";

/** `/smsgateway/`: SMS gateway definitions used by sms tokens (spec 11 §3). */
export const smsgatewayRoutes = new Hono<AppEnv>();

smsgatewayRoutes.get("/", async (c) => ok(c, await listSmsGateways(c.get("deps"))));

smsgatewayRoutes.get("/providers", async (c) => ok(c, await smsProviders(c.get("deps"))));

smsgatewayRoutes.get("/:gwid", async (c) => {
  return ok(c, await listSmsGateways(c.get("deps"), pathParam(c, "gwid")));
});

smsgatewayRoutes.post("/", async (c) => {
  const p = c.get("params");
  c.get("audit").info = (stringParam(p, "name") ?? "").slice(0, 200);
  return ok(c, await saveSmsGateway(c.get("deps"), p));
});

smsgatewayRoutes.delete("/option/:gwid/:key", async (c) => {
  const key = pathParam(c, "key");
  c.get("audit").info = `${pathParam(c, "gwid")}/${key}`.slice(0, 200);
  return ok(c, await deleteSmsGatewayOption(c.get("deps"), pathParam(c, "gwid"), key));
});

smsgatewayRoutes.delete("/:identifier", async (c) => {
  const identifier = pathParam(c, "identifier");
  c.get("audit").info = identifier.slice(0, 200);
  return ok(c, await deleteSmsGateway(c.get("deps"), identifier));
});
