/**
 * Machine resolver type `hosts`: machines from an `/etc/hosts`-style file
 * (spec 07 §2.6). The file is parsed again whenever its size or mtime changes.
 *
 * @module
 */
import { isAbsolute, join, normalize } from "node:path";
import ipaddr from "ipaddr.js";
import type { Deps } from "../../deps.ts";
import { ParameterError } from "../../errors.ts";
import { machineError } from "./_errors.ts";
import {
  type Machine,
  type MachineFilter,
  type MachineResolverType,
  type MachineSource,
  matchesFilter,
} from "./types.ts";

/** A parsed line: id, normalised address and host names. */
type HostEntry = Omit<Machine, "resolverName">;

interface CacheEntry {
  mtimeMs: number;
  size: number;
  entries: HostEntry[];
}

// parsed files by absolute path; a stat per query keeps it fresh, so no
// correctness depends on it (several processes may read the same file)
const cache = new Map<string, CacheEntry>();
const MAX_CACHED_FILES = 64;
const MAX_FILE_BYTES = 16 * 1024 * 1024;

/** Normalised text of an IPv4/IPv6 address, undefined when `text` is none. */
export function normalizeIp(text: string): string | undefined {
  if (ipaddr.IPv4.isValidFourPartDecimal(text)) return ipaddr.IPv4.parse(text).toString();
  if (ipaddr.IPv6.isValid(text)) {
    try {
      return ipaddr.IPv6.parse(text).toString();
    } catch {
      return undefined;
    }
  }
  return undefined;
}

/**
 * The absolute path of a `filename` config value: relative paths resolve under
 * the data directory; any `..` segment is refused so a name cannot climb out.
 */
export function hostsFilePath(dataDir: string, filename: string): string {
  if (filename === "") throw new ParameterError('Cannot use hosts file "": empty filename');
  if (filename.includes("\0")) throw new ParameterError("Cannot use hosts file: NUL byte");
  if (filename.split(/[\\/]+/).includes("..")) {
    throw new ParameterError(`Cannot use hosts file "${filename}": ".." is not allowed`);
  }
  return normalize(isAbsolute(filename) ? filename : join(dataDir, filename));
}

/** Parses hosts-file text (spec 07 §2.6); throws on a first field that is no address. */
export function parseHosts(text: string, what: string): HostEntry[] {
  const entries: HostEntry[] = [];
  const lines = text.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    const fields = lines[i].trim().split(/\s+/).filter((f) => f !== "");
    if (fields.length < 2 || fields[0].startsWith("#")) continue;
    const ip = normalizeIp(fields[0]);
    if (ip === undefined) {
      // the field itself is not echoed: the file may be any file the server can read
      throw machineError(
        `Cannot read hosts file ${what}: the first field in line ${i + 1} is not an IP address`,
      );
    }
    // inline "# comments" become host names, as in privacyIDEA [quirk]
    entries.push({ id: fields[0], ip, hostname: fields.slice(1) });
  }
  return entries;
}

async function readHosts(path: string, resolverName: string): Promise<HostEntry[]> {
  const what = `of machine resolver "${resolverName}"`;
  let stat: Deno.FileInfo;
  try {
    stat = await Deno.stat(path);
  } catch (err) {
    throw machineError(`Cannot read hosts file ${what}: ${(err as Error).name}`);
  }
  if (!stat.isFile) throw machineError(`Cannot read hosts file ${what}: not a regular file`);
  if (stat.size > MAX_FILE_BYTES) throw machineError(`Cannot read hosts file ${what}: too large`);
  const mtimeMs = stat.mtime?.getTime() ?? 0;
  const hit = cache.get(path);
  if (hit && hit.mtimeMs === mtimeMs && hit.size === stat.size) return hit.entries;
  let text: string;
  try {
    text = await Deno.readTextFile(path);
  } catch (err) {
    throw machineError(`Cannot read hosts file ${what}: ${(err as Error).name}`);
  }
  const entries = parseHosts(text, what);
  if (cache.size >= MAX_CACHED_FILES) cache.delete(cache.keys().next().value!);
  cache.set(path, { mtimeMs, size: stat.size, entries });
  return entries;
}

class HostsSource implements MachineSource {
  constructor(readonly path: string, readonly name: string) {}

  async machines(filter: MachineFilter): Promise<Machine[]> {
    const entries = await readHosts(this.path, this.name);
    return entries
      .map((e) => ({ id: e.id, ip: e.ip, hostname: [...e.hostname], resolverName: this.name }))
      .filter((m) => matchesFilter(m, filter));
  }
}

/** The `hosts` resolver type. */
export const HOSTS: MachineResolverType = {
  type: "hosts",
  keys: { filename: "string" },
  validate(deps: Deps, config: Record<string, string>): void {
    if (config.filename !== undefined) hostsFilePath(deps.config.storage.dataDir, config.filename);
  },
  open(deps: Deps, name: string, config: Record<string, string>): MachineSource {
    const filename = config.filename;
    if (filename === undefined || filename === "") {
      throw machineError(`Machine resolver "${name}" has no filename`);
    }
    return new HostsSource(hostsFilePath(deps.config.storage.dataDir, filename), name);
  },
  test() {
    return Promise.resolve({ ok: false, description: "Not Implemented" });
  },
};
