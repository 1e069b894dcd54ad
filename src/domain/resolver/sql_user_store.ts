/**
 * SQL against a `sqlresolver`'s own database: the user table named by `Table`
 * with columns from `Map`. Identifiers go through Kysely's quoting (checked
 * against an identifier pattern first); values are always bound.
 *
 * @module
 */
import { CompiledQuery, Kysely, type RawBuilder, sql, type SqlBool, SqliteDialect } from "kysely";
import { NodeSqliteDatabase } from "../../db/sqlite_adapter.ts";
import { likeStar } from "../../db/like.ts";
import { attachDirect, EpochCache, executeDirect } from "../../db/direct.ts";

/** A connection to a resolver's user database. */
// deno-lint-ignore no-explicit-any
export type UserDb = Kysely<any>;

/** One `Where` condition of the resolver config. */
export interface WhereCondition {
  column: string;
  op: "=" | "!=" | "<" | ">" | "<=" | ">=" | "like";
  value: string;
}

/** Everything the store needs to address the user table. */
export interface UserTable {
  table: string;
  /** attribute → column */
  map: Record<string, string>;
  where: WhereCondition[];
}

/** Opens (and creates, if `create`) a SQLite user database file. */
export function openSqliteUserDb(path: string): UserDb {
  const raw = new NodeSqliteDatabase(path);
  const db = new Kysely({ dialect: new SqliteDialect({ database: raw }) });
  attachDirect(db, raw.direct);
  return db;
}

function whereOf(t: UserTable): RawBuilder<SqlBool>[] {
  return t.where.map((w) =>
    w.op === "like"
      ? sql<SqlBool>`${sql.ref(w.column)} like ${w.value}`
      : sql<SqlBool>`${sql.ref(w.column)} ${sql.raw(w.op)} ${w.value}`
  );
}

function baseQuery(db: UserDb, t: UserTable) {
  let q = db.selectFrom(t.table).selectAll();
  for (const cond of whereOf(t)) q = q.where(cond);
  return q;
}

/** Creates the user table from the map's columns when it does not exist (SQLite). */
export async function ensureUserTable(db: UserDb, t: UserTable): Promise<void> {
  const idCol = t.map.userid;
  const loginCol = t.map.username;
  let create = db.schema.createTable(t.table).ifNotExists();
  const seen = new Set<string>();
  if (idCol) {
    create = create.addColumn(idCol, "integer", (c) => c.primaryKey().autoIncrement());
    seen.add(idCol);
  }
  for (const col of Object.values(t.map)) {
    if (seen.has(col)) continue;
    seen.add(col);
    create = create.addColumn(
      col,
      "text",
      (c) => col === loginCol ? c.notNull().unique() : c,
    );
  }
  await create.execute();
}

/** True when the table exists. */
export async function userTableExists(db: UserDb, table: string): Promise<boolean> {
  const tables = await db.introspection.getTables();
  return tables.some((x) => x.name === table || `${x.schema}.${x.name}` === table);
}

// User lookups run on every /validate/check: the statement is compiled once per
// table description (a resolver instance keeps its own) and column, with the
// looked-up value's position remembered; the other parameters come from the
// resolver config, which the table description fixes.
const FIND_QUERIES = new WeakMap<
  UserTable,
  Map<string, { db: UserDb; sql: string; params: unknown[]; at: number }>
>();
const VALUE_SLOT: unknown = Object.freeze({});

// Rows found by findUserRow, per user database, until the database changes
// (this process's writes to it, or another connection's commit: see
// db/direct.ts). A database without direct access (not SQLite) is always asked.
const FOUND_ROWS = new EpochCache<string, Readonly<Record<string, unknown>> | undefined>();

/** The first row whose `column` equals `value` (shared between callers: read-only). */
export function findUserRow(
  db: UserDb,
  t: UserTable,
  column: string,
  value: string,
): Promise<Readonly<Record<string, unknown>> | undefined> {
  return FOUND_ROWS.get(
    db,
    `${t.table}\u0000${column}\u0000${value}`,
    async () => {
      const row = await queryUserRow(db, t, column, value);
      return row === undefined ? undefined : Object.freeze(row);
    },
  );
}

async function queryUserRow(
  db: UserDb,
  t: UserTable,
  column: string,
  value: string,
): Promise<Record<string, unknown> | undefined> {
  let byColumn = FIND_QUERIES.get(t);
  if (byColumn === undefined) FIND_QUERIES.set(t, byColumn = new Map());
  let entry = byColumn.get(column);
  if (entry === undefined || entry.db !== db) {
    const compiled = baseQuery(db, t).where(sql<SqlBool>`${sql.ref(column)} = ${VALUE_SLOT}`)
      .limit(1).compile();
    const params = [...compiled.parameters];
    const at = params.indexOf(VALUE_SLOT);
    if (at < 0 || params.lastIndexOf(VALUE_SLOT) !== at) {
      throw new Error("cannot cache user lookup");
    }
    entry = { db, sql: compiled.sql, params, at };
    byColumn.set(column, entry);
  }
  const params = entry.params.slice();
  params[entry.at] = value;
  const res = executeDirect<Record<string, unknown>>(db, entry.sql, params) ??
    await db.executeQuery<Record<string, unknown>>(CompiledQuery.raw(entry.sql, params));
  return res.rows[0];
}

/** Rows matching every `column → pattern` filter (`*` wildcard), at most `limit`. */
export async function listUserRows(
  db: UserDb,
  t: UserTable,
  filters: [string, string][],
  limit: number,
): Promise<Record<string, unknown>[]> {
  let q = baseQuery(db, t);
  for (const [column, pattern] of filters) {
    if (pattern === "*") continue;
    q = q.where(
      pattern.includes("*")
        ? likeStar(column, pattern)
        : sql<SqlBool>`${sql.ref(column)} = ${pattern}`,
    );
  }
  if (t.map.username) q = q.orderBy(sql.ref(t.map.username));
  return await q.limit(limit).execute();
}

/** Number of rows the resolver sees. */
export async function countUserRows(db: UserDb, t: UserTable): Promise<number> {
  let q = db.selectFrom(t.table).select(sql<number>`count(*)`.as("n"));
  for (const cond of whereOf(t)) q = q.where(cond);
  const row = await q.executeTakeFirst();
  return Number(row?.n ?? 0);
}

/** Inserts a user row (column → value). */
export async function insertUserRow(
  db: UserDb,
  t: UserTable,
  values: Record<string, string>,
): Promise<void> {
  await db.insertInto(t.table).values(values).execute();
}

/** Updates the row with `idColumn = uid`; returns whether a row changed. */
export async function updateUserRow(
  db: UserDb,
  t: UserTable,
  uid: string,
  values: Record<string, string>,
): Promise<boolean> {
  if (Object.keys(values).length === 0) {
    return (await findUserRow(db, t, t.map.userid, uid)) !== undefined;
  }
  let q = db.updateTable(t.table).set(values)
    .where(sql<SqlBool>`${sql.ref(t.map.userid)} = ${uid}`);
  for (const cond of whereOf(t)) q = q.where(cond);
  const res = await q.executeTakeFirst();
  return Number(res.numUpdatedRows) > 0;
}

/** Deletes the row with `idColumn = uid`; returns whether it existed. */
export async function deleteUserRow(db: UserDb, t: UserTable, uid: string): Promise<boolean> {
  let q = db.deleteFrom(t.table).where(sql<SqlBool>`${sql.ref(t.map.userid)} = ${uid}`);
  for (const cond of whereOf(t)) q = q.where(cond);
  const res = await q.executeTakeFirst();
  return Number(res.numDeletedRows) > 0;
}
