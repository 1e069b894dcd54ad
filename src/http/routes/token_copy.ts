import type { Context, Hono } from "hono";
import type { AppEnv } from "../context.ts";
import { ok } from "../envelope.ts";
import { requireString } from "../params.ts";
import { AppError } from "../../errors.ts";
import { copyTokenPin, copyTokenUser, type TokenWithInfo } from "../../domain/token/mod.ts";

/**
 * `from` and `to` of a copy, as the rights step found and checked them (route_rights.ts names
 * both as the request's tokens): each must name a token (ERR1016 / ERR1017, privacyIDEA's
 * messages).
 */
function copyPair(c: Context<AppEnv>): [TokenWithInfo, TokenWithInfo] {
  const p = c.get("params");
  const fromSerial = requireString(p, "from");
  const toSerial = requireString(p, "to");
  const checked = c.get("target").tokens;
  const from = checked.find((t) => t.serial === fromSerial);
  if (!from) throw new AppError("No unique token to copy from found", 1016);
  const to = checked.find((t) => t.serial === toSerial);
  if (!to) throw new AppError("No unique token to copy to found", 1017);
  c.get("audit").serial = `${from.serial},${to.serial}`.slice(0, 40);
  return [from, to];
}

/** `/token/copypin` and `/token/copyuser` (added to the `/token` routes). */
export function addTokenCopyRoutes(routes: Hono<AppEnv>): void {
  routes.post("/copypin", async (c) => {
    const [from, to] = copyPair(c);
    return ok(c, await copyTokenPin(c.get("deps"), from, to));
  });
  routes.post("/copyuser", async (c) => {
    const [from, to] = copyPair(c);
    return ok(c, await copyTokenUser(c.get("deps"), from, to));
  });
}
