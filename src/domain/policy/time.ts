/**
 * Policy time ranges (spec 04 §4.7): `Mon-Fri: 08:00-16:30, Sat: 9-12`.
 *
 * @module
 */

/** One parsed range: days 1 (Mon) … 7 (Sun), minutes since midnight. */
export interface TimeRange {
  dayFrom: number;
  dayTo: number;
  minFrom: number;
  minTo: number;
}

const DAYS: Record<string, number> = { mon: 1, tue: 2, wed: 3, thu: 4, fri: 5, sat: 6, sun: 7 };
const RANGE_REGEXP = /^([a-z]{3})(?:-([a-z]{3}))?:(\d{1,2})(?::(\d{2}))?-(\d{1,2})(?::(\d{2}))?$/;

function minutes(h: string, m: string | undefined): number | undefined {
  const hh = Number(h);
  const mm = m === undefined ? 0 : Number(m);
  if (hh > 23 && !(hh === 24 && mm === 0) || mm > 59) return undefined;
  return hh * 60 + mm;
}

/** Parses a time string; undefined when it is malformed. An empty string gives `[]`. */
export function parseTimeRanges(text: string): TimeRange[] | undefined {
  const compact = text.replace(/\s+/g, "").toLowerCase();
  if (compact === "") return [];
  const out: TimeRange[] = [];
  for (const part of compact.split(",")) {
    if (part === "") continue;
    const m = part.match(RANGE_REGEXP);
    if (!m) return undefined;
    const dayFrom = DAYS[m[1]];
    const dayTo = m[2] === undefined ? dayFrom : DAYS[m[2]];
    const minFrom = minutes(m[3], m[4]);
    const minTo = minutes(m[5], m[6]);
    if (
      dayFrom === undefined || dayTo === undefined || minFrom === undefined ||
      minTo === undefined || minFrom > minTo
    ) {
      return undefined;
    }
    out.push({ dayFrom, dayTo, minFrom, minTo });
  }
  return out;
}

/** True if any range holds at `ms` in the server's local time (no wrap-around of days). */
export function timeMatches(ranges: readonly TimeRange[], ms: number): boolean {
  if (ranges.length === 0) return true;
  const d = new Date(ms);
  const day = d.getDay() === 0 ? 7 : d.getDay();
  const min = d.getHours() * 60 + d.getMinutes();
  return ranges.some((r) =>
    r.dayFrom <= day && day <= r.dayTo && r.minFrom <= min && min <= r.minTo
  );
}
