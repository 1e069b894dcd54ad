/**
 * The audit log: one row per request. A request's row is committed before
 * its answer leaves: rows of concurrent requests share commits (SQLite: the
 * connection's write group, with the hot-path writes of the same moment;
 * PostgreSQL: one insert for the rows that arrived while the previous one
 * ran), and each caller waits only for the commit that holds its row.
 *
 * @module
 */
import type { Db } from "../../db/schema.ts";
import { ParameterError, PolicyError } from "../../errors.ts";
import * as store from "./audit_store.ts";
import type { AuditScope } from "./audit_store.ts";
import { AUDIT_FILTER_COLUMNS, type AuditEntry } from "./model.ts";
import type { AuditWriter } from "./writer.ts";

export type { AuditScope } from "./audit_store.ts";
export { auditScopeOf } from "./scope.ts";
export type { AuditEntry } from "./model.ts";
export {
  AUDIT_QUEUE_LIMIT,
  AUDIT_RETRY_MAX_MS,
  AUDIT_RETRY_MIN_MS,
  AuditWriter,
  type AuditWriterOptions,
} from "./writer.ts";

/** Serials for the audit's serial column: comma-separated, as many as fit its 40 characters. */
export function auditSerials(serials: readonly string[]): string {
  let text = "";
  for (const serial of serials) {
    const next = text === "" ? serial : `${text},${serial}`;
    if (next.length > 40) break;
    text = next;
  }
  return text;
}

/** Creates an empty entry to be filled while a request runs. */
export function newAuditEntry(ts: number, action: string, node: string): AuditEntry {
  return {
    ts,
    action,
    success: false,
    serial: "",
    tokenType: "",
    user: "",
    realm: "",
    resolver: "",
    administrator: "",
    client: "",
    userAgent: "",
    info: "",
    policies: "",
    durationMs: 0,
    node,
    requestId: "",
    authentication: "",
  };
}

/** One row of `GET /audit/` in privacyIDEA's column names. */
export interface AuditItem {
  number: number;
  date: string;
  startdate: string;
  duration: string;
  action: string;
  success: number;
  serial: string;
  token_type: string;
  user: string;
  realm: string;
  resolver: string;
  administrator: string;
  action_detail: string;
  info: string;
  privacyidea_server: string;
  client: string;
  user_agent: string;
  policies: string;
  request_id: string;
  authentication: string;
}

/** privacyIDEA's shape of `GET /audit/`; `hide_audit_columns` leaves columns out. */
export interface AuditPage {
  auditcolumns: string[];
  auditdata: Partial<AuditItem>[];
  count: number;
  current: number;
  prev: number | null;
  next: number | null;
}

const AUDIT_COLUMNS = [
  "number",
  "date",
  "startdate",
  "duration",
  "action",
  "success",
  "authentication",
  "serial",
  "token_type",
  "user",
  "realm",
  "resolver",
  "administrator",
  "action_detail",
  "info",
  "privacyidea_server",
  "client",
  "user_agent",
  "policies",
  "request_id",
];

const SEARCH_FLUSH_WAIT_MS = 10_000;

// privacyIDEA's parse_timedelta: [+-]<n><unit>, spaces allowed between the parts
const TIMELIMIT_REGEXP = /^\s*([+-]?)\s*(\d{1,12})\s*([smhdy])\s*$/;
const UNIT_MS: Record<string, number> = {
  s: 1e3,
  m: 60e3,
  h: 3600e3,
  d: 86400e3,
  y: 365 * 86400e3,
};

function intParam(name: string, raw: unknown, fallback: number, max: number): number {
  if (raw === undefined || raw === "") return fallback;
  const n = typeof raw === "number" ? raw : /^\d+$/.test(String(raw)) ? Number(raw) : NaN;
  if (!Number.isInteger(n) || n < 1 || n > max) {
    throw new ParameterError(
      `Cannot parse parameter "${name}": expected an integer from 1 to ${max}, got "${raw}"`,
    );
  }
  return n;
}

/** A time span like privacyIDEA's timelimit (`10d`, `-30m`, `2 y`; m = minutes) in ms. */
function timelimitMs(text: string): number | undefined {
  const m = text.match(TIMELIMIT_REGEXP);
  if (!m) return undefined;
  return (m[1] === "-" ? -1 : 1) * Number(m[2]) * UNIT_MS[m[3]];
}

/** Options of {@link searchAudit}: what the caller may read, and the policies' values. */
export interface AuditSearchOptions {
  /** An admin's realm limit (see {@link auditScopeOf}); absent: every row. */
  scope?: AuditScope;
  /** A user reads only the rows about themselves. */
  owner?: { user: string; realm: string };
  /** `auditlog_age`: replaces the client's `timelimit`. */
  age?: string;
  /** `hide_audit_columns`: columns left out of rows and `auditcolumns`. */
  hiddenColumns?: readonly string[];
}

/** The rows a search or download selects: the filters, `success`, the time limit, the scope. */
function selection(
  deps: { clock: { now(): number } },
  params: Record<string, unknown>,
  options: AuditSearchOptions,
): Omit<store.AuditQuery, "page" | "pageSize" | "ascending"> {
  const filters: store.AuditQuery["filters"] = {};
  const aliases: Record<string, (typeof AUDIT_FILTER_COLUMNS)[number]> = {
    privacyidea_server: "node",
  };
  for (const [key, value] of Object.entries(params)) {
    const column = aliases[key] ??
      ((AUDIT_FILTER_COLUMNS as readonly string[]).includes(key) ? key : undefined);
    if (column === undefined) continue;
    if (typeof value !== "string") {
      throw new ParameterError(`Cannot parse parameter "${key}": expected a string`);
    }
    filters[column as (typeof AUDIT_FILTER_COLUMNS)[number]] = value;
  }
  let success: boolean | undefined;
  if (params.success !== undefined && params.success !== "") {
    const s = String(params.success).toLowerCase();
    if (["1", "true"].includes(s)) success = true;
    else if (["0", "false"].includes(s)) success = false;
    else {throw new ParameterError(
        `Cannot parse parameter "success": expected 1 or 0, got "${params.success}"`,
      );}
  }
  let since: number | undefined;
  if (options.age !== undefined) {
    const ms = timelimitMs(options.age);
    if (ms === undefined) {
      // privacyIDEA fails with an unexpected error here; a clear refusal instead of every row
      throw new PolicyError(
        `The policy action "auditlog_age" needs a time like 10d, 4h or 30m, got "${options.age}"`,
      );
    }
    since = deps.clock.now() - ms;
  } else if (params.timelimit !== undefined && params.timelimit !== "") {
    const ms = timelimitMs(String(params.timelimit));
    if (ms === undefined) {
      throw new ParameterError(
        `Cannot parse parameter "timelimit": expected e.g. "2h" or "7d", got "${params.timelimit}"`,
      );
    }
    since = deps.clock.now() - ms;
  }
  return { scope: options.scope, owner: options.owner, filters, success, since };
}

/**
 * `GET /audit/`: filters (`*` wildcard), `page`, `page_size`, `sortorder`,
 * `timelimit`, within `scope` (see {@link auditScopeOf}) or `owner`; the filters only narrow
 * it.
 */
export async function searchAudit(
  deps: { db: Db; audit: AuditWriter; clock: { now(): number } },
  params: Record<string, unknown>,
  options: AuditSearchOptions = {},
): Promise<AuditPage> {
  // queued rows first; while the database cannot take them, the search does not wait forever
  await deps.audit.flush({ timeoutMs: SEARCH_FLUSH_WAIT_MS });
  const page = intParam("page", params.page, 1, 1_000_000);
  const pageSize = intParam("page_size", params.page_size, 15, 1000);
  const sortorder = String(params.sortorder ?? "desc").toLowerCase();
  if (sortorder !== "asc" && sortorder !== "desc") {
    throw new ParameterError(
      `Cannot parse parameter "sortorder": expected asc or desc, got "${sortorder}"`,
    );
  }
  const { rows, count } = await store.searchEntries(deps.db, {
    ...selection(deps, params, options),
    page,
    pageSize,
    ascending: sortorder === "asc",
  });
  const hidden = new Set(options.hiddenColumns ?? []);
  const visible = (item: AuditItem): Partial<AuditItem> =>
    hidden.size === 0 ? item : Object.fromEntries(
      Object.entries(item).filter(([k]) => !hidden.has(k)),
    ) as Partial<AuditItem>;
  return {
    auditcolumns: AUDIT_COLUMNS.filter((col) => !hidden.has(col)),
    auditdata: rows.map((r) =>
      visible({
        number: r.id,
        date: new Date(r.ts + r.durationMs).toISOString(),
        startdate: new Date(r.ts).toISOString(),
        duration: (r.durationMs / 1000).toFixed(6),
        action: r.action,
        success: r.success ? 1 : 0,
        serial: r.serial,
        token_type: r.tokenType,
        user: r.user,
        realm: r.realm,
        resolver: r.resolver,
        administrator: r.administrator,
        action_detail: "",
        info: r.info,
        privacyidea_server: r.node,
        client: r.client,
        user_agent: r.userAgent,
        policies: r.policies,
        request_id: r.requestId,
        authentication: r.authentication,
      })
    ),
    count,
    current: page,
    prev: page > 1 ? page - 1 : null,
    next: page * pageSize < count ? page + 1 : null,
  };
}

// privacyIDEA's CSV columns (auditmodules/sqlaudit.py audit_entry_to_dict), in its order
const CSV_COLUMNS = [
  "number",
  "date",
  "sig_check",
  "missing_line",
  "action",
  "authentication",
  "success",
  "serial",
  "token_type",
  "container_serial",
  "container_type",
  "user",
  "realm",
  "resolver",
  "administrator",
  "action_detail",
  "info",
  "privacyidea_server",
  "policies",
  "client",
  "user_agent",
  "user_agent_version",
  "log_level",
  "clearance_level",
  "startdate",
  "duration",
  "thread_id",
] as const;

const CSV_BATCH = 500;

/** An ISO time without zone and with microseconds, as Python's `datetime.isoformat()`. */
function isoLocal(ms: number): string {
  return `${new Date(ms).toISOString().slice(0, 23)}000`;
}

/** One value as privacyIDEA writes it: in single quotes; quotes doubled, line breaks as spaces. */
function csvValue(value: string | number | null): string {
  const text = value === null ? "None" : String(value);
  return `'${text.replaceAll("'", "''").replace(/[\r\n]+/g, " ")}'`;
}

function csvLine(r: store.AuditRow, hidden: ReadonlySet<string>): string {
  const values: Record<(typeof CSV_COLUMNS)[number], string | number | null> = {
    number: r.id,
    date: isoLocal(r.ts + r.durationMs),
    // Tessera does not sign audit rows (privacyIDEA: OK/FAIL); no row is ever missing either
    sig_check: null,
    missing_line: null,
    action: r.action,
    authentication: r.authentication,
    success: r.success ? 1 : 0,
    serial: r.serial,
    token_type: r.tokenType,
    container_serial: null,
    container_type: null,
    user: r.user,
    realm: r.realm,
    resolver: r.resolver,
    administrator: r.administrator,
    action_detail: "",
    info: r.info,
    privacyidea_server: r.node,
    policies: r.policies,
    client: r.client,
    user_agent: r.userAgent,
    user_agent_version: null,
    log_level: null,
    clearance_level: null,
    startdate: isoLocal(r.ts),
    duration: (r.durationMs / 1000).toFixed(6),
    thread_id: null,
  };
  return CSV_COLUMNS.map((c) => csvValue(hidden.has(c) ? "" : values[c])).join(",") + "\n";
}

/**
 * `GET /audit/<file>.csv`: the selected rows (filters, `success`, `timelimit` or `auditlog_age`,
 * the admin's scope, as {@link searchAudit}) oldest first, one line each in privacyIDEA's
 * column order, no header; `hide_audit_columns` empties those columns. The parameters are
 * checked before the first line; the lines are read from the database in batches.
 */
export async function auditCsv(
  deps: { db: Db; audit: AuditWriter; clock: { now(): number } },
  params: Record<string, unknown>,
  options: AuditSearchOptions = {},
): Promise<AsyncGenerator<string>> {
  const query = selection(deps, params, options);
  await deps.audit.flush({ timeoutMs: SEARCH_FLUSH_WAIT_MS });
  const hidden = new Set(options.hiddenColumns ?? []);
  // the rows up to the newest one now: a download ends even while requests keep writing rows
  const newest = await store.newestId(deps.db);
  return (async function* () {
    let after = 0;
    while (true) {
      const rows = await store.entriesAfter(deps.db, query, after, newest, CSV_BATCH);
      for (const r of rows) yield csvLine(r, hidden);
      if (rows.length < CSV_BATCH) return;
      after = rows[rows.length - 1].id;
    }
  })();
}

/** One client of `GET /client/`. */
export interface ClientApplication {
  ip: string;
  hostname: null;
  /** An HTTP date (`Mon, 02 Mar 2026 08:00:00 GMT`), as privacyIDEA serialises it. */
  lastseen: string;
}

/**
 * `GET /client/`: the clients that called `/validate/check`, `radiuscheck` or `samlcheck`,
 * grouped by user agent (`unknown` when they sent none), each address with the latest such
 * request. Read from the audit log: privacyIDEA keeps a table written by every check, Tessera
 * keeps that write off the check.
 */
export async function clientApplications(
  deps: { db: Db; audit: AuditWriter },
): Promise<Record<string, ClientApplication[]>> {
  await deps.audit.flush({ timeoutMs: SEARCH_FLUSH_WAIT_MS });
  const out: Record<string, ClientApplication[]> = {};
  for (const r of await store.clientApplications(deps.db)) {
    const type = r.userAgent === "" ? "unknown" : r.userAgent;
    (out[type] ??= []).push({
      ip: r.client,
      hostname: null,
      lastseen: new Date(r.lastseen).toUTCString(),
    });
  }
  return out;
}
