/**
 * The audit log: one row per request. Rows are queued and written in batches
 * so the hot path never waits for an audit insert.
 *
 * @module
 */
import type { Db } from "../../db/schema.ts";
import type { Logger } from "../../lib/logger.ts";
import { ParameterError } from "../../errors.ts";
import { isTransientDbError } from "../../db/transient_error.ts";
import * as store from "./audit_store.ts";
import { AUDIT_FILTER_COLUMNS, type AuditScope } from "./audit_store.ts";

export type { AuditScope } from "./audit_store.ts";
export { auditScopeOf } from "./scope.ts";

/** One audit row as written. Never holds passwords, PINs, OTPs or secrets. */
export interface AuditEntry {
  ts: number;
  action: string;
  success: boolean;
  serial: string;
  tokenType: string;
  user: string;
  realm: string;
  resolver: string;
  administrator: string;
  client: string;
  userAgent: string;
  info: string;
  policies: string;
  durationMs: number;
  node: string;
  /** The request's id (`X-Request-ID`, `request_id` in its log lines); empty outside HTTP. */
  requestId: string;
}

/** Creates an empty entry to be filled while a request runs. */
export function newAuditEntry(ts: number, action: string, node: string): AuditEntry {
  return {
    ts,
    action,
    success: false,
    serial: "",
    tokenType: "",
    user: "",
    realm: "",
    resolver: "",
    administrator: "",
    client: "",
    userAgent: "",
    info: "",
    policies: "",
    durationMs: 0,
    node,
    requestId: "",
  };
}

// Larger batches dirty each index page once for more rows: at 20 ms / 500 rows a
// row cost ~16 µs to write under the unknown-user load, at 100 ms / 2000 ~10 µs
// (with a longer stall per batch: p99 13 -> 21 ms). 50 ms / 1000 is between.
const FLUSH_DELAY_MS = 50;
const FLUSH_BATCH = 1000;
// one transaction holds at most this many rows: a backlog after an outage is written
// in steps, so a synchronous SQLite write never stalls the event loop for long
const MAX_BATCH = 5000;
/** Rows queued before {@link AuditWriter.room} makes callers wait (~40 MB of rows). */
export const AUDIT_QUEUE_LIMIT = 100_000;
/** First and longest pause between attempts while the database is busy or unreachable. */
export const AUDIT_RETRY_MIN_MS = 50;
/** Longest pause between attempts (the delay doubles from {@link AUDIT_RETRY_MIN_MS}). */
export const AUDIT_RETRY_MAX_MS = 5000;
// while rows cannot be written, or the queue is over its limit, one log line per this
const REPEAT_LOG_MS = 10_000;

/** Options of {@link AuditWriter} (tests shorten them). */
export interface AuditWriterOptions {
  /** Rows queued before {@link AuditWriter.room} waits; default {@link AUDIT_QUEUE_LIMIT}. */
  queueLimit?: number;
  /** First pause after a failed attempt; default {@link AUDIT_RETRY_MIN_MS}. */
  retryMinMs?: number;
  /** Longest pause between attempts; default {@link AUDIT_RETRY_MAX_MS}. */
  retryMaxMs?: number;
}

const RESOLVED: Promise<void> = Promise.resolve();

interface FlushWaiter {
  target: number;
  resolve: () => void;
}

/**
 * Queues audit rows and writes them in order, in batches of one transaction each.
 *
 * Rows are never dropped because of the database: a batch that fails because
 * the database is busy, locked or unreachable ({@link isTransientDbError}) stays
 * at the head of the queue and is tried again after 50 ms, doubling to 5 s (and
 * never sooner than the failed attempt took), while new rows queue behind it.
 * A batch that fails for any other reason is split in halves until the row
 * that fails on its own is found; only that row is logged with the reason and
 * skipped. The queue has no hard limit: beyond {@link AUDIT_QUEUE_LIMIT} rows
 * an error is logged and {@link room} makes the callers that await it (the
 * request path) wait until rows are written again, so a long outage slows
 * requests down instead of losing their rows or the process's memory.
 */
export class AuditWriter {
  readonly #db: Db;
  readonly #log: Logger;
  readonly #limit: number;
  readonly #retryMinMs: number;
  readonly #retryMaxMs: number;
  // rows waiting, from #head on (a head index instead of shift(): O(1) per row)
  #queue: AuditEntry[] = [];
  #head = 0;
  // rows ever queued, and rows done (written, or skipped as invalid), counted from the start
  #queued = 0;
  #done = 0;
  // flush() asked for every row up to this count
  #flushTarget = 0;
  #flushWaiters: FlushWaiter[] = [];
  #roomWaiters: (() => void)[] = [];
  #timer: ReturnType<typeof setTimeout> | undefined;
  #running: Promise<void> | undefined;
  #wake: (() => void) | undefined;
  #isStopped = false;
  // failed attempts since the last success, pause before the next one
  #failures = 0;
  #failingSince = 0;
  #delayMs = 0;
  #loggedFailureAt = -Infinity;
  // the first #suspect rows hold a row that failed on its own; tried #size at a time
  #suspect = 0;
  #size = MAX_BATCH;
  #isOverLimit = false;
  #loggedLimitAt = -Infinity;

  constructor(db: Db, log: Logger, options: AuditWriterOptions = {}) {
    this.#db = db;
    this.#log = log;
    this.#limit = options.queueLimit ?? AUDIT_QUEUE_LIMIT;
    this.#retryMinMs = options.retryMinMs ?? AUDIT_RETRY_MIN_MS;
    this.#retryMaxMs = options.retryMaxMs ?? AUDIT_RETRY_MAX_MS;
  }

  /** Rows queued and not yet written. */
  get pending(): number {
    return this.#queue.length - this.#head;
  }

  /** True while more than {@link AUDIT_QUEUE_LIMIT} rows wait (see {@link room}). */
  get isFull(): boolean {
    return this.pending >= this.#limit;
  }

  /** Queues one row; it is written within {@link FLUSH_DELAY_MS} milliseconds. */
  write(entry: AuditEntry): void {
    this.#queue.push(entry);
    this.#queued++;
    const pending = this.pending;
    if (pending >= this.#limit) this.#overLimit(pending);
    if (pending >= FLUSH_BATCH) this.#start();
    else if (this.#timer === undefined && this.#running === undefined && !this.#isStopped) {
      this.#timer = setTimeout(() => this.#start(), FLUSH_DELAY_MS);
    }
  }

  /**
   * Resolves at once while the queue is below its limit, else when rows have
   * been written and there is room again: a caller that awaits it after
   * {@link write} slows down instead of growing the queue without bound.
   */
  room(): Promise<void> {
    if (!this.isFull || this.#isStopped) return RESOLVED;
    return new Promise((resolve) => this.#roomWaiters.push(resolve));
  }

  /**
   * Writes everything queued so far and resolves when it is written, retrying
   * while the database is busy or unreachable (reads of the log call this
   * first). With `timeoutMs` it gives up waiting after that long (the rows stay
   * queued). Resolves to the number of those rows not yet written (0 when done).
   */
  flush(options: { timeoutMs?: number } = {}): Promise<number> {
    const target = this.#queued;
    if (this.#done >= target || this.#isStopped) return Promise.resolve(target - this.#done);
    this.#flushTarget = Math.max(this.#flushTarget, target);
    const done = new Promise<void>((resolve) => this.#flushWaiters.push({ target, resolve }));
    // an attempt now rather than at the end of a back-off pause
    this.#wake?.();
    this.#start();
    const left = () => Math.max(0, target - this.#done);
    if (options.timeoutMs === undefined) return done.then(left);
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<void>((resolve) => timer = setTimeout(resolve, options.timeoutMs));
    return Promise.race([done, timeout]).then(() => {
      clearTimeout(timer);
      return left();
    });
  }

  /**
   * Flushes (waiting at most `timeoutMs`), then stops writing: no timer or
   * retry is left behind, so the database can be closed. Resolves to the
   * number of rows that could not be written.
   */
  async close(options: { timeoutMs?: number } = {}): Promise<number> {
    await this.flush(options);
    this.#isStopped = true;
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#wake?.();
    // an attempt in progress ends before the database is closed under it
    await this.#running;
    for (const w of this.#flushWaiters.splice(0)) w.resolve();
    for (const resolve of this.#roomWaiters.splice(0)) resolve();
    return this.pending;
  }

  #start(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    if (this.#running !== undefined || this.#isStopped) return;
    this.#running = this.#drain().catch((err) => {
      this.#log.error("Audit writer failed", { error: err as Error });
    }).finally(() => {
      this.#running = undefined;
      if (this.pending > 0 && !this.#isStopped) {
        if (this.#flushTarget > this.#done) this.#start();
        else this.#timer ??= setTimeout(() => this.#start(), FLUSH_DELAY_MS);
      }
    });
  }

  // Writes batches until the queue is below a batch and nobody waits for a flush;
  // the rest goes with the next timer, as before (one transaction per 50 ms).
  async #drain(): Promise<void> {
    let isFirst = true;
    while (!this.#isStopped && this.pending > 0) {
      const isWanted = isFirst || this.#failures > 0 || this.#suspect > 0 ||
        this.pending >= FLUSH_BATCH || this.#flushTarget > this.#done;
      if (!isWanted) return;
      isFirst = false;
      const size = Math.min(
        this.pending,
        this.#suspect > 0 ? Math.min(this.#suspect, this.#size) : MAX_BATCH,
      );
      const batch = this.#queue.slice(this.#head, this.#head + size);
      const startedAt = performance.now();
      try {
        await store.insertEntries(this.#db, batch);
      } catch (err) {
        if (isTransientDbError(err)) {
          await this.#pauseAfter(err, performance.now() - startedAt);
          continue;
        }
        this.#isolate(batch, err);
        continue;
      }
      this.#written(size);
    }
  }

  #written(size: number): void {
    if (this.#failures > 0) {
      this.#log.info("Writing audit rows again", {
        attempts: this.#failures + 1,
        seconds: Math.round((performance.now() - this.#failingSince) / 100) / 10,
        pending: this.pending,
      });
      this.#failures = 0;
    }
    this.#delayMs = 0;
    this.#suspect = Math.max(0, this.#suspect - size);
    this.#advance(size);
  }

  // A failure of the database: keep the batch, pause, try again (doubling to the maximum).
  // The pause lasts at least as long as the failed attempt: on SQLite an attempt waits out
  // the busy timeout (5 s) synchronously, and retries must not take the whole event loop.
  async #pauseAfter(err: unknown, attemptMs: number): Promise<void> {
    const now = performance.now();
    if (this.#failures === 0) this.#failingSince = now;
    this.#failures++;
    this.#delayMs = this.#delayMs === 0
      ? this.#retryMinMs
      : Math.min(this.#delayMs * 2, this.#retryMaxMs);
    if (this.#failures === 1 || now - this.#loggedFailureAt >= REPEAT_LOG_MS) {
      this.#loggedFailureAt = now;
      this.#log.warn("Cannot write audit rows now; keeping them and retrying", {
        pending: this.pending,
        attempts: this.#failures,
        retryMs: this.#delayMs,
        error: err as Error,
      });
    }
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, Math.max(this.#delayMs, attemptMs));
      this.#wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });
    this.#wake = undefined;
  }

  // an error of the rows: halve the batch until the row that fails on its own is found
  #isolate(batch: AuditEntry[], err: unknown): void {
    this.#delayMs = 0;
    if (batch.length > 1) {
      if (this.#suspect === 0) {
        this.#log.warn("Cannot write a batch of audit rows; looking for the invalid row", {
          rows: batch.length,
          error: err as Error,
        });
      }
      this.#suspect = Math.max(this.#suspect, batch.length);
      this.#size = Math.ceil(batch.length / 2);
      return;
    }
    const row = batch[0];
    this.#log.error("Cannot write an audit row; skipping it", {
      action: String(row.action),
      startdate: typeof row.ts === "number" ? new Date(row.ts).toISOString() : String(row.ts),
      node: String(row.node),
      error: err as Error,
    });
    this.#suspect = Math.max(0, this.#suspect - 1);
    // the rest of the suspect rows in one go; another invalid row is halved for again
    this.#size = this.#suspect;
    this.#advance(1);
  }

  #advance(size: number): void {
    this.#head += size;
    this.#done += size;
    if (this.#head === this.#queue.length) {
      this.#queue = [];
      this.#head = 0;
    } else if (this.#head >= 4096 && this.#head * 2 >= this.#queue.length) {
      this.#queue = this.#queue.slice(this.#head);
      this.#head = 0;
    }
    if (this.#flushWaiters.length > 0) {
      const still: FlushWaiter[] = [];
      for (const w of this.#flushWaiters) {
        if (w.target <= this.#done) w.resolve();
        else still.push(w);
      }
      this.#flushWaiters = still;
    }
    if (this.#isOverLimit && !this.isFull) {
      this.#isOverLimit = false;
      this.#log.info("Audit queue below its limit again", { pending: this.pending });
      for (const resolve of this.#roomWaiters.splice(0)) resolve();
    }
  }

  #overLimit(pending: number): void {
    const now = performance.now();
    if (this.#isOverLimit && now - this.#loggedLimitAt < REPEAT_LOG_MS) return;
    this.#isOverLimit = true;
    this.#loggedLimitAt = now;
    this.#log.error("Audit queue is full; requests wait until its rows are written", {
      pending,
      limit: this.#limit,
    });
  }
}

/** One row of `GET /audit/` in privacyIDEA's column names. */
export interface AuditItem {
  number: number;
  date: string;
  startdate: string;
  duration: string;
  action: string;
  success: number;
  serial: string;
  token_type: string;
  user: string;
  realm: string;
  resolver: string;
  administrator: string;
  action_detail: string;
  info: string;
  privacyidea_server: string;
  client: string;
  user_agent: string;
  policies: string;
  request_id: string;
}

/** privacyIDEA's shape of `GET /audit/`. */
export interface AuditPage {
  auditcolumns: string[];
  auditdata: AuditItem[];
  count: number;
  current: number;
  prev: number | null;
  next: number | null;
}

const AUDIT_COLUMNS = [
  "number",
  "date",
  "startdate",
  "duration",
  "action",
  "success",
  "serial",
  "token_type",
  "user",
  "realm",
  "resolver",
  "administrator",
  "action_detail",
  "info",
  "privacyidea_server",
  "client",
  "user_agent",
  "policies",
  "request_id",
];

const SEARCH_FLUSH_WAIT_MS = 10_000;

const TIMELIMIT_REGEXP = /^(\d+)\s*([smhdy])$/;
const UNIT_MS: Record<string, number> = {
  s: 1e3,
  m: 60e3,
  h: 3600e3,
  d: 86400e3,
  y: 365 * 86400e3,
};

function intParam(name: string, raw: unknown, fallback: number, max: number): number {
  if (raw === undefined || raw === "") return fallback;
  const n = typeof raw === "number" ? raw : /^\d+$/.test(String(raw)) ? Number(raw) : NaN;
  if (!Number.isInteger(n) || n < 1 || n > max) {
    throw new ParameterError(
      `Cannot parse parameter "${name}": expected an integer from 1 to ${max}, got "${raw}"`,
    );
  }
  return n;
}

/**
 * `GET /audit/`: filters (`*` wildcard), `page`, `page_size`, `sortorder`,
 * `timelimit`, within `scope` (see {@link auditScopeOf}); the filters only narrow it.
 */
export async function searchAudit(
  deps: { db: Db; audit: AuditWriter; clock: { now(): number } },
  params: Record<string, unknown>,
  options: { scope?: AuditScope } = {},
): Promise<AuditPage> {
  // queued rows first; while the database cannot take them, the search does not wait forever
  await deps.audit.flush({ timeoutMs: SEARCH_FLUSH_WAIT_MS });
  const page = intParam("page", params.page, 1, 1_000_000);
  const pageSize = intParam("page_size", params.page_size, 15, 1000);
  const sortorder = String(params.sortorder ?? "desc").toLowerCase();
  if (sortorder !== "asc" && sortorder !== "desc") {
    throw new ParameterError(
      `Cannot parse parameter "sortorder": expected asc or desc, got "${sortorder}"`,
    );
  }
  const filters: store.AuditQuery["filters"] = {};
  const aliases: Record<string, (typeof AUDIT_FILTER_COLUMNS)[number]> = {
    privacyidea_server: "node",
  };
  for (const [key, value] of Object.entries(params)) {
    const column = aliases[key] ??
      ((AUDIT_FILTER_COLUMNS as readonly string[]).includes(key) ? key : undefined);
    if (column === undefined) continue;
    if (typeof value !== "string") {
      throw new ParameterError(`Cannot parse parameter "${key}": expected a string`);
    }
    filters[column as (typeof AUDIT_FILTER_COLUMNS)[number]] = value;
  }
  let success: boolean | undefined;
  if (params.success !== undefined && params.success !== "") {
    const s = String(params.success).toLowerCase();
    if (["1", "true"].includes(s)) success = true;
    else if (["0", "false"].includes(s)) success = false;
    else {throw new ParameterError(
        `Cannot parse parameter "success": expected 1 or 0, got "${params.success}"`,
      );}
  }
  let since: number | undefined;
  if (params.timelimit !== undefined && params.timelimit !== "") {
    const m = String(params.timelimit).match(TIMELIMIT_REGEXP);
    if (!m) {
      throw new ParameterError(
        `Cannot parse parameter "timelimit": expected e.g. "2h" or "7d", got "${params.timelimit}"`,
      );
    }
    since = deps.clock.now() - Number(m[1]) * UNIT_MS[m[2]];
  }
  const { rows, count } = await store.searchEntries(deps.db, {
    scope: options.scope,
    filters,
    success,
    since,
    page,
    pageSize,
    ascending: sortorder === "asc",
  });
  return {
    auditcolumns: AUDIT_COLUMNS,
    auditdata: rows.map((r) => ({
      number: r.id,
      date: new Date(r.ts + r.durationMs).toISOString(),
      startdate: new Date(r.ts).toISOString(),
      duration: (r.durationMs / 1000).toFixed(6),
      action: r.action,
      success: r.success ? 1 : 0,
      serial: r.serial,
      token_type: r.tokenType,
      user: r.user,
      realm: r.realm,
      resolver: r.resolver,
      administrator: r.administrator,
      action_detail: "",
      info: r.info,
      privacyidea_server: r.node,
      client: r.client,
      user_agent: r.userAgent,
      policies: r.policies,
      request_id: r.requestId,
    })),
    count,
    current: page,
    prev: page > 1 ? page - 1 : null,
    next: page * pageSize < count ? page + 1 : null,
  };
}
