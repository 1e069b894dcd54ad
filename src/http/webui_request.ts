/**
 * The request facts a `webui` policy match reads: client, user agent and the condition data
 * of the request (headers and environment; never its parameters, which hold a password).
 *
 * @module
 */
import type { Context } from "hono";
import type { AppEnv } from "./context.ts";
import type { WebuiRequest } from "../domain/webui/mod.ts";

/** The {@link WebuiRequest} of `c`. */
export function webuiRequest(c: Context<AppEnv>): WebuiRequest {
  return {
    client: c.get("clientIp"),
    userAgent: c.get("userAgent"),
    conditions: {
      "HTTP Request header": () => Promise.resolve(Object.fromEntries(c.req.raw.headers.entries())),
      "HTTP Environment": {
        REQUEST_METHOD: c.req.method,
        PATH_INFO: c.req.path,
        REMOTE_ADDR: c.get("clientIp"),
        HTTP_USER_AGENT: c.get("userAgent"),
      },
    },
  };
}
