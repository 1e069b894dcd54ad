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
import { attachVersionSource, type VersionSource } from "./direct.ts";

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

// tables whose writes no cache depends on (the hot path writes them on every check)
const HOT_TABLES = new Set([
  "token",
  "tokeninfo",
  "token_realm",
  "challenge",
  "audit",
  "eventcounter",
  "auth_cache",
]);

function tableOf(node: unknown): string | undefined {
  // deno-lint-ignore no-explicit-any
  const n = node as any;
  const t = n?.kind === "AliasNode" ? n.node : n;
  return t?.kind === "TableNode" ? t.table?.identifier?.name : undefined;
}

/** Whether a root query node may change a cached table (unknown shapes count as yes). */
function movesCaches(node: RootOperationNode): boolean {
  // deno-lint-ignore no-explicit-any
  const n = node as any;
  let table: string | undefined;
  switch (node.kind) {
    case "SelectQueryNode":
      return false;
    case "InsertQueryNode":
      table = tableOf(n.into);
      break;
    case "UpdateQueryNode":
      table = tableOf(n.table);
      break;
    case "DeleteQueryNode":
      table = tableOf(n.from?.froms?.[0]);
      break;
    default:
      return true;
  }
  return table === undefined || !HOT_TABLES.has(table);
}

/**
 * The cache epoch of a PostgreSQL database (see db/direct.ts): the
 * `cache_epoch` row, which triggers move with every committed change of a
 * cached table on any node. A look uses a reading sent after its request
 * began: a reading is reused until a request begins; the requests that begin
 * while a reading is in flight (sent before they began, so of no use to them)
 * share the one reading sent when it returns, so under load a check costs a
 * fraction of a statement, and a lone request still one. For a few seconds
 * after this process wrote a cached table, every look reads afresh (its own
 * transaction may have committed after the shared reading).
 */
export class PgCacheEpoch implements VersionSource {
  #readRow: (() => Promise<number | undefined>) | undefined;
  /** The newest reading; usable by requests that began before it was sent. */
  #reading: Promise<number> | undefined;
  /** A request began after {@link #reading} was sent. */
  #begunSince = true;
  /** The reading on the wire, if any. */
  #inFlight: Promise<number> | undefined;
  /** The reading to send once the one in flight returns, shared by those waiting for it. */
  #queued: Promise<number> | undefined;
  #generation = 0;
  #lastSeen: number | undefined;
  #dirtyUntil = 0;

  /** `readRow`: the row's value, undefined when there is no row. */
  attach(readRow: () => Promise<number | undefined>): void {
    this.#readRow = readRow;
  }

  beginRequest(): void {
    this.#begunSince = true;
  }

  /** This process wrote a cached table. */
  noteWrite(): void {
    this.#generation++;
    this.#reading = undefined;
    this.#dirtyUntil = performance.now() + OWN_WRITE_WINDOW_MS;
  }

  async epoch(): Promise<number> {
    let reading: Promise<number>;
    if (performance.now() < this.#dirtyUntil) {
      reading = this.#send();
    } else {
      if (this.#begunSince || this.#reading === undefined) {
        this.#reading = this.#next();
        this.#begunSince = false;
      }
      reading = this.#reading;
    }
    const n = await reading;
    if (n !== this.#lastSeen) {
      this.#lastSeen = n;
      this.#generation++;
    }
    return this.#generation;
  }

  /** A reading sent after now: at once, or after the one in flight (shared). */
  #next(): Promise<number> {
    const inFlight = this.#inFlight;
    if (inFlight === undefined) return this.#send();
    const sendQueued = () => {
      this.#queued = undefined;
      return this.#send();
    };
    return this.#queued ??= inFlight.then(sendQueued, sendQueued);
  }

  #send(): Promise<number> {
    const reading = this.#read();
    this.#inFlight = reading;
    const clear = () => {
      if (this.#inFlight === reading) this.#inFlight = undefined;
    };
    reading.then(clear, clear);
    return reading;
  }

  async #read(): Promise<number> {
    const n = await this.#readRow!();
    // no row (a database migrated by an older build): never reuse a cached value
    return n ?? -++this.#generation;
  }
}

/** How long after its own write to a cached table a process reads the epoch for every look. */
const OWN_WRITE_WINDOW_MS = 5_000;

function cacheEpochPlugin(source: PgCacheEpoch): KyselyPlugin {
  const writes = new WeakSet<object>();
  return {
    transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
      if (movesCaches(args.node)) writes.add(args.queryId);
      return args.node;
    },
    transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
      // after the statement ran (in a transaction: before its commit, hence the window)
      if (writes.has(args.queryId)) source.noteWrite();
      return Promise.resolve(args.result);
    },
  };
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

/**
 * How long one attempt to open a connection may take. A healthy server
 * answers in milliseconds (TLS and SCRAM included); an unreachable one
 * (packets dropped, a failover in progress) would otherwise hold a request
 * for the pool's whole wait, while the clients of an MFA server (RADIUS NAS,
 * plugins, load balancer checks) give up after a few seconds themselves.
 * Never longer than the statement timeout.
 */
export const CONNECT_TIMEOUT_MS = 3_000;

/** Default of {@link PostgresOptions.statementTimeoutMs} (config `storage.statement_timeout`). */
export const STATEMENT_TIMEOUT_MS = 5_000;

/**
 * The client gives a statement this much longer than the server does: a
 * server that runs sends its own cancellation (57014) first and the
 * connection stays usable; only a server that does not answer at all (its
 * processes stopped, a hung host) meets the client's limit.
 */
const CLIENT_MARGIN_MS = 500;

/** pg's error for a statement that the client stopped waiting for (query_timeout). */
const QUERY_READ_TIMEOUT = "Query read timeout";

/**
 * A pooled client with bounded waits: its connection attempt gives up after
 * {@link CONNECT_TIMEOUT_MS} (or the statement timeout, if shorter), each
 * statement after the statement timeout on the server (`statement_timeout`)
 * and, a little later, on the client (`query_timeout`). A connection whose
 * statement timed out on the client still has that statement running (or
 * stuck) on the server: it is closed at once, so the pool drops it instead of
 * handing it to the next request, which would wait behind that statement.
 */
class BoundedClient extends pg.Client {
  constructor(config: pg.ClientConfig & { tesseraStatementTimeoutMs?: number } = {}) {
    const statementMs = config.tesseraStatementTimeoutMs ?? STATEMENT_TIMEOUT_MS;
    // 0: statements without a limit (migrations), connections still bounded
    super(
      statementMs > 0
        ? {
          ...config,
          connectionTimeoutMillis: Math.min(CONNECT_TIMEOUT_MS, statementMs),
          statement_timeout: statementMs,
          query_timeout: statementMs + CLIENT_MARGIN_MS,
        }
        : { ...config, connectionTimeoutMillis: CONNECT_TIMEOUT_MS },
    );
  }

  override connect(): Promise<void>;
  override connect(callback: (err: Error) => void): void;
  override connect(callback?: (err: Error) => void): Promise<void> | void {
    if (callback === undefined) return super.connect().catch((err) => Promise.reject(named(err)));
    super.connect((err) => callback(err && named(err)));
  }

  // deno-lint-ignore no-explicit-any
  override query(...args: any[]): any {
    // deno-lint-ignore no-explicit-any
    const result = (super.query as (...a: any[]) => any)(...args);
    if (result && typeof result.then === "function") {
      return result.catch((err: Error) => {
        if (err?.message === QUERY_READ_TIMEOUT) this.#discard();
        throw err;
      });
    }
    return result;
  }

  #discard(): void {
    // end() marks the client as ending at once (the pool removes it on release), and the
    // socket goes now: a stopped server would never read the goodbye
    this.end().catch(() => {});
    // deno-lint-ignore no-explicit-any
    (this as any).connection?.stream?.destroy();
  }
}

/**
 * pg's own message for a connection attempt that timed out, "timeout expired",
 * names neither the connection nor the database; the pool's message for the
 * same event does, and is what the error classification (transient_error.ts) knows.
 */
function named(err: Error): Error {
  return err?.message === "timeout expired"
    ? new Error("Connection terminated due to connection timeout", { cause: err })
    : err;
}

/** Options of {@link openPostgres}. */
export interface PostgresOptions {
  /** Largest number of connections of the pool (default 10). */
  poolSize?: number;
  /**
   * Longest wait for one database call in milliseconds (default
   * {@link STATEMENT_TIMEOUT_MS}): a statement (on the server and, for a
   * server that does not answer, on the client), and a wait for a connection
   * of the pool. 0: no limit (migrations, which may run long on large tables).
   */
  statementTimeoutMs?: number;
}

const pools = new WeakMap<object, pg.Pool>();

/** The connection pool of a PostgreSQL handle (for `/metrics`); undefined for SQLite. */
export function poolStats(
  db: object,
): { total: number; idle: number; waiting: number } | undefined {
  const pool = pools.get(db);
  return pool
    ? { total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount }
    : undefined;
}

/** True for a `postgres://` or `postgresql://` URL. */
export function isPostgresUrl(url: string): boolean {
  return /^postgres(?:ql)?:\/\//i.test(url);
}

/** Opens a pooled Kysely handle on the PostgreSQL database of `url` (`?sslmode=` honoured). */
export function openPostgres(url: string, options: PostgresOptions = {}): Db {
  const statementTimeoutMs = options.statementTimeoutMs ?? STATEMENT_TIMEOUT_MS;
  const pool = new pg.Pool({
    connectionString: url,
    max: options.poolSize ?? 10,
    // a connection that cannot be had within the statement timeout is an error, not an
    // endless wait (all connections busy, or the server does not answer); a new connection's
    // attempt is bounded tighter by the client class, so a request fails within seconds with
    // HTTP 503 instead of waiting out a server that does not answer
    connectionTimeoutMillis: statementTimeoutMs,
    Client: BoundedClient,
    tesseraStatementTimeoutMs: statementTimeoutMs,
    idleTimeoutMillis: 30_000,
  } as pg.PoolConfig);
  // an idle client losing its server (restart, failover) must not crash the process;
  // the pool drops it and the next query opens a new connection
  pool.on("error", () => {});
  // nor may a client that is checked out: pg-pool listens only while a client is idle, and
  // a server going away between two statements (e.g. "terminating connection due to
  // administrator command") is emitted on the client, where no listener would make it an
  // uncaught exception. The statement in progress fails on its own; the client is no longer
  // queryable and the pool drops it when it comes back.
  pool.on("connect", (client) => client.on("error", () => {}));
  const epoch = new PgCacheEpoch();
  const db = new Kysely<Database>({
    dialect: new PostgresDialect({ pool }),
    plugins: [serialIds, cacheEpochPlugin(epoch)],
  });
  epoch.attach(async () => {
    const row = await db.selectFrom("cache_epoch").select("n").where("id", "=", 1)
      .executeTakeFirst();
    return row ? Number(row.n) : undefined;
  });
  attachVersionSource(db, epoch);
  pools.set(db, pool);
  return db;
}
