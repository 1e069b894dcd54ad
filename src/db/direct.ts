/**
 * Synchronous access to a SQLite handle's own connection, and an epoch that
 * moves whenever data a cache may depend on can have changed.
 *
 * Two uses on the hot path:
 * - {@link runCached} runs precompiled statements directly on the connection
 *   when no transaction is open on it, skipping Kysely's async driver (the
 *   mutex, the connection provider and several promise hops per statement).
 *   Inside another request's open transaction it goes through Kysely, which
 *   waits for the commit as before. Its hot-path writes join the
 *   connection's write group (group commit, see sqlite_adapter.ts): the
 *   writes of concurrent requests share one transaction, and each caller
 *   goes on only once that transaction has committed.
 * - {@link EpochCache} keeps data that changes rarely (system config, policy
 *   and event definitions, realm resolvers, machine assignments) until the
 *   epoch moves. The epoch moves when this connection runs a write that may
 *   touch such data (every write except the hot-path writes to `audit`,
 *   `tokeninfo`, `challenge` and `update "token"`), on every rollback, and
 *   when SQLite's `PRAGMA data_version` says another connection (another
 *   process, the CLI) committed anything. That pragma is read at the first
 *   look of every request ({@link beginRequest}) and then at most once a
 *   millisecond, so a commit made anywhere before a request starts is seen by
 *   that request; this process's own changes are seen at once.
 * - The token epoch ({@link DirectAccess.tokenEpoch}) moves with every write
 *   to `token`, `tokeninfo` and `token_realm` (quiet ones included), except
 *   the check path's own writes run with `keepsTokenCache`, whose effect the
 *   owner cache (domain/token/owner_cache.ts) writes into itself.
 *
 * A database that is not SQLite has no direct access: statements go through
 * Kysely, and an {@link EpochCache} asks its {@link VersionSource} (PostgreSQL's
 * `cache_epoch` row, read once per request). A Kysely transaction handle has
 * neither: its caches always load.
 *
 * @module
 */
/** What a direct statement returns. */
export interface DirectResult {
  rows: unknown[];
  numAffectedRows?: bigint;
  /**
   * For a write that joined the connection's write group: settles when the
   * group commits (rejects when it rolls back). Await it before answering.
   */
  committed?: Promise<void>;
}

/**
 * A hot-path write that could not run yet: another connection (another
 * worker process, the CLI) holds SQLite's write lock, so the write group
 * cannot begin. `lockWait` resolves once the statement can be tried again
 * (the group has begun, or a transaction of this connection took the lock:
 * then the statement goes through Kysely); it rejects with SQLite's busy
 * error when the lock stayed held for the busy timeout
 * (`storage.statement_timeout`). The statement did not run.
 */
export interface LockWait {
  lockWait: Promise<void>;
}

/** How {@link DirectAccess.execute} treats one statement. */
export interface ExecuteOptions {
  /**
   * The caller writes the statement's effect into the token cache itself (from
   * the statement's own result), so this write to the token tables does not
   * move the token epoch.
   */
  keepsTokenCache?: boolean;
}

/** What the hot path needs from a connection, beyond Kysely. */
export interface DirectAccess {
  /**
   * Runs a statement on the connection synchronously. A quiet write (see
   * {@link movesEpoch}) joins the write group; any other write commits an
   * open group first and runs on its own. A quiet write that finds the
   * write lock held by another connection does not run: it returns a
   * {@link LockWait}, and so does every quiet write while one is pending
   * (they then share one group).
   */
  execute(
    sql: string,
    params: readonly unknown[],
    options?: ExecuteOptions,
  ): DirectResult | LockWait;
  /** True while a transaction other than the write group is open. */
  inTransaction(): boolean;
  /** The `committed` promise of the write group open now; undefined when none is open. */
  openGroup(): Promise<void> | undefined;
  /** Moves whenever cacheable data may have changed (see module doc). */
  epoch(): number;
  /**
   * A request starts: the next {@link epoch} reads other connections' commits
   * afresh, so no request works with data older than its own start.
   */
  beginRequest(): void;
  /**
   * Moves with every write to `token`, `tokeninfo` or `token_realm`, except
   * those run with `keepsTokenCache` (the token cache's own bookkeeping).
   * Data of the token tables is current while both this and {@link epoch} stay.
   */
  tokenEpoch(): number;
}

const attached = new WeakMap<object, DirectAccess>();

/**
 * The cache epoch of a database without a direct path (PostgreSQL): read
 * from the database's `cache_epoch` row, which triggers on the cached tables
 * move in the writing transaction (migration 0013). One reading is shared by
 * the cache looks of requests that started before it was taken; a request
 * that starts takes a new one ({@link beginRequest}), so a change committed on
 * any node before a request starts is seen by that request.
 */
export interface VersionSource {
  /** The current epoch (a number that moves when cached tables changed). */
  epoch(): Promise<number>;
  /** A request starts: the next {@link epoch} reads the database afresh. */
  beginRequest(): void;
  /** This process ran a statement that may have changed a cached table. */
  noteWrite(): void;
}

const sources = new WeakMap<object, VersionSource>();

/**
 * A statement that bypassed Kysely's query builder (a precompiled one) ran on
 * `db`: when it may change cached data (see {@link movesEpoch}), the version
 * source reads afresh.
 */
export function noteStatement(db: object, sql: string): void {
  const source = sources.get(db);
  if (source !== undefined && movesEpoch(sql)) source.noteWrite();
}

/** Registers `source` as the cache epoch of the Kysely handle `db` (PostgreSQL). */
export function attachVersionSource(db: object, source: VersionSource): void {
  sources.set(db, source);
}

/** Registers `access` as the direct path of the Kysely handle `db`. */
export function attachDirect(db: object, access: DirectAccess): void {
  attached.set(db, access);
}

// requests begun in this process: every SQLite connection (a resolver's user database too,
// not only the request's own) reads other connections' commits afresh once it moved
let requestsBegun = 0;

/**
 * Marks the start of a request on `db`: caches re-check other connections'
 * commits at their next look (see {@link DirectAccess.beginRequest}), those
 * of every other SQLite database of the process included.
 */
export function beginRequest(db: object): void {
  requestsBegun++;
  attached.get(db)?.beginRequest();
  sources.get(db)?.beginRequest();
}

/** How many requests this process has begun ({@link beginRequest}). */
export function requestsBegunCount(): number {
  return requestsBegun;
}

/**
 * True when `db` has the direct path (SQLite): its hot-path writes share the
 * connection's write group. Without it (PostgreSQL, a transaction handle)
 * each statement commits on its own unless the caller opens a transaction.
 */
export function hasDirectAccess(db: object): boolean {
  return attached.has(db);
}

/** The direct path of `db`, if it has one. */
export function directOf(db: object): DirectAccess | undefined {
  return attached.get(db);
}

/**
 * Runs a compiled statement on `db`'s connection right now, when `db` has
 * direct access and no transaction other than the write group is open on it;
 * undefined otherwise (the caller then goes through Kysely). A write's
 * `committed` must be awaited before the caller relies on it. A hot-path
 * write that would wait for another connection's write lock returns a
 * {@link LockWait}: the caller awaits it and calls again.
 */
export function executeDirectOrWait<R>(
  db: object,
  sql: string,
  params: readonly unknown[],
  options?: ExecuteOptions,
): (DirectResult & { rows: R[] }) | LockWait | undefined {
  const direct = attached.get(db);
  if (direct === undefined || direct.inTransaction()) return undefined;
  return direct.execute(sql, params, options) as (DirectResult & { rows: R[] }) | LockWait;
}

/**
 * {@link executeDirectOrWait} for callers that cannot wait: a write that would
 * wait for the write lock returns undefined too (the caller goes through
 * Kysely, whose statements wait under SQLite's busy timeout).
 */
export function executeDirect<R>(
  db: object,
  sql: string,
  params: readonly unknown[],
  options?: ExecuteOptions,
): (DirectResult & { rows: R[] }) | undefined {
  const res = executeDirectOrWait<R>(db, sql, params, options);
  return res === undefined || "lockWait" in res ? undefined : res;
}

/**
 * The write group open on `db`'s connection now (its `committed` promise);
 * undefined when none is open or `db` has no direct access.
 */
export function openWriteGroup(db: object): Promise<void> | undefined {
  return attached.get(db)?.openGroup();
}

/**
 * The write-group commits a request's writes are waiting on. Hot-path code
 * that makes several writes collects them here instead of waiting after
 * each one (so they share one commit), then settles it before it answers.
 */
export class PendingCommits {
  #list: Promise<void>[] = [];
  /** Adds a write's `committed` promise. */
  add(committed: Promise<void>): void {
    if (this.#list[this.#list.length - 1] !== committed) this.#list.push(committed);
  }
  /** True when no commit is collected. */
  get isEmpty(): boolean {
    return this.#list.length === 0;
  }
  /** True when every collected commit is `committed` (one write group holds them all). */
  isAllIn(committed: Promise<void>): boolean {
    return this.#list.every((c) => c === committed);
  }
  /** Waits for every collected commit; rejects when one of them failed. */
  async settle(): Promise<void> {
    const list = this.#list;
    this.#list = [];
    for (const committed of list) await committed;
  }
}

// writes that never change cached data: audit rows, token info, challenges,
// token row updates (counters, fail counters; updates cascade nowhere) and
// container row updates (a check's last authentication; no cache reads containers)
export const QUIET_WRITE =
  /^\s*(?:(?:insert\s+into|update|delete\s+from)\s+"?(?:audit|tokeninfo|challenge)"?[\s(]|update\s+"?(?:token|tokencontainer)"?\s)/i;
/** Writes to the token tables (they move the token epoch). */
export const TOKEN_WRITE =
  /^\s*(?:insert(?:\s+or\s+\w+)?\s+into|replace\s+into|update(?:\s+or\s+\w+)?|delete\s+from)\s+"?(?:token|tokeninfo|token_realm)"?[\s(]/i;
export const READ_ONLY =
  /^\s*(?:select|pragma\s+data_version|begin|commit|end|savepoint|release)\b/i;

/** Whether running `sql` may change data an {@link EpochCache} holds. */
export function movesEpoch(sql: string): boolean {
  return !READ_ONLY.test(sql) && !QUIET_WRITE.test(sql);
}

let hits = 0;
let misses = 0;

/** Lookups of every {@link EpochCache} of this process since start (for `/metrics`). */
export function cacheLookups(): { hits: number; misses: number } {
  return { hits, misses };
}

/** Bound on entries per cache and database; a full cache starts over. */
const MAX_ENTRIES = 1000;

/** Options of an {@link EpochCache}. */
export interface EpochCacheOptions {
  /**
   * The values are read from the token tables (`token`, `tokeninfo`,
   * `token_realm`) too: they are kept only where those tables have an epoch
   * (the token epoch of SQLite's direct path) and while it is current.
   * Elsewhere (PostgreSQL: the token tables move no `cache_epoch`) every
   * call loads.
   */
  readsTokenTables?: boolean;
  /**
   * The values are read from the token table's owner and active columns
   * only (`active`, `user_id`, `resolver`, and which tokens exist): on
   * SQLite kept while the token epoch is current, on PostgreSQL while the
   * cache epoch is, which those columns move there (migration 0028).
   */
  readsTokenOwners?: boolean;
}

/**
 * Values loaded from the database, kept per database handle until its epoch
 * moves. Values are shared between requests: callers must not mutate them.
 */
export class EpochCache<K, V> {
  readonly #byDb = new WeakMap<
    object,
    Map<K, { epoch: number; tokenEpoch: number; value: V }>
  >();
  readonly #readsTokenTables: boolean;
  readonly #readsTokenEpoch: boolean;

  constructor(options: EpochCacheOptions = {}) {
    this.#readsTokenTables = options.readsTokenTables ?? false;
    this.#readsTokenEpoch = this.#readsTokenTables || (options.readsTokenOwners ?? false);
  }

  /** The cached value of `key`, or what `load` returns (then cached). */
  async get(db: object, key: K, load: () => Promise<V>): Promise<V> {
    const access = attached.get(db);
    const source = access === undefined ? sources.get(db) : undefined;
    if (access === undefined && (source === undefined || this.#readsTokenTables)) {
      return await load();
    }
    // taken before loading: a write that lands while loading moves it again
    const epoch = access !== undefined ? access.epoch() : await source!.epoch();
    const tokenEpoch = this.#readsTokenEpoch && access !== undefined ? access.tokenEpoch() : 0;
    let entries = this.#byDb.get(db);
    const hit = entries?.get(key);
    if (hit !== undefined && hit.epoch === epoch && hit.tokenEpoch === tokenEpoch) {
      hits++;
      return hit.value;
    }
    misses++;
    const value = await load();
    if (entries === undefined) this.#byDb.set(db, entries = new Map());
    if (entries.size >= MAX_ENTRIES && !entries.has(key)) entries.clear();
    entries.set(key, { epoch, tokenEpoch, value });
    return value;
  }
}
