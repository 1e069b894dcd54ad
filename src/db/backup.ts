/**
 * `tessera backup <file>`: a consistent copy of the running SQLite database,
 * made with SQLite's online backup API on a connection of its own. The
 * server keeps serving and writing meanwhile; the copy holds every
 * transaction committed before the copy finished (SQLite restarts a step
 * that a concurrent write invalidated). PostgreSQL has its own tools.
 *
 * @module
 */
import { backup, DatabaseSync } from "node:sqlite";
import { existsSync } from "node:fs";

/** Progress of a backup: pages copied so far and in all. */
export interface BackupProgress {
  totalPages: number;
  remainingPages: number;
}

/** The SQLite file of a `sqlite:<path>` URL, or undefined for any other database. */
export function sqliteFileOf(databaseUrl: string): string | undefined {
  if (!databaseUrl.startsWith("sqlite:")) return undefined;
  const path = databaseUrl.slice("sqlite:".length);
  return path === ":memory:" ? undefined : path;
}

/**
 * Copies the SQLite database `source` to `destination` (which must not exist)
 * while it may be in use; returns the number of pages copied.
 */
export async function backupSqlite(
  source: string,
  destination: string,
  options: { onProgress?: (p: BackupProgress) => void; pagesPerStep?: number } = {},
): Promise<number> {
  if (!existsSync(source)) throw new Error(`Cannot back up "${source}": no such database file`);
  if (existsSync(destination)) {
    throw new Error(`Cannot back up to "${destination}": the file exists (choose a new name)`);
  }
  const db = new DatabaseSync(source, { readOnly: true });
  try {
    // the server may hold the write lock for a moment: wait for it rather than fail
    db.exec("PRAGMA busy_timeout = 5000");
    return await backup(db, destination, {
      rate: options.pagesPerStep ?? 1000,
      progress: (p: BackupProgress) => options.onProgress?.(p),
    });
  } finally {
    db.close();
  }
}
