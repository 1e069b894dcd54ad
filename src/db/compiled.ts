/**
 * Hot-path statements compiled once per database handle and shape, then run
 * with fresh parameters: building and compiling a Kysely query costs more than
 * running it on SQLite. The SQL still comes from the query builder of the
 * store that owns it, compiled by the handle's own dialect, so it stays
 * portable.
 *
 * @module
 */
import { type Compilable, CompiledQuery } from "kysely";
import type { Db } from "./schema.ts";
import {
  type DirectResult,
  executeDirect,
  executeDirectOrWait,
  type ExecuteOptions,
  noteStatement,
  type PendingCommits,
} from "./direct.ts";

const compiledCache = new WeakMap<object, Map<string, { sql: string; order: number[] }>>();

/** The SQL `build` compiles to on `db` (once per key) and `args` in parameter order. */
function compiled(
  db: Db,
  key: string,
  build: (...args: unknown[]) => Compilable,
  args: unknown[],
): { sql: string; params: unknown[] } {
  let byKey = compiledCache.get(db);
  if (byKey === undefined) compiledCache.set(db, byKey = new Map());
  let entry = byKey.get(key);
  if (entry === undefined) {
    const sentinels = args.map((_, i) => `\u0000arg${i}\u0000`);
    const query = build(...sentinels).compile();
    const order = query.parameters.map((p) => sentinels.indexOf(p as string));
    if (order.some((i) => i < 0)) throw new Error(`cannot cache statement ${key}`);
    entry = { sql: query.sql, order };
    byKey.set(key, entry);
  }
  const order = entry.order;
  const params = new Array(order.length);
  for (let i = 0; i < order.length; i++) params[i] = args[order[i]];
  return { sql: entry.sql, params };
}

/** Options of {@link runCached}. */
export interface RunOptions<R> extends ExecuteOptions {
  /**
   * Called synchronously with the result when the statement ran directly on
   * the connection (not through Kysely), before any other request can run.
   */
  onDirect?: (result: DirectResult & { rows: R[] }) => void;
}

/**
 * Runs the statement `build` returns, compiled once per `db` and `key`.
 * `build` is called once with sentinel parameters to learn where each
 * argument lands in the compiled parameter list; every argument must be
 * bound exactly as passed (no argument may shape the SQL).
 *
 * A hot-path write that joins the connection's write group is committed when
 * this returns, unless `pending` is given: then its commit is added there and
 * the caller must settle `pending` before it relies on the write.
 *
 * While another process holds SQLite's write lock, a hot-path write waits for
 * it here asynchronously (the event loop serves other requests meanwhile),
 * then runs as above, `onDirect` included; it rejects with SQLite's busy error
 * when the lock stayed held for `storage.statement_timeout`.
 */
export async function runCached<R>(
  db: Db,
  key: string,
  build: (...args: unknown[]) => Compilable,
  args: unknown[],
  pending?: PendingCommits,
  options?: RunOptions<R>,
): Promise<{ rows: R[]; numAffectedRows?: bigint }> {
  const { sql, params } = compiled(db, key, build, args);
  // no transaction open on the connection: run it now, without Kysely's async driver
  let now = executeDirectOrWait<R>(db, sql, params, options);
  // another process holds the write lock: wait without blocking the thread, then run it (in
  // the group that begins when the lock is free, or through Kysely if a transaction took it)
  while (now !== undefined && "lockWait" in now) {
    await now.lockWait;
    now = executeDirectOrWait<R>(db, sql, params, options);
  }
  if (now !== undefined) {
    options?.onDirect?.(now);
    // a write that joined the write group counts once the group has committed
    if (now.committed !== undefined) {
      if (pending !== undefined) pending.add(now.committed);
      else await now.committed;
    }
    return now;
  }
  const res = await db.executeQuery<R>(CompiledQuery.raw(sql, params));
  noteStatement(db, sql);
  return { rows: res.rows, numAffectedRows: res.numAffectedRows };
}

/**
 * Runs a cached read (as {@link runCached}) synchronously on the connection;
 * undefined when that is not possible (no direct access, or a transaction is
 * open): the caller then reads through {@link runCached}.
 */
export function readCachedNow<R>(
  db: Db,
  key: string,
  build: (...args: unknown[]) => Compilable,
  args: unknown[],
): R[] | undefined {
  const { sql, params } = compiled(db, key, build, args);
  return executeDirect<R>(db, sql, params)?.rows;
}
