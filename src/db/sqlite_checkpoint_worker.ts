/**
 * The worker of `sqlite_checkpoint.ts`: its own connection to the database
 * file, moving the WAL's committed pages into the file with a passive
 * checkpoint every interval (never waiting for readers or writers).
 *
 * @module
 */
/// <reference no-default-lib="true" />
/// <reference lib="deno.worker" />
import { DatabaseSync, type StatementSync } from "node:sqlite";

/** What the worker is told: start on a file, or stop. */
export type CheckpointMessage = { path: string; intervalMs: number } | { stop: true };

let db: DatabaseSync | undefined;
let timer: ReturnType<typeof setInterval> | undefined;

self.onmessage = (e: MessageEvent<CheckpointMessage>) => {
  const msg = e.data;
  if ("stop" in msg) {
    clearInterval(timer);
    try {
      db?.close();
    } catch {
      // closing is best effort: the process ends next
    }
    db = undefined;
    self.postMessage({ stopped: true });
    return;
  }
  let checkpoint: StatementSync;
  try {
    db = new DatabaseSync(msg.path);
    checkpoint = db.prepare("PRAGMA wal_checkpoint(PASSIVE)");
  } catch (err) {
    self.postMessage({ error: String(err), isFatal: true });
    return;
  }
  timer = setInterval(() => {
    try {
      checkpoint.get();
    } catch (err) {
      // e.g. SQLITE_BUSY while another connection checkpoints: the next tick tries again
      self.postMessage({ error: String(err) });
    }
  }, msg.intervalMs);
  self.postMessage({ started: true });
};
