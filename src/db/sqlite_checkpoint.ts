/**
 * WAL checkpoints once a second instead of in the commits. SQLite's own
 * automatic checkpoint runs inside the commit that brings the WAL to 1,000
 * pages, with the file's sync: a lone check's commit took ~80 µs with it and
 * ~60 µs without (bench/inprocess.ts `--sql`), and under load it ran several
 * times a second. The server instead runs a passive checkpoint every
 * {@link CHECKPOINT_INTERVAL_MS} between requests: it never waits for readers
 * or writers (another process's included), and a page many commits wrote in
 * that second is copied into the file once. A worker thread with its own
 * connection was measured too: it also takes the checkpoint off the requests'
 * thread, but its JavaScript runtime costs ~20 MB of resident memory.
 *
 * Durability does not change: a commit is in the WAL (synced as before) when
 * it returns; a checkpoint only moves committed pages into the main file. The
 * connection keeps SQLite's automatic checkpoint as a backstop, at
 * {@link BACKSTOP_AUTOCHECKPOINT_PAGES}, and its default again once stopped.
 *
 * @module
 */
import type { DatabaseSync, StatementSync } from "node:sqlite";
import type { Logger } from "../lib/logger.ts";

/** How often the server checkpoints. */
export const CHECKPOINT_INTERVAL_MS = 1000;
/** The connection's own automatic checkpoint meanwhile (pages of WAL), a backstop only. */
export const BACKSTOP_AUTOCHECKPOINT_PAGES = 20_000;
// SQLite's default (SQLITE_DEFAULT_WAL_AUTOCHECKPOINT)
const DEFAULT_AUTOCHECKPOINT_PAGES = 1000;

/** A running checkpoint timer. */
export interface Checkpointer {
  /** Stops it and restores SQLite's automatic checkpoint on the connection. */
  stop(): void;
}

/**
 * Checkpoints the file of `raw` (a WAL database) every interval from a timer
 * that does not keep the process alive; undefined for an in-memory database.
 */
export function startCheckpointer(
  raw: DatabaseSync,
  options: { log?: Logger; intervalMs?: number } = {},
): Checkpointer | undefined {
  if (!raw.location()) return undefined;
  const checkpoint: StatementSync = raw.prepare("PRAGMA wal_checkpoint(PASSIVE)");
  raw.exec(`PRAGMA wal_autocheckpoint = ${BACKSTOP_AUTOCHECKPOINT_PAGES}`);
  let hasWarned = false;
  const timer = setInterval(() => {
    // the write group's transaction is open until its commit: the next tick checkpoints
    if (raw.isTransaction) return;
    try {
      checkpoint.get();
    } catch (err) {
      // another process's checkpoint running is no failure (the pragma reports it in its row);
      // this is one of the file (I/O): logged once, tried again on the next tick, and SQLite's
      // backstop checkpoint bounds the WAL meanwhile
      if (!hasWarned) {
        hasWarned = true;
        options.log?.warn("A checkpoint of the SQLite database failed; retrying", {
          error: String(err),
        });
      }
    }
  }, options.intervalMs ?? CHECKPOINT_INTERVAL_MS);
  Deno.unrefTimer(timer);
  let isRunning = true;
  return {
    stop() {
      if (!isRunning) return;
      isRunning = false;
      clearInterval(timer);
      try {
        raw.exec(`PRAGMA wal_autocheckpoint = ${DEFAULT_AUTOCHECKPOINT_PAGES}`);
      } catch {
        // the connection is closed already: nothing to restore
      }
    },
  };
}
