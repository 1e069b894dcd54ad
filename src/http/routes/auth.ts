import { Hono } from "hono";
import type { AppEnv } from "../context.ts";
import { ok } from "../envelope.ts";
import { stringParam } from "../params.ts";
import { issueJwt } from "../jwt.ts";
import { login, menusOf, piLogLevel, WEBUI_DEFAULTS } from "../../domain/auth/mod.ts";
import { adminOrUser } from "../auth.ts";
import { TOKEN_TYPES } from "../../domain/token/mod.ts";

/** `/auth`: login (unauthenticated) and `/auth/rights`. */
export const authRoutes = new Hono<AppEnv>();

authRoutes.post("/", async (c) => {
  c.set("authStyle", true);
  const p = c.var.params;
  const deps = c.var.deps;
  const result = await login(deps, {
    username: stringParam(p, "username") ?? "",
    password: stringParam(p, "password") ?? "",
    realm: stringParam(p, "realm"),
  });
  const rights: string[] = [];
  const { token } = await issueJwt(deps, { ...result, rights });
  const audit = c.var.audit;
  audit.user = result.username;
  audit.realm = result.realm;
  audit.resolver = result.resolver;
  if (result.role === "admin") audit.administrator = result.username;
  audit.outcome = true;
  return ok(c, {
    token,
    role: result.role,
    username: result.username,
    realm: result.realm,
    rights,
    menus: menusOf(result.role),
    log_level: piLogLevel(deps.config.log.level),
    auth: true,
    ...WEBUI_DEFAULTS,
  });
});

authRoutes.get("/rights", adminOrUser, (c) => {
  return ok(c, { ...TOKEN_TYPES });
});
