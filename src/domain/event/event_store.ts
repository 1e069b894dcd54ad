/**
 * SQL of the event feature: handler definitions, the config version counter
 * and the Counter handler's named counters.
 *
 * Cache rule ({@link currentEvents}): the loaded definitions are used while the
 * database's epoch is the one they were loaded under (db/direct.ts: every
 * committed write to `eventhandler` or `eventconfig_version`, on any process
 * or node, moves it; a request reads it afresh at its start). When the epoch
 * moved, the one-row config version decides: the same version keeps the same
 * loaded object (so what callers compiled from it stays current), another one
 * loads again. The counters (`eventcounter`) are never cached.
 *
 * @module
 */
import { type CompiledQuery, sql } from "kysely";
import { EpochCache } from "../../db/direct.ts";
import type { Db } from "../../db/schema.ts";

/** A stored event handler definition. */
export interface EventRow {
  id: number;
  name: string;
  active: boolean;
  ordering: number;
  position: string;
  abortOnError: boolean;
  /** CSV of event names as stored. */
  event: string;
  handlermodule: string;
  action: string;
  options: Record<string, string>;
  conditions: Record<string, string>;
}

/** Values written for a definition (the id is chosen by the caller or the database). */
export type EventValues = Omit<EventRow, "id">;

function parseObject(text: string): Record<string, string> {
  try {
    const v = JSON.parse(text);
    return v && typeof v === "object" && !Array.isArray(v) ? v : {};
  } catch {
    return {};
  }
}

function toRow(r: {
  id: number;
  name: string;
  active: number;
  ordering: number;
  position: string;
  abort_on_error: number;
  event: string;
  handlermodule: string;
  action: string;
  options: string;
  conditions: string;
}): EventRow {
  return {
    id: Number(r.id),
    name: r.name,
    active: Number(r.active) === 1,
    ordering: Number(r.ordering),
    position: r.position,
    abortOnError: Number(r.abort_on_error) === 1,
    event: r.event,
    handlermodule: r.handlermodule,
    action: r.action,
    options: parseObject(r.options),
    conditions: parseObject(r.conditions),
  };
}

function columns(v: EventValues) {
  return {
    name: v.name,
    active: v.active ? 1 : 0,
    ordering: v.ordering,
    position: v.position,
    abort_on_error: v.abortOnError ? 1 : 0,
    event: v.event,
    handlermodule: v.handlermodule,
    action: v.action,
    options: JSON.stringify(v.options),
    conditions: JSON.stringify(v.conditions),
  };
}

/** Every definition ordered by `ordering`, ties by id. */
export async function listEvents(db: Db, id?: number): Promise<EventRow[]> {
  let q = db.selectFrom("eventhandler").selectAll();
  if (id !== undefined) q = q.where("id", "=", id);
  const rows = await q.orderBy("ordering").orderBy("id").execute();
  return rows.map(toRow);
}

// the version is read on every request with an event name: compile the query once per db
const VERSION_QUERIES = new WeakMap<Db, CompiledQuery<{ version: number }>>();

/** The current event config version (bumped by every write). */
export async function configVersion(db: Db): Promise<number> {
  let query = VERSION_QUERIES.get(db);
  if (!query) {
    query = db.selectFrom("eventconfig_version").select("version").where("id", "=", 1).compile();
    VERSION_QUERIES.set(db, query);
  }
  const res = await db.executeQuery(query);
  return Number(res.rows[0]?.version ?? 0);
}

async function bump(db: Db): Promise<void> {
  await db.updateTable("eventconfig_version")
    .set({ version: sql<number>`version + 1` })
    .where("id", "=", 1)
    .execute();
}

/** Reads the current version together with the definitions, consistently. */
export async function loadAll(db: Db): Promise<{ version: number; rows: EventRow[] }> {
  return await db.transaction().execute(async (trx) => {
    const version = await configVersion(trx);
    const rows = await listEvents(trx);
    return { version, rows };
  });
}

/** Every definition with the config version they were read at; frozen, shared between requests. */
export interface LoadedEvents {
  readonly version: number;
  readonly rows: readonly Readonly<EventRow>[];
}

// see the module doc for when an entry is used
const currentLoaded = new EpochCache<"events", LoadedEvents>();
const lastLoaded = new WeakMap<object, LoadedEvents>();

/**
 * Every definition and the config version, while they are current (see the
 * module doc): the same object as long as nothing changed, so callers may
 * compile it once.
 */
export function currentEvents(db: Db): Promise<LoadedEvents> {
  return currentLoaded.get(db, "events", async () => {
    // the epoch moved (any cached table changed): the version says whether the events did
    const version = await configVersion(db);
    const last = lastLoaded.get(db);
    if (last !== undefined && last.version === version) return last;
    const loaded = await loadAll(db);
    const frozen: LoadedEvents = Object.freeze({
      version: loaded.version,
      rows: Object.freeze(loaded.rows.map((r) => Object.freeze(r))),
    });
    lastLoaded.set(db, frozen);
    return frozen;
  });
}

/**
 * Creates a definition (with `id` when given and free) or replaces the one with
 * `id`. `keepAbort` keeps the stored abort_on_error of an existing row.
 */
export async function saveEvent(
  db: Db,
  id: number | undefined,
  values: EventValues,
  keepAbort: boolean,
): Promise<number> {
  return await db.transaction().execute(async (trx) => {
    let out: number;
    const existing = id === undefined ? undefined : await trx.selectFrom("eventhandler")
      .select(["id", "abort_on_error"]).where("id", "=", id).executeTakeFirst();
    if (existing) {
      const cols = columns(values);
      if (keepAbort) cols.abort_on_error = Number(existing.abort_on_error);
      await trx.updateTable("eventhandler").set(cols).where("id", "=", id!).execute();
      out = id!;
    } else {
      const cols = columns(values);
      // a parallel create with the same explicit id turns into an update, not a 500
      const res = id === undefined
        ? await trx.insertInto("eventhandler").values(cols).returning("id")
          .executeTakeFirstOrThrow()
        : await trx.insertInto("eventhandler").values({ id, ...cols })
          .onConflict((oc) => oc.column("id").doUpdateSet(cols))
          .returning("id").executeTakeFirstOrThrow();
      out = Number(res.id);
    }
    await bump(trx);
    return out;
  });
}

/** Sets `active`; false when there is no such definition. */
export async function setActive(db: Db, id: number, active: boolean): Promise<boolean> {
  return await db.transaction().execute(async (trx) => {
    const res = await trx.updateTable("eventhandler").set({ active: active ? 1 : 0 })
      .where("id", "=", id).executeTakeFirst();
    const changed = Number(res.numUpdatedRows) > 0;
    if (changed) await bump(trx);
    return changed;
  });
}

/** Deletes a definition; false when there is no such definition. */
export async function deleteEvent(db: Db, id: number): Promise<boolean> {
  return await db.transaction().execute(async (trx) => {
    const res = await trx.deleteFrom("eventhandler").where("id", "=", id).executeTakeFirst();
    const changed = Number(res.numDeletedRows) > 0;
    if (changed) await bump(trx);
    return changed;
  });
}

/** Adds `delta` to a named counter atomically; with `floorZero` it never goes below 0. */
export async function changeCounter(
  db: Db,
  name: string,
  delta: number,
  floorZero: boolean,
): Promise<void> {
  await db.insertInto("eventcounter").values({ counter_name: name, counter_value: 0 })
    .onConflict((oc) => oc.column("counter_name").doNothing()).execute();
  const expr = floorZero
    ? sql<number>`case when counter_value + ${delta} < 0 then 0 else counter_value + ${delta} end`
    : sql<number>`counter_value + ${delta}`;
  await db.updateTable("eventcounter").set({ counter_value: expr })
    .where("counter_name", "=", name).execute();
}

/** Sets a named counter to `value`. */
export async function setCounter(db: Db, name: string, value: number): Promise<void> {
  await db.insertInto("eventcounter").values({ counter_name: name, counter_value: value })
    .onConflict((oc) => oc.column("counter_name").doUpdateSet({ counter_value: value })).execute();
}

/** The value of a named counter (0 when missing). */
export async function readCounter(db: Db, name: string): Promise<number> {
  const row = await db.selectFrom("eventcounter").select("counter_value")
    .where("counter_name", "=", name).executeTakeFirst();
  return Number(row?.counter_value ?? 0);
}

/** The value of a named counter, or undefined when there is no such counter. */
export async function findCounter(db: Db, name: string): Promise<number | undefined> {
  const row = await db.selectFrom("eventcounter").select("counter_value")
    .where("counter_name", "=", name).executeTakeFirst();
  return row === undefined ? undefined : Number(row.counter_value);
}

/**
 * Takes `amount` off a named counter: a reset to 0 of a value read before
 * that keeps the increments made since the read.
 */
export async function takeFromCounter(db: Db, name: string, amount: number): Promise<void> {
  await db.updateTable("eventcounter")
    .set({ counter_value: sql<number>`counter_value - ${amount}` })
    .where("counter_name", "=", name).execute();
}
