import { type Context, Hono } from "hono";
import type { AppEnv } from "../context.ts";
import { yubikeyValidate } from "../../domain/ttype/mod.ts";

/** `/ttype/`: protocol endpoints of token types (spec 11 §6.4). */
export const ttypeRoutes = new Hono<AppEnv>();

/** The request's parameters as strings (the protocol signs their text). */
function stringParams(c: Context<AppEnv>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(c.get("params"))) {
    if (typeof v === "string") out[k] = v;
    else if (typeof v === "number" || typeof v === "boolean") out[k] = String(v);
  }
  return out;
}

async function yubikey(c: Context<AppEnv>): Promise<Response> {
  const answer = await yubikeyValidate(c.get("deps"), {
    params: stringParams(c),
    clientIp: c.get("clientIp"),
    userAgent: c.get("userAgent"),
  });
  const audit = c.get("audit");
  audit.serial = answer.serial ?? "";
  audit.tokenType = "yubikey";
  audit.user = answer.user?.login ?? "";
  audit.realm = answer.user?.realm ?? "";
  audit.resolver = answer.user?.resolver ?? "";
  audit.info = `${answer.status}: ${answer.reason}`;
  audit.outcome = answer.status === "OK";
  // the Yubico protocol's answer, not the JSON envelope
  return c.text(answer.text, 200, { "cache-control": "no-store" });
}

ttypeRoutes.get("/yubikey", yubikey);
ttypeRoutes.post("/yubikey", yubikey);
