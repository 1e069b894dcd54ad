/**
 * The pieces every part of the privacyIDEA import shares: the prepared object
 * ({@link PiItem}) the import writes or reports, and the readers of a source
 * row's loosely typed values (every engine answers them differently).
 *
 * @module
 */
import type { Deps } from "../../deps.ts";
import type { PiRow } from "./privacyidea_store.ts";

/** A prepared object: how to tell it exists and how to write it. */
export interface PiItem {
  kind: string;
  name: string;
  exists(deps: Deps): Promise<boolean>;
  /** Why it cannot be imported at all (checked on dry runs too), or undefined. */
  refusal?(): string | undefined;
  /** Writes it; a returned text is a note for the log (what the operator should know). */
  write(deps: Deps): Promise<void | string>;
  /** Policies: their scope and whether they are active (see the safety note of the import). */
  policy?: { scope: string; isActive: boolean };
  /** Replaced instead of skipped when it exists and `replace` is set. */
  isReplaceable?: boolean;
  /** A note for the log even when imported. */
  note?: string;
}

/** A value as trimmed text; null and absent are "". */
export const str = (v: unknown) => v === null || v === undefined ? "" : String(v).trim();

/** A value as an integer, or `dflt` when it is none. */
export const int = (v: unknown, dflt = 0) => {
  const n = Number(v);
  return Number.isFinite(n) ? Math.trunc(n) : dflt;
};

/** A boolean column as SQLite, PostgreSQL and MariaDB give it. */
export const bool = (v: unknown) => v === true || v === 1 || v === "1" || v === "t" || v === "true";

/** Rows grouped by the integer in column `key`. */
export function groupBy(rows: PiRow[], key: string): Map<number, PiRow[]> {
  const out = new Map<number, PiRow[]>();
  for (const r of rows) {
    const id = int(r[key]);
    const list = out.get(id) ?? [];
    list.push(r);
    out.set(id, list);
  }
  return out;
}
