/**
 * Dates as privacyIDEA's time filters read them (dateutil's parser as
 * `parse_legacy_time` uses it), for the forms clients send: ISO dates with an
 * optional time and zone (`2026-03-02`, `2026-03-02 08:00+0200`,
 * `2026-03-02T08:00:01.000000+0000`) and legacy ones (`02/03/2026 08:00`,
 * `02.03.26`).
 *
 * @module
 */

const ISO_REGEXP =
  /^(\d{4})[-/](\d{1,2})[-/](\d{1,2})(?:[T ]\s*(\d{1,2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?)?\s*(Z|UTC|GMT|[+-]\d{2}(?::?\d{2})?)?$/i;
const LEGACY_REGEXP =
  /^(\d{1,2})([/.])(\d{1,2})\2(\d{2}|\d{4})(?:\s+(\d{1,2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?)?\s*(Z|UTC|GMT|[+-]\d{2}(?::?\d{2})?)?$/i;

interface Parts {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
  ms: number;
  /** Offset east of UTC in minutes; undefined: local time. */
  offset?: number;
}

/** Minutes east of UTC of a zone text (`Z`, `+0200`, `-05:30`, `+01`). */
function offsetOf(zone: string): number | undefined {
  if (/^(?:z|utc|gmt)$/i.test(zone)) return 0;
  const m = /^([+-])(\d{2}):?(\d{2})?$/.exec(zone);
  if (!m) return undefined;
  const minutes = Number(m[2]) * 60 + Number(m[3] ?? 0);
  if (Number(m[2]) > 23 || Number(m[3] ?? 0) > 59) return undefined;
  return m[1] === "-" ? -minutes : minutes;
}

/** dateutil's two-digit year: the year of that number within 50 years of `nowYear`. */
function fullYear(two: number, nowYear: number): number {
  let year = two + Math.floor(nowYear / 100) * 100;
  if (year >= nowYear + 50) year -= 100;
  else if (year < nowYear - 50) year += 100;
  return year;
}

function fraction(text: string | undefined): number {
  return text === undefined ? 0 : Math.floor(Number(`0.${text}`) * 1000);
}

function partsOf(text: string, nowYear: number): Parts | undefined {
  const iso = ISO_REGEXP.exec(text);
  if (iso) {
    return {
      year: Number(iso[1]),
      month: Number(iso[2]),
      day: Number(iso[3]),
      hour: Number(iso[4] ?? 0),
      minute: Number(iso[5] ?? 0),
      second: Number(iso[6] ?? 0),
      ms: fraction(iso[7]),
      offset: iso[8] === undefined ? undefined : offsetOf(iso[8]) ?? NaN,
    };
  }
  const legacy = LEGACY_REGEXP.exec(text);
  if (!legacy) return undefined;
  const zone = legacy[9];
  const [a, b] = [Number(legacy[1]), Number(legacy[3])];
  const year = legacy[4].length === 2 ? fullYear(Number(legacy[4]), nowYear) : Number(legacy[4]);
  // privacyIDEA reads a DD/ or DD. date day-first only when it has no zone (it parses once
  // month-first and re-parses day-first when no zone came out)
  const isDayFirst = zone === undefined;
  return {
    year,
    month: isDayFirst ? b : a,
    day: isDayFirst ? a : b,
    hour: Number(legacy[5] ?? 0),
    minute: Number(legacy[6] ?? 0),
    second: Number(legacy[7] ?? 0),
    ms: fraction(legacy[8]),
    offset: zone === undefined ? undefined : offsetOf(zone) ?? NaN,
  };
}

/**
 * Milliseconds since the epoch of a date text, or undefined when it is none.
 * A text without a zone is local time of this process; `nowMs` settles
 * two-digit years.
 */
export function parseLooseDate(text: string, nowMs: number): number | undefined {
  const p = partsOf(text.trim(), new Date(nowMs).getUTCFullYear());
  if (p === undefined || Number.isNaN(p.offset)) return undefined;
  if (p.month < 1 || p.month > 12 || p.day < 1 || p.hour > 23 || p.minute > 59) return undefined;
  if (p.second > 59) return undefined;
  const daysInMonth = new Date(Date.UTC(p.year, p.month, 0)).getUTCDate();
  if (p.day > daysInMonth) return undefined;
  if (p.offset === undefined) {
    const local = new Date(p.year, p.month - 1, p.day, p.hour, p.minute, p.second, p.ms);
    // years below 100 are taken as 19xx by the Date constructor
    local.setFullYear(p.year);
    return local.getTime();
  }
  const utc = new Date(Date.UTC(p.year, p.month - 1, p.day, p.hour, p.minute, p.second, p.ms));
  utc.setUTCFullYear(p.year);
  return utc.getTime() - p.offset * 60_000;
}
