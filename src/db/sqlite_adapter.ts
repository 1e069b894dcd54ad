/**
 * Adapts Deno's built-in `node:sqlite` (`DatabaseSync`) to the small database
 * interface Kysely's `SqliteDialect` drives, with a prepared-statement cache.
 *
 * @module
 */
import { DatabaseSync, type StatementSync } from "node:sqlite";
import type { SqliteDatabase, SqliteStatement } from "kysely";
import { type DirectAccess, movesEpoch } from "./direct.ts";

type SqlValue = null | number | bigint | string | Uint8Array;

// node:sqlite binds only null, numbers, bigints, strings and bytes.
function bindable(params: ReadonlyArray<unknown>): SqlValue[] {
  const out: SqlValue[] = new Array(params.length);
  for (let i = 0; i < params.length; i++) {
    const p = params[i];
    if (p === undefined || p === null) out[i] = null;
    else if (typeof p === "boolean") out[i] = p ? 1 : 0;
    else if (p instanceof Date) out[i] = p.toISOString();
    else out[i] = p as SqlValue;
  }
  return out;
}

class CachedStatement implements SqliteStatement {
  readonly reader: boolean;
  readonly #stmt: StatementSync;
  /** Called before each run when the statement may change cached data. */
  readonly #onWrite: (() => void) | undefined;
  constructor(stmt: StatementSync, onWrite: (() => void) | undefined) {
    this.#stmt = stmt;
    this.reader = stmt.columns().length > 0;
    this.#onWrite = onWrite;
  }
  all(parameters: ReadonlyArray<unknown>): unknown[] {
    this.#onWrite?.();
    return this.#stmt.all(...bindable(parameters));
  }
  run(
    parameters: ReadonlyArray<unknown>,
  ): { changes: number | bigint; lastInsertRowid: number | bigint } {
    this.#onWrite?.();
    return this.#stmt.run(...bindable(parameters));
  }
  iterate(parameters: ReadonlyArray<unknown>): IterableIterator<unknown> {
    this.#onWrite?.();
    return this.#stmt.iterate(...bindable(parameters)) as IterableIterator<unknown>;
  }
}

const CACHE_LIMIT = 500;

/** How long a reading of `PRAGMA data_version` is reused (see direct.ts). */
export const EXTERNAL_CHECK_MS = 1;

/** A `node:sqlite` database that Kysely's `SqliteDialect` can drive. */
export class NodeSqliteDatabase implements SqliteDatabase, DirectAccess {
  readonly raw: DatabaseSync;
  readonly #cache = new Map<string, CachedStatement>();
  // see direct.ts: moved by our own writes and by other connections' commits
  #generation = 0;
  #dataVersion: StatementSync | undefined;
  #lastDataVersion: unknown = undefined;
  #checkedAt = -Infinity;
  readonly #moveEpoch = () => {
    this.#generation++;
  };

  /** Opens `path` (or `:memory:`) with WAL, foreign keys and a busy timeout. */
  constructor(path: string) {
    this.raw = new DatabaseSync(path);
    this.raw.exec("PRAGMA busy_timeout = 5000");
    if (path !== ":memory:") this.raw.exec("PRAGMA journal_mode = WAL");
    this.raw.exec("PRAGMA synchronous = NORMAL");
    this.raw.exec("PRAGMA foreign_keys = ON");
  }

  prepare(sql: string): SqliteStatement {
    let stmt = this.#cache.get(sql);
    if (stmt === undefined) {
      stmt = new CachedStatement(
        this.raw.prepare(sql),
        movesEpoch(sql) ? this.#moveEpoch : undefined,
      );
      // statements built from varying IN-lists could grow the cache without bound
      if (this.#cache.size >= CACHE_LIMIT) this.#cache.delete(this.#cache.keys().next().value!);
      this.#cache.set(sql, stmt);
    }
    return stmt;
  }

  inTransaction(): boolean {
    return this.raw.isTransaction;
  }

  epoch(): number {
    // other connections' commits: PRAGMA data_version costs ~5 µs, so it is read
    // at most once per EXTERNAL_CHECK_MS (our own writes move the epoch at once)
    const now = performance.now();
    if (now - this.#checkedAt >= EXTERNAL_CHECK_MS) {
      this.#checkedAt = now;
      this.#dataVersion ??= this.raw.prepare("PRAGMA data_version");
      const version = (this.#dataVersion.get() as { data_version: unknown }).data_version;
      if (version !== this.#lastDataVersion) {
        this.#lastDataVersion = version;
        this.#generation++;
      }
    }
    return this.#generation;
  }

  close(): void {
    this.#cache.clear();
    this.raw.close();
  }
}
