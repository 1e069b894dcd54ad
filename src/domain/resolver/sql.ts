/**
 * `sqlresolver`: users in a table of an SQL database (spec 03 §2.2, spec 16
 * §1): a SQLite file, or a MariaDB/MySQL or PostgreSQL server named by
 * privacyIDEA's keys (sql_server.ts). `Database` relative paths of SQLite
 * live under the data directory. A `Database` file that is one of Tessera's
 * own files or exists but is no SQLite database is refused on save, on test
 * and whenever a connection is opened. Connections (a pool per server
 * resolver) are cached per resolver and keyed by the stored configuration,
 * so a change made on another node opens a fresh connection here; the old
 * one is closed, and so is a deleted resolver's.
 *
 * A database server is shared by every node, as Tessera's own PostgreSQL is.
 * The SQLite file is local to a node. With Tessera's own database in SQLite
 * (one host) an editable resolver creates its missing file on first use, and
 * says so in the log. On PostgreSQL the nodes share the resolver but not the
 * file: a new or changed sqlresolver must name an existing file by an
 * absolute path (a relative path, or a file created on first use, would be
 * another file on each node), and no node ever creates the file. Users that
 * an editable resolver adds there are in that node's file only (documented).
 *
 * @module
 */
import { existsSync } from "node:fs";
import { isAbsolute } from "node:path";
import type { Config } from "../../config.ts";
import { isPostgresUrl } from "../../db/postgres.ts";
import { ParameterError, ResolverError, UserError } from "../../errors.ts";
import {
  hashCryptPassword,
  type HashType,
  verifyCryptHash,
  WRITABLE_HASH_TYPES,
} from "../../lib/unix_crypt.ts";
import type { Logger } from "../../lib/logger.ts";
import type { Random } from "../../lib/random.ts";
import type { Db } from "../../db/schema.ts";
import { parse as parseYaml } from "yaml";
import { refuseOwnPath, resolveDataPath } from "./paths.ts";
import { listResolvers } from "./resolver_store.ts";
import * as users from "./sql_user_store.ts";
import {
  engineOfDriver,
  openServerDb,
  parseServerSettings,
  readServerCa,
  serverName,
  sqlErrorText,
  type SqlServerSettings,
  SUPPORTED_DRIVERS,
} from "./sql_server.ts";
import {
  emptyUserInfo,
  type ResolverTestResult,
  type UserInfo,
  type UserResolver,
} from "./types.ts";

/** The parsed, validated configuration of a sqlresolver. */
export interface SqlResolverConfig {
  driver: users.SqlEngine;
  /** SQLite: the absolute path of the file; a server: the database name. */
  database: string;
  /** Whether `Database` was given relative to the data directory (SQLite). */
  isRelativePath: boolean;
  /** How to reach a MariaDB/MySQL or PostgreSQL server (undefined for SQLite). */
  server?: SqlServerSettings;
  table: users.UserTable;
  limit: number;
  editable: boolean;
  hashType: HashType;
  /** Decodes column values the database hands out as bytes (`Encoding`, default latin1). */
  decode: (bytes: Uint8Array) => string;
}

const IDENT_REGEXP = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;
const TABLE_REGEXP = /^[A-Za-z_][A-Za-z0-9_]{0,62}(\.[A-Za-z_][A-Za-z0-9_]{0,62})?$/;
// privacyIDEA's operators (`==`, `>`, `<`, `like`), and the SQL comparisons it ignores
const WHERE_OPERATORS: Record<string, users.WhereCondition["op"]> = {
  "==": "=",
  ">": ">",
  "<": "<",
  like: "like",
  "=": "=",
  "!=": "!=",
  "<>": "!=",
  ">=": ">=",
  "<=": "<=",
};

/** The default `Map`: every standard attribute in a column of the same name, uid in `id`. */
export const SQL_DEFAULT_MAP: Record<string, string> = {
  userid: "id",
  username: "username",
  email: "email",
  surname: "surname",
  givenname: "givenname",
  password: "password",
  phone: "phone",
  mobile: "mobile",
  description: "description",
};

/**
 * The keys that decide where Password is sent. Every key of the connection URL
 * counts, not only Server and Port: the URL is the keys' text joined as
 * privacyIDEA joins it, so a User like `x:y@host/` or a Database like
 * `db?unix_socket=/tmp/s` moves the connection and carries the password along.
 */
export const SQL_PASSWORD_TARGETS = [
  "Driver",
  "Server",
  "Port",
  "User",
  "Database",
  "conParams",
] as const;

/** Default configuration shown by `GET /resolver/sqlresolver/default`. */
export const SQL_DEFAULTS: Record<string, string> = {
  Driver: "sqlite",
  Server: "",
  Port: "",
  Database: "users.sqlite",
  User: "",
  Password: "",
  conParams: "",
  Table: "users",
  Map: JSON.stringify(SQL_DEFAULT_MAP),
  Where: "",
  Limit: "100",
  Editable: "0",
  Password_Hash_Type: "SSHA256",
  Encoding: "utf8",
  poolSize: "5",
  poolTimeout: "10",
  poolRecycle: "7200",
};

const SQLITE_HEADER = new TextEncoder().encode("SQLite format 3\0");

function notSqlite(path: string): ParameterError {
  return new ParameterError(`Cannot use file "${path}": it is not a SQLite database`);
}

/**
 * Checks the file of a sqlresolver through one handle: refused (ParameterError)
 * when it is one of Tessera's own files (with `config`) or exists and is no
 * SQLite database. A missing file passes: an editable resolver creates it.
 */
export function checkSqliteFile(path: string, config?: Config): void {
  let file: Deno.FsFile;
  try {
    file = Deno.openSync(path);
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) {
      // an editable resolver creates it: never at the place of one of Tessera's files
      if (config !== undefined) refuseOwnPath(config, path, "Database");
      return;
    }
    throw new ResolverError(`Cannot open the database file "${path}": ${(err as Error).name}`);
  }
  try {
    const info = file.statSync();
    if (config !== undefined) refuseOwnPath(config, path, "Database", info);
    if (!info.isFile) throw notSqlite(path);
    // SQLite treats an empty file as an empty database
    if (info.size === 0) return;
    const head = new Uint8Array(SQLITE_HEADER.length);
    let got = 0;
    while (got < head.length) {
      const n = file.readSync(head.subarray(got));
      if (n === null) break;
      got += n;
    }
    if (got < head.length || !head.every((b, i) => b === SQLITE_HEADER[i])) {
      throw notSqlite(path);
    }
  } catch (err) {
    if (err instanceof ParameterError) throw err;
    throw new ResolverError(`Cannot read the database file "${path}": ${(err as Error).name}`);
  } finally {
    file.close();
  }
}

/** True when the nodes share Tessera's database (PostgreSQL), so a SQLite file is one node's. */
function isSharedDatabase(appConfig: Config | undefined): boolean {
  return appConfig !== undefined && isPostgresUrl(appConfig.storage.databaseUrl);
}

/**
 * What an operator of several nodes must know about this sqlresolver: on
 * PostgreSQL its SQLite file is one node's (empty when not on PostgreSQL).
 */
export function sharedDatabaseNotes(cfg: SqlResolverConfig, appConfig?: Config): string[] {
  // a database server is shared by the nodes as it is
  if (cfg.server !== undefined || !isSharedDatabase(appConfig)) return [];
  const notes = [
    `The nodes share PostgreSQL but not SQLite files: every node needs the same file at ` +
    `"${cfg.database}", or its lookups fail.`,
  ];
  if (cfg.isRelativePath) {
    notes.push(
      "Database is a relative path: each node reads it under its own data directory; an " +
        "absolute path says where the copies are.",
    );
  }
  if (cfg.editable) {
    notes.push(
      "Users added or changed through this resolver are written to the file of the node that " +
        "handles the request only; with several nodes keep users you edit in LDAP.",
    );
  }
  return notes;
}

/**
 * Checks a sqlresolver being saved or tested (ParameterError, 400, when its
 * file is refused, see {@link checkSqliteFile}). On PostgreSQL, creating an
 * editable resolver whose file is missing creates the file on this node,
 * empty (mode 0600), since no node creates it on first use there (an update
 * never does: the node that handles it may not be the one that has the
 * file); with `log` (a save) the notes of {@link sharedDatabaseNotes} are
 * logged as warnings.
 */
export function checkSqlStore(
  name: string,
  cfg: SqlResolverConfig,
  appConfig: Config,
  options: { isCreating?: boolean; log?: Logger } = {},
): void {
  if (cfg.server !== undefined) {
    // the CA file of a server connection: readable, a certificate, none of Tessera's files
    readServerCa(cfg.server, appConfig);
    return;
  }
  checkSqliteFile(cfg.database, appConfig);
  if (!isSharedDatabase(appConfig)) return;
  if (options.isCreating && cfg.editable && !existsSync(cfg.database)) {
    try {
      // an empty file is an empty SQLite database; the table is made on first use
      Deno.writeFileSync(cfg.database, new Uint8Array(), { createNew: true, mode: 0o600 });
    } catch (err) {
      if (!(err instanceof Deno.errors.AlreadyExists)) {
        throw new ResolverError(
          `Cannot create the database file "${cfg.database}" of resolver "${name}": ` +
            (err as Error).name,
        );
      }
    }
    options.log?.warn("Created the SQLite file of an editable resolver on this node only", {
      resolver: name,
      path: cfg.database,
    });
  }
  for (const note of sharedDatabaseNotes(cfg, appConfig)) {
    options.log?.warn(note, { resolver: name });
  }
}

/** True for privacyIDEA's truthy config strings. */
export function isTruthy(value: string | undefined): boolean {
  return ["1", "true", "yes", "on"].includes((value ?? "").trim().toLowerCase());
}

/**
 * privacyIDEA's `Where` mini-syntax (spec 16 §1.5): parts joined by ` and `
 * (any case), each exactly `column operator value` separated by whitespace;
 * the value is bound as text exactly as written (quotes are part of it).
 * Operators: `==`, `>`, `<`, `like`; privacyIDEA ignores any other operator
 * (the part adds no condition), which would widen the filter unnoticed, so
 * `=`, `!=`, `<>`, `>=` and `<=` are applied as SQL comparisons and anything
 * else is refused.
 */
export function parseWhere(
  text: string,
  fail: (why: string) => Error,
): users.WhereCondition[] {
  const where: users.WhereCondition[] = [];
  if (text.trim() === "") return where;
  for (const part of text.split(/ and /i)) {
    const words = part.trim().split(/\s+/).filter((w) => w !== "");
    if (words.length !== 3) {
      throw fail(
        `Where part "${part.trim()}" must be three words: column, operator (==, >, <, like), value`,
      );
    }
    const [column, operator, value] = words;
    const op = WHERE_OPERATORS[operator.toLowerCase()];
    if (op === undefined) {
      throw fail(`Where part "${part.trim()}" has an unknown operator (use ==, >, < or like)`);
    }
    if (!IDENT_REGEXP.test(column)) {
      throw fail(`Where part "${part.trim()}" must start with a column name (letters, digits, _)`);
    }
    where.push({ column, op, value });
  }
  return where;
}

/** Parses and validates a sqlresolver configuration (ParameterError on problems). */
export function parseSqlConfig(
  name: string,
  config: Record<string, string>,
  dataDir: string,
): SqlResolverConfig {
  const fail = (why: string) => new ParameterError(`Cannot use sqlresolver "${name}": ${why}`);
  const driver = engineOfDriver(config.Driver ?? "");
  if (driver === undefined) {
    throw fail(
      `driver "${config.Driver}" is not supported; Tessera serves these drivers: ${SUPPORTED_DRIVERS}`,
    );
  }
  let database: string;
  let isRelativePath = false;
  let server: SqlServerSettings | undefined;
  if (driver === "sqlite") {
    const dbPath = (config.Database ?? "").trim();
    if (dbPath === "") throw fail("Database is required");
    database = resolveDataPath(dataDir, dbPath, "Database");
    isRelativePath = !isAbsolute(dbPath);
  } else {
    server = parseServerSettings(driver, config, fail);
    database = server.database;
  }
  const table = (config.Table ?? "").trim();
  if (!TABLE_REGEXP.test(table)) throw fail(`Table "${table}" is not a valid table name`);
  const map = parseMap(config.Map ?? "", fail);
  const where = parseWhere(config.Where ?? "", fail);
  const limitText = (config.Limit ?? "").trim();
  const limit = limitText === "" ? 100 : Number(limitText);
  if (!Number.isInteger(limit) || limit < 1 || limit > 100000) {
    throw fail("Limit must be an integer from 1 to 100000");
  }
  const hashType =
    ((config.Password_Hash_Type ?? "").trim().toUpperCase() || "SSHA256") as HashType;
  if (!WRITABLE_HASH_TYPES.includes(hashType)) {
    throw fail(
      `Password_Hash_Type "${config.Password_Hash_Type}" is not one of ${
        WRITABLE_HASH_TYPES.join(", ")
      }`,
    );
  }
  return {
    driver,
    database,
    isRelativePath,
    server,
    table: { table, map, where, engine: driver },
    limit,
    editable: isTruthy(config.Editable),
    hashType,
    decode: decoderOf(config.Encoding ?? "", fail),
  };
}

/**
 * `Map`: attribute → column as YAML or JSON (privacyIDEA reads it with
 * `yaml.safe_load`, so `{username: login, userid: id}` works too).
 */
function parseMap(text: string, fail: (why: string) => Error): Record<string, string> {
  let map: unknown;
  try {
    map = parseYaml(text);
  } catch {
    throw fail("Map must be a JSON or YAML object of attribute → column");
  }
  if (!map || typeof map !== "object" || Array.isArray(map)) {
    throw fail("Map must be a JSON or YAML object of attribute → column");
  }
  for (const [attr, col] of Object.entries(map)) {
    if (typeof col !== "string" || !IDENT_REGEXP.test(col) || !IDENT_REGEXP.test(attr)) {
      throw fail(`Map entry "${attr}" must name a column (letters, digits, _)`);
    }
  }
  const out = map as Record<string, string>;
  if (!out.userid || !out.username) throw fail("Map needs the keys userid and username");
  return out;
}

const LATIN1_NAMES = new Set(["latin1", "latin-1", "latin_1", "iso-8859-1", "iso8859-1", "l1"]);

/**
 * The decoder of `Encoding` for byte values (binary columns): Python's codec
 * names; latin1 (the default) maps each byte to one character, as Python's
 * does (a WHATWG decoder would read it as windows-1252). A value that does
 * not decode becomes `decoding_error`, as in privacyIDEA.
 */
function decoderOf(encoding: string, fail: (why: string) => Error): (b: Uint8Array) => string {
  const name = encoding.trim().toLowerCase() || "latin1";
  if (LATIN1_NAMES.has(name)) return (b) => String.fromCharCode(...b);
  if (name === "ascii" || name === "us-ascii") {
    return (b) => b.every((x) => x < 0x80) ? String.fromCharCode(...b) : "decoding_error";
  }
  let decoder: TextDecoder;
  try {
    decoder = new TextDecoder(name, { fatal: true });
  } catch {
    throw fail(`Encoding "${encoding}" is unknown (e.g. latin1, utf8, cp1252)`);
  }
  return (b) => {
    try {
      return decoder.decode(b);
    } catch {
      return "decoding_error";
    }
  };
}

/**
 * `/resolver/test` of a configuration that cannot be used (spec 16 §1.10):
 * -1, "Unable to connect to database." for a driver Tessera does not serve,
 * "Failed to retrieve users." for anything else, with the reason.
 */
export function sqlConfigTestFailure(err: unknown): ResolverTestResult {
  const message = (err as Error)?.message ?? String(err);
  const head = /driver "/.test(message)
    ? "Unable to connect to database."
    : "Failed to retrieve users.";
  return { success: false, value: -1, description: `${head} ${message}` };
}

/** A SQLite file that holds users of sqlresolvers. */
export interface SqliteUserStore {
  /** Absolute path (a relative `Database` resolved under the data directory). */
  path: string;
  /** The resolvers on it, by name. */
  resolvers: string[];
}

/**
 * The SQLite files of the stored sqlresolvers (one entry per file, whether it
 * exists yet or not), for `tessera backup`.
 */
export async function sqliteUserStores(db: Db, dataDir: string): Promise<SqliteUserStore[]> {
  const byPath = new Map<string, string[]>();
  for (const rec of await listResolvers(db)) {
    if (rec.type !== "sqlresolver") continue;
    let path: string;
    try {
      const cfg = parseSqlConfig(rec.name, rec.config, dataDir);
      if (cfg.server !== undefined) continue; // a database server is backed up by its own tools
      path = cfg.database;
    } catch {
      continue; // a configuration this build cannot use names no file it would write
    }
    byPath.set(path, [...byPath.get(path) ?? [], rec.name]);
  }
  return [...byPath].map(([path, resolvers]) => ({ path, resolvers }));
}

interface CachedConnection {
  key: string;
  db: users.UserDb;
  /** SQLite: the table of an editable resolver exists. */
  ready: Promise<void>;
  /** The table's columns, read on first use (again after a failure). */
  columns?: Promise<Map<string, users.ColumnKind>>;
  /** The same once read (spares the lookups of every check an await). */
  knownColumns?: Map<string, users.ColumnKind>;
}

const CONNECTIONS = new WeakMap<object, Map<string, CachedConnection>>();

/** Closes every cached user-database connection that belongs to `owner`. */
export async function closeSqlConnections(owner: object): Promise<void> {
  const map = CONNECTIONS.get(owner);
  if (!map) return;
  CONNECTIONS.delete(owner);
  for (const c of map.values()) await c.db.destroy().catch(() => {});
}

/** Closes the cached connection of resolver `name` (after it was deleted). */
export async function forgetSqlConnection(owner: object, name: string): Promise<void> {
  const map = CONNECTIONS.get(owner);
  const conn = map?.get(name);
  if (!map || !conn) return;
  map.delete(name);
  await conn.db.destroy().catch(() => {});
}

function connection(
  owner: object,
  name: string,
  cacheKey: string,
  cfg: SqlResolverConfig,
  config: Config | undefined,
  log: Logger | undefined,
): CachedConnection {
  let map = CONNECTIONS.get(owner);
  if (!map) {
    map = new Map();
    CONNECTIONS.set(owner, map);
  }
  const cached = map.get(name);
  if (cached && cached.key === cacheKey) return cached;
  // the resolver changed: its old pool is closed (requests still on it finish first)
  if (cached) cached.db.destroy().catch(() => {});
  if (cfg.server !== undefined) {
    const db = openServerDb(cfg.server, { appConfig: config });
    const conn = { key: cacheKey, db, ready: Promise.resolve() };
    map.set(name, conn);
    return conn;
  }
  const isMissing = !existsSync(cfg.database);
  if (isMissing && isSharedDatabase(config)) {
    // an empty file of this node's own would answer "no such user" for everyone the node that
    // saved the resolver knows: half the logins behind a load balancer would fail unexplained
    throw new ResolverError(
      `Cannot open the database of resolver "${name}": the file "${cfg.database}" does not ` +
        "exist on this node; with PostgreSQL every node needs a copy of the same file (it is " +
        "created only on the node that saves an editable resolver)",
    );
  }
  if (isMissing && !cfg.editable) {
    throw new ResolverError(
      `Cannot open the database of resolver "${name}": the file does not exist`,
    );
  }
  // checked on every new connection: the file may have changed since it was saved
  checkSqliteFile(cfg.database, config);
  const db = users.openSqliteUserDb(cfg.database);
  if (isMissing) {
    log?.info("Created the SQLite file of an editable resolver", {
      resolver: name,
      path: cfg.database,
    });
  }
  // an editable resolver on a new file gets its table on first use
  const ready = cfg.editable ? users.ensureUserTable(db, cfg.table) : Promise.resolve();
  const conn = { key: cacheKey, db, ready };
  map.set(name, conn);
  return conn;
}

/** Options of {@link sqlResolver}. */
export interface SqlResolverOptions {
  name: string;
  config: SqlResolverConfig;
  /** Changes whenever the stored configuration changes. */
  cacheKey: string;
  /** Object the connection cache hangs off (the Tessera database handle). */
  owner: object;
  random: Random;
  /** Tessera's configuration: the file is checked against Tessera's own files. */
  appConfig?: Config;
  /** Where the creation of a missing file and failing servers are logged. */
  log?: Logger;
}

/** A column value as user info text: bytes decoded by `Encoding`, times as ISO text. */
function textOf(value: unknown, decode: (b: Uint8Array) => string): string {
  if (value === null || value === undefined) return "";
  if (value instanceof Uint8Array) return decode(value);
  if (value instanceof Date) return value.toISOString();
  return String(value);
}

/** Creates a sqlresolver instance. */
export function sqlResolver(opts: SqlResolverOptions): UserResolver {
  const { name, config: cfg } = opts;
  const t = cfg.table;
  const map = t.map;
  const kind = cfg.server === undefined ? "SQLite database" : `${cfg.server.engine} server`;

  async function open(): Promise<{ db: users.UserDb; columns: Map<string, users.ColumnKind> }> {
    const conn = connection(opts.owner, name, opts.cacheKey, cfg, opts.appConfig, opts.log);
    try {
      await conn.ready;
      if (conn.knownColumns !== undefined) return { db: conn.db, columns: conn.knownColumns };
      let columns = conn.columns;
      if (columns === undefined) {
        const reading = users.readColumns(conn.db, t).then((found) => {
          if (found === undefined) {
            throw new ResolverError(
              `Cannot use the database of resolver "${name}": table "${t.table}" does not exist`,
            );
          }
          conn.knownColumns = found;
          return found;
        });
        // a server that was down is asked again by the next request
        reading.catch(() => {
          if (conn.columns === reading) conn.columns = undefined;
        });
        columns = conn.columns = reading;
      }
      return { db: conn.db, columns: await columns };
    } catch (err) {
      throw storeError(err);
    }
  }

  function storeError(err: unknown): Error {
    if (err instanceof ResolverError || err instanceof UserError) return err;
    const why = sqlErrorText(err);
    // the answer may go to unauthenticated clients: it names no server; the log does
    opts.log?.warn("SQL resolver database failed", {
      resolver: name,
      server: cfg.server ? serverName(cfg.server) : cfg.database,
      error: (err as Error)?.message ?? String(err),
    });
    return new ResolverError(`Cannot query the ${kind} of resolver "${name}": ${why}`);
  }

  async function run<T>(
    f: (d: users.UserDb, columns: Map<string, users.ColumnKind>) => Promise<T>,
  ): Promise<T> {
    const { db, columns } = await open();
    try {
      return await f(db, columns);
    } catch (err) {
      throw storeError(err);
    }
  }

  function kindOf(columns: Map<string, users.ColumnKind>, column: string): users.ColumnKind {
    return columns.get(column) ?? "text";
  }

  function infoOf(row: Readonly<Record<string, unknown>>): UserInfo {
    const info = emptyUserInfo();
    for (const [attr, col] of Object.entries(map)) {
      if (attr === "password") continue;
      // privacyIDEA decodes a uid given as bytes as UTF-8, other bytes by Encoding
      const v = row[col];
      info[attr] = attr === "userid" && v instanceof Uint8Array
        ? new TextDecoder().decode(v)
        : textOf(v, cfg.decode);
    }
    return info;
  }

  function uidOf(row: Readonly<Record<string, unknown>>): string {
    const v = row[map.userid];
    return v instanceof Uint8Array ? new TextDecoder().decode(v) : textOf(v, cfg.decode);
  }

  async function rowOf(uid: string): Promise<Readonly<Record<string, unknown>> | undefined> {
    return await run(async (d, columns) =>
      (await users.findUserRows(d, t, map.userid, uid, { kind: kindOf(columns, map.userid) }))[0]
    );
  }

  function columnsOf(
    attributes: Record<string, string>,
    password?: string,
  ): Record<string, string> {
    const values: Record<string, string> = {};
    for (const [attr, value] of Object.entries(attributes)) {
      if (attr === "password") continue;
      const col = map[attr];
      if (col) values[col] = value;
    }
    if (password !== undefined && password !== "") {
      if (!map.password) {
        throw new ResolverError(
          `Cannot set a password in resolver "${name}": Map has no password column`,
        );
      }
      values[map.password] = hashCryptPassword(cfg.hashType, password, opts.random.bytes(22));
    }
    return values;
  }

  function requireEditable(): void {
    if (!cfg.editable) {
      throw new ResolverError(`Cannot change users of resolver "${name}": it is not editable`);
    }
  }

  function isDuplicate(err: unknown): boolean {
    const e = err as { code?: string; message?: string };
    return e?.code === "ER_DUP_ENTRY" || e?.code === "23505" ||
      /unique|duplicate/i.test(e?.message ?? "");
  }

  return {
    name,
    type: "sqlresolver",
    editable: cfg.editable,
    async getUserId(login) {
      const rows = await run((d, columns) =>
        users.findUserRows(d, t, map.username, login, {
          kind: kindOf(columns, map.username),
          limit: 2,
        })
      );
      if (rows.length > 1) {
        // privacyIDEA takes the first; a login that names two users names none here
        opts.log?.warn("More than one user with this login name: none is used", {
          resolver: name,
          login,
        });
        return undefined;
      }
      return rows.length === 1 ? uidOf(rows[0]) : undefined;
    },
    async getUserInfo(uid) {
      const row = await rowOf(uid);
      return row ? infoOf(row) : undefined;
    },
    async getUserList(search) {
      return await run(async (d, columns) => {
        const filters: users.UserFilter[] = [];
        for (const [attr, pattern] of Object.entries(search)) {
          const column = map[attr];
          // privacyIDEA: a key outside Map or a mapped column the table lacks lists nobody
          if (!column || attr === "password" || !columns.has(column)) return [];
          filters.push({ column, kind: kindOf(columns, column), pattern });
        }
        const rows = await users.listUserRows(d, t, filters, cfg.limit);
        return rows.filter((r) => r[map.userid] !== null && r[map.userid] !== undefined)
          .map(infoOf);
      });
    },
    async checkPass(uid, password) {
      if (!map.password) return false;
      const row = await rowOf(uid);
      const hash = row?.[map.password];
      if (hash === null || hash === undefined) return false;
      return await verifyCryptHash(textOf(hash, cfg.decode), password);
    },
    async addUser(attributes, password) {
      requireEditable();
      const login = attributes.username ?? "";
      const values = columnsOf(attributes, password);
      return await run(async (d, columns) => {
        const existing = await users.findUserRows(d, t, map.username, login, {
          kind: kindOf(columns, map.username),
        });
        if (existing.length > 0) {
          throw new UserError(`Cannot create user "${login}": the user already exists`);
        }
        let uid: string | undefined;
        try {
          uid = await users.insertUserRow(d, t, values);
        } catch (err) {
          if (isDuplicate(err)) {
            throw new UserError(`Cannot create user "${login}": the user already exists`);
          }
          throw err;
        }
        if (uid === undefined) {
          throw new ResolverError(
            `Cannot create user "${login}": the database gave no ${map.userid} for the new row`,
          );
        }
        return uid;
      });
    },
    async updateUser(uid, attributes, password) {
      requireEditable();
      const values = columnsOf(attributes, password);
      return await run(async (d, columns) => {
        try {
          return await users.updateUserRow(d, t, uid, values, kindOf(columns, map.userid));
        } catch (err) {
          if (isDuplicate(err)) {
            throw new UserError(`Cannot update user: the login "${attributes.username}" is taken`);
          }
          throw err;
        }
      });
    },
    async deleteUser(uid) {
      requireEditable();
      return await run((d, columns) => users.deleteUserRow(d, t, uid, kindOf(columns, map.userid)));
    },
    async test(): Promise<ResolverTestResult> {
      if (cfg.server !== undefined) return await testServer(cfg.server);
      const result = await testStore();
      const notes = sharedDatabaseNotes(cfg, opts.appConfig);
      return notes.length === 0
        ? result
        : { ...result, description: [result.description, ...notes].join(" ") };
    },
  };

  /**
   * privacyIDEA's test of a server resolver (spec 16 §1.10): a connection of
   * its own, the number of users `Where` lets through, -1 on any failure.
   */
  async function testServer(server: SqlServerSettings): Promise<ResolverTestResult> {
    // a refused CA file is a bad parameter (400), checked before (checkSqlStore)
    const d = openServerDb(server, { poolSize: 1, appConfig: opts.appConfig });
    try {
      if ((await users.readColumns(d, t)) === undefined) {
        return {
          success: false,
          value: -1,
          description: `Failed to retrieve users. Table "${t.table}" does not exist.`,
        };
      }
      const n = await users.countUserRows(d, t);
      return { success: true, value: n, description: `Found ${n} users.` };
    } catch (err) {
      return {
        success: false,
        value: -1,
        description: `Failed to retrieve users. ${serverName(server)}: ${sqlErrorText(err)}`,
      };
    } finally {
      await d.destroy().catch(() => {});
    }
  }

  /** The resolver's test without the notes for several nodes. */
  async function testStore(): Promise<ResolverTestResult> {
    if (!existsSync(cfg.database)) {
      if (isSharedDatabase(opts.appConfig)) {
        return {
          success: false,
          description: cfg.editable
            ? "The database file does not exist on this node; it is created here, empty, " +
              "when the resolver is created on this node."
            : "The database file does not exist on this node.",
        };
      }
      return cfg.editable
        ? {
          success: true,
          description:
            `The database file does not exist yet; it is created with table "${t.table}" on first use.`,
        }
        : { success: false, description: "The database file does not exist." };
    }
    // a refused file is a bad parameter (400), not a failed test
    checkSqliteFile(cfg.database, opts.appConfig);
    const d = users.openSqliteUserDb(cfg.database);
    try {
      if ((await users.readColumns(d, t)) === undefined) {
        return cfg.editable
          ? {
            success: true,
            description: `Table "${t.table}" does not exist yet; it is created on first use.`,
          }
          : { success: false, value: -1, description: `Table "${t.table}" does not exist.` };
      }
      const n = await users.countUserRows(d, t);
      return { success: true, value: n, description: `Found ${n} users.` };
    } catch (err) {
      return {
        success: false,
        value: -1,
        description: `Cannot query the database: ${(err as Error).message}`,
      };
    } finally {
      await d.destroy().catch(() => {});
    }
  }
}
