import { Hono } from "hono";
import type { AppEnv } from "../context.ts";
import { ok } from "../envelope.ts";
import { requireString, stringParam } from "../params.ts";
import { missingParameter } from "../../errors.ts";
import { offlineRefill } from "../../domain/machine/mod.ts";

/** `POST /validate/offlinerefill`: fresh offline OTP hashes for an offline token (spec 07 §5.4). */
export const offlineRoutes = new Hono<AppEnv>();

offlineRoutes.post("/offlinerefill", async (c) => {
  const p = c.get("params");
  const serial = requireString(p, "serial");
  const refilltoken = requireString(p, "refilltoken");
  // pass may not be empty for HOTP, but its presence is what the API requires
  const pass = stringParam(p, "pass");
  if (pass === undefined) throw missingParameter("pass");
  c.get("audit").serial = serial.slice(0, 40);
  const item = await offlineRefill(c.get("deps"), {
    serial,
    refilltoken,
    pass,
    userAgent: c.get("userAgent"),
  });
  return ok(c, true, { extra: { auth_items: { offline: [item] } } });
});
