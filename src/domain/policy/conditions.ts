/**
 * Extended policy conditions (spec 04 §4.8): validation at save time and
 * evaluation against request data at match time.
 *
 * @module
 */
import { ParameterError, PolicyError } from "../../errors.ts";
import { CONDITION_DEFS } from "./defs.ts";

/** A stored condition: `[section, key, comparator, value, active, handle_missing_data]`. */
export type Condition = [string, string, string, string, boolean, string];

/** What to do when the data a condition needs is missing. */
export type MissingData = "raise_error" | "condition_is_true" | "condition_is_false";

/** Condition sections. */
export const SECTIONS = Object.keys(CONDITION_DEFS.sections);
/** Accepted comparator names (aliases such as `==` are not). */
export const COMPARATORS = Object.keys(CONDITION_DEFS.comparators);
const MISSING = Object.keys(CONDITION_DEFS.handle_missing_data);

/** Data of one section: a plain object, a lazy loader, or undefined when unavailable. */
export type SectionData =
  | Record<string, unknown>
  | (() => Promise<Record<string, unknown> | undefined>)
  | undefined;

/** Everything conditions may look at; a missing section means its object is unavailable. */
export type ConditionData = Partial<Record<string, SectionData>>;

const OBJECT_NAMES: Record<string, string> = {
  userinfo: "user",
  token: "token",
  tokeninfo: "token",
  container: "container",
  container_info: "container",
  "HTTP Request header": "request",
  "HTTP Environment": "request",
  "Request Data": "request",
};

/**
 * Validates and normalises the conditions of policy `name` (5-tuples get
 * `raise_error`). Problems of inactive conditions are tolerated.
 */
export function normaliseConditions(name: string, input: unknown): Condition[] {
  if (input === undefined || input === null || input === "") return [];
  let list = input;
  if (typeof list === "string") {
    try {
      list = JSON.parse(list);
    } catch {
      throw new ParameterError(`Invalid condition of policy '${name}': not a JSON list`);
    }
  }
  if (!Array.isArray(list)) {
    throw new ParameterError(`Invalid condition of policy '${name}': not a list`);
  }
  return list.map((c) => {
    if (!Array.isArray(c) || (c.length !== 5 && c.length !== 6)) {
      const len = Array.isArray(c) ? c.length : 1;
      throw new ParameterError(
        `Condition of policy '${name}' has ${len} values, but should have 5 or 6.`,
      );
    }
    const [section, key, comparator, value, active] = c;
    const missing = c.length === 6 ? c[5] : "raise_error";
    if (active === true) {
      const problem = !SECTIONS.includes(section)
        ? `Unknown section '${section}'.`
        : !COMPARATORS.includes(comparator)
        ? `Unknown comparator '${comparator}'.`
        : typeof key !== "string" || key === ""
        ? "the key must not be empty"
        : typeof value !== "string" || value === ""
        ? "the value must not be empty"
        : !MISSING.includes(missing)
        ? `Unknown handle_missing_data '${missing}'.`
        : undefined;
      if (problem) throw new ParameterError(`Invalid condition of policy '${name}': ${problem}`);
    } else if (active !== false) {
      throw new ParameterError(
        `Invalid condition of policy '${name}': the active flag must be a boolean`,
      );
    }
    return [
      String(section),
      String(key),
      String(comparator),
      typeof value === "string" ? value : JSON.stringify(value),
      active,
      String(missing),
    ] as Condition;
  });
}

class CompareError extends Error {}

function parseCsv(text: string): string[] {
  const out: string[] = [];
  let cur = "";
  let inQuotes = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (ch === "\\" && i + 1 < text.length) cur += text[++i];
    else if (ch === '"') inQuotes = !inQuotes;
    else if (ch === "," && !inQuotes) {
      out.push(cur.trim());
      cur = "";
    } else cur += ch;
  }
  out.push(cur.trim());
  return out;
}

function toInt(v: unknown): number {
  if (v === "" || v === null || v === undefined) return 0;
  if (typeof v === "number" && Number.isInteger(v)) return v;
  if (typeof v === "string" && /^\s*[-+]?\d+\s*$/.test(v)) return Number(v);
  throw new CompareError();
}

const DATE_REGEXP =
  /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,6}))?)?)?(Z|[+-]\d{2}:?\d{2})?$/;

function parseDate(v: unknown): { ms: number; isAware: boolean } {
  if (typeof v !== "string") throw new CompareError();
  const m = v.trim().match(DATE_REGEXP);
  if (!m) throw new CompareError();
  const [, y, mo, d, h = "0", mi = "0", s = "0", frac = "0", tz] = m;
  let ms = Date.UTC(+y, +mo - 1, +d, +h, +mi, +s, Math.floor(Number(`0.${frac}`) * 1000));
  if (Number.isNaN(ms)) throw new CompareError();
  if (tz && tz !== "Z") {
    const sign = tz[0] === "-" ? -1 : 1;
    const digits = tz.slice(1).replace(":", "");
    ms -= sign * (Number(digits.slice(0, 2)) * 60 + Number(digits.slice(2))) * 60_000;
  }
  return { ms, isAware: tz !== undefined };
}

const DURATION_UNITS: Record<string, number> = {
  s: 1000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
  y: 365 * 86_400_000,
};

/** Parses `7d`, `2h`, `1y`, `15m`, `30s` into milliseconds; undefined when malformed. */
export function parseDuration(text: string): number | undefined {
  const m = text.match(/^\s*(\d+)\s*([smhdy])\s*$/);
  return m ? Number(m[1]) * DURATION_UNITS[m[2]] : undefined;
}

// Python allows a leading inline-flag group such as (?i); JS wants flags separately
function pyRegexp(pattern: string): RegExp {
  const m = pattern.match(/^\(\?([aiLmsux]+)\)/);
  let flags = "";
  let body = pattern;
  if (m) {
    body = pattern.slice(m[0].length);
    if (m[1].includes("i")) flags += "i";
    if (m[1].includes("m")) flags += "m";
    if (m[1].includes("s")) flags += "s";
  }
  try {
    return new RegExp(`^(?:${body})$`, flags);
  } catch {
    throw new CompareError();
  }
}

/** Compares `left` and `right` with `comparator`; throws CompareError on a type problem. */
function compare(left: unknown, comparator: string, right: string, nowMs: number): boolean {
  const negated = comparator.startsWith("!");
  const base = negated ? comparator.slice(1) : comparator;
  let result: boolean;
  switch (base) {
    case "equals":
      result = left === right;
      break;
    case "contains":
      if (!Array.isArray(left)) throw new CompareError();
      result = left.includes(right);
      break;
    case "in":
      result = parseCsv(right).includes(left as string);
      break;
    case "matches":
      if (typeof left !== "string") throw new CompareError();
      result = pyRegexp(right).test(left);
      break;
    case "<":
      result = toInt(left) < toInt(right);
      break;
    case ">":
      result = toInt(left) > toInt(right);
      break;
    case "date_before":
    case "date_after": {
      const l = parseDate(left);
      const r = parseDate(right);
      if (l.isAware !== r.isAware) throw new CompareError();
      result = base === "date_before" ? l.ms < r.ms : l.ms > r.ms;
      break;
    }
    case "date_within_last": {
      const l = parseDate(left);
      const d = parseDuration(right);
      if (d === undefined) throw new CompareError();
      result = l.ms >= nowMs - d && l.ms <= nowMs;
      break;
    }
    case "string_contains":
      if (typeof left !== "string") throw new CompareError();
      result = left.toLowerCase().includes(right.toLowerCase());
      break;
    default:
      throw new CompareError();
  }
  return negated ? !result : result;
}

function lookup(section: string, data: Record<string, unknown>, key: string): unknown {
  if (section === "HTTP Request header") {
    // fetch lower-cases header names, so the lookup cannot be case-sensitive
    const want = key.toLowerCase();
    for (const [k, v] of Object.entries(data)) if (k.toLowerCase() === want) return v;
    return undefined;
  }
  if (section === "Request Data" && (key === "pass" || key === "password")) return undefined;
  return Object.hasOwn(data, key) ? data[key] : undefined;
}

/**
 * True if every active condition of `policyName` holds (AND, short-circuit).
 * `sections` limits which sections are checked (others count as fulfilled).
 */
export async function conditionsHold(
  policyName: string,
  conditions: readonly Condition[],
  data: ConditionData,
  options: { nowMs: number; sections?: readonly string[] },
): Promise<boolean> {
  const cache = new Map<string, Record<string, unknown> | undefined>();
  for (const [section, key, comparator, value, active, missing] of conditions) {
    if (!active) continue;
    if (options.sections && !options.sections.includes(section)) continue;
    if (!SECTIONS.includes(section) || !COMPARATORS.includes(comparator)) {
      throw new PolicyError(
        `Invalid condition of policy '${policyName}': unknown section or comparator`,
      );
    }
    if (!cache.has(section)) {
      const src = data[section];
      cache.set(section, typeof src === "function" ? await src() : src);
    }
    const obj = cache.get(section);
    let left: unknown;
    let problem: string | undefined;
    if (obj === undefined) {
      problem =
        `Policy '${policyName}' has a condition on the section '${section}' with key '${key}', but a ${
          OBJECT_NAMES[section] ?? section
        } is unavailable!`;
    } else {
      left = lookup(section, obj, key);
      if (left === undefined) {
        problem =
          `Unknown ${section} key '${key}' referenced in condition of policy '${policyName}'!`;
      }
    }
    if (problem !== undefined) {
      if (missing === "condition_is_true") continue;
      if (missing === "condition_is_false") return false;
      throw new PolicyError(problem);
    }
    let holds: boolean;
    try {
      holds = compare(left, comparator, value, options.nowMs);
    } catch (err) {
      if (!(err instanceof CompareError)) throw err;
      throw new PolicyError(
        `Invalid comparison in the ${section} conditions of policy '${policyName}'`,
      );
    }
    if (!holds) return false;
  }
  return true;
}
