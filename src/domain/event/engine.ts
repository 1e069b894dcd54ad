/**
 * The event engine: finds the active definitions of an event (compiled once
 * per load of the event store, which decides when its definitions are current:
 * every node sees changes on its next request), checks their conditions and
 * runs their actions.
 *
 * @module
 */
import type { Deps } from "../../deps.ts";
import type { AuditEntry } from "../audit/mod.ts";
import { currentEvents, type EventRow, type LoadedEvents } from "./event_store.ts";
import type { EventContext } from "./types.ts";
import { EventAbortError } from "./types.ts";
import {
  compileConditions,
  type CompiledConditions,
  quickConditionsHold,
  slowConditionsHold,
} from "./conditions.ts";
import { handlerModule } from "./handlers/mod.ts";

/** One active definition with its conditions compiled. */
export interface PlannedDefinition {
  def: EventRow;
  conditions: CompiledConditions;
}

/** The active definitions of one event, split by position and ordered. */
export interface EventPlan {
  pre: PlannedDefinition[];
  post: PlannedDefinition[];
}

// a pure memo: the plans compiled from one frozen load of the event store (by identity); the
// store hands out a new object after a change
const PLANS = new WeakMap<LoadedEvents, Map<string, EventPlan>>();
const MAX_INFO = 900;

function compile(rows: readonly EventRow[]): Map<string, EventPlan> {
  const byEvent = new Map<string, EventPlan>();
  // rows come ordered by ordering, then id
  for (const row of rows) {
    if (!row.active) continue;
    for (const name of row.event.split(",").map((s) => s.trim()).filter(Boolean)) {
      let plan = byEvent.get(name);
      if (!plan) {
        plan = { pre: [], post: [] };
        byEvent.set(name, plan);
      }
      const planned = { def: row, conditions: compileConditions(row.conditions) };
      (row.position === "pre" ? plan.pre : plan.post).push(planned);
    }
  }
  return byEvent;
}

/** The active definitions for `event`, or undefined when none (current as the event store says). */
export async function eventPlan(deps: Deps, event: string): Promise<EventPlan | undefined> {
  const loaded = await currentEvents(deps.db);
  let byEvent = PLANS.get(loaded);
  if (byEvent === undefined) {
    byEvent = compile(loaded.rows);
    PLANS.set(loaded, byEvent);
  }
  return byEvent.get(event);
}

function auditCopy(
  deps: Deps,
  base: AuditEntry,
  action: string,
  success: boolean,
  info: string,
): AuditEntry {
  const entry: AuditEntry & { outcome?: boolean } = {
    ...base,
    ts: deps.clock.now(),
    action: action.slice(0, 200),
    success,
    info: info.slice(0, MAX_INFO),
    durationMs: 0,
  };
  delete entry.outcome;
  return entry;
}

/**
 * Runs `defs` in order for `ctx`. Each definition whose conditions hold writes
 * its own audit entry. Errors are logged and audited; they abort the request
 * only for an abort error or a definition with `abort_on_error`.
 */
export async function runDefinitions(
  deps: Deps,
  defs: readonly PlannedDefinition[],
  ctx: EventContext,
  audit: AuditEntry,
): Promise<void> {
  const prefix = ctx.position === "pre" ? "PRE-EVENT" : "POST-EVENT";
  for (const { def, conditions } of defs) {
    let action = "";
    const label = def.name || String(def.id);
    try {
      // cheap checks first and without awaiting: the common case is "does not match"
      if (!quickConditionsHold(conditions, ctx)) continue;
      const mod = handlerModule(def.handlermodule);
      if (!mod || !mod.positions.includes(ctx.position)) continue;
      if (conditions.slow.length > 0 && !(await slowConditionsHold(deps, conditions, ctx))) {
        continue;
      }
      action = `${prefix} ${ctx.event}>>${def.handlermodule}:${def.action}`;
      const result = await mod.run(deps, def, ctx);
      const info = result.details ? `${label} (${result.details})` : label;
      deps.audit.write(auditCopy(deps, audit, action, result.success, info));
    } catch (err) {
      action ||= `${prefix} ${ctx.event}>>${def.handlermodule}:${def.action}`;
      const cls = err instanceof Error ? err.constructor.name : "Error";
      // the message may carry secrets: log it, audit only the class
      deps.log.error("Event handler failed", {
        definition: label,
        action,
        error: err instanceof Error ? err.message : String(err),
      });
      deps.audit.write(auditCopy(deps, audit, action, false, `${label} (${cls})`));
      if (err instanceof EventAbortError) throw err;
      if (def.abortOnError) {
        throw new Error(`Event handler "${label}" failed and aborts the request`, { cause: err });
      }
    }
  }
}
