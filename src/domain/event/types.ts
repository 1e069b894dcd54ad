/**
 * Types shared by the event engine, the conditions and the handler modules.
 *
 * @module
 */
import type { Deps } from "../../deps.ts";
import { AppError } from "../../errors.ts";
import type { RequestContext } from "../request/context.ts";

/** Definition of one action option (spec 05 §5). */
export interface OptionDef {
  type: "str" | "bool" | "int" | "text";
  required?: boolean;
  description: string;
  value?: unknown[];
  visibleIf?: string;
  visibleValue?: string;
  default?: string;
}

/** Action name → option name → definition. */
export type ActionDefs = Record<string, Record<string, OptionDef>>;

/** The caller as the engine sees it (from the JWT). */
export interface EventIdentity {
  username: string;
  realm: string;
  role: "admin" | "user";
  resolver: string;
}

/** The request a handler sees. `params` is the live map: pre handlers may change it. */
export interface EventRequest {
  method: string;
  /** The routed path: decoded, without a trailing slash. */
  path: string;
  /** The path as the client sent it (percent-encoded, trailing slash kept). */
  rawPath?: string;
  params: Record<string, unknown>;
  headers: Headers;
  clientIp: string;
  userAgent: string;
  identity?: EventIdentity;
  /** The serial in the URL path (`/token/disable/<serial>`), if any. */
  pathSerial?: string;
  /** Serial, user and realm the endpoint wrote into its audit row (read only). */
  audit: { serial: string; user: string; realm: string; tokenType: string };
  /**
   * The objects the rights step resolved and checked for this request (absent on public
   * endpoints): the facts read them instead of looking the parameters up again.
   */
  checked?: RequestContext;
}

/** The JSON response of the endpoint; handlers may change `body` (and set `changed`). */
export interface EventResponse {
  status: number;
  body: Record<string, unknown> | undefined;
  changed: boolean;
}

/** Everything one definition run sees. The lazily built facts are cached per request. */
export interface EventContext {
  event: string;
  position: "pre" | "post";
  request: EventRequest;
  response?: EventResponse;
  /** Per-request cache of looked-up facts (user, token, …), reset when params change. */
  cache: Map<string, unknown>;
  /** Set when a handler changed or enrolled a token (the endpoint then reads them afresh). */
  tokensChanged?: boolean;
}

/** A definition as the engine runs it. */
export interface RunDefinition {
  id: number;
  name: string;
  action: string;
  options: Record<string, string>;
}

/** Outcome of one action. */
export interface ActionResult {
  success: boolean;
  /** Extra info for the audit entry: `name (<details>)`. */
  details?: string;
}

/** A handler module (spec 05 §5): one file under `handlers/`. */
export interface HandlerModule {
  readonly id: string;
  readonly positions: readonly ("post" | "pre")[];
  readonly defaultAbort: boolean;
  actions(deps: Deps): Promise<ActionDefs>;
  run(deps: Deps, def: RunDefinition, ctx: EventContext): Promise<ActionResult>;
}

/** A handler asked to abort the request (code 903, HTTP 400, spec 05 §7.3). */
export class EventAbortError extends AppError {
  constructor(message: string) {
    super(message, 903);
  }
}

/** Shorthand to build option definitions. */
export function opt(
  type: OptionDef["type"],
  description: string,
  extra: Partial<OptionDef> = {},
): OptionDef {
  return { type, description, ...extra };
}

/** The truthiness privacyIDEA's `is_true` gives an option string. */
export function isTrue(value: unknown): boolean {
  if (typeof value === "boolean") return value;
  if (typeof value === "number") return value === 1;
  return typeof value === "string" && ["1", "true", "yes", "on"].includes(value.toLowerCase());
}
