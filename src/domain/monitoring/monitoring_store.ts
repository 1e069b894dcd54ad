/**
 * SQL of the statistics time series (`monitoringstats`). No cache: the table
 * is written by every periodic task run and read only by `/monitoring/`.
 *
 * @module
 */
import type { Db } from "../../db/schema.ts";

/** One value of a statistics key. */
export interface StatsValue {
  /** Milliseconds since the epoch. */
  timestamp: number;
  value: number;
}

/** A time window; both bounds inclusive, either may be open. */
export interface TimeWindow {
  start?: number;
  end?: number;
}

/** Adds one value. */
export async function addValue(
  db: Db,
  key: string,
  value: number,
  timestamp: number,
): Promise<void> {
  await db.insertInto("monitoringstats")
    .values({ stats_key: key, stats_value: value, timestamp }).execute();
}

/** Every key that has a value, sorted. */
export async function keys(db: Db): Promise<string[]> {
  const rows = await db.selectFrom("monitoringstats").select("stats_key").distinct()
    .orderBy("stats_key").execute();
  return rows.map((r) => r.stats_key);
}

/** The values of `key` within `window`, oldest first. */
export async function values(db: Db, key: string, window: TimeWindow): Promise<StatsValue[]> {
  let q = db.selectFrom("monitoringstats").select(["timestamp", "stats_value"])
    .where("stats_key", "=", key);
  if (window.start !== undefined) q = q.where("timestamp", ">=", window.start);
  if (window.end !== undefined) q = q.where("timestamp", "<=", window.end);
  const rows = await q.orderBy("timestamp").orderBy("id").execute();
  return rows.map((r) => ({ timestamp: Number(r.timestamp), value: Number(r.stats_value) }));
}

/** The newest value of `key`, or undefined when it has none. */
export async function lastValue(db: Db, key: string): Promise<number | undefined> {
  const row = await db.selectFrom("monitoringstats").select("stats_value")
    .where("stats_key", "=", key).orderBy("timestamp", "desc").orderBy("id", "desc")
    .limit(1).executeTakeFirst();
  return row === undefined ? undefined : Number(row.stats_value);
}

/** Deletes the values of `key` within `window`; the number deleted. */
export async function deleteValues(db: Db, key: string, window: TimeWindow): Promise<number> {
  let q = db.deleteFrom("monitoringstats").where("stats_key", "=", key);
  if (window.start !== undefined) q = q.where("timestamp", ">=", window.start);
  if (window.end !== undefined) q = q.where("timestamp", "<=", window.end);
  const res = await q.executeTakeFirst();
  return Number(res.numDeletedRows);
}
