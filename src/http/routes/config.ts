/**
 * `GET /config`: the login page's configuration (privacyIDEA's `get_ui_config` of its web
 * interface's blueprint). Public like the login page it configures; not audited, as privacyIDEA
 * audits none of its web interface's requests.
 *
 * @module
 */
import { Hono } from "hono";
import type { AppEnv } from "../context.ts";
import { ok } from "../envelope.ts";
import { loginPageConfig } from "../../domain/webui/mod.ts";
import { webuiRequest } from "../webui_request.ts";

/** `/config`. */
export const configRoutes = new Hono<AppEnv>();

configRoutes.get("/", async (c) => {
  c.get("audit").isUnaudited = true;
  const value = await loginPageConfig(c.get("deps"), {
    ...webuiRequest(c),
    remoteUser: c.get("remoteUser"),
  });
  return ok(c, value);
});
