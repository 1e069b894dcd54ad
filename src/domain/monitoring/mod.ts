/**
 * Statistics (`/monitoring/`): time series of numbers under a key, written by
 * the periodic tasks (`EventCounter`, `SimpleStats`) and read, filtered by
 * time, or deleted by admins. privacyIDEA's SQL statistics module.
 *
 * @module
 */
import type { Deps } from "../../deps.ts";
import type { Db } from "../../db/schema.ts";
import { ParameterError } from "../../errors.ts";
import { parseLooseDate } from "../../lib/loose_date.ts";
import * as store from "./monitoring_store.ts";

/** Longest statistics key (privacyIDEA's column). */
export const MAX_STATS_KEY = 128;

/** A time filter as the request gives it: any date text `parseLooseDate` reads. */
export interface TimeFilter {
  start?: string;
  end?: string;
}

/**
 * `YYYY-MM-DD hh:mm:ss.ffffff+0000`, privacyIDEA's format of monitoring
 * time stamps (UTC; the same text is accepted back as a filter).
 */
export function formatStatsTime(ms: number): string {
  const date = new Date(ms);
  const iso = date.toISOString();
  const micro = String(date.getUTCMilliseconds() * 1000).padStart(6, "0");
  return `${iso.slice(0, 10)} ${iso.slice(11, 19)}.${micro}+0000`;
}

function windowOf(deps: Deps, filter: TimeFilter): store.TimeWindow {
  const parse = (name: "start" | "end") => {
    const text = filter[name];
    if (text === undefined || text.trim() === "") return undefined;
    const ms = parseLooseDate(text, deps.clock.now());
    if (ms === undefined) {
      throw new ParameterError(
        `Cannot parse parameter "${name}": expected a date such as "2026-03-02 08:00+0200", ` +
          `got "${text.slice(0, 60)}"`,
      );
    }
    return ms;
  };
  return { start: parse("start"), end: parse("end") };
}

/** Writes one value of `key` at `timestamp` (`db` may be a transaction). */
export async function writeStats(
  db: Db,
  key: string,
  value: number,
  timestamp: number,
): Promise<void> {
  await store.addValue(db, key, value, timestamp);
}

/** `GET /monitoring/`: every key with values. */
export async function statsKeys(deps: Deps): Promise<string[]> {
  return await store.keys(deps.db);
}

/** `GET /monitoring/<key>`: `[time, value]` pairs within the filter, oldest first. */
export async function statsValues(
  deps: Deps,
  key: string,
  filter: TimeFilter = {},
): Promise<[string, number][]> {
  const rows = await store.values(deps.db, key, windowOf(deps, filter));
  return rows.map((r) => [formatStatsTime(r.timestamp), r.value]);
}

/** `GET /monitoring/<key>/last`: the newest value, null when the key has none. */
export async function lastStatsValue(deps: Deps, key: string): Promise<number | null> {
  return (await store.lastValue(deps.db, key)) ?? null;
}

/** `DELETE /monitoring/<key>`: deletes the values within the filter; how many. */
export async function deleteStats(
  deps: Deps,
  key: string,
  filter: TimeFilter = {},
): Promise<number> {
  return await store.deleteValues(deps.db, key, windowOf(deps, filter));
}
