/**
 * `passwdresolver`: users from a passwd-format file, re-read whenever the
 * file's identity, modification time or size changes (spec 03 §2.1). Never
 * editable. A file that is not in passwd format (`/etc/shadow`, a key, any
 * binary) is refused as a whole, and never one of Tessera's own files is read.
 *
 * @module
 */
import type { Config } from "../../config.ts";
import { ParameterError, ResolverError } from "../../errors.ts";
import { verifyCryptHash } from "../../lib/unix_crypt.ts";
import { readAllUpTo, refuseOwnPath } from "./paths.ts";
import {
  emptyUserInfo,
  type ResolverTestResult,
  type UserInfo,
  type UserResolver,
} from "./types.ts";

interface PasswdEntry {
  info: UserInfo;
  hash: string;
}

interface PasswdFile {
  mtime: number;
  size: number;
  dev: number;
  ino: number | null;
  byLogin: Map<string, PasswdEntry>;
  byUid: Map<string, PasswdEntry>;
  entries: PasswdEntry[];
  /** Configurations whose own-file check this file version passed. */
  checked: WeakSet<Config>;
}

// keyed by absolute path; every access re-checks identity, mtime and size, so a
// changed or replaced file (e.g. swapped for a symlink) is re-read and re-checked
const FILE_CACHE = new Map<string, PasswdFile>();
const EMAIL_REGEXP = /^[^@\s]+@[^@\s]+\.[^@\s]+$/;
const MAX_FILE_BYTES = 64 * 1024 * 1024;
const UINT_REGEXP = /^\d+$/;
// deno-lint-ignore no-control-regex
const CONTROL_REGEXP = /[\u0000-\u0008\u000b-\u001f\u007f]/;

function notPasswd(path: string, why: string): ParameterError {
  // the offending line is never echoed: the file may be any file the server can read
  return new ParameterError(`Cannot use file "${path}": it is not a passwd file (${why})`);
}

/**
 * Decodes `bytes` and checks that every entry looks like a passwd line
 * `name:password:uid:gid[:gecos[:home[:shell]]]` with numeric uid and gid;
 * returns the text. `/etc/shadow` (nine fields), keys and binary files fail
 * with a ParameterError that names no content of the file.
 */
export function checkPasswdText(path: string, bytes: Uint8Array): string {
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    throw notPasswd(path, "it is not UTF-8 text");
  }
  const lines = text.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    if (line.trim() === "" || line.startsWith("#")) continue;
    if (CONTROL_REGEXP.test(line)) throw notPasswd(path, `line ${i + 1} has control characters`);
    // NIS compat entries ("+", "+@group", "-name") in a system passwd file
    if (line.startsWith("+") || line.startsWith("-")) continue;
    const f = line.split(":");
    if (
      f.length < 4 || f.length > 7 || f[0].trim() === "" || !UINT_REGEXP.test(f[2]) ||
      !UINT_REGEXP.test(f[3])
    ) {
      throw notPasswd(path, `line ${i + 1} is not name:password:uid:gid:gecos:home:shell`);
    }
  }
  return text;
}

/** Parses passwd text into entries (spec 03 §2.1 field rules). */
export function parsePasswd(text: string): PasswdEntry[] {
  const out: PasswdEntry[] = [];
  for (const line of text.split(/\r?\n/)) {
    if (line.trim() === "" || line.startsWith("#")) continue;
    const f = splitFields(line, 8);
    if (f.length < 3 || f[0] === "") continue;
    const gecos = f[4] ?? "";
    const items = gecos.split(",");
    const info = emptyUserInfo();
    info.username = f[0];
    info.userid = f[2];
    info.description = gecos;
    const fullName = (items[0] ?? "").trim();
    const space = fullName.indexOf(" ");
    info.givenname = space < 0 ? fullName : fullName.slice(0, space);
    info.surname = space < 0 ? "" : fullName.slice(space + 1).trim();
    if (items.length >= 4) {
      info.mobile = items[2] ?? "";
      info.phone = items[3] ?? "";
      info.email = items.slice(4).find((v) => EMAIL_REGEXP.test(v.trim()))?.trim() ?? "";
    }
    out.push({ info, hash: f[1] ?? "" });
  }
  return out;
}

function splitFields(line: string, max: number): string[] {
  const parts = line.split(":");
  if (parts.length <= max) return parts;
  return [...parts.slice(0, max - 1), parts.slice(max - 1).join(":")];
}

function cannotRead(path: string, why: string): ResolverError {
  return new ResolverError(`Cannot read passwd file "${path}": ${why}`);
}

function isSameVersion(cached: PasswdFile, stat: Deno.FileInfo): boolean {
  return cached.mtime === (stat.mtime?.getTime() ?? 0) && cached.size === stat.size &&
    cached.dev === stat.dev && cached.ino === stat.ino;
}

async function loadChecked(path: string, config?: Config): Promise<PasswdFile> {
  let stat: Deno.FileInfo;
  try {
    stat = await Deno.stat(path);
  } catch (err) {
    throw cannotRead(path, (err as Error).name);
  }
  if (!stat.isFile) throw cannotRead(path, "not a file");
  const cached = FILE_CACHE.get(path);
  if (cached && isSameVersion(cached, stat)) {
    if (config !== undefined && !cached.checked.has(config)) {
      refuseOwnPath(config, path, "fileName", stat);
      cached.checked.add(config);
    }
    return cached;
  }
  // one handle for the check and the read: the file checked is the file read
  let file: Deno.FsFile;
  try {
    file = await Deno.open(path);
  } catch (err) {
    throw cannotRead(path, (err as Error).name);
  }
  let opened: Deno.FileInfo;
  let bytes: Uint8Array | undefined;
  try {
    opened = await file.stat();
    if (!opened.isFile) throw cannotRead(path, "not a file");
    if (config !== undefined) refuseOwnPath(config, path, "fileName", opened);
    bytes = await readAllUpTo(file, MAX_FILE_BYTES);
  } catch (err) {
    if (err instanceof ParameterError || err instanceof ResolverError) throw err;
    throw cannotRead(path, (err as Error).name);
  } finally {
    file.close();
  }
  if (bytes === undefined) throw cannotRead(path, "the file is too large");
  const entries = parsePasswd(checkPasswdText(path, bytes));
  const loaded: PasswdFile = {
    mtime: opened.mtime?.getTime() ?? 0,
    size: opened.size,
    dev: opened.dev,
    ino: opened.ino,
    byLogin: new Map(),
    byUid: new Map(),
    entries,
    checked: new WeakSet(),
  };
  if (config !== undefined) loaded.checked.add(config);
  for (const e of entries) {
    if (!loaded.byLogin.has(e.info.username)) loaded.byLogin.set(e.info.username, e);
    if (!loaded.byUid.has(e.info.userid)) loaded.byUid.set(e.info.userid, e);
  }
  FILE_CACHE.set(path, loaded);
  return loaded;
}

/**
 * Checks a passwd file when a resolver is saved: refused when it is one of
 * Tessera's own files or not in passwd format. A file that does not exist yet
 * passes; it is checked again whenever it is read.
 */
export async function checkPasswdFile(path: string, config: Config): Promise<void> {
  refuseOwnPath(config, path, "fileName");
  try {
    await Deno.stat(path);
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return;
  }
  await loadChecked(path, config);
}

const TEXT_SEARCH = new Set(["username", "description", "email"]);

/** `*`-only glob match (anchored, case-sensitive). */
export function starMatch(pattern: string, value: string): boolean {
  if (!pattern.includes("*")) return pattern === value;
  const re = new RegExp(
    "^" + pattern.split("*").map((p) => p.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join(".*") +
      "$",
    "s",
  );
  return re.test(value);
}

function uidMatch(expr: string, uid: string): boolean {
  const n = Number(uid);
  const e = expr.trim();
  if (e === "*" || e === "") return true;
  const between = e.match(/^between\s+(-?\d+)\s*,\s*(-?\d+)$/i);
  if (between) return n >= Number(between[1]) && n <= Number(between[2]);
  const cmp = e.match(/^(>=|<=|=|>|<)\s*(-?\d+)$/);
  if (!cmp) return starMatch(e, uid);
  const v = Number(cmp[2]);
  switch (cmp[1]) {
    case "=":
      return n === v;
    case ">":
      return n > v;
    case ">=":
      return n >= v;
    case "<":
      return n < v;
    default:
      return n <= v;
  }
}

/**
 * Creates a passwd resolver over the absolute `path`. With `config`, every
 * version of the file read is checked against Tessera's own files.
 */
export function passwdResolver(
  name: string,
  path: string,
  options: { config?: Config } = {},
): UserResolver {
  const load = (p: string) => loadChecked(p, options.config);
  return {
    name,
    type: "passwdresolver",
    editable: false,
    async getUserId(login) {
      return (await load(path)).byLogin.get(login)?.info.userid;
    },
    async getUserInfo(uid) {
      const e = (await load(path)).byUid.get(uid);
      return e ? { ...e.info } : undefined;
    },
    async getUserList(search) {
      const file = await load(path);
      for (const key of Object.keys(search)) {
        if (!TEXT_SEARCH.has(key) && key !== "userid") return [];
      }
      return file.entries.filter((e) =>
        Object.entries(search).every(([k, v]) =>
          k === "userid" ? uidMatch(v, e.info.userid) : starMatch(v, e.info[k] ?? "")
        )
      ).map((e) => ({ ...e.info }));
    },
    async checkPass(uid, password) {
      const e = (await load(path)).byUid.get(uid);
      return e ? await verifyCryptHash(e.hash, password) : false;
    },
    addUser() {
      return Promise.reject(notEditable(name));
    },
    updateUser() {
      return Promise.reject(notEditable(name));
    },
    deleteUser() {
      return Promise.reject(notEditable(name));
    },
    async test(): Promise<ResolverTestResult> {
      try {
        const file = await load(path);
        return {
          success: true,
          description: `Resolver successfully loaded ${file.entries.length} users.`,
        };
      } catch (err) {
        // a refused file is a bad parameter (400), not a failed test
        if (err instanceof ParameterError) throw err;
        return { success: false, description: (err as Error).message };
      }
    },
  };
}

function notEditable(name: string): ResolverError {
  return new ResolverError(`Cannot change users of resolver "${name}": it is not editable`);
}
