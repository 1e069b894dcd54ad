/**
 * The comparisons of event conditions (spec 05 §6.2): integer comparisons like
 * `>100`, and `<key> <cmp> <value>` comparisons against attributes.
 *
 * @module
 */

const INT_CMP_REGEXP = /^\s*'?(==|!=|>=|<=|=|<|>)?'?\s*(-?\d+)\s*$/;

/** `>100`, `<99`, `==100`, `=100`, `!=5`, `100`, `'>'100` against `value`; parse errors → false. */
export function compareInt(value: number, condition: string): boolean {
  const m = condition.match(INT_CMP_REGEXP);
  if (!m || !Number.isFinite(value)) return false;
  const right = Number(m[2]);
  switch (m[1] ?? "==") {
    case "==":
    case "=":
      return value === right;
    case "!=":
      return value !== right;
    case ">":
      return value > right;
    case "<":
      return value < right;
    case ">=":
      return value >= right;
    case "<=":
      return value <= right;
  }
  return false;
}

const DURATION_REGEXP = /^\s*(\d+)\s*([smhdy])\s*$/;
const UNIT_MS: Record<string, number> = {
  s: 1000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
  y: 365 * 86_400_000,
};

/** `7h`, `10d`, `1y`, `15m`, `30s` in milliseconds; undefined when malformed. */
export function parseDuration(text: string): number | undefined {
  const m = text.match(DURATION_REGEXP);
  return m ? Number(m[1]) * UNIT_MS[m[2]] : undefined;
}

/** Replaces `{now}` (optionally `{now}-7d`, `{now}+2h`) by the ISO time. */
export function replaceNow(text: string, nowMs: number): string {
  return text.replace(/\{now\}(?:\s*([+-])\s*(\d+[smhdy]))?/g, (_m, sign, dur) => {
    let t = nowMs;
    if (sign && dur) t += (sign === "-" ? -1 : 1) * (parseDuration(dur) ?? 0);
    return new Date(t).toISOString();
  });
}

const GENERIC_REGEXP =
  /^\s*(\S+?)\s*(==|!=|<=|>=|<|>|'!?(?:equals|matches|in|contains|string_contains|date_within_last|date_before|date_after)')\s*(.*?)\s*$/;

/** Splits `"<key> <cmp> <value>"`; undefined when malformed. */
export function parseKeyComparison(
  text: string,
): { key: string; cmp: string; value: string } | undefined {
  const m = text.match(GENERIC_REGEXP);
  return m ? { key: m[1], cmp: m[2].replaceAll("'", ""), value: m[3] } : undefined;
}

function asInt(s: string): number | undefined {
  return /^\s*-?\d+\s*$/.test(s) ? Number(s) : undefined;
}

function asDate(s: string): number | undefined {
  if (!/^\d{4}-\d{2}-\d{2}/.test(s.trim())) return undefined;
  const t = Date.parse(s.trim());
  return Number.isNaN(t) ? undefined : t;
}

/**
 * Compares `left <cmp> right` with privacyIDEA's coercion: integers when both
 * parse, else dates when both parse, else strings. Any error → false.
 */
export function compareValues(left: string, cmp: string, right: string, nowMs: number): boolean {
  try {
    const negate = cmp.startsWith("!") && cmp !== "!=";
    const op = negate ? cmp.slice(1) : cmp;
    const result = compareCore(left, op, right, nowMs);
    return negate ? !result : result;
  } catch {
    return false;
  }
}

function compareCore(left: string, op: string, right: string, nowMs: number): boolean {
  switch (op) {
    case "matches":
      return new RegExp(`^(?:${right})$`).test(left);
    case "in":
      return right.split(",").map((s) => s.trim().replace(/^"(.*)"$/, "$1")).includes(left);
    case "contains":
      return left.split(",").map((s) => s.trim()).includes(right);
    case "string_contains":
      return left.toLowerCase().includes(right.toLowerCase());
    case "date_within_last": {
      const d = asDate(left);
      const dur = parseDuration(right);
      if (d === undefined || dur === undefined) throw new Error("bad date comparison");
      return nowMs - d <= dur;
    }
    case "date_before":
    case "date_after": {
      const a = asDate(left);
      const b = asDate(right);
      if (a === undefined || b === undefined) throw new Error("bad date comparison");
      return op === "date_before" ? a < b : a > b;
    }
    case "equals":
      return left === right;
  }
  let a: number | string = left;
  let b: number | string = right;
  const ia = asInt(left);
  const ib = asInt(right);
  if (ia !== undefined && ib !== undefined) {
    a = ia;
    b = ib;
  } else {
    const da = asDate(left);
    const db = asDate(right);
    if (da !== undefined && db !== undefined) {
      a = da;
      b = db;
    }
  }
  switch (op) {
    case "==":
      return a === b;
    case "!=":
      return a !== b;
    case "<":
      return a < b;
    case ">":
      return a > b;
    case "<=":
      return a <= b;
    case ">=":
      return a >= b;
  }
  throw new Error(`unknown comparator ${op}`);
}
