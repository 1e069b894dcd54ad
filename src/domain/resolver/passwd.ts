/**
 * `passwdresolver`: users from a passwd-format file, re-read whenever the
 * file's modification time or size changes (spec 03 §2.1). Never editable.
 *
 * @module
 */
import { ResolverError } from "../../errors.ts";
import { verifyCryptHash } from "../../lib/crypt.ts";
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
  byLogin: Map<string, PasswdEntry>;
  byUid: Map<string, PasswdEntry>;
  entries: PasswdEntry[];
}

// keyed by absolute path; every access re-checks mtime/size, so a changed file is re-read
const FILE_CACHE = new Map<string, PasswdFile>();
const EMAIL_REGEXP = /^[^@\s]+@[^@\s]+\.[^@\s]+$/;
const MAX_FILE_BYTES = 64 * 1024 * 1024;

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

async function load(path: string): Promise<PasswdFile> {
  let stat: Deno.FileInfo;
  try {
    stat = await Deno.stat(path);
  } catch (err) {
    throw new ResolverError(`Cannot read passwd file "${path}": ${(err as Error).name}`);
  }
  if (!stat.isFile) throw new ResolverError(`Cannot read passwd file "${path}": not a file`);
  if (stat.size > MAX_FILE_BYTES) {
    throw new ResolverError(`Cannot read passwd file "${path}": the file is too large`);
  }
  const mtime = stat.mtime?.getTime() ?? 0;
  const cached = FILE_CACHE.get(path);
  if (cached && cached.mtime === mtime && cached.size === stat.size) return cached;
  let text: string;
  try {
    text = await Deno.readTextFile(path);
  } catch (err) {
    throw new ResolverError(`Cannot read passwd file "${path}": ${(err as Error).name}`);
  }
  const entries = parsePasswd(text);
  const file: PasswdFile = {
    mtime,
    size: stat.size,
    byLogin: new Map(),
    byUid: new Map(),
    entries,
  };
  for (const e of entries) {
    if (!file.byLogin.has(e.info.username)) file.byLogin.set(e.info.username, e);
    if (!file.byUid.has(e.info.userid)) file.byUid.set(e.info.userid, e);
  }
  FILE_CACHE.set(path, file);
  return file;
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

/** Creates a passwd resolver over the absolute `path`. */
export function passwdResolver(name: string, path: string): UserResolver {
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
        return { success: false, description: (err as Error).message };
      }
    },
  };
}

function notEditable(name: string): ResolverError {
  return new ResolverError(`Cannot change users of resolver "${name}": it is not editable`);
}
