/**
 * Adapts Deno's built-in `node:sqlite` (`DatabaseSync`) to the small database
 * interface Kysely's `SqliteDialect` drives, with a prepared-statement cache,
 * and gives the hot path its direct access (see direct.ts), including the
 * write group: hot-path writes of concurrent requests share one transaction.
 *
 * @module
 */
import { DatabaseSync, type StatementSync } from "node:sqlite";
import { setImmediate } from "node:timers";
import {
  type DatabaseConnection,
  type Driver,
  type SqliteDatabase,
  SqliteDialect,
  SqliteDriver,
  type SqliteStatement,
} from "kysely";
import {
  type DirectAccess,
  type DirectResult,
  type ExecuteOptions,
  type LockWait,
  QUIET_WRITE,
  READ_ONLY,
  requestsBegunCount,
  TOKEN_WRITE,
} from "./direct.ts";

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

/** What a statement does, decided once from its text. */
const enum Kind {
  /** Reads, and transaction control. */
  Read,
  /** A hot-path write that changes no cached data: may join the write group. */
  QuietWrite,
  /** Any other write: commits an open write group first and moves the epoch. */
  Write,
}

interface Prepared {
  readonly sql: string;
  readonly stmt: StatementSync;
  readonly reader: boolean;
  readonly kind: Kind;
  /** A write to `token`, `tokeninfo` or `token_realm` (moves the token epoch). */
  readonly touchesTokens: boolean;
}

/** Kysely's statements: each first commits an open write group (see {@link NodeSqliteDatabase}). */
class KyselyStatement implements SqliteStatement {
  readonly reader: boolean;
  constructor(readonly p: Prepared, readonly db: NodeSqliteDatabase) {
    this.reader = p.reader;
  }
  all(parameters: ReadonlyArray<unknown>): unknown[] {
    this.db.endWriteGroup();
    return this.db.exec(this.p, bindable(parameters), true) as unknown[];
  }
  run(
    parameters: ReadonlyArray<unknown>,
  ): { changes: number | bigint; lastInsertRowid: number | bigint } {
    this.db.endWriteGroup();
    return this.db.exec(this.p, bindable(parameters), false) as {
      changes: number | bigint;
      lastInsertRowid: number | bigint;
    };
  }
  iterate(parameters: ReadonlyArray<unknown>): IterableIterator<unknown> {
    this.db.endWriteGroup();
    if (this.p.kind !== Kind.Read) this.db.moveEpoch();
    if (this.p.touchesTokens) this.db.moveTokenEpoch();
    return this.p.stmt.iterate(...bindable(parameters)) as IterableIterator<unknown>;
  }
}

/** One shared transaction of hot-path writes and the promise its members wait on. */
class WriteGroup {
  readonly committed: Promise<void>;
  #resolve!: () => void;
  #reject!: (err: unknown) => void;
  constructor() {
    this.committed = new Promise<void>((resolve, reject) => {
      this.#resolve = resolve;
      this.#reject = reject;
    });
    // a group whose only write failed has nobody waiting: not an unhandled rejection
    this.committed.catch(() => {});
  }
  settle(err?: unknown): void {
    if (err === undefined) this.#resolve();
    else this.#reject(err);
  }
}

const CACHE_LIMIT = 500;

/** A hot-path write waiting for another connection's write lock (see {@link LockWait}). */
interface LockWaiter {
  /** `performance.now()` after which it fails with the busy error. */
  readonly deadline: number;
  readonly resolve: () => void;
  readonly reject: (err: unknown) => void;
}

/** Pause between attempts to begin the write group while another connection holds the lock. */
export const LOCK_RETRY_MS = 1;

// SQLITE_BUSY, the primary result code of a lock another connection holds
const SQLITE_BUSY = 5;

function isBusy(err: unknown): boolean {
  const errcode = (err as { errcode?: unknown } | null)?.errcode;
  return typeof errcode === "number" && (errcode & 0xff) === SQLITE_BUSY;
}

/**
 * Transactions take the write lock when they begin. A deferred BEGIN reads
 * first and fails at once with SQLITE_BUSY when another process committed in
 * between (its snapshot is stale: the busy timeout cannot help); an
 * IMMEDIATE one waits for the lock under the busy timeout instead.
 */
const BEGIN = "begin immediate";
const PLAIN_BEGIN_REGEXP = /^\s*begin(?:\s+transaction)?\s*;?\s*$/i;

/** Default wait for another connection's write lock, in milliseconds. */
export const BUSY_TIMEOUT_MS = 5000;

/** How long a reading of `PRAGMA data_version` is reused (see direct.ts). */
export const EXTERNAL_CHECK_MS = 1;

/**
 * A `node:sqlite` database that Kysely's `SqliteDialect` can drive.
 *
 * Write group (group commit): a hot-path write that comes through
 * {@link DirectAccess.execute} (counter and fail-counter updates, token info,
 * challenges, audit) while no other transaction is open runs inside a
 * transaction that stays open until the event loop has run every request
 * that was ready (`setImmediate`), so the writes of concurrent requests
 * share one commit. Each write's result is known at once; its `committed`
 * promise settles when the group commits, and callers answer only after it
 * (a write is as durable as before when the caller goes on). A failed
 * commit rolls the group back and rejects every member. Any statement that
 * comes through Kysely (its transactions included) and any other write
 * commits the open group first, so they keep their own semantics.
 *
 * The group's BEGIN never waits in the thread: it runs with busy timeout 0,
 * and when another connection (another worker process, the CLI) holds the
 * write lock, the hot-path write returns a {@link LockWait} instead of
 * running. The connection then tries to begin the group every
 * {@link LOCK_RETRY_MS} from a timer, while the event loop serves other
 * requests; hot-path writes that come meanwhile join the same wait, and once
 * the group has begun they all run in it. A wait longer than the busy
 * timeout fails with SQLite's busy error, as a blocking wait would. Kysely's
 * transactions begin the same way ({@link beginTransaction}, through
 * {@link LockWaitingSqliteDialect}). The other statements (Kysely's writes
 * outside a transaction, writes that are not hot-path ones) wait for the
 * lock under the connection's busy timeout as SQLite does (synchronously,
 * in SQLite's steps of up to 100 ms): admin and maintenance paths.
 */
export class NodeSqliteDatabase implements SqliteDatabase {
  readonly raw: DatabaseSync;
  /** The hot path's access (see direct.ts); attach it with `attachDirect`. */
  readonly direct: DirectAccess;
  /** When set, every statement's text and execution time (bench/inprocess.ts). */
  observe: ((sql: string, ms: number) => void) | undefined = undefined;
  readonly #cache = new Map<string, Prepared>();
  // see direct.ts: moved by our own writes and by other connections' commits
  #generation = 0;
  // moved by every write to the token tables except those whose caller keeps
  // the token cache up to date itself (see direct.ts, ExecuteOptions)
  #tokenGeneration = 0;
  #dataVersion: StatementSync | undefined;
  #lastDataVersion: unknown = undefined;
  #checkedAt = -Infinity;
  #checkedInRequest = -1;
  #group: WriteGroup | undefined = undefined;
  readonly #begin: Prepared;
  readonly #commit: Prepared;
  readonly #busyTimeoutMs: number;
  // busy timeout 0 while the group begins, then back (~3 µs per group)
  readonly #noBusyWait: StatementSync;
  readonly #busyWait: StatementSync;
  // hot-path writes waiting for another connection's write lock, oldest first
  #lockWaiters: LockWaiter[] = [];
  #lockError: unknown = undefined;
  #lockTimer: ReturnType<typeof setTimeout> | undefined = undefined;

  readonly #hasQuietWrites: boolean;

  /**
   * Opens `path` (or `:memory:`) with WAL, foreign keys and a busy timeout
   * (`busyTimeoutMs`, default {@link BUSY_TIMEOUT_MS}).
   * `hotPathTables`: the file is Tessera's own database, whose hot-path writes
   * (see direct.ts) join the write group and keep the epoch; on any other
   * file (a resolver's user table) every write is an ordinary one.
   */
  constructor(path: string, options: { hotPathTables?: boolean; busyTimeoutMs?: number } = {}) {
    this.#hasQuietWrites = options.hotPathTables ?? false;
    this.raw = new DatabaseSync(path);
    // the wait for another connection's write lock (SQLite's only wait: statements run in
    // this process and cannot hang on a peer); storage.statement_timeout
    this.#busyTimeoutMs = Math.trunc(options.busyTimeoutMs ?? BUSY_TIMEOUT_MS);
    this.raw.exec(`PRAGMA busy_timeout = ${this.#busyTimeoutMs}`);
    if (path !== ":memory:") this.raw.exec("PRAGMA journal_mode = WAL");
    this.raw.exec("PRAGMA synchronous = NORMAL");
    this.raw.exec("PRAGMA foreign_keys = ON");
    this.#begin = this.#prepared(BEGIN);
    this.#commit = this.#prepared("commit");
    this.#noBusyWait = this.raw.prepare("PRAGMA busy_timeout = 0");
    this.#busyWait = this.raw.prepare(`PRAGMA busy_timeout = ${this.#busyTimeoutMs}`);
    this.direct = {
      inTransaction: () => this.raw.isTransaction && this.#group === undefined,
      openGroup: () => this.#group?.committed,
      epoch: () => this.epoch(),
      tokenEpoch: () => this.#tokenGeneration,
      beginRequest: () => {
        this.#checkedAt = -Infinity;
      },
      execute: (sql, params, options) => this.#executeDirect(sql, params, options),
    };
  }

  #prepared(sql: string): Prepared {
    let p = this.#cache.get(sql);
    if (p === undefined) {
      const stmt = this.raw.prepare(sql);
      p = {
        sql,
        stmt,
        reader: stmt.columns().length > 0,
        kind: READ_ONLY.test(sql)
          ? Kind.Read
          : this.#hasQuietWrites && QUIET_WRITE.test(sql)
          ? Kind.QuietWrite
          : Kind.Write,
        touchesTokens: TOKEN_WRITE.test(sql),
      };
      // statements built from varying IN-lists could grow the cache without bound
      if (this.#cache.size >= CACHE_LIMIT) this.#cache.delete(this.#cache.keys().next().value!);
      this.#cache.set(sql, p);
    }
    return p;
  }

  prepare(sql: string): SqliteStatement {
    // Kysely's transactions start with a plain BEGIN: make it IMMEDIATE (see #begin)
    return new KyselyStatement(this.#prepared(PLAIN_BEGIN_REGEXP.test(sql) ? BEGIN : sql), this);
  }

  /**
   * Runs a prepared statement (`all` or `run`); a write that is not quiet moves
   * the epoch, a write to the token tables the token epoch (unless `keepsTokenCache`).
   */
  exec(p: Prepared, args: SqlValue[], all: boolean, keepsTokenCache = false): unknown {
    if (p.kind === Kind.Write) this.#generation++;
    if (p.touchesTokens && !keepsTokenCache) this.#tokenGeneration++;
    const observe = this.observe;
    if (observe === undefined) return all ? p.stmt.all(...args) : p.stmt.run(...args);
    const t = performance.now();
    try {
      return all ? p.stmt.all(...args) : p.stmt.run(...args);
    } finally {
      observe(p.sql, performance.now() - t);
    }
  }

  #executeDirect(
    sql: string,
    params: readonly unknown[],
    options?: ExecuteOptions,
  ): DirectResult | LockWait {
    const p = this.#prepared(sql);
    const keep = options?.keepsTokenCache ?? false;
    if (p.kind === Kind.QuietWrite) {
      // writes that came while others wait for the lock wait with them (one group, in order)
      if (this.#group === undefined && (this.#lockWaiters.length > 0 || !this.#beginGroup())) {
        return this.#waitForLock();
      }
      return this.#groupWrite(p, bindable(params), keep);
    }
    const args = bindable(params);
    // any other write keeps autocommit semantics
    if (p.kind === Kind.Write) this.endWriteGroup();
    return this.#result(p, args, keep);
  }

  #result(p: Prepared, args: SqlValue[], keepsTokenCache = false): DirectResult {
    if (p.reader) return { rows: this.exec(p, args, true, keepsTokenCache) as unknown[] };
    const res = this.exec(p, args, false, keepsTokenCache) as { changes: number | bigint };
    return { rows: [], numAffectedRows: BigInt(res.changes) };
  }

  // BEGIN IMMEDIATE without waiting: false when another connection holds the write lock.
  #beginNow(): boolean {
    this.#noBusyWait.run();
    try {
      this.exec(this.#begin, [], false);
    } catch (err) {
      if (!isBusy(err)) throw err;
      this.#lockError = err;
      return false;
    } finally {
      this.#busyWait.run();
    }
    return true;
  }

  /**
   * Begins a transaction of Kysely's (see {@link LockWaitingSqliteDialect}): commits an
   * open write group first, and waits for another connection's write lock on a timer,
   * at most the busy timeout (then SQLite's busy error), while the event loop runs.
   */
  async beginTransaction(): Promise<void> {
    const deadline = performance.now() + this.#busyTimeoutMs;
    for (;;) {
      this.endWriteGroup();
      if (this.#beginNow()) return;
      if (performance.now() >= deadline) throw this.#lockError;
      await new Promise((resolve) => setTimeout(resolve, LOCK_RETRY_MS));
    }
  }

  // Begins the write group without waiting: false when another connection holds the lock.
  #beginGroup(): boolean {
    if (!this.#beginNow()) return false;
    const g = this.#group = new WriteGroup();
    setImmediate(() => {
      if (this.#group === g) this.endWriteGroup();
    });
    return true;
  }

  // Joins the wait for the write lock (starting it): each waiter fails after the busy timeout.
  #waitForLock(): LockWait {
    const deadline = performance.now() + this.#busyTimeoutMs;
    if (this.#lockWaiters.length === 0) {
      this.#lockTimer = setTimeout(() => this.#retryLock(), LOCK_RETRY_MS);
    }
    const lockWait = new Promise<void>((resolve, reject) => {
      this.#lockWaiters.push({ deadline, resolve, reject });
    });
    return { lockWait };
  }

  #retryLock(): void {
    this.#lockTimer = undefined;
    // the group began (a write that needed no wait), or a transaction of this connection
    // holds the lock (the waiters' statements then go through Kysely and wait for it there)
    let isFree = this.#group !== undefined || this.raw.isTransaction;
    if (!isFree) {
      try {
        isFree = this.#beginGroup();
      } catch (err) {
        this.#endLockWait((w) => w.reject(err));
        return;
      }
    }
    if (isFree) {
      this.#endLockWait((w) => w.resolve());
      return;
    }
    const now = performance.now();
    const waiting = this.#lockWaiters.filter((w) => {
      if (now < w.deadline) return true;
      w.reject(this.#lockError);
      return false;
    });
    this.#lockWaiters = waiting;
    if (waiting.length > 0) this.#lockTimer = setTimeout(() => this.#retryLock(), LOCK_RETRY_MS);
  }

  #endLockWait(settle: (w: LockWaiter) => void): void {
    const waiters = this.#lockWaiters;
    this.#lockWaiters = [];
    clearTimeout(this.#lockTimer);
    this.#lockTimer = undefined;
    // resolved in order: each runs its statement in the group before the group's setImmediate
    for (const w of waiters) settle(w);
  }

  #groupWrite(p: Prepared, args: SqlValue[], keepsTokenCache: boolean): DirectResult {
    const group = this.#group!;
    let res: DirectResult;
    try {
      res = this.#result(p, args, keepsTokenCache);
    } catch (err) {
      // SQLite undoes a failed statement alone, unless the error ended the transaction
      if (!this.raw.isTransaction) this.#failGroup(err);
      throw err;
    }
    res.committed = group.committed;
    return res;
  }

  /** Commits the open write group, if any, and settles its members. */
  endWriteGroup(): void {
    const group = this.#group;
    if (group === undefined) return;
    try {
      this.exec(this.#commit, [], false);
    } catch (err) {
      this.#failGroup(err);
      return;
    }
    this.#group = undefined;
    group.settle();
  }

  #failGroup(err: unknown): void {
    const group = this.#group!;
    this.#group = undefined;
    try {
      if (this.raw.isTransaction) this.raw.exec("ROLLBACK");
    } catch {
      // the connection reports its own state on the next statement
    }
    this.#generation++;
    group.settle(err);
  }

  /** Moves the epoch (a write whose effect a cache may hold). */
  moveEpoch(): void {
    this.#generation++;
  }

  /** Moves the token epoch (a write to the token tables). */
  moveTokenEpoch(): void {
    this.#tokenGeneration++;
  }

  epoch(): number {
    // other connections' commits: PRAGMA data_version costs ~5 µs, so it is read
    // at most once per EXTERNAL_CHECK_MS within a request, and always at the first
    // look of a request (beginRequest, on any database of the process): a commit of
    // another process made before a request starts is seen by it (our own writes
    // move the epoch at once)
    const now = performance.now();
    const request = requestsBegunCount();
    if (now - this.#checkedAt >= EXTERNAL_CHECK_MS || request !== this.#checkedInRequest) {
      this.#checkedAt = now;
      this.#checkedInRequest = request;
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
    this.endWriteGroup();
    this.#endLockWait((w) => w.reject(new Error("The database connection is closed")));
    this.#cache.clear();
    this.raw.close();
  }
}

/**
 * Kysely's SQLite dialect on a {@link NodeSqliteDatabase}, whose transactions
 * begin through {@link NodeSqliteDatabase.beginTransaction}: their wait for
 * another process's write lock does not block the thread.
 */
export class LockWaitingSqliteDialect extends SqliteDialect {
  readonly #db: NodeSqliteDatabase;
  constructor(db: NodeSqliteDatabase) {
    super({ database: db });
    this.#db = db;
  }
  override createDriver(): Driver {
    return new LockWaitingSqliteDriver(this.#db);
  }
}

class LockWaitingSqliteDriver extends SqliteDriver {
  readonly #db: NodeSqliteDatabase;
  constructor(db: NodeSqliteDatabase) {
    super({ database: db });
    this.#db = db;
  }
  override async beginTransaction(_connection: DatabaseConnection): Promise<void> {
    await this.#db.beginTransaction();
  }
}
