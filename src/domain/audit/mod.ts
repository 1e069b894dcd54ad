/**
 * The audit log: one row per request. Rows are queued and written in batches
 * so the hot path never waits for an audit insert.
 *
 * @module
 */
import type { Db } from "../../db/schema.ts";
import type { Logger } from "../../lib/logger.ts";
import { ParameterError } from "../../errors.ts";
import * as store from "./audit_store.ts";
import { AUDIT_FILTER_COLUMNS } from "./audit_store.ts";

/** One audit row as written. Never holds passwords, PINs, OTPs or secrets. */
export interface AuditEntry {
  ts: number;
  action: string;
  success: boolean;
  serial: string;
  tokenType: string;
  user: string;
  realm: string;
  resolver: string;
  administrator: string;
  client: string;
  userAgent: string;
  info: string;
  policies: string;
  durationMs: number;
  node: string;
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
  };
}

// Larger batches dirty each index page once for more rows: at 20 ms / 500 rows a
// row cost ~16 µs to write under the unknown-user load, at 100 ms / 2000 ~10 µs
// (with a longer stall per batch: p99 13 -> 21 ms). 50 ms / 1000 is between.
const FLUSH_DELAY_MS = 50;
const FLUSH_BATCH = 1000;

/** Queues audit rows and writes them in batches, in one transaction each. */
export class AuditWriter {
  readonly #db: Db;
  readonly #log: Logger;
  #queue: AuditEntry[] = [];
  #timer: ReturnType<typeof setTimeout> | undefined;
  #flushing: Promise<void> = Promise.resolve();

  constructor(db: Db, log: Logger) {
    this.#db = db;
    this.#log = log;
  }

  /** Queues one row; it is written within {@link FLUSH_DELAY_MS} milliseconds. */
  write(entry: AuditEntry): void {
    this.#queue.push(entry);
    if (this.#queue.length >= FLUSH_BATCH) void this.flush();
    else if (this.#timer === undefined) {
      this.#timer = setTimeout(() => void this.flush(), FLUSH_DELAY_MS);
    }
  }

  /** Writes everything queued so far (reads of the log call this first). */
  flush(): Promise<void> {
    if (this.#timer !== undefined) {
      clearTimeout(this.#timer);
      this.#timer = undefined;
    }
    const batch = this.#queue;
    this.#queue = [];
    this.#flushing = this.#flushing.then(async () => {
      if (batch.length === 0) return;
      try {
        await store.insertEntries(this.#db, batch);
      } catch (err) {
        this.#log.error("Cannot write audit rows", { rows: batch.length, error: err as Error });
      }
    });
    return this.#flushing;
  }
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
}

/** privacyIDEA's shape of `GET /audit/`. */
export interface AuditPage {
  auditcolumns: string[];
  auditdata: AuditItem[];
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
];

const TIMELIMIT_REGEXP = /^(\d+)\s*([smhdy])$/;
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

/** `GET /audit/`: filters (`*` wildcard), `page`, `page_size`, `sortorder`, `timelimit`. */
export async function searchAudit(
  deps: { db: Db; audit: AuditWriter; clock: { now(): number } },
  params: Record<string, unknown>,
): Promise<AuditPage> {
  await deps.audit.flush();
  const page = intParam("page", params.page, 1, 1_000_000);
  const pageSize = intParam("page_size", params.page_size, 15, 1000);
  const sortorder = String(params.sortorder ?? "desc").toLowerCase();
  if (sortorder !== "asc" && sortorder !== "desc") {
    throw new ParameterError(
      `Cannot parse parameter "sortorder": expected asc or desc, got "${sortorder}"`,
    );
  }
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
  if (params.timelimit !== undefined && params.timelimit !== "") {
    const m = String(params.timelimit).match(TIMELIMIT_REGEXP);
    if (!m) {
      throw new ParameterError(
        `Cannot parse parameter "timelimit": expected e.g. "2h" or "7d", got "${params.timelimit}"`,
      );
    }
    since = deps.clock.now() - Number(m[1]) * UNIT_MS[m[2]];
  }
  const { rows, count } = await store.searchEntries(deps.db, {
    filters,
    success,
    since,
    page,
    pageSize,
    ascending: sortorder === "asc",
  });
  return {
    auditcolumns: AUDIT_COLUMNS,
    auditdata: rows.map((r) => ({
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
    })),
    count,
    current: page,
    prev: page > 1 ? page - 1 : null,
    next: page * pageSize < count ? page + 1 : null,
  };
}
