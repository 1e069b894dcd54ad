/**
 * PostgreSQL through Kysely's own dialect over `pg` (node-postgres): the
 * dialect ships with Kysely, so no third-party adapter sits between the two,
 * and `pg` is the most used PostgreSQL driver for JavaScript.
 *
 * The pool is bounded (`max` connections, default 10). 64-bit integers
 * (`bigint` columns: counters, times in ms) come back as JS numbers; a value
 * beyond 2^53 is an error rather than a silently rounded number.
 *
 * @module
 */
import {
  Kysely,
  type KyselyPlugin,
  OperationNodeTransformer,
  type PluginTransformQueryArgs,
  type PluginTransformResultArgs,
  PostgresDialect,
  type QueryResult,
  type RootOperationNode,
  type UnknownRow,
} from "kysely";
import pg from "pg";
import type { Database, Db } from "./schema.ts";

const INT8_OID = 20;

function parseInt8(text: string): number {
  const n = Number(text);
  if (!Number.isSafeInteger(n)) throw new RangeError(`Cannot read integer ${text}: beyond 2^53`);
  return n;
}

// counters and millisecond times are bigint columns; Tessera handles them as numbers
pg.types.setTypeParser(INT8_OID, parseInt8);

/**
 * The migrations declare ids as `serial` with `.autoIncrement()` (SQLite's
 * AUTOINCREMENT); PostgreSQL has no such keyword and `serial` already counts
 * up, so the flag is dropped from column definitions here. The SQLite schema
 * stays exactly as the migrations made it.
 */
class SerialIds extends OperationNodeTransformer {
  protected override transformColumnDefinition(
    node: Parameters<OperationNodeTransformer["transformColumnDefinition"]>[0],
  ) {
    const out = super.transformColumnDefinition(node);
    return out.autoIncrement ? { ...out, autoIncrement: false } : out;
  }
}

const serialIds: KyselyPlugin = {
  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    return args.node.kind === "CreateTableNode" || args.node.kind === "AlterTableNode"
      ? new SerialIds().transformNode(args.node)
      : args.node;
  },
  transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    return Promise.resolve(args.result);
  },
};

/** Options of {@link openPostgres}. */
export interface PostgresOptions {
  /** Largest number of connections of the pool (default 10). */
  poolSize?: number;
}

/** True for a `postgres://` or `postgresql://` URL. */
export function isPostgresUrl(url: string): boolean {
  return /^postgres(?:ql)?:\/\//i.test(url);
}

/** Opens a pooled Kysely handle on the PostgreSQL database of `url` (`?sslmode=` honoured). */
export function openPostgres(url: string, options: PostgresOptions = {}): Db {
  const pool = new pg.Pool({
    connectionString: url,
    max: options.poolSize ?? 10,
    // a connection that cannot be had within 10 s is an error, not an endless wait
    connectionTimeoutMillis: 10_000,
    idleTimeoutMillis: 30_000,
  });
  // an idle client losing its server (restart, failover) must not crash the process;
  // the pool drops it and the next query opens a new connection
  pool.on("error", () => {});
  return new Kysely<Database>({ dialect: new PostgresDialect({ pool }), plugins: [serialIds] });
}
