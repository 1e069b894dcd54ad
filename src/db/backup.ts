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

/** A backup that cannot be made, for a reason its operator can read (printed as `Error: …`). */
export class BackupError extends Error {}

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

/** Why a file cannot be written or read, as an operator reads it. */
function whyNot(err: unknown): string {
  if (err instanceof Deno.errors.AlreadyExists) return "the file exists (choose a new name)";
  if (err instanceof Deno.errors.NotFound) return "its folder does not exist";
  if (err instanceof Deno.errors.PermissionDenied) return "permission denied";
  return (err as Error).message;
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
  if (!existsSync(source)) {
    throw new BackupError(`Cannot back up "${source}": no such database file`);
  }
  // made before SQLite writes to it, so the copy is never readable by others, whatever the umask
  try {
    Deno.openSync(destination, { write: true, createNew: true, mode: 0o600 }).close();
  } catch (err) {
    throw new BackupError(`Cannot back up to "${destination}": ${whyNot(err)}`);
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
    // no half-written copy stays behind (the error names the cause, e.g. a full disk)
    for (const path of [destination, `${destination}-journal`, `${destination}-wal`]) {
      try {
        Deno.removeSync(path);
      } catch {
        // not there
      }
    }
    throw new BackupError(`Cannot back up "${source}" to "${destination}": ${whyNot(err)}`);
  } finally {
    db.close();
  }
}
