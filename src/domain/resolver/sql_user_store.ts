/**
 * SQL against a `sqlresolver`'s own database (SQLite, MariaDB/MySQL or
 * PostgreSQL): the user table named by `Table` with columns from `Map`.
 * Identifiers go through Kysely's quoting (checked against an identifier
 * pattern first); values are always bound.
 *
 * A login is matched literally: `=` (the database's collation decides about
 * case, as privacyIDEA's `LIKE` does), never as a pattern; on MariaDB/MySQL
 * also by `LIKE` with every wildcard escaped, since their `=` ignores
 * trailing spaces. A uid is compared by the type of its column (spec 16
 * §1.4): as text, as a number (a uid that is no number matches nothing) or,
 * for other types (PostgreSQL's `uuid`), through a cast to text.
 *
 * @module
 */
import { CompiledQuery, Kysely, type RawBuilder, sql, type SqlBool, SqliteDialect } from "kysely";
import { NodeSqliteDatabase } from "../../db/sqlite_adapter.ts";
import { attachDirect, EpochCache, executeDirect } from "../../db/direct.ts";

/** A connection to a resolver's user database. */
// deno-lint-ignore no-explicit-any
export type UserDb = Kysely<any>;

/** The database engines of a sqlresolver. */
export type SqlEngine = "sqlite" | "mysql" | "postgres";

/** How values of a column are compared (spec 16 §1.4). */
export type ColumnKind = "text" | "integer" | "other";

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
  /** The database engine (default SQLite). */
  engine?: SqlEngine;
}

/** Runs one statement as a prepared statement of the server (the rows it returned). */
export type PreparedQuery = (
  sql: string,
  params: readonly unknown[],
) => Promise<Record<string, unknown>[]>;

const PREPARED = Symbol("prepared query");

/** Lets the user lookups of `db` (a database server's handle) run as prepared statements. */
export function attachPreparedQuery(db: UserDb, run: PreparedQuery): void {
  (db as UserDb & { [PREPARED]?: PreparedQuery })[PREPARED] = run;
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

/** `schema.table` split as privacyIDEA does: the first part is the schema, the last the table. */
function tableParts(table: string): { schema?: string; name: string } {
  const parts = table.split(".");
  return parts.length > 1 ? { schema: parts[0], name: parts[parts.length - 1] } : { name: table };
}

function kindOf(engine: SqlEngine, type: string): ColumnKind {
  const t = type.toLowerCase();
  if (engine === "sqlite") return t.includes("int") ? "integer" : "text";
  if (/^(tiny|small|medium|big)?int(eger)?\b/.test(t)) return "integer";
  if (/^(character varying|varchar|character|char|text|tinytext|mediumtext|longtext)\b/.test(t)) {
    return "text";
  }
  return "other";
}

/** The table's columns and how each is compared; undefined when the table does not exist. */
export async function readColumns(
  db: UserDb,
  t: UserTable,
): Promise<Map<string, ColumnKind> | undefined> {
  const engine = t.engine ?? "sqlite";
  const { schema, name } = tableParts(t.table);
  const query = engine === "sqlite"
    ? sql<{ name: string; type: string }>`select name, type from pragma_table_info(${name}, ${
      schema ?? "main"
    })`
    : engine === "postgres"
    ? sql<{ name: string; type: string }>`select column_name as name, data_type as type
        from information_schema.columns
        where table_schema = ${schema === undefined ? sql`current_schema()` : schema}
          and table_name = ${name}`
    : sql<{ name: string; type: string }>`select column_name as name, data_type as type
        from information_schema.columns
        where table_schema = ${schema === undefined ? sql`database()` : schema}
          and table_name = ${name}`;
  const { rows } = await query.execute(db);
  if (rows.length === 0) return undefined;
  return new Map(rows.map((r) => [String(r.name), kindOf(engine, String(r.type ?? ""))]));
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

/** `!` escapes LIKE's wildcards: the one escape character every engine reads the same way. */
function escapeLike(value: string): string {
  return value.replace(/[!%_]/g, (c) => "!" + c);
}

function castToText(t: UserTable, column: string): RawBuilder<unknown> {
  const type = t.engine === "mysql" ? sql.raw("char") : sql.raw("varchar");
  return sql`cast(${sql.ref(column)} as ${type})`;
}

const WHOLE_NUMBER_REGEXP = /^[+-]?\d{1,18}$/;

// User lookups run on every /validate/check: the statement is compiled once per
// table description (a resolver instance keeps its own), column, kind and
// limit, with the looked-up value's positions remembered; the other parameters
// come from the resolver config, which the table description fixes.
const FIND_QUERIES = new WeakMap<
  UserTable,
  Map<string, { db: UserDb; sql: string; params: unknown[] }>
>();
const VALUE_SLOT: unknown = Object.freeze({});
const LIKE_SLOT: unknown = Object.freeze({});

// Rows found by findUserRows, per user database, until the database changes
// (this process's writes to it, or another connection's commit: see
// db/direct.ts). A database without direct access (not SQLite) is always asked.
const FOUND_ROWS = new EpochCache<string, readonly Readonly<Record<string, unknown>>[]>();

/**
 * The condition `column` matches `value` literally under the column's kind
 * (`slot` stands for the value in a compiled statement); undefined when no
 * row can match (a uid that is no number for a number column).
 */
function matchOf(
  t: UserTable,
  column: string,
  kind: ColumnKind,
  value: unknown,
  likeValue: unknown,
): RawBuilder<SqlBool> {
  if (kind === "other") return sql<SqlBool>`${castToText(t, column)} = ${value}`;
  if (kind === "text" && t.engine === "mysql") {
    // MariaDB/MySQL's = ignores trailing spaces; LIKE compares every character
    return sql<SqlBool>`${sql.ref(column)} = ${value} and ${
      sql.ref(column)
    } like ${likeValue} escape '!'`;
  }
  return sql<SqlBool>`${sql.ref(column)} = ${value}`;
}

/**
 * The rows (at most `limit`, shared between callers: read-only) whose
 * `column`, of kind `kind`, equals `value` literally.
 */
export function findUserRows(
  db: UserDb,
  t: UserTable,
  column: string,
  value: string,
  options: { kind?: ColumnKind; limit?: number } = {},
): Promise<readonly Readonly<Record<string, unknown>>[]> {
  const kind = options.kind ?? "text";
  const limit = options.limit ?? 1;
  if (kind === "integer" && !WHOLE_NUMBER_REGEXP.test(value)) return Promise.resolve([]);
  return FOUND_ROWS.get(
    db,
    `${t.table}\u0000${column}\u0000${kind}\u0000${limit}\u0000${value}`,
    async () =>
      Object.freeze((await queryUserRows(db, t, column, kind, limit, value)).map(Object.freeze)),
  );
}

async function queryUserRows(
  db: UserDb,
  t: UserTable,
  column: string,
  kind: ColumnKind,
  limit: number,
  value: string,
): Promise<Record<string, unknown>[]> {
  let byColumn = FIND_QUERIES.get(t);
  if (byColumn === undefined) FIND_QUERIES.set(t, byColumn = new Map());
  const key = `${column}\u0000${kind}\u0000${limit}`;
  let entry = byColumn.get(key);
  if (entry === undefined || entry.db !== db) {
    const compiled = baseQuery(db, t).where(matchOf(t, column, kind, VALUE_SLOT, LIKE_SLOT))
      .limit(limit).compile();
    entry = { db, sql: compiled.sql, params: [...compiled.parameters] };
    byColumn.set(key, entry);
  }
  const like = escapeLike(value);
  const params = entry.params.map((p) => p === VALUE_SLOT ? value : p === LIKE_SLOT ? like : p);
  const direct = executeDirect<Record<string, unknown>>(db, entry.sql, params);
  if (direct) return direct.rows;
  const prepared = (db as UserDb & { [PREPARED]?: PreparedQuery })[PREPARED];
  if (prepared) return await prepared(entry.sql, params);
  return (await db.executeQuery<Record<string, unknown>>(CompiledQuery.raw(entry.sql, params)))
    .rows;
}

/** One search filter: the column, its kind and a pattern with `*` as the only wildcard. */
export interface UserFilter {
  column: string;
  kind: ColumnKind;
  pattern: string;
}

/** Rows matching every filter, at most `limit`, by login. */
export async function listUserRows(
  db: UserDb,
  t: UserTable,
  filters: UserFilter[],
  limit: number,
): Promise<Record<string, unknown>[]> {
  let q = baseQuery(db, t);
  for (const { column, kind, pattern } of filters) {
    if (/^\*+$/.test(pattern)) {
      // privacyIDEA's LIKE '%': every row with a value
      q = q.where(sql<SqlBool>`${sql.ref(column)} is not null`);
    } else if (pattern.includes("*")) {
      const target = kind === "text" || t.engine === "sqlite"
        ? sql.ref(column)
        : castToText(t, column);
      const like = escapeLike(pattern).replaceAll("*", "%");
      q = q.where(sql<SqlBool>`${target} like ${like} escape '!'`);
    } else if (kind === "integer" && !WHOLE_NUMBER_REGEXP.test(pattern)) {
      return [];
    } else {
      q = q.where(matchOf(t, column, kind, pattern, escapeLike(pattern)));
    }
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

/**
 * Inserts a user row (column → value); returns the new row's uid (the
 * value of the `userid` column: given, returned by the database, or
 * MariaDB/MySQL's auto-increment id).
 */
export async function insertUserRow(
  db: UserDb,
  t: UserTable,
  values: Record<string, string>,
): Promise<string | undefined> {
  const idColumn = t.map.userid;
  if (values[idColumn] !== undefined) {
    await db.insertInto(t.table).values(values).execute();
    return values[idColumn];
  }
  if (t.engine === "mysql") {
    const res = await db.insertInto(t.table).values(values).executeTakeFirst();
    return res.insertId === undefined ? undefined : String(res.insertId);
  }
  const row = await db.insertInto(t.table).values(values).returning(sql.ref(idColumn).as("uid"))
    .executeTakeFirst();
  return row?.uid === undefined || row.uid === null ? undefined : String(row.uid);
}

function uidMatch(t: UserTable, kind: ColumnKind, uid: string): RawBuilder<SqlBool> | undefined {
  if (kind === "integer" && !WHOLE_NUMBER_REGEXP.test(uid)) return undefined;
  return matchOf(t, t.map.userid, kind, uid, escapeLike(uid));
}

/** Updates the row with `userid = uid`; returns whether a row matched. */
export async function updateUserRow(
  db: UserDb,
  t: UserTable,
  uid: string,
  values: Record<string, string>,
  kind: ColumnKind = "text",
): Promise<boolean> {
  const match = uidMatch(t, kind, uid);
  if (match === undefined) return false;
  if (Object.keys(values).length === 0) {
    return (await findUserRows(db, t, t.map.userid, uid, { kind })).length > 0;
  }
  let q = db.updateTable(t.table).set(values).where(match);
  for (const cond of whereOf(t)) q = q.where(cond);
  const res = await q.executeTakeFirst();
  // MariaDB/MySQL count changed rows only: an update to the same values still matched
  if (Number(res.numUpdatedRows) > 0) return true;
  return t.engine === "mysql" &&
    (await findUserRows(db, t, t.map.userid, uid, { kind })).length > 0;
}

/** Deletes the row with `userid = uid`; returns whether it existed. */
export async function deleteUserRow(
  db: UserDb,
  t: UserTable,
  uid: string,
  kind: ColumnKind = "text",
): Promise<boolean> {
  const match = uidMatch(t, kind, uid);
  if (match === undefined) return false;
  let q = db.deleteFrom(t.table).where(match);
  for (const cond of whereOf(t)) q = q.where(cond);
  const res = await q.executeTakeFirst();
  return Number(res.numDeletedRows) > 0;
}
