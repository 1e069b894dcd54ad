/**
 * File paths in resolver configurations (`fileName`, `Database`, hosts
 * `filename`): relative paths live under the data directory, no path may
 * contain a `..` segment, and no path may reach one of Tessera's own files.
 *
 * Rule for user files: any file Tessera's process can read may hold users,
 * inside the data directory too (relative paths resolve there, e.g.
 * `users.sqlite` or `users/passwd`), except the files and folders Tessera
 * itself writes or keeps secrets in ({@link ownPaths}). A path is refused when
 * it names one of them, or leads to one through a symlink, a linked folder or a
 * hard link (same device and inode). Every file or folder Tessera writes must be
 * listed in {@link ownPaths}.
 *
 * @module
 */
import { basename, dirname, isAbsolute, join, resolve, sep } from "node:path";
import type { Config } from "../../config.ts";
import { ParameterError } from "../../errors.ts";

/** Resolves `path` (relative → under `dataDir`); refuses `..` segments and NUL bytes. */
export function resolveDataPath(dataDir: string, path: string, what: string): string {
  if (path.includes("\0")) {
    throw new ParameterError(`Cannot use ${what} "${path}": it contains a NUL byte`);
  }
  if (path.split(/[\\/]/).includes("..")) {
    throw new ParameterError(`Cannot use ${what} "${path}": ".." segments are not allowed`);
  }
  return isAbsolute(path) ? path : join(dataDir, path);
}

/** Tessera's own files and folders: never a user store. Absolute paths. */
export interface OwnPaths {
  files: string[];
  /** Everything inside these folders is Tessera's too. */
  dirs: string[];
}

/** The files and folders Tessera writes or keeps secrets in, for `config`. */
export function ownPaths(config: Config): OwnPaths {
  const dataDir = resolve(config.storage.dataDir);
  const inData = (name: string) => join(dataDir, name);
  const url = config.storage.databaseUrl;
  const configured = url.startsWith("sqlite:") ? url.slice("sqlite:".length) : "";
  // the default names too: files written under an earlier configuration stay secret
  const databases = [inData("tessera.sqlite")];
  if (configured !== "" && configured !== ":memory:") databases.push(configured);
  const signing = [config.signing.keyFile, inData("signing-key.pem")];
  const files = [
    ...databases.flatMap((db) => [db, `${db}-wal`, `${db}-shm`, `${db}-journal`]),
    config.storage.keyFile,
    inData("encKey"),
    ...signing.flatMap((key) => [key, `${key}.pub`]),
    inData("initial-admin-password"),
  ];
  const dirs = [
    config.subscriptions.keyDir,
    inData("subscription-keys"),
    config.events.scriptDir,
    inData("scripts"),
    inData("notifications"),
  ];
  return { files: unique(files), dirs: unique(dirs) };
}

function unique(paths: string[]): string[] {
  return [...new Set(paths.filter((p) => p !== "").map((p) => resolve(p)))];
}

/** `path` with every symlink resolved, as far as the path exists. */
function realOf(path: string): string {
  const rest: string[] = [];
  let head = path;
  for (;;) {
    try {
      return join(Deno.realPathSync(head), ...rest);
    } catch {
      const parent = dirname(head);
      if (parent === head) return path;
      rest.unshift(basename(head));
      head = parent;
    }
  }
}

function statOf(path: string): Deno.FileInfo | undefined {
  try {
    return Deno.statSync(path);
  } catch {
    return undefined;
  }
}

function sameFile(a: Deno.FileInfo | undefined, b: Deno.FileInfo): boolean {
  return a !== undefined && a.ino !== null && b.ino !== null && a.dev === b.dev &&
    a.ino === b.ino;
}

function isWithin(path: string, dirs: string[]): boolean {
  return dirs.some((d) => path === d || path.startsWith(d.endsWith(sep) ? d : d + sep));
}

/**
 * Throws a ParameterError when `path` is one of Tessera's own files or folders
 * or leads to one (symlink, linked folder, hard link). `opened` is the stat of
 * an already opened handle of `path`, so the check covers the very file read.
 */
export function refuseOwnPath(
  config: Config,
  path: string,
  what: string,
  opened?: Deno.FileInfo,
): void {
  const own = ownPaths(config);
  const ownFiles = new Set(own.files.flatMap((f) => [f, realOf(f)]));
  const ownDirs = own.dirs.flatMap((d) => [d, realOf(d)]);
  const abs = resolve(path);
  const real = realOf(abs);
  const refused = () =>
    new ParameterError(
      `Cannot use ${what} "${path}": it is one of Tessera's own files (own database, key files, ` +
        "admin password, spool and key folders), never a user store",
    );
  for (const p of [abs, real]) {
    if (ownFiles.has(p) || isWithin(p, ownDirs)) throw refused();
  }
  // identities catch hard links and case-insensitive file systems
  const info = opened ?? statOf(abs);
  if (info !== undefined && own.files.some((f) => sameFile(statOf(f), info))) throw refused();
  const dirIds = own.dirs.map(statOf).filter((s): s is Deno.FileInfo => s?.isDirectory === true);
  if (dirIds.length === 0) return;
  for (let d = real;; d = dirname(d)) {
    const s = statOf(d);
    if (s !== undefined && dirIds.some((id) => sameFile(s, id))) throw refused();
    if (dirname(d) === d) break;
  }
}

/** Reads `file` to its end; undefined when it holds more than `max` bytes. */
export async function readAllUpTo(file: Deno.FsFile, max: number): Promise<Uint8Array | undefined> {
  const chunks: Uint8Array[] = [];
  const buf = new Uint8Array(64 * 1024);
  let total = 0;
  for (;;) {
    const n = await file.read(buf);
    if (n === null) break;
    total += n;
    if (total > max) return undefined;
    chunks.push(buf.slice(0, n));
  }
  const out = new Uint8Array(total);
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.length;
  }
  return out;
}
