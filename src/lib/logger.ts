/**
 * A small levelled logger writing one line per event to stderr, as text
 * (`<iso time> <LEVEL> <message> key=value …`) or as one JSON object per line
 * (`{"time":…,"level":…,"msg":…,…fields}`) for log collectors. A line written
 * while a request runs carries that request's id (`request_id`), the id its
 * audit row and its `X-Request-ID` response header carry. Callers never pass
 * secrets.
 *
 * @module
 */
import { AsyncLocalStorage } from "node:async_hooks";

/** Log levels in increasing severity. */
export type Level = "debug" | "info" | "warn" | "error";

/** Line formats: `text` for people, `json` for log collectors. */
export type LogFormat = "text" | "json";

const RANK: Record<Level, number> = { debug: 10, info: 20, warn: 30, error: 40 };

/** The logging interface every part of Tessera receives. */
export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
}

/** Options of {@link createLogger}. */
export interface LoggerOptions {
  /** Line format; default `text`. */
  format?: LogFormat;
  /** Where lines go; default stderr. */
  write?: (line: string) => void;
  /** Fields every line ends with (a worker's number). */
  fields?: Record<string, unknown>;
}

const requestScope = new AsyncLocalStorage<string>();

// characters a terminal or a log viewer acts on: C0 controls (line breaks, ESC), DEL, C1
// controls (0x9b is CSI on its own), the Unicode line and paragraph separators and the
// bidirectional overrides (they make a line read differently from what it holds)
const CONTROL_CLASS =
  "\\x00-\\x1f\\x7f-\\x9f\\u2028\\u2029\\u200e\\u200f\\u202a-\\u202e\\u2066-\\u2069";
const CONTROL_REGEXP = new RegExp(`[${CONTROL_CLASS}]`);
// of those, the ones JSON.stringify leaves as they are (it escapes C0 only)
const UNESCAPED_BY_JSON_REGEXP = /[\x7f-\x9f\u2028\u2029\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;
// a text-format value is quoted when it would not read back as one token or holds a control
const VALUE_QUOTES_REGEXP = new RegExp(`[\\s"${CONTROL_CLASS}]`);
// a key also when it holds "=", which would end it early
const KEY_QUOTES_REGEXP = new RegExp(`[\\s"=${CONTROL_CLASS}]`);

/**
 * Runs `fn` as the request `requestId`: every line logged until it settles
 * (in any function it awaits) carries `request_id`.
 */
export function withRequestId<T>(requestId: string, fn: () => T): T {
  return requestScope.run(requestId, fn);
}

/** The id of the request running now, or undefined outside a request. */
export function currentRequestId(): string | undefined {
  return requestScope.getStore();
}

/** JSON text with the characters JSON.stringify leaves raw written as `\uXXXX` (still JSON). */
function safeJson(value: unknown): string {
  return JSON.stringify(value).replace(
    UNESCAPED_BY_JSON_REGEXP,
    (ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
}

function textKey(k: string): string {
  return KEY_QUOTES_REGEXP.test(k) || k === "" ? safeJson(k) : k;
}

function textValue(v: unknown): string {
  const s = typeof v === "string" ? v : v instanceof Error ? v.message : JSON.stringify(v);
  return VALUE_QUOTES_REGEXP.test(s ?? "") ? safeJson(s) : String(s);
}

function jsonValue(v: unknown): unknown {
  return v instanceof Error ? v.message : v;
}

/**
 * Creates a logger that drops events below `level` and writes the rest with
 * `write` (the second argument may be the write function alone).
 */
export function createLogger(
  level: Level,
  options: LoggerOptions | ((line: string) => void) = {},
): Logger {
  const opts = typeof options === "function" ? { write: options } : options;
  const write = opts.write ?? ((l: string) => console.error(l));
  const tail = Object.entries(opts.fields ?? {});
  const min = RANK[level];
  const emit = opts.format === "json"
    ? (lvl: Level, msg: string, fields?: Record<string, unknown>) => {
      if (RANK[lvl] < min) return;
      const event: Record<string, unknown> = { time: new Date().toISOString(), level: lvl, msg };
      // the line's own keys stay first: a field of the same name cannot hide them
      for (const [k, v] of Object.entries(fields ?? {})) if (!(k in event)) event[k] = jsonValue(v);
      const requestId = requestScope.getStore();
      if (requestId !== undefined) event.request_id = requestId;
      for (const [k, v] of tail) event[k] = v;
      write(safeJson(event));
    }
    : (lvl: Level, msg: string, fields?: Record<string, unknown>) => {
      if (RANK[lvl] < min) return;
      // a message with control characters (a configured text with a user name in it) is
      // quoted; keys and values are quoted and escaped whenever they need it: no request can
      // write a line of its own or send escape sequences to the terminal that shows the log
      const text = CONTROL_REGEXP.test(msg) ? safeJson(msg) : msg;
      let line = `${new Date().toISOString()} ${lvl.toUpperCase()} ${text}`;
      for (const [k, v] of Object.entries(fields ?? {})) line += ` ${textKey(k)}=${textValue(v)}`;
      const requestId = requestScope.getStore();
      if (requestId !== undefined) line += ` request_id=${textValue(requestId)}`;
      for (const [k, v] of tail) line += ` ${textKey(k)}=${textValue(v)}`;
      write(line);
    };
  return {
    debug: (m, f) => emit("debug", m, f),
    info: (m, f) => emit("info", m, f),
    warn: (m, f) => emit("warn", m, f),
    error: (m, f) => emit("error", m, f),
  };
}

/** A logger that records lines in memory (tests). */
export function memoryLogger(format: LogFormat = "text"): Logger & { lines: string[] } {
  const lines: string[] = [];
  return Object.assign(createLogger("debug", { format, write: (l) => lines.push(l) }), { lines });
}
