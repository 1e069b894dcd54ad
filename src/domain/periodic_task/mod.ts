/**
 * Periodic tasks (`/periodictask/`, spec 14 §10): definitions of a task
 * module run on a crontab interval on the nodes they name, and the scheduler
 * that runs them (scheduler.ts).
 *
 * @module
 */
import type { Deps } from "../../deps.ts";
import { missingParameter, ParameterError, ResourceNotFoundError } from "../../errors.ts";
import { cronProblem } from "../../lib/cron.ts";
import * as store from "./periodic_task_store.ts";
import { TASK_MODULES, type TaskOptionDescription } from "./task_modules.ts";

export { runDueTasks, type Scheduler, startScheduler } from "./scheduler.ts";
export type { TaskRun } from "./scheduler.ts";

const MAX_NAME = 64;
const MAX_INTERVAL = 256;
const MAX_NODES_TEXT = 256;
const MAX_OPTION_KEY = 255;
const MAX_OPTION_VALUE = 2000;
const MAX_ORDERING = 2_147_483_647;
const NOT_FOUND = "The requested PeriodicTask could not be found.";

/** A task as `GET /periodictask/` shows it. */
export interface PeriodicTaskView {
  id: number;
  name: string;
  active: boolean;
  interval: string;
  nodes: string[];
  taskmodule: string;
  retry_if_failed: boolean;
  ordering: number;
  last_update: string;
  options: Record<string, string>;
  last_runs: Record<string, string>;
}

/** Input of {@link savePeriodicTask}, as the request gives it. */
export interface PeriodicTaskInput {
  /** Replace this task instead of creating one. */
  id?: number;
  name: string;
  isActive: boolean;
  isRetriedIfFailed: boolean;
  interval: string;
  /** Comma-separated node names. */
  nodes: string;
  taskmodule: string;
  ordering: number;
  /** An object, or JSON text of one; absent: none. */
  options?: unknown;
}

/** `YYYY-MM-DD hh:mm:ss.ffffff+0000` (privacyIDEA's AUTH_DATE_FORMAT of a UTC time). */
function formatTime(ms: number): string {
  const date = new Date(ms);
  const iso = date.toISOString();
  const micro = String(date.getUTCMilliseconds() * 1000).padStart(6, "0");
  return `${iso.slice(0, 10)} ${iso.slice(11, 19)}.${micro}+0000`;
}

function viewOf(t: store.StoredTask): PeriodicTaskView {
  return {
    id: t.id,
    name: t.name,
    active: t.isActive,
    interval: t.interval,
    nodes: t.nodes,
    taskmodule: t.taskmodule,
    retry_if_failed: t.isRetriedIfFailed,
    ordering: t.ordering,
    last_update: formatTime(t.lastUpdate),
    options: t.options,
    last_runs: Object.fromEntries(
      Object.entries(t.lastRuns).map(([node, ms]) => [node, formatTime(ms)]),
    ),
  };
}

/** Parses a task id (path or parameter). */
export function parsePeriodicTaskId(text: unknown): number {
  const s = typeof text === "number" ? String(text) : typeof text === "string" ? text.trim() : "";
  if (!/^\d{1,10}$/.test(s) || Number(s) > MAX_ORDERING) {
    throw new ParameterError(
      `Cannot parse periodic task id: expected a non-negative integer, got "${
        String(text).slice(0, 50)
      }"`,
    );
  }
  return Number(s);
}

/** `GET /periodictask/taskmodules/`. */
export function taskModuleNames(): string[] {
  return Object.keys(TASK_MODULES);
}

/** `GET /periodictask/options/<module>`: the module's options. */
export function taskModuleOptions(module: string): Record<string, TaskOptionDescription> {
  const m = Object.hasOwn(TASK_MODULES, module) ? TASK_MODULES[module] : undefined;
  if (m === undefined) throw new ParameterError(`Unknown task module: '${module.slice(0, 80)}'`);
  return { ...m.options };
}

/** `GET /periodictask/nodes/`: the node names Tessera knows (this node; nodes have no registry). */
export function periodicTaskNodes(deps: Deps): string[] {
  return [deps.nodeName];
}

/** `GET /periodictask/`: every task, by `ordering`. */
export async function listPeriodicTasks(deps: Deps): Promise<PeriodicTaskView[]> {
  return (await store.listTasks(deps.db)).map(viewOf);
}

/** `GET /periodictask/<id>`. */
export async function getPeriodicTask(deps: Deps, id: number): Promise<PeriodicTaskView> {
  const [task] = await store.listTasks(deps.db, { id });
  if (task === undefined) throw new ResourceNotFoundError(NOT_FOUND);
  return viewOf(task);
}

/** Option values as privacyIDEA stores them: Python's `str()` of JSON values. */
function optionText(value: unknown): string {
  if (value === null || value === undefined) return "";
  if (typeof value === "boolean") return value ? "True" : "False";
  if (typeof value === "string") return value;
  if (typeof value === "number") return String(value);
  return JSON.stringify(value);
}

function parseOptions(raw: unknown): Record<string, string> {
  let value = raw;
  if (value === undefined || value === null || value === "") return {};
  if (typeof value === "string") {
    try {
      value = JSON.parse(value);
    } catch {
      throw new ParameterError(
        `options: expected dictionary, got "${String(raw).slice(0, 80)}" (not JSON)`,
      );
    }
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new ParameterError(`options: expected dictionary, got ${JSON.stringify(value)}`);
  }
  const out: Record<string, string> = {};
  for (const [key, v] of Object.entries(value)) {
    const text = optionText(v);
    if (key === "" || key.length > MAX_OPTION_KEY || text.length > MAX_OPTION_VALUE) {
      throw new ParameterError(
        `options: keys of 1 to ${MAX_OPTION_KEY} characters, values of at most ` +
          `${MAX_OPTION_VALUE}; got "${key.slice(0, 50)}"`,
      );
    }
    out[key] = text;
  }
  return out;
}

function parseNodes(text: string): string[] {
  if (text.trim() === "") throw new ParameterError("nodes: expected at least one node");
  const nodes = text.split(",").map((n) => n.trim());
  if (nodes.join(", ").length > MAX_NODES_TEXT) {
    throw new ParameterError(`nodes: at most ${MAX_NODES_TEXT} characters`);
  }
  return nodes;
}

/**
 * `POST /periodictask/`: creates a task, or replaces task `id` (options not
 * given go, and the last runs of nodes it no longer names). The task's id.
 */
export async function savePeriodicTask(deps: Deps, input: PeriodicTaskInput): Promise<number> {
  const name = input.name.trim();
  if (name === "") throw missingParameter("name");
  if (name.length > MAX_NAME) {
    throw new ParameterError(`Cannot use periodic task name: at most ${MAX_NAME} characters`);
  }
  const interval = input.interval.trim();
  const problem = interval.length > MAX_INTERVAL
    ? `at most ${MAX_INTERVAL} characters`
    : await cronProblem(interval);
  if (problem !== undefined) throw new ParameterError(`Invalid interval: ${problem}`);
  const nodes = parseNodes(input.nodes);
  const module = Object.hasOwn(TASK_MODULES, input.taskmodule)
    ? TASK_MODULES[input.taskmodule]
    : undefined;
  if (module === undefined) {
    throw new ParameterError(`Unknown task module: '${input.taskmodule.slice(0, 80)}'`);
  }
  if (!Number.isInteger(input.ordering) || input.ordering < 0) {
    throw new ParameterError(`Invalid ordering: ${input.ordering}`);
  }
  const options = parseOptions(input.options);
  const problems = module.optionProblems(options);
  if (problems.length > 0) throw new ParameterError(`options: ${problems.join("; ")}`);
  const fields: store.TaskFields = {
    name,
    isActive: input.isActive,
    isRetriedIfFailed: input.isRetriedIfFailed,
    interval,
    nodes,
    taskmodule: module.identifier,
    ordering: input.ordering,
    options,
  };
  const now = deps.clock.now();
  try {
    if (input.id === undefined) return await store.insertTask(deps.db, fields, now);
    if (!await store.replaceTask(deps.db, input.id, fields, now)) {
      throw new ResourceNotFoundError(NOT_FOUND);
    }
    return input.id;
  } catch (err) {
    if (!store.isUniqueViolation(err)) throw err;
    throw new ParameterError(
      `Cannot save periodic task "${name}": another periodic task has this name`,
    );
  }
}

/** `POST /periodictask/enable/<id>`, `/disable/<id>`: the id. */
export async function setPeriodicTaskActive(
  deps: Deps,
  id: number,
  isActive: boolean,
): Promise<number> {
  if (!await store.setActive(deps.db, id, isActive, deps.clock.now())) {
    throw new ResourceNotFoundError(NOT_FOUND);
  }
  return id;
}

/** `DELETE /periodictask/<id>`: the id. */
export async function deletePeriodicTask(deps: Deps, id: number): Promise<number> {
  if (!await store.deleteTask(deps.db, id)) throw new ResourceNotFoundError(NOT_FOUND);
  return id;
}
