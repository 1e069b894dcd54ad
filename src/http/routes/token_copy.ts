import type { Context, Hono } from "hono";
import type { AppEnv } from "../context.ts";
import { ok } from "../envelope.ts";
import { requireString } from "../params.ts";
import { AppError, PolicyError } from "../../errors.ts";
import {
  copyTokenPin,
  copyTokenUser,
  findTokenBySerial,
  type TokenWithInfo,
} from "../../domain/token/mod.ts";

/**
 * `from` and `to` of a copy: each must name a token (ERR1016 / ERR1017, privacyIDEA's
 * messages), and the admin's right must reach each token's realms (owner and token realms),
 * decided by the guard's rule for tokens.
 */
async function copyPair(c: Context<AppEnv>): Promise<[TokenWithInfo, TokenWithInfo]> {
  const p = c.get("params");
  const fromSerial = requireString(p, "from");
  const toSerial = requireString(p, "to");
  const deps = c.get("deps");
  const from = await findTokenBySerial(deps, fromSerial);
  if (!from) throw new AppError("No unique token to copy from found", 1016);
  const to = await findTokenBySerial(deps, toSerial);
  if (!to) throw new AppError("No unique token to copy to found", 1017);
  c.get("audit").serial = `${from.serial},${to.serial}`.slice(0, 40);
  const authorize = c.get("target").authorizeToken;
  for (const t of [from, to]) {
    if (authorize && !(await authorize(t))) {
      throw new PolicyError(
        "Admin actions are defined, but you are not allowed to act on the token " + t.serial,
      );
    }
  }
  return [from, to];
}

/** `/token/copypin` and `/token/copyuser` (added to the `/token` routes). */
export function addTokenCopyRoutes(routes: Hono<AppEnv>): void {
  routes.post("/copypin", async (c) => {
    const [from, to] = await copyPair(c);
    return ok(c, await copyTokenPin(c.get("deps"), from, to));
  });
  routes.post("/copyuser", async (c) => {
    const [from, to] = await copyPair(c);
    return ok(c, await copyTokenUser(c.get("deps"), from, to));
  });
}
