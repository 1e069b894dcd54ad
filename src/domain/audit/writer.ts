/**
 * The audit writer: commits each request's row before its answer leaves (see
 * {@link AuditWriter}). Imports no feature and not deps.ts, so deps.ts can
 * name its type.
 *
 * @module
 */
import type { Db } from "../../db/schema.ts";
import type { Logger } from "../../lib/logger.ts";
import { isTransientDbError } from "../../db/transient_error.ts";
import { openWriteGroup, type PendingCommits } from "../../db/direct.ts";
import * as store from "./audit_store.ts";
import type { AuditEntry } from "./model.ts";

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
// a drain that ended on an unexpected error starts again after this long, not in a loop
const RESTART_MS = 1000;

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

interface Waiter {
  /** Resolved once this many queued rows are done. */
  target: number;
  resolve: () => void;
}

/**
 * Writes audit rows and tells each caller when its row is committed.
 *
 * {@link write} inserts a row at once when it can: on SQLite through the
 * connection's write group (it commits with the other hot-path writes of the
 * same event-loop turn, see db/sqlite_adapter.ts). Otherwise (PostgreSQL, a
 * transaction open on the SQLite connection, rows already waiting) the row is
 * queued and the queue is written at once, in order, one transaction per
 * batch: the rows that arrive while a batch is written go with the next one,
 * so concurrent requests share commits.
 *
 * Rows are never dropped because of the database: a batch that fails because
 * the database is busy, locked or unreachable ({@link isTransientDbError}) stays
 * at the head of the queue and is tried again after 50 ms, doubling to 5 s (and
 * never sooner than the failed attempt took), while new rows queue behind it;
 * a directly written row whose commit failed joins the queue. A batch that
 * fails for any other reason is split in halves until the row that fails on
 * its own is found; only that row is logged with the reason and skipped. The
 * queue has no hard limit: beyond {@link AUDIT_QUEUE_LIMIT} rows an error is
 * logged and {@link room} makes the callers that await it (the request path)
 * wait until rows are written again, so a long outage slows requests down
 * instead of losing their rows or the process's memory.
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
  // callers waiting for queued rows (their own, or all up to a flush), in target order
  #waiters: Waiter[] = [];
  // commits of rows written directly (SQLite write group) that have not settled yet
  readonly #direct = new Set<Promise<void>>();
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

  /** Rows queued and not yet written (directly written rows awaiting their commit included). */
  get pending(): number {
    return this.#queue.length - this.#head + this.#direct.size;
  }

  /** True while more than {@link AUDIT_QUEUE_LIMIT} rows wait (see {@link room}). */
  get isFull(): boolean {
    return this.#queue.length - this.#head >= this.#limit;
  }

  /**
   * Writes one row. The promise resolves once the row is committed (or, for a
   * row the database refuses for its values, once it was logged and skipped,
   * or when the writer closes); it never rejects. While the database cannot
   * take rows it waits, so callers bound their wait ({@link commit}).
   */
  write(entry: AuditEntry): Promise<void> {
    if (this.#isStopped) return this.#enqueue(entry);
    // rows already waiting go first: a direct insert would overtake them
    if (this.#queue.length === this.#head && this.#running === undefined) {
      let written: ReturnType<typeof store.insertEntryNow>;
      try {
        written = store.insertEntryNow(this.#db, entry);
      } catch (err) {
        if (!isTransientDbError(err)) {
          this.#skip(entry, err);
          return RESOLVED;
        }
        // busy or locked (SQLite has just waited out its busy timeout): the queue tries it
        // again after a pause, not at once with another synchronous wait
        return this.#enqueue(entry, { isDeferred: true });
      }
      if (written !== undefined && "lockWait" in written) {
        return this.#afterLockWait(entry, written.lockWait);
      }
      if (written !== undefined) return this.#track(entry, written.committed);
    }
    return this.#enqueue(entry);
  }

  /**
   * Writes one row and waits until it is committed, at most `timeoutMs`:
   * true when it is, false when the wait ended first (the row stays queued
   * and is written when the database takes rows again; a warning is logged).
   * With `timeoutMs` 0 it does not wait at all.
   *
   * `after`: the request's own writes, not committed yet (SQLite's write
   * group). The row is never committed before them: it shares their commit
   * when they all wait in the connection's open write group and the row can
   * join it now (one commit for a lone request), otherwise they are settled
   * first. When their commit fails this rejects with its error and the row
   * is not written: the caller answers the error and commits the row again,
   * amended to say so.
   */
  async commit(
    entry: AuditEntry,
    options: { timeoutMs: number; after?: PendingCommits },
  ): Promise<boolean> {
    const after = options.after;
    if (after !== undefined && !after.isEmpty) {
      const joined = this.#joinWrites(entry, after);
      // the writes' commit decides the answer; a row that joined them shares its fate
      await after.settle();
      if (joined !== undefined) {
        await joined;
        return true;
      }
    }
    if (options.timeoutMs <= 0) {
      // nobody waits (a refusal while the database is down): the row is queued and written a
      // moment later, so the answer does not first wait out a SQLite lock synchronously
      void this.#enqueue(entry, { isDeferred: true });
      return false;
    }
    const written = this.write(entry);
    let timer: ReturnType<typeof setTimeout> | undefined;
    const isCommitted = await Promise.race([
      written.then(() => true),
      new Promise<boolean>((resolve) =>
        timer = setTimeout(() => resolve(false), options.timeoutMs)
      ),
    ]);
    clearTimeout(timer);
    if (!isCommitted) {
      this.#log.warn("Answering before the audit row is committed; it stays queued", {
        action: entry.action,
        waitedMs: options.timeoutMs,
        pending: this.pending,
      });
    }
    return isCommitted;
  }

  // The row into the open write group that holds all of `after`'s writes, when the row can
  // go in now (nothing queued before it); undefined when it cannot (the caller settles the
  // writes first, then writes the row). The promise settles with the group; a rolled-back
  // row is not queued again: the caller learns of the rollback from the writes.
  #joinWrites(entry: AuditEntry, after: PendingCommits): Promise<void> | undefined {
    if (this.#isStopped || this.#queue.length !== this.#head || this.#running !== undefined) {
      return undefined;
    }
    const group = openWriteGroup(this.#db);
    if (group === undefined || !after.isAllIn(group)) return undefined;
    let written: ReturnType<typeof store.insertEntryNow>;
    try {
      written = store.insertEntryNow(this.#db, entry);
    } catch (err) {
      if (isTransientDbError(err)) return undefined;
      this.#skip(entry, err);
      return RESOLVED;
    }
    if (written === undefined || "lockWait" in written) return undefined;
    // the group is open and the insert is a hot-path write: it joined that group
    return this.#track(entry, written.committed, { isRequeued: false });
  }

  // Another process holds SQLite's write lock: the row is written once the connection has it
  // (the wait does not block the thread); when the lock stays held for the busy timeout, the
  // queue tries again after a pause. Counted as pending meanwhile.
  #afterLockWait(entry: AuditEntry, lockWait: Promise<void>): Promise<void> {
    const done: Promise<void> = lockWait.then(
      () => {
        this.#direct.delete(done);
        return this.write(entry);
      },
      () => {
        this.#direct.delete(done);
        return this.#enqueue(entry, { isDeferred: true });
      },
    );
    this.#direct.add(done);
    return done;
  }

  // a row in the write group: done when the group commits, queued again when it rolls back
  // (unless the caller writes it again itself: isRequeued false)
  #track(
    entry: AuditEntry,
    committed: Promise<void> | undefined,
    options: { isRequeued: boolean } = { isRequeued: true },
  ): Promise<void> {
    if (committed === undefined) return RESOLVED;
    const done: Promise<void> = committed.then(
      () => {
        this.#direct.delete(done);
      },
      (err) => {
        this.#direct.delete(done);
        if (!options.isRequeued) return;
        this.#log.warn("An audit row's commit failed; writing it again", { error: err as Error });
        return this.#enqueue(entry);
      },
    );
    this.#direct.add(done);
    return done;
  }

  #enqueue(entry: AuditEntry, options: { isDeferred?: boolean } = {}): Promise<void> {
    this.#queue.push(entry);
    const target = ++this.#queued;
    const queued = this.#queue.length - this.#head;
    if (queued >= this.#limit) this.#overLimit(queued);
    if (this.#isStopped) return RESOLVED;
    const done = new Promise<void>((resolve) => this.#waiters.push({ target, resolve }));
    if (!options.isDeferred) this.#start();
    else if (this.#running === undefined) {
      this.#timer ??= setTimeout(() => this.#start(), this.#retryMinMs);
    }
    return done;
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
   * Resolves when every row written so far is committed, retrying while the
   * database is busy or unreachable (reads of the log call this first). With
   * `timeoutMs` it gives up waiting after that long (the rows stay queued).
   * Resolves to the number of those rows not yet written (0 when done).
   */
  async flush(options: { timeoutMs?: number } = {}): Promise<number> {
    const target = this.#queued;
    const direct = [...this.#direct];
    // a direct row counts until its promise settles: one that went to the queue meanwhile
    // (its commit failed, or its wait for SQLite's write lock timed out) settles when written
    const unsettled = new Set(direct);
    for (const p of direct) void p.then(() => unsettled.delete(p));
    const left = () => Math.max(0, target - this.#done) + unsettled.size;
    if (this.#isStopped || left() === 0) return left();
    const queued = this.#done >= target
      ? RESOLVED
      : new Promise<void>((resolve) => this.#waiters.push({ target, resolve }));
    // an attempt now rather than at the end of a back-off pause
    this.#wake?.();
    this.#start();
    // a direct row whose commit failed is queued again: its promise settles when written
    const done = Promise.all([queued, ...direct]);
    if (options.timeoutMs === undefined) {
      await done;
      return left();
    }
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<void>((resolve) => timer = setTimeout(resolve, options.timeoutMs));
    await Promise.race([done, timeout]);
    clearTimeout(timer);
    return left();
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
    for (const w of this.#waiters.splice(0)) w.resolve();
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
      if (this.#queue.length > this.#head && !this.#isStopped) {
        this.#timer ??= setTimeout(() => this.#start(), RESTART_MS);
      }
    });
  }

  // Writes batches until the queue is empty: every queued row has a caller waiting for it.
  async #drain(): Promise<void> {
    while (!this.#isStopped && this.#queue.length > this.#head) {
      const size = Math.min(
        this.#queue.length - this.#head,
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
    this.#skip(batch[0], err);
    this.#suspect = Math.max(0, this.#suspect - 1);
    // the rest of the suspect rows in one go; another invalid row is halved for again
    this.#size = this.#suspect;
    this.#advance(1);
  }

  #skip(row: AuditEntry, err: unknown): void {
    this.#log.error("Cannot write an audit row; skipping it", {
      action: String(row.action),
      startdate: typeof row.ts === "number" ? new Date(row.ts).toISOString() : String(row.ts),
      node: String(row.node),
      error: err as Error,
    });
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
    // waiters are in target order: those done are at the front
    let n = 0;
    while (n < this.#waiters.length && this.#waiters[n].target <= this.#done) {
      this.#waiters[n++].resolve();
    }
    if (n > 0) this.#waiters.splice(0, n);
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
