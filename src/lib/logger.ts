/**
 * A small levelled logger writing one line per event to stderr:
 * `<iso time> <LEVEL> <message> key=value …`. Callers never pass secrets.
 *
 * @module
 */

/** Log levels in increasing severity. */
export type Level = "debug" | "info" | "warn" | "error";

const RANK: Record<Level, number> = { debug: 10, info: 20, warn: 30, error: 40 };

/** The logging interface every part of Tessera receives. */
export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
}

/** Creates a logger that drops events below `level` and writes the rest with `write`. */
export function createLogger(
  level: Level,
  write: (line: string) => void = (l) => console.error(l),
): Logger {
  const min = RANK[level];
  const emit = (lvl: Level, msg: string, fields?: Record<string, unknown>) => {
    if (RANK[lvl] < min) return;
    let line = `${new Date().toISOString()} ${lvl.toUpperCase()} ${msg}`;
    if (fields) {
      for (const [k, v] of Object.entries(fields)) {
        const s = typeof v === "string" ? v : v instanceof Error ? v.message : JSON.stringify(v);
        line += ` ${k}=${/[\s"]/.test(s ?? "") ? JSON.stringify(s) : s}`;
      }
    }
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
export function memoryLogger(): Logger & { lines: string[] } {
  const lines: string[] = [];
  return Object.assign(createLogger("debug", (l) => lines.push(l)), { lines });
}
