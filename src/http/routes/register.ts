/**
 * `/register` and `/recover`: self-registration and password recovery by email (spec 14 §14).
 * Public as in privacyIDEA: the register policies and the user right `password_reset` decide.
 *
 * @module
 */
import { type Context, Hono } from "hono";
import type { AppEnv } from "../context.ts";
import { ok } from "../envelope.ts";
import { stringParam } from "../params.ts";
import { webuiRequest } from "../webui_request.ts";
import {
  type AnonymousRequest,
  isRegistrationAllowed,
  registerUser,
  requestRecoveryCode,
  resetPassword,
} from "../../domain/register/mod.ts";

/** `/register`. */
export const registerRoutes = new Hono<AppEnv>();

/** `/recover`. */
export const recoverRoutes = new Hono<AppEnv>();

/** The request facts the policies are matched on (headers and environment, never the body). */
function anonymousRequest(c: Context<AppEnv>): AnonymousRequest {
  const r = webuiRequest(c);
  return {
    client: c.get("clientIp"),
    userAgent: c.get("userAgent"),
    conditions: r.conditions ?? {},
  };
}

registerRoutes.get("/", async (c) => {
  const value = await isRegistrationAllowed(c.get("deps"), anonymousRequest(c));
  c.get("audit").info = String(value);
  return ok(c, value);
});

registerRoutes.post("/", async (c) => {
  const params = c.get("params");
  c.get("audit").info = (stringParam(params, "username") ?? "").slice(0, 255);
  const user = await registerUser(c.get("deps"), params, anonymousRequest(c));
  const audit = c.get("audit");
  audit.user = user.login;
  audit.realm = user.realm;
  audit.resolver = user.resolver;
  return ok(c, true);
});

recoverRoutes.post("/", async (c) => {
  const who = await requestRecoveryCode(c.get("deps"), c.get("params"), anonymousRequest(c));
  c.get("audit").info = `${who.login}@${who.realm}`.slice(0, 255);
  return ok(c, true);
});

recoverRoutes.post("/reset", async (c) => {
  const result = await resetPassword(c.get("deps"), c.get("params"), anonymousRequest(c));
  const audit = c.get("audit");
  audit.info = `${result.login}@${result.realm}`.slice(0, 255);
  audit.outcome = result.isReset;
  return ok(c, result.isReset);
});
