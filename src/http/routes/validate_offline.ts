import { Hono } from "hono";
import { hiddenTokenError } from "../auth.ts";
import type { AppEnv } from "../context.ts";
import { ok } from "../envelope.ts";
import { requireString, stringParam } from "../params.ts";
import { missingParameter } from "../../errors.ts";
import { offlineRefill } from "../../domain/machine/mod.ts";

/** `POST /validate/offlinerefill`: fresh offline OTP hashes for an offline token (spec 07 §5.4). */
export const offlineRoutes = new Hono<AppEnv>();

/** Token policy `hide_specific_error_message_for_offline_refill`: privacyIDEA's generic error. */
const HIDDEN_REFILL_ERROR = {
  action: "hide_specific_error_message_for_offline_refill",
  message: "Failed offline token refill",
  // privacyIDEA's Error.VALIDATE
  code: 401,
};

offlineRoutes.post("/offlinerefill", async (c) => {
  const p = c.get("params");
  const serial = requireString(p, "serial");
  const refilltoken = requireString(p, "refilltoken");
  // pass may not be empty for HOTP, but its presence is what the API requires
  const pass = stringParam(p, "pass");
  if (pass === undefined) throw missingParameter("pass");
  c.get("audit").serial = serial.slice(0, 40);
  let item;
  try {
    item = await offlineRefill(c.get("deps"), {
      serial,
      refilltoken,
      pass,
      userAgent: c.get("userAgent"),
    });
  } catch (err) {
    // the parameters' errors above stay as they are, as in privacyIDEA
    throw await hiddenTokenError(c, err, HIDDEN_REFILL_ERROR);
  }
  return ok(c, true, { extra: { auth_items: { offline: [item] } } });
});
