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
import { visibleRealms } from "../rights.ts";
import { ParameterError } from "../../errors.ts";
import { tokenRealmsParam } from "../route_rights.ts";
import { loadTokenFile } from "../../domain/import/mod.ts";

async function load(c: Context<AppEnv>): Promise<Response> {
  const p = c.get("params");
  const filename = pathParam(c, "filename") || stringParam(p, "filename") || "";
  if (filename === "") throw new ParameterError("Missing parameter: 'filename'");
  const type = stringParam(p, "type");
  if (!type) throw new ParameterError("Missing parameter: 'type'");
  const file = p.file;
  if (!(file instanceof File)) throw new ParameterError("Missing parameter: 'file'");
  const res = await loadTokenFile(c.get("deps"), {
    type,
    content: new Uint8Array(await file.arrayBuffer()),
    psk: stringParam(p, "psk"),
    password: stringParam(p, "password"),
    macMode: stringParam(p, "pskcValidateMAC"),
    tokenRealms: tokenRealmsParam(p),
    // owners named by the file must be in realms the admin may import into
    allowedRealms: await visibleRealms(c, "importtokens"),
  });
  const audit = c.get("audit");
  audit.info = `${type}, ${filename} (imported: ${res.n_imported})`.slice(0, 500);
  audit.serial = res.serials.join(",").slice(0, 500);
  return ok(c, { n_imported: res.n_imported, n_not_imported: res.n_not_imported });
}

/** Adds `POST /load/:filename` and `POST /load` to the token routes. */
export function addTokenLoadRoutes(routes: Hono<AppEnv>): void {
  routes.post("/load/:filename", load);
  routes.post("/load", load);
}
