/**
 * Event handling (spec 05): the `/event/` configuration and the engine that
 * runs handler modules around the endpoints that emit events.
 *
 * @module
 */
import type { Deps } from "../../deps.ts";
import { missingParameter, ParameterError, ResourceNotFoundError } from "../../errors.ts";
import { censorUrlPassword, keepUrlPassword } from "../secret_targets/url.ts";
import * as store from "./event_store.ts";
import type { EventRow } from "./event_store.ts";
import { AVAILABLE_EVENTS } from "./catalog.ts";
import { type ConditionDef, CONDITIONS } from "./conditions.ts";
import { HANDLER_MODULES, handlerModule } from "./handlers/mod.ts";
import type { ActionDefs } from "./types.ts";

export { eventOf } from "./catalog.ts";
export { eventPlan, runDefinitions } from "./engine.ts";
export type { EventPlan } from "./engine.ts";
export { EventAbortError } from "./types.ts";
export {
  findCounter as readEventCounter,
  takeFromCounter as takeFromEventCounter,
} from "./event_store.ts";
export type { EventContext, EventIdentity, EventRequest, EventResponse } from "./types.ts";

/** A definition as `GET /event/` shows it (spec 05 §2). */
export interface EventDefinition {
  id: number;
  name: string;
  active: boolean;
  ordering: number;
  position: string;
  abort_on_error: boolean;
  event: string[];
  handlermodule: string;
  action: string;
  condition: string;
  options: Record<string, string>;
  conditions: Record<string, string>;
}

const NOT_FOUND = "The requested EventHandler could not be found.";
const MAX_NAME = 64;
const MAX_ID = 2_147_483_647;

function view(row: EventRow): EventDefinition {
  return {
    id: row.id,
    name: row.name,
    active: row.active,
    ordering: row.ordering,
    position: row.position || "post",
    abort_on_error: row.abortOnError,
    event: row.event.split(",").map((s) => s.trim()).filter(Boolean),
    handlermodule: row.handlermodule,
    action: row.action,
    condition: "",
    // a password inside a URL option (a WebHook's URL) is not shown
    options: Object.fromEntries(
      Object.entries(row.options).map(([k, v]) => [k, censorUrlPassword(v)]),
    ),
    conditions: row.conditions,
  };
}

/** Parses a definition id (path or parameter). */
export function parseEventId(text: unknown): number {
  const s = typeof text === "number" ? String(text) : typeof text === "string" ? text.trim() : "";
  if (!/^\d+$/.test(s) || Number(s) < 1 || Number(s) > MAX_ID) {
    throw new ParameterError(
      `Cannot parse event handler id: expected a positive integer, got "${
        String(text).slice(0, 50)
      }"`,
    );
  }
  return Number(s);
}

/** `GET /event/` and `GET /event/<id>`: definitions ordered by `ordering`. */
export async function listEventDefinitions(deps: Deps, id?: number): Promise<EventDefinition[]> {
  return (await store.listEvents(deps.db, id)).map(view);
}

const MAX_ENTRIES = 100;
const MAX_VALUE = 10_000;

/** Bounds the number and size of options or conditions of one definition. */
function checkSize(what: string, entries: Record<string, string>): Record<string, string> {
  const list = Object.entries(entries);
  if (list.length > MAX_ENTRIES) {
    throw new ParameterError(`Cannot save event handler: more than ${MAX_ENTRIES} ${what} entries`);
  }
  for (const [k, v] of list) {
    if (v.length > MAX_VALUE) {
      throw new ParameterError(
        `Cannot save event handler: ${what} "${
          k.slice(0, 50)
        }" is longer than ${MAX_VALUE} characters`,
      );
    }
  }
  return entries;
}

/** An option or condition value as privacyIDEA stores it: a string (`true` → "True"). */
function storedString(name: string, v: unknown): string {
  if (typeof v === "string") return v;
  if (typeof v === "boolean") return v ? "True" : "False";
  if (typeof v === "number" && Number.isFinite(v)) return String(v);
  if (v === null) return "";
  throw new ParameterError(
    `Cannot parse parameter "${name}": expected a string, number or boolean`,
  );
}

function text(params: Record<string, unknown>, name: string): string | undefined {
  const v = params[name];
  if (v === undefined || v === null) return undefined;
  return storedString(name, v);
}

function bool(params: Record<string, unknown>, name: string): boolean | undefined {
  const v = params[name];
  if (v === undefined || v === null) return undefined;
  if (typeof v === "boolean") return v;
  const s = storedString(name, v).trim().toLowerCase();
  if (["1", "true", "yes", "on"].includes(s)) return true;
  if (["0", "false", "no", "off", ""].includes(s)) return false;
  throw new ParameterError(`Cannot parse parameter "${name}": expected a boolean, got "${s}"`);
}

function eventNames(value: unknown): string[] {
  let names: string[];
  if (Array.isArray(value)) names = value.map((v) => storedString("event", v));
  else if (typeof value === "string") names = value.split(",");
  else throw missingParameter("event");
  names = names.map((s) => s.trim()).filter(Boolean);
  if (names.length === 0) throw missingParameter("event");
  for (const n of names) {
    if (!/^[A-Za-z0-9_.-]{1,100}$/.test(n)) {
      throw new ParameterError(
        `Cannot parse parameter "event": invalid event name "${n.slice(0, 50)}"`,
      );
    }
  }
  return [...new Set(names)];
}

function conditionsOf(value: unknown): Record<string, string> {
  if (value === undefined || value === null || value === "") return {};
  let obj: unknown = value;
  if (typeof value === "string") {
    try {
      obj = JSON.parse(value);
    } catch {
      obj = undefined;
    }
  }
  if (!obj || typeof obj !== "object" || Array.isArray(obj)) {
    throw new ParameterError("The 'conditions' parameter must be a dictionary.");
  }
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(obj)) {
    if (k.length > 200) {
      throw new ParameterError('Cannot parse parameter "conditions": key too long');
    }
    out[k] = storedString(`conditions.${k}`, v);
  }
  return out;
}

/**
 * `POST /event`: creates a definition, or replaces the one named by `id`
 * (updates are not partial, spec 05 §3.1). Returns the id.
 */
export async function saveEventDefinition(
  deps: Deps,
  params: Record<string, unknown>,
): Promise<number> {
  const name = text(params, "name")?.trim() ?? "";
  if (!name) throw missingParameter("name");
  if (name.length > MAX_NAME) {
    throw new ParameterError(`Cannot parse parameter "name": longer than ${MAX_NAME} characters`);
  }
  const events = eventNames(params.event);
  const module = text(params, "handlermodule")?.trim() ?? "";
  if (!module) throw missingParameter("handlermodule");
  const mod = handlerModule(module);
  if (!mod) throw new ParameterError(`Unknown handler module: ${module}`);
  const action = text(params, "action")?.trim() ?? "";
  if (!action) throw missingParameter("action");
  if (action.length > 50) throw new ParameterError('Cannot parse parameter "action": too long');
  const idRaw = params.id;
  const id = idRaw === undefined || idRaw === null || idRaw === ""
    ? undefined
    : parseEventId(idRaw);
  const orderingText = text(params, "ordering")?.trim() ?? "";
  if (orderingText !== "" && !/^-?\d{1,9}$/.test(orderingText)) {
    throw new ParameterError(
      `Cannot parse parameter "ordering": expected an integer, got "${orderingText}"`,
    );
  }
  const position = text(params, "position")?.trim() || "post";
  if (position !== "pre" && position !== "post") {
    throw new ParameterError(
      `Cannot parse parameter "position": expected "pre" or "post", got "${position}"`,
    );
  }
  const options: Record<string, string> = {};
  for (const [k, v] of Object.entries(params)) {
    if (k.startsWith("option.") && k.length > "option.".length) {
      options[k.slice("option.".length)] = storedString(k, v);
    }
  }
  checkSize("option", options);
  // a URL sent back with its password as __CENSORED__ keeps the stored one while its target stays
  const stored = id === undefined ? undefined : (await store.listEvents(deps.db, id))[0]?.options;
  for (const [k, v] of Object.entries(options)) {
    options[k] = keepUrlPassword(`option.${k}`, v, stored?.[k]);
  }
  const abort = bool(params, "abort_on_error");
  return await store.saveEvent(deps.db, id, {
    name,
    active: bool(params, "active") ?? true,
    ordering: orderingText === "" ? 0 : Number(orderingText),
    position,
    abortOnError: abort ?? mod.defaultAbort,
    event: events.join(","),
    handlermodule: module,
    action,
    options,
    conditions: checkSize("conditions", conditionsOf(params.conditions)),
  }, abort === undefined);
}

/** `POST /event/enable/<id>` and `/event/disable/<id>`: returns the id. */
export async function setEventActive(deps: Deps, id: number, active: boolean): Promise<number> {
  if (!(await store.setActive(deps.db, id, active))) throw new ResourceNotFoundError(NOT_FOUND);
  return id;
}

/** `DELETE /event/<id>`: returns the id. */
export async function deleteEventDefinition(deps: Deps, id: number): Promise<number> {
  if (!(await store.deleteEvent(deps.db, id))) throw new ResourceNotFoundError(NOT_FOUND);
  return id;
}

/** `GET /event/available`: every event name. */
export function availableEvents(): string[] {
  return [...AVAILABLE_EVENTS];
}

/** `GET /event/handlermodules`: the implemented handler modules. */
export function handlerModuleNames(): string[] {
  return HANDLER_MODULES.map((m) => m.id);
}

/** `GET /event/actions/<module>`: action → option definitions; `[]` for an unknown module. */
export async function moduleActions(deps: Deps, module: string): Promise<ActionDefs | []> {
  const mod = handlerModule(module);
  return mod ? await mod.actions(deps) : [];
}

/** `GET /event/conditions/<module>`: the condition definitions; `[]` for an unknown module. */
export function moduleConditions(module: string): Record<string, ConditionDef> | [] {
  return handlerModule(module) ? structuredClone(CONDITIONS) : [];
}

/** `GET /event/positions/<module>`: `[]` for an unknown module. */
export function modulePositions(module: string): string[] {
  return [...(handlerModule(module)?.positions ?? [])];
}

/** `GET /event/defaults/<module>`: `{abort_on_error}`; false for an unknown module. */
export function moduleDefaults(module: string): { abort_on_error: boolean } | false {
  const mod = handlerModule(module);
  return mod ? { abort_on_error: mod.defaultAbort } : false;
}
