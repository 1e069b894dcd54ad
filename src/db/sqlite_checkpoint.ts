/**
 * WAL checkpoints off the request thread. SQLite's own automatic checkpoint
 * runs inside the commit that makes the WAL reach 1,000 pages: on the serving
 * thread, with the file's sync, about a fifth of a lone check's commit time
 * (bench/inprocess.ts, `--sql`). The server instead runs a passive checkpoint
 * every {@link CHECKPOINT_INTERVAL_MS} in a worker with its own connection
 * (`sqlite_checkpoint_worker.ts`): it never waits for readers or writers, so
 * commits go on meanwhile, and a page written by many commits in an interval
 * is copied into the file once. Durability does not change: a commit is in
 * the WAL (and synced as before) when it returns; the checkpoint only moves
 * committed pages into the main file.
 *
 * The serving connection keeps an automatic checkpoint as a backstop (at
 * {@link BACKSTOP_AUTOCHECKPOINT_PAGES}), and SQLite's default again when the
 * worker stops or fails.
 *
 * @module
 */
import type { DatabaseSync } from "node:sqlite";
import type { Logger } from "../lib/logger.ts";

/** How often the worker checkpoints. */
export const CHECKPOINT_INTERVAL_MS = 1000;
/** The serving connection's own automatic checkpoint while the worker runs (pages of WAL). */
export const BACKSTOP_AUTOCHECKPOINT_PAGES = 20_000;
// SQLite's default (SQLITE_DEFAULT_WAL_AUTOCHECKPOINT)
const DEFAULT_AUTOCHECKPOINT_PAGES = 1000;
/** How long {@link Checkpointer.stop} waits for the worker to close its connection. */
const STOP_WAIT_MS = 2000;

/** A running checkpoint worker. */
export interface Checkpointer {
  /** Stops the worker (its connection closed) and restores SQLite's automatic checkpoint. */
  stop(): Promise<void>;
}

type WorkerReport = { started?: true; stopped?: true; error?: string; isFatal?: boolean };

/**
 * Starts checkpointing the file of `raw` (a WAL database) in a worker; undefined
 * for an in-memory database or where no worker can start (the connection then
 * keeps SQLite's automatic checkpoint).
 */
export function startCheckpointer(
  raw: DatabaseSync,
  options: { log?: Logger; intervalMs?: number } = {},
): Checkpointer | undefined {
  const path = raw.location();
  if (!path) return undefined;
  let worker: Worker;
  try {
    worker = new Worker(new URL("./sqlite_checkpoint_worker.ts", import.meta.url).href, {
      type: "module",
    });
  } catch (err) {
    options.log?.warn("Cannot start the checkpoint worker; SQLite checkpoints in its commits", {
      error: String(err),
    });
    return undefined;
  }
  const setAutocheckpoint = (pages: number) => {
    try {
      raw.exec(`PRAGMA wal_autocheckpoint = ${pages}`);
    } catch {
      // the connection is closed already: nothing to restore
    }
  };
  let isRunning = true;
  const fail = (error: string) => {
    if (!isRunning) return;
    isRunning = false;
    options.log?.warn("The checkpoint worker stopped; SQLite checkpoints in its commits again", {
      error,
    });
    setAutocheckpoint(DEFAULT_AUTOCHECKPOINT_PAGES);
    worker.terminate();
  };
  let hasWarned = false;
  worker.onmessage = (e: MessageEvent<WorkerReport>) => {
    if (e.data.error === undefined) return;
    if (e.data.isFatal) return fail(e.data.error);
    // a passing error (another connection checkpointing): the next tick tries again
    if (!hasWarned) {
      hasWarned = true;
      options.log?.warn("A background checkpoint failed; retrying", { error: e.data.error });
    }
  };
  worker.onerror = (e) => {
    e.preventDefault();
    fail(e.message);
  };
  setAutocheckpoint(BACKSTOP_AUTOCHECKPOINT_PAGES);
  worker.postMessage({ path, intervalMs: options.intervalMs ?? CHECKPOINT_INTERVAL_MS });
  let stopping: Promise<void> | undefined;
  return {
    stop() {
      return stopping ??= new Promise<void>((resolve) => {
        if (!isRunning) return resolve();
        isRunning = false;
        let timer: ReturnType<typeof setTimeout> | undefined = undefined;
        const done = () => {
          clearTimeout(timer);
          worker.terminate();
          setAutocheckpoint(DEFAULT_AUTOCHECKPOINT_PAGES);
          resolve();
        };
        worker.onmessage = (e: MessageEvent<WorkerReport>) => {
          if (e.data.stopped) done();
        };
        worker.onerror = (e) => {
          e.preventDefault();
          done();
        };
        // a worker that does not answer is ended anyway
        timer = setTimeout(done, STOP_WAIT_MS);
        worker.postMessage({ stop: true });
      });
    },
  };
}
