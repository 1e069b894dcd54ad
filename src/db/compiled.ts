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
import { executeDirect, type PendingCommits } from "./direct.ts";

const compiledCache = new WeakMap<object, Map<string, { sql: string; order: number[] }>>();

/**
 * Runs the statement `build` returns, compiled once per `db` and `key`.
 * `build` is called once with sentinel parameters to learn where each
 * argument lands in the compiled parameter list; every argument must be
 * bound exactly as passed (no argument may shape the SQL).
 *
 * A hot-path write that joins the connection's write group is committed when
 * this returns, unless `pending` is given: then its commit is added there and
 * the caller must settle `pending` before it relies on the write.
 */
export async function runCached<R>(
  db: Db,
  key: string,
  build: (...args: unknown[]) => Compilable,
  args: unknown[],
  pending?: PendingCommits,
): Promise<{ rows: R[]; numAffectedRows?: bigint }> {
  let byKey = compiledCache.get(db);
  if (byKey === undefined) compiledCache.set(db, byKey = new Map());
  let entry = byKey.get(key);
  if (entry === undefined) {
    const sentinels = args.map((_, i) => `\u0000arg${i}\u0000`);
    const compiled = build(...sentinels).compile();
    const order = compiled.parameters.map((p) => sentinels.indexOf(p as string));
    if (order.some((i) => i < 0)) throw new Error(`cannot cache statement ${key}`);
    entry = { sql: compiled.sql, order };
    byKey.set(key, entry);
  }
  const order = entry.order;
  const params = new Array(order.length);
  for (let i = 0; i < order.length; i++) params[i] = args[order[i]];
  // no transaction open on the connection: run it now, without Kysely's async driver
  const now = executeDirect<R>(db, entry.sql, params);
  if (now !== undefined) {
    // a write that joined the write group counts once the group has committed
    if (now.committed !== undefined) {
      if (pending !== undefined) pending.add(now.committed);
      else await now.committed;
    }
    return now;
  }
  const res = await db.executeQuery<R>(CompiledQuery.raw(entry.sql, params));
  return { rows: res.rows, numAffectedRows: res.numAffectedRows };
}
