/**
 * SQL of the periodic tasks: definitions, options, last runs per node, and
 * the leases under which a process runs a task for a node. No cache: the
 * scheduler reads the definitions on every tick, and `/periodictask/` reads
 * them afresh.
 *
 * @module
 */
import type { Db } from "../../db/schema.ts";

/** A periodic task as stored, with its options and last runs. */
export interface StoredTask {
  id: number;
  name: string;
  isActive: boolean;
  isRetriedIfFailed: boolean;
  interval: string;
  nodes: string[];
  taskmodule: string;
  ordering: number;
  lastUpdate: number;
  options: Record<string, string>;
  /** Node → milliseconds since the epoch. */
  lastRuns: Record<string, number>;
}

/** The fields a save writes. */
export interface TaskFields {
  name: string;
  isActive: boolean;
  isRetriedIfFailed: boolean;
  interval: string;
  nodes: string[];
  taskmodule: string;
  ordering: number;
  options: Record<string, string>;
}

/** True for a unique-constraint error of SQLite or PostgreSQL. */
export function isUniqueViolation(err: unknown): boolean {
  const msg = err instanceof Error ? err.message : String(err);
  return /UNIQUE constraint failed|duplicate key value|unique constraint/i.test(msg) ||
    (err as { code?: string })?.code === "23505";
}

/** The node list of the `nodes` column (privacyIDEA joins them with ", "). */
function splitNodes(text: string): string[] {
  return text.split(",").map((n) => n.trim());
}

/** The tasks, ordered by `ordering` (then id); only `id`'s, or only active ones. */
export async function listTasks(
  db: Db,
  filter: { id?: number; isActive?: boolean } = {},
): Promise<StoredTask[]> {
  let q = db.selectFrom("periodictask").selectAll();
  if (filter.id !== undefined) q = q.where("id", "=", filter.id);
  if (filter.isActive !== undefined) q = q.where("active", "=", filter.isActive ? 1 : 0);
  const rows = await q.orderBy("ordering").orderBy("id").execute();
  if (rows.length === 0) return [];
  const ids = rows.map((r) => r.id);
  const [options, runs] = await Promise.all([
    db.selectFrom("periodictaskoption").select(["periodictask_id", "key", "value"])
      .where("periodictask_id", "in", ids).orderBy("key").execute(),
    db.selectFrom("periodictasklastrun").select(["periodictask_id", "node", "timestamp"])
      .where("periodictask_id", "in", ids).orderBy("node").execute(),
  ]);
  const tasks = new Map<number, StoredTask>();
  for (const r of rows) {
    tasks.set(r.id, {
      id: r.id,
      name: r.name,
      isActive: r.active === 1,
      isRetriedIfFailed: r.retry_if_failed === 1,
      interval: r.interval,
      nodes: splitNodes(r.nodes),
      taskmodule: r.taskmodule,
      ordering: Number(r.ordering),
      lastUpdate: Number(r.last_update),
      options: {},
      lastRuns: {},
    });
  }
  for (const o of options) tasks.get(o.periodictask_id)!.options[o.key] = o.value;
  for (const l of runs) tasks.get(l.periodictask_id)!.lastRuns[l.node] = Number(l.timestamp);
  return [...tasks.values()];
}

async function writeOptions(
  trx: Db,
  id: number,
  options: Record<string, string>,
): Promise<void> {
  await trx.deleteFrom("periodictaskoption").where("periodictask_id", "=", id).execute();
  const rows = Object.entries(options).map(([key, value]) => ({
    periodictask_id: id,
    key,
    value,
  }));
  if (rows.length > 0) await trx.insertInto("periodictaskoption").values(rows).execute();
}

/** Creates a task; its id. */
export async function insertTask(db: Db, fields: TaskFields, now: number): Promise<number> {
  return await db.transaction().execute(async (trx) => {
    const row = await trx.insertInto("periodictask").values({
      name: fields.name,
      active: fields.isActive ? 1 : 0,
      retry_if_failed: fields.isRetriedIfFailed ? 1 : 0,
      interval: fields.interval,
      nodes: fields.nodes.join(", "),
      taskmodule: fields.taskmodule,
      ordering: fields.ordering,
      last_update: now,
    }).returning("id").executeTakeFirstOrThrow();
    await writeOptions(trx, row.id, fields.options);
    return row.id;
  });
}

/**
 * Replaces task `id`: its fields and options (those not given go), and the
 * last runs and leases of nodes it no longer names. False when there is no
 * such task.
 */
export async function replaceTask(
  db: Db,
  id: number,
  fields: TaskFields,
  now: number,
): Promise<boolean> {
  return await db.transaction().execute(async (trx) => {
    const res = await trx.updateTable("periodictask").set({
      name: fields.name,
      active: fields.isActive ? 1 : 0,
      retry_if_failed: fields.isRetriedIfFailed ? 1 : 0,
      interval: fields.interval,
      nodes: fields.nodes.join(", "),
      taskmodule: fields.taskmodule,
      ordering: fields.ordering,
      last_update: now,
    }).where("id", "=", id).executeTakeFirst();
    if (Number(res.numUpdatedRows) === 0) return false;
    await writeOptions(trx, id, fields.options);
    for (const table of ["periodictasklastrun", "periodictasklease"] as const) {
      await trx.deleteFrom(table).where("periodictask_id", "=", id)
        .where("node", "not in", fields.nodes).execute();
    }
    return true;
  });
}

/** Sets `active` (and `last_update`); false when there is no such task. */
export async function setActive(
  db: Db,
  id: number,
  isActive: boolean,
  now: number,
): Promise<boolean> {
  const res = await db.updateTable("periodictask")
    .set({ active: isActive ? 1 : 0, last_update: now }).where("id", "=", id).executeTakeFirst();
  return Number(res.numUpdatedRows) > 0;
}

/**
 * Deletes a task; its options, last runs and leases go with it (foreign keys
 * `on delete cascade`). One statement that locks the task's row before its
 * children's, the order a run's writes take them in (see the scheduler), so
 * a delete during a run waits for it instead of deadlocking with it.
 */
export async function deleteTask(db: Db, id: number): Promise<boolean> {
  const res = await db.deleteFrom("periodictask").where("id", "=", id).executeTakeFirst();
  return Number(res.numDeletedRows) > 0;
}

/** The last run of task `id` on `node` (ms), or undefined when it never ran there. */
export async function lastRunOf(db: Db, id: number, node: string): Promise<number | undefined> {
  const row = await db.selectFrom("periodictasklastrun").select("timestamp")
    .where("periodictask_id", "=", id).where("node", "=", node).executeTakeFirst();
  return row === undefined ? undefined : Number(row.timestamp);
}

/** The `last_update` of task `id`, or undefined when the task is gone. */
export async function lastUpdateOf(db: Db, id: number): Promise<number | undefined> {
  const row = await db.selectFrom("periodictask").select("last_update").where("id", "=", id)
    .executeTakeFirst();
  return row === undefined ? undefined : Number(row.last_update);
}

/**
 * Takes the lease of task `id` on `node` for `holder` until `until`, if no
 * other holder has one that lasts past `now`: one conditional update, so of
 * several processes exactly one gets it. True when `holder` has it now.
 */
export async function claimLease(
  db: Db,
  lease: { id: number; node: string; holder: string },
  now: number,
  until: number,
): Promise<boolean> {
  // the row may not exist yet: whoever inserts it, the update below decides
  await db.insertInto("periodictasklease")
    .values({ periodictask_id: lease.id, node: lease.node, holder: "", expires_at: 0 })
    .onConflict((oc) => oc.columns(["periodictask_id", "node"]).doNothing()).execute();
  const res = await db.updateTable("periodictasklease")
    .set({ holder: lease.holder, expires_at: until })
    .where("periodictask_id", "=", lease.id).where("node", "=", lease.node)
    .where("expires_at", "<=", now).executeTakeFirst();
  return Number(res.numUpdatedRows) === 1;
}

/**
 * Gives up the lease if `holder` still has it (no other process took it over
 * after it expired). True when it did: only then may the holder write what it ran.
 */
export async function releaseLease(
  db: Db,
  lease: { id: number; node: string; holder: string },
): Promise<boolean> {
  const res = await db.updateTable("periodictasklease").set({ holder: "", expires_at: 0 })
    .where("periodictask_id", "=", lease.id).where("node", "=", lease.node)
    .where("holder", "=", lease.holder).executeTakeFirst();
  return Number(res.numUpdatedRows) === 1;
}

/** Records that task `id` ran on `node` at `timestamp`. */
export async function setLastRun(
  db: Db,
  id: number,
  node: string,
  timestamp: number,
): Promise<void> {
  await db.insertInto("periodictasklastrun")
    .values({ periodictask_id: id, node, timestamp })
    .onConflict((oc) => oc.columns(["periodictask_id", "node"]).doUpdateSet({ timestamp }))
    .execute();
}
