/**
 * Machine resolver type `hosts`: machines from an `/etc/hosts`-style file
 * (spec 07 §2.6). The file is parsed again whenever its identity, size or
 * mtime changes. It is never one of Tessera's own files, and a file that is not
 * text (a key, any binary) is refused, on save and on every read.
 *
 * @module
 */
import { isAbsolute, join, normalize } from "node:path";
import ipaddr from "ipaddr.js";
import type { Config } from "../../config.ts";
import type { Deps } from "../../deps.ts";
import { ParameterError } from "../../errors.ts";
import { readAllUpTo, refuseOwnPath } from "../resolver/mod.ts";
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
  dev: number;
  ino: number | null;
  entries: HostEntry[];
  /** Configurations whose own-file check this file version passed. */
  checked: WeakSet<Config>;
}

// parsed files by absolute path; a stat per query keeps it fresh, so no
// correctness depends on it (several processes may read the same file)
const cache = new Map<string, CacheEntry>();
const MAX_CACHED_FILES = 64;
const MAX_FILE_BYTES = 16 * 1024 * 1024;
// deno-lint-ignore no-control-regex
const CONTROL_REGEXP = /[\u0000-\u0008\u000b\u000e-\u001f\u007f]/;

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

/** Decodes hosts-file bytes; a file that is not text is refused without echoing it. */
export function hostsText(path: string, bytes: Uint8Array): string {
  let text: string | undefined;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    text = undefined;
  }
  if (text === undefined || CONTROL_REGEXP.test(text)) {
    throw new ParameterError(`Cannot use file "${path}": it is not a hosts file`);
  }
  return text;
}

/**
 * Checks a hosts file when a resolver is saved: refused when it is one of
 * Tessera's own files or not a hosts file. A missing file passes (it is
 * checked whenever it is read).
 */
export function checkHostsFile(config: Config, path: string): void {
  refuseOwnPath(config, path, "filename");
  let file: Deno.FsFile;
  try {
    file = Deno.openSync(path);
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return;
    throw machineError(`Cannot read hosts file "${path}": ${(err as Error).name}`);
  }
  let bytes: Uint8Array;
  try {
    const info = file.statSync();
    refuseOwnPath(config, path, "filename", info);
    if (!info.isFile) throw machineError(`Cannot read hosts file "${path}": not a regular file`);
    if (info.size > MAX_FILE_BYTES) {
      throw machineError(`Cannot read hosts file "${path}": too large`);
    }
    bytes = new Uint8Array(info.size);
    let got = 0;
    while (got < bytes.length) {
      const n = file.readSync(bytes.subarray(got));
      if (n === null) break;
      got += n;
    }
    bytes = bytes.subarray(0, got);
  } finally {
    file.close();
  }
  parseHosts(hostsText(path, bytes), `"${path}"`);
}

async function readHosts(path: string, resolverName: string, config: Config): Promise<HostEntry[]> {
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
  if (
    hit && hit.mtimeMs === mtimeMs && hit.size === stat.size && hit.dev === stat.dev &&
    hit.ino === stat.ino
  ) {
    if (!hit.checked.has(config)) {
      refuseOwnPath(config, path, "filename", stat);
      hit.checked.add(config);
    }
    return hit.entries;
  }
  // one handle for the check and the read: the file checked is the file read
  let file: Deno.FsFile;
  try {
    file = await Deno.open(path);
  } catch (err) {
    throw machineError(`Cannot read hosts file ${what}: ${(err as Error).name}`);
  }
  let opened: Deno.FileInfo;
  let bytes: Uint8Array | undefined;
  try {
    opened = await file.stat();
    if (!opened.isFile) throw machineError(`Cannot read hosts file ${what}: not a regular file`);
    refuseOwnPath(config, path, "filename", opened);
    bytes = await readAllUpTo(file, MAX_FILE_BYTES);
  } catch (err) {
    if (err instanceof ParameterError) throw err;
    throw machineError(`Cannot read hosts file ${what}: ${(err as Error).name}`);
  } finally {
    file.close();
  }
  if (bytes === undefined) throw machineError(`Cannot read hosts file ${what}: too large`);
  const entries = parseHosts(hostsText(path, bytes), what);
  if (cache.size >= MAX_CACHED_FILES) cache.delete(cache.keys().next().value!);
  const checked = new WeakSet<Config>([config]);
  cache.set(path, {
    mtimeMs: opened.mtime?.getTime() ?? 0,
    size: opened.size,
    dev: opened.dev,
    ino: opened.ino,
    entries,
    checked,
  });
  return entries;
}

class HostsSource implements MachineSource {
  constructor(readonly path: string, readonly name: string, readonly config: Config) {}

  async machines(filter: MachineFilter): Promise<Machine[]> {
    const entries = await readHosts(this.path, this.name, this.config);
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
    if (config.filename === undefined) return;
    const path = hostsFilePath(deps.config.storage.dataDir, config.filename);
    checkHostsFile(deps.config, path);
  },
  open(deps: Deps, name: string, config: Record<string, string>): MachineSource {
    const filename = config.filename;
    if (filename === undefined || filename === "") {
      throw machineError(`Machine resolver "${name}" has no filename`);
    }
    const path = hostsFilePath(deps.config.storage.dataDir, filename);
    return new HostsSource(path, name, deps.config);
  },
  test() {
    return Promise.resolve({ ok: false, description: "Not Implemented" });
  },
};
