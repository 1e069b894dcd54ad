import type { Db } from "../../db/schema.ts";
import { matchStar } from "../../db/like.ts";
import type { AuditEntry } from "./mod.ts";

/** Searchable audit columns (`GET /audit/` filters). */
export const AUDIT_FILTER_COLUMNS = [
  "action",
  "serial",
  "token_type",
  "user",
  "realm",
  "resolver",
  "administrator",
  "client",
  "user_agent",
  "info",
  "node",
  "policies",
] as const;

/** A stored audit row. */
export interface AuditRow extends AuditEntry {
  id: number;
}

/** Writes many rows in one transaction. */
export async function insertEntries(db: Db, entries: AuditEntry[]): Promise<void> {
  if (entries.length === 0) return;
  await db.transaction().execute(async (trx) => {
    // chunks keep the statement below SQLite's bound-parameter limit
    for (let i = 0; i < entries.length; i += 50) {
      await trx.insertInto("audit").values(
        entries.slice(i, i + 50).map((e) => ({
          ts: e.ts,
          action: e.action,
          success: e.success ? 1 : 0,
          serial: e.serial,
          token_type: e.tokenType,
          user: e.user,
          realm: e.realm,
          resolver: e.resolver,
          administrator: e.administrator,
          client: e.client,
          user_agent: e.userAgent,
          info: e.info,
          policies: e.policies,
          duration_ms: e.durationMs,
          node: e.node,
        })),
      ).execute();
    }
  });
}

/** Filter for {@link searchEntries}; string filters take `*` as the only wildcard. */
export interface AuditQuery {
  filters: Partial<Record<(typeof AUDIT_FILTER_COLUMNS)[number], string>>;
  success?: boolean;
  since?: number;
  page: number;
  pageSize: number;
  ascending: boolean;
}

/** One page of matching rows and the total count. */
export async function searchEntries(
  db: Db,
  q: AuditQuery,
): Promise<{ rows: AuditRow[]; count: number }> {
  let query = db.selectFrom("audit");
  for (const [col, value] of Object.entries(q.filters)) {
    if (value === undefined || value === "" || value === "*") continue;
    query = query.where(matchStar(col, value));
  }
  if (q.success !== undefined) query = query.where("success", "=", q.success ? 1 : 0);
  if (q.since !== undefined) query = query.where("ts", ">=", q.since);
  const total = await query.select((eb) => eb.fn.countAll<number>().as("n"))
    .executeTakeFirstOrThrow();
  const rows = await query.selectAll()
    .orderBy("id", q.ascending ? "asc" : "desc")
    .limit(q.pageSize)
    .offset((q.page - 1) * q.pageSize)
    .execute();
  return {
    count: Number(total.n),
    rows: rows.map((r) => ({
      id: r.id,
      ts: Number(r.ts),
      action: r.action,
      success: r.success === 1,
      serial: r.serial,
      tokenType: r.token_type,
      user: r.user,
      realm: r.realm,
      resolver: r.resolver,
      administrator: r.administrator,
      client: r.client,
      userAgent: r.user_agent,
      info: r.info,
      policies: r.policies,
      durationMs: r.duration_ms,
      node: r.node,
    })),
  };
}
