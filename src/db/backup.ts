/**
 * `tessera backup <file>`: a consistent copy of the running SQLite database
 * (and of the SQLite files of sqlresolvers), made with SQLite's online backup
 * API on a connection of its own. The server keeps serving and writing
 * meanwhile; each copy holds every transaction committed to its file before
 * that copy finished (SQLite restarts a step that a concurrent write
 * invalidated), WAL contents included. PostgreSQL has its own tools.
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
 * Where `tessera backup <destination>` puts the copy of a sqlresolver's
 * SQLite file: beside the destination, named after the resolver.
 */
export function userStoreCopyPath(destination: string, resolver: string): string {
  return `${destination.replace(/\.sqlite$/, "")}.resolver-${resolver}.sqlite`;
}

/**
 * Copies the SQLite database `source` to `destination` (which must not exist)
 * while it may be in use; returns the number of pages copied. The copy is
 * readable by its owner only (mode 0600): it holds every secret of the
 * database.
 */
export async function backupSqlite(
  source: string,
  destination: string,
  options: { onProgress?: (p: BackupProgress) => void; pagesPerStep?: number } = {},
): Promise<number> {
  if (!existsSync(source)) throw new Error(`Cannot back up "${source}": no such database file`);
  // made before SQLite writes to it, so the copy is never readable by others, whatever the umask
  try {
    Deno.openSync(destination, { write: true, createNew: true, mode: 0o600 }).close();
  } catch (err) {
    if (err instanceof Deno.errors.AlreadyExists) {
      throw new Error(`Cannot back up to "${destination}": the file exists (choose a new name)`);
    }
    throw err;
  }
  Deno.chmodSync(destination, 0o600);
  const db = new DatabaseSync(source, { readOnly: true });
  try {
    // the server may hold the write lock for a moment: wait for it rather than fail
    db.exec("PRAGMA busy_timeout = 5000");
    return await backup(db, destination, {
      rate: options.pagesPerStep ?? 1000,
      progress: (p: BackupProgress) => options.onProgress?.(p),
    });
  } catch (err) {
    // no half-written copy stays behind
    for (const path of [destination, `${destination}-journal`, `${destination}-wal`]) {
      try {
        Deno.removeSync(path);
      } catch {
        // not there
      }
    }
    throw err;
  } finally {
    db.close();
  }
}
