/**
 * `GET /openapi.json`: an OpenAPI 3.1 description generated from the app's
 * own route table and the rights table (route_rights.ts), so it cannot list
 * a route the server does not have or miss one it has: every path, its
 * method, its path parameters, who may call it and with which policy action,
 * and the privacyIDEA envelope every answer uses.
 *
 * @module
 */
import { VERSION } from "../version.ts";
import { ROUTE_RIGHTS, routeKey } from "./rights/route_rights.ts";

/** A registered route, as `app.routes` lists it. */
export interface RouteEntry {
  method: string;
  path: string;
}

const ENVELOPE = {
  type: "object",
  description: "privacyIDEA's envelope: every answer, success or error, has this shape",
  required: ["id", "jsonrpc", "result", "time", "version", "versionnumber"],
  properties: {
    id: { type: "integer" },
    jsonrpc: { type: "string", const: "2.0" },
    result: {
      type: "object",
      required: ["status"],
      properties: {
        status: { type: "boolean" },
        value: { description: "the answer (any JSON value)" },
        authentication: {
          type: "string",
          enum: ["ACCEPT", "REJECT", "CHALLENGE"],
          description: "/validate and /auth only",
        },
        error: {
          type: "object",
          properties: { code: { type: "integer" }, message: { type: "string" } },
        },
      },
    },
    detail: { description: "extra information of some endpoints (e.g. /validate/check)" },
    time: { type: "number" },
    version: { type: "string" },
    versionnumber: { type: "string" },
    signature: { type: "string", description: "response signature when signing is on" },
  },
} as const;

/** `/token/:serial` → `/token/{serial}`; the names of the path parameters. */
function openApiPath(path: string): { path: string; params: string[] } {
  const params: string[] = [];
  const out = path.replace(/:([A-Za-z0-9_]+)(\{[^}]*\})?\??/g, (_m, name: string) => {
    params.push(name);
    return `{${name}}`;
  });
  return { path: out.length > 1 ? out.replace(/\/+$/, "") : out, params };
}

function describeRight(key: string): { security: unknown[]; text: string } {
  const rule = ROUTE_RIGHTS[key];
  if (!rule || rule.roles === "public") return { security: [], text: "No JWT needed." };
  const who = rule.roles === "admin" ? "An admin JWT." : "An admin or a user JWT.";
  const action = rule.action === undefined
    ? rule.why ? ` No policy action: ${rule.why}.` : ""
    : typeof rule.action === "string"
    ? ` Policy action \`${rule.action}\`${rule.isAdminActionOnly ? " (admins)" : ""}.`
    : " Policy action computed from the request (e.g. enroll<TYPE>).";
  return { security: [{ jwt: [] }], text: who + action };
}

/** The OpenAPI document of `routes` (the app's route table). */
export function openApiDocument(routes: readonly RouteEntry[]): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const r of routes) {
    if (r.method === "ALL" && r.path.endsWith("*")) continue;
    const key = routeKey(r.method, r.path);
    const { path, params } = openApiPath(r.path);
    const method = r.method.toLowerCase();
    const item = paths[path] ??= {};
    if (item[method]) continue;
    const right = describeRight(key);
    item[method] = {
      operationId: key,
      summary: key,
      description: right.text +
        " Parameters may come as query, form (urlencoded or multipart) or JSON body.",
      security: right.security,
      parameters: params.map((name) => ({
        name,
        in: "path",
        required: true,
        schema: { type: "string" },
      })),
      responses: {
        default: {
          description: "the privacyIDEA envelope",
          content: { "application/json": { schema: { $ref: "#/components/schemas/Envelope" } } },
        },
      },
    };
  }
  return {
    openapi: "3.1.0",
    info: {
      title: "Tessera",
      version: VERSION,
      description: "privacyIDEA-compatible multi-factor authentication server",
    },
    paths,
    components: {
      schemas: { Envelope: ENVELOPE },
      securitySchemes: {
        jwt: {
          type: "apiKey",
          in: "header",
          name: "PI-Authorization",
          description: "the token of POST /auth (also accepted in Authorization)",
        },
      },
    },
  };
}
