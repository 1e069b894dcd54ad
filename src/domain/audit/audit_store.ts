import { CompiledQuery, type Expression, type Selectable, sql, type SqlBool } from "kysely";
import type { AuditTable, Db } from "../../db/schema.ts";
import { matchStar } from "../../db/like.ts";
import { executeDirectOrWait, type LockWait } from "../../db/direct.ts";
import { type AUDIT_FILTER_COLUMNS, type AuditEntry, fitAuditEntry } from "./model.ts";

/** A stored audit row. */
export interface AuditRow extends AuditEntry {
  id: number;
}

const AUDIT_INSERT_COLUMNS = [
  "ts",
  "action",
  "success",
  "serial",
  "token_type",
  "user",
  "realm",
  "resolver",
  "administrator",
  "client",
  "user_agent",
  "info",
  "policies",
  "duration_ms",
  "node",
  "request_id",
  "authentication",
] as const;

const CHUNK = 50;
const insertSql = new WeakMap<Db, Map<number, string>>();

// Inserts are compiled once per database and row count and reused with fresh
// parameters: building a Kysely query per batch costs more than the insert.
function compiledInsert(db: Db, rows: number): string {
  let byCount = insertSql.get(db);
  if (byCount === undefined) insertSql.set(db, byCount = new Map());
  let text = byCount.get(rows);
  if (text === undefined) {
    const row = Object.fromEntries(AUDIT_INSERT_COLUMNS.map((c) => [c, ""]));
    text = db.insertInto("audit").values(Array(rows).fill(row)).compile().sql;
    byCount.set(rows, text);
  }
  return text;
}

function pushParams(params: unknown[], entry: AuditEntry): void {
  // every value fits its column: PostgreSQL would refuse the row, SQLite keep any length
  const e = fitAuditEntry(entry);
  params.push(
    e.ts,
    e.action,
    e.success ? 1 : 0,
    e.serial,
    e.tokenType,
    e.user,
    e.realm,
    e.resolver,
    e.administrator,
    e.client,
    e.userAgent,
    e.info,
    e.policies,
    e.durationMs,
    e.node,
    e.requestId,
    e.authentication,
  );
}

/** Writes many rows in one transaction (one statement, and no transaction, for up to 50). */
export async function insertEntries(db: Db, entries: AuditEntry[]): Promise<void> {
  if (entries.length === 0) return;
  const statement = (chunk: AuditEntry[]) => {
    const params: unknown[] = [];
    for (const e of chunk) pushParams(params, e);
    return CompiledQuery.raw(compiledInsert(db, chunk.length), params);
  };
  // a single statement is atomic on its own: no BEGIN and COMMIT round trips
  if (entries.length <= CHUNK) {
    await db.executeQuery(statement(entries));
    return;
  }
  await db.transaction().execute(async (trx) => {
    for (let i = 0; i < entries.length; i += CHUNK) {
      await trx.executeQuery(statement(entries.slice(i, i + CHUNK)));
    }
  });
}

/**
 * Inserts one row now, in the SQLite connection's write group (it commits
 * with the hot-path writes of the same moment); returns the group's
 * `committed` promise. Undefined when that is not possible (PostgreSQL, or
 * a transaction is open on the connection): the caller queues the row. A
 * {@link LockWait} when another process holds the write lock: the row was not
 * written; the caller awaits the wait and tries again.
 */
export function insertEntryNow(
  db: Db,
  entry: AuditEntry,
): { committed: Promise<void> | undefined } | LockWait | undefined {
  const params: unknown[] = [];
  pushParams(params, entry);
  const res = executeDirectOrWait(db, compiledInsert(db, 1), params);
  if (res === undefined || "lockWait" in res) return res;
  return { committed: res.committed };
}

/**
 * The rows an admin limited to realms may see at all: rows of those realms,
 * and the admin's own actions (exact values, no wildcards). The filters of a
 * search only narrow it.
 */
export interface AuditScope {
  realms: readonly string[];
  administrator: string;
  /** The admin's realm (a superuser realm), "" for a local admin. */
  adminRealm: string;
}

/** Filter for {@link searchEntries}; string filters take `*` as the only wildcard. */
export interface AuditQuery {
  /** Absent: every row. */
  scope?: AuditScope;
  /** Only the rows about this user (a user reading the log). */
  owner?: { user: string; realm: string };
  filters: Partial<Record<(typeof AUDIT_FILTER_COLUMNS)[number], string>>;
  success?: boolean;
  since?: number;
  page: number;
  pageSize: number;
  ascending: boolean;
}

// realm names are compared without case, as realms are named
const lowerRealm = sql<string>`lower(${sql.ref("realm")})`;

// privacyIDEA's rule (auditmodules/sqlaudit.py _create_filter): a realm-limited admin sees the
// rows of the allowed realms, and the rows naming them as administrator (in their own realm,
// when they are a realm's admin)
function scopeCondition(scope: AuditScope): Expression<SqlBool> {
  const realms = scope.realms.map((r) => r.toLowerCase());
  const inRealms = realms.length === 0
    ? sql<SqlBool>`1 = 0`
    : sql<SqlBool>`${lowerRealm} in (${sql.join(realms)})`;
  const isAdmin = sql<SqlBool>`${sql.ref("administrator")} = ${scope.administrator}`;
  const own = scope.adminRealm === ""
    ? isAdmin
    : sql<SqlBool>`(${isAdmin} and ${lowerRealm} = ${scope.adminRealm.toLowerCase()})`;
  return sql<SqlBool>`(${inRealms} or ${own})`;
}

/** The rows `q` selects (its scope, owner and filters), not yet ordered or paged. */
function matching(db: Db, q: Omit<AuditQuery, "page" | "pageSize" | "ascending">) {
  let query = db.selectFrom("audit");
  if (q.scope) query = query.where(scopeCondition(q.scope));
  if (q.owner) {
    query = query.where("user", "=", q.owner.user)
      .where(lowerRealm, "=", q.owner.realm.toLowerCase());
  }
  for (const [col, value] of Object.entries(q.filters)) {
    if (value === undefined || value === "" || value === "*") continue;
    query = query.where(matchStar(col, value));
  }
  if (q.success !== undefined) query = query.where("success", "=", q.success ? 1 : 0);
  if (q.since !== undefined) query = query.where("ts", ">=", q.since);
  return query;
}

/** One page of matching rows and the total count. */
export async function searchEntries(
  db: Db,
  q: AuditQuery,
): Promise<{ rows: AuditRow[]; count: number }> {
  const query = matching(db, q);
  const total = await query.select((eb) => eb.fn.countAll<number>().as("n"))
    .executeTakeFirstOrThrow();
  const rows = await query.selectAll()
    .orderBy("id", q.ascending ? "asc" : "desc")
    .limit(q.pageSize)
    .offset((q.page - 1) * q.pageSize)
    .execute();
  return { count: Number(total.n), rows: rows.map(toAuditRow) };
}

/**
 * Up to `limit` matching rows with an id above `afterId` and up to `upToId`, oldest first: the CSV download reads
 * the log in such batches, so a long log is never held at once and rows written meanwhile
 * neither repeat nor shift the rest.
 */
export async function entriesAfter(
  db: Db,
  q: Omit<AuditQuery, "page" | "pageSize" | "ascending">,
  afterId: number,
  upToId: number,
  limit: number,
): Promise<AuditRow[]> {
  const rows = await matching(db, q).selectAll().where("id", ">", afterId)
    .where("id", "<=", upToId).orderBy("id", "asc").limit(limit).execute();
  return rows.map(toAuditRow);
}

/** The id of the newest audit row (0 when there is none). */
export async function newestId(db: Db): Promise<number> {
  const row = await db.selectFrom("audit").select((eb) => eb.fn.max("id").as("id"))
    .executeTakeFirst();
  return Number(row?.id ?? 0);
}

function toAuditRow(r: Selectable<AuditTable>): AuditRow {
  return ({
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
    requestId: r.request_id,
    authentication: r.authentication,
  });
}

const CHECK_ACTIONS = ["GET /validate/check", "POST /validate/check"];

/**
 * Number of `/validate/check` and `/auth` audit rows of a user since `since` with the outcome.
 * Failures at `/validate/check` are those that answered (privacyIDEA's filter
 * `authentication != CHALLENGE`, under which a row without an answer counts neither): a
 * challenge is no failed authentication.
 */
export async function countAuthAttempts(
  db: Db,
  q: { user: string; realm: string; since: number; isSuccess: boolean },
): Promise<number> {
  let query = db.selectFrom("audit")
    .select((eb) => eb.fn.countAll<number>().as("n"))
    .where("user", "=", q.user)
    .where("realm", "=", q.realm)
    .where("ts", ">=", q.since)
    .where("success", "=", q.isSuccess ? 1 : 0);
  // privacyIDEA counts /validate/check and /auth (not radiuscheck or samlcheck)
  query = q.isSuccess
    ? query.where("action", "in", [...CHECK_ACTIONS, "POST /auth"])
    : query.where((eb) =>
      eb.or([
        eb("action", "=", "POST /auth"),
        eb.and([
          eb("action", "in", CHECK_ACTIONS),
          eb("authentication", "not in", ["CHALLENGE", ""]),
        ]),
      ])
    );
  const row = await query.executeTakeFirstOrThrow();
  return Number(row.n);
}

/** The `/validate/` actions whose callers `GET /client/` lists (privacyIDEA's clientapplication). */
export const CLIENT_ACTIONS = ["check", "radiuscheck", "samlcheck"].flatMap((a) => [
  `GET /validate/${a}`,
  `POST /validate/${a}`,
]);

/**
 * Each client address and user agent that called an authentication endpoint, with the time
 * of its latest such request (over every node).
 */
export async function clientApplications(
  db: Db,
): Promise<{ client: string; userAgent: string; lastseen: number }[]> {
  const rows = await db.selectFrom("audit")
    .select((eb) => ["client", "user_agent", eb.fn.max("ts").as("lastseen")])
    .where("action", "in", CLIENT_ACTIONS)
    .groupBy(["client", "user_agent"])
    .orderBy("user_agent").orderBy("client").execute();
  return rows.map((r) => ({
    client: r.client,
    userAgent: r.user_agent,
    lastseen: Number(r.lastseen),
  }));
}
