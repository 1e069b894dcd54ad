/**
 * The `Federation` handler (spec 05 §5.3): forwards the request to a remote
 * privacyIDEA-compatible server and replaces the response with its answer.
 * Post only; a failure is an exception, so `abort_on_error` (default true for
 * this module) decides whether the request fails or keeps its own answer.
 *
 * @module
 */
import { ConfigAdminError } from "../../../errors.ts";
import {
  DEFAULT_TIMEOUT_S,
  forwardToPrivacyideaServer,
  MAX_TIMEOUT_S,
  privacyideaServerIdentifiers,
} from "../../privacyidea_server/mod.ts";
import type { EventRequest, HandlerModule } from "../types.ts";
import { isTrue, opt } from "../types.ts";

/** Characters a path may carry unencoded (RFC 3986 pchar, `/` and existing escapes). */
const PATH_UNSAFE_REGEXP = /[^A-Za-z0-9\-._~!$&'()*+,;=:@/%]/gu;

/**
 * The request path as sent: the router decoded everything but the reserved
 * escapes (`%2F`, `%3F`, `%25`, …), which stay as they are.
 */
function encodePath(path: string): string {
  return path.replace(PATH_UNSAFE_REGEXP, (ch) => encodeURIComponent(ch));
}

/** A parameter value as a form field; Python's spelling for booleans, JSON for objects. */
function fieldValue(value: unknown): string | undefined {
  if (typeof value === "string") return value;
  if (typeof value === "number" || typeof value === "bigint") return String(value);
  if (typeof value === "boolean") return value ? "True" : "False";
  // files and other non-data values are not forwarded
  if (value === null || typeof value !== "object" || value instanceof Blob) return undefined;
  return JSON.stringify(value);
}

/** Every request parameter as form fields (a list repeats its key), in request order. */
function formFields(params: Record<string, unknown>): [string, string][] {
  const fields: [string, string][] = [];
  for (const [key, value] of Object.entries(params)) {
    for (const item of Array.isArray(value) ? value : [value]) {
      const text = fieldValue(item);
      if (text !== undefined) fields.push([key, text]);
    }
  }
  return fields;
}

function setField(fields: [string, string][], key: string, value: string): void {
  const kept = fields.filter(([k]) => k !== key);
  fields.length = 0;
  fields.push(...kept, [key, value]);
}

/** The incoming JWT, from `PI-Authorization`, else `Authorization`. */
function authorizationOf(request: EventRequest): string | undefined {
  return request.headers.get("PI-Authorization") ?? request.headers.get("Authorization") ??
    undefined;
}

function timeoutOf(value: string | undefined): number {
  const n = Number.parseInt(value ?? "", 10);
  return (n > 0 && n <= MAX_TIMEOUT_S ? n : DEFAULT_TIMEOUT_S) * 1000;
}

/** Federation / forward. */
export const federationHandler: HandlerModule = {
  id: "Federation",
  positions: ["post"],
  defaultAbort: true,
  async actions(deps) {
    return {
      forward: {
        privacyIDEA: opt("str", "The remote/child privacyIDEA Server.", {
          required: true,
          value: await privacyideaServerIdentifiers(deps),
        }),
        realm: opt("str", "Change the realm name to a realm on the child privacyIDEA system."),
        resolver: opt(
          "str",
          "Change the resolver name to a resolver on the child privacyIDEA system.",
        ),
        forward_client_ip: opt(
          "bool",
          "Forward the client IP to the child privacyIDEA server. Otherwise this server will be the client.",
        ),
        forward_authorization_token: opt(
          "bool",
          "Forward the authorization header. This allows to also forward request like token- and system-requests.",
        ),
        timeout: opt("int", `Seconds to wait for the remote server (default ${DEFAULT_TIMEOUT_S})`),
      },
    };
  },
  async run(deps, def, ctx) {
    const response = ctx.response;
    if (def.action !== "forward" || !response) {
      deps.log.warn("Federation: nothing to do", { definition: def.name, action: def.action });
      return { success: false };
    }
    const o = def.options;
    const identifier = o.privacyIDEA ?? "";
    if (identifier === "") {
      throw new ConfigAdminError("The Federation handler needs the option privacyIDEA");
    }
    const request = ctx.request;
    // a copy: later handlers and the audit see the request as it came
    const params = formFields(request.params);
    if (isTrue(o.forward_client_ip)) setField(params, "client", request.clientIp);
    if (o.realm) setField(params, "realm", o.realm);
    if (o.resolver) setField(params, "resolver", o.resolver);
    const headers: Record<string, string> = {};
    const authorization = isTrue(o.forward_authorization_token)
      ? authorizationOf(request)
      : undefined;
    if (authorization) headers["PI-Authorization"] = authorization;

    const remote = await forwardToPrivacyideaServer(deps, identifier, {
      method: request.method,
      // as sent: privacyIDEA's routes tell `/token/` from `/token`
      path: request.rawPath ?? encodePath(request.path),
      params,
      headers,
      timeoutMs: timeoutOf(o.timeout),
    });
    const body = remote.body;
    if ("detail" in body) {
      const detail = body.detail;
      // an error answer may carry detail null
      if (detail !== null && typeof detail === "object" && !Array.isArray(detail)) {
        (detail as Record<string, unknown>).origin = remote.url;
      } else {
        body.detail = { origin: remote.url };
      }
    }
    response.status = remote.status;
    response.body = body;
    response.changed = true;
    return { success: true };
  },
};
