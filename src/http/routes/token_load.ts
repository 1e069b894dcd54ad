/**
 * `POST /token/load/<filename>` (spec 12 §1): imports a token seed file.
 * Mounted on the `/token/` routes by `routes/token.ts`.
 *
 * @module
 */
import type { Context, Hono } from "hono";
import type { AppEnv } from "../context.ts";
import { ok } from "../envelope.ts";
import { pathParam, stringParam } from "../params.ts";
import { visibleRealms } from "../rights/rights.ts";
import { ParameterError } from "../../errors.ts";
import { tokenRealmsParam } from "../rights/route_rights.ts";
import { loadTokenFile } from "../../domain/import/mod.ts";

async function load(c: Context<AppEnv>): Promise<Response> {
  const p = c.get("params");
  const filename = pathParam(c, "filename") || stringParam(p, "filename") || "";
  if (filename === "") throw new ParameterError("Missing parameter: 'filename'");
  const type = stringParam(p, "type");
  if (!type) throw new ParameterError("Missing parameter: 'type'");
  const file = p.file;
  if (!(file instanceof File)) throw new ParameterError("Missing parameter: 'file'");
  const authorizeToken = c.get("target").authorizeToken;
  const res = await loadTokenFile(c.get("deps"), {
    type,
    content: new Uint8Array(await file.arrayBuffer()),
    psk: stringParam(p, "psk"),
    password: stringParam(p, "password"),
    macMode: stringParam(p, "pskcValidateMAC"),
    tokenRealms: tokenRealmsParam(p),
    // owners named by the file must be in realms the admin may import into
    allowedRealms: await visibleRealms(c, "importtokens"),
    // an existing token the file names: the rights step's decision on that token's realms
    mayReinit: (token) => authorizeToken ? authorizeToken(token) : Promise.resolve(false),
  });
  const audit = c.get("audit");
  const refused = res.unauthorized.length > 0
    ? `, unauthorized: ${res.unauthorized.join(",")}`
    : "";
  audit.info = `${type}, ${filename} (imported: ${res.n_imported}${refused})`.slice(0, 500);
  audit.serial = res.serials.join(",").slice(0, 500);
  const value: Record<string, unknown> = {
    n_imported: res.n_imported,
    n_not_imported: res.n_not_imported,
  };
  // privacyIDEA's name for serials a bulk token request may not touch; only when there are some
  if (res.unauthorized.length > 0) value.unauthorized = res.unauthorized;
  return ok(c, value);
}

/** Adds `POST /load/:filename` and `POST /load` to the token routes. */
export function addTokenLoadRoutes(routes: Hono<AppEnv>): void {
  routes.post("/load/:filename", load);
  routes.post("/load", load);
}
