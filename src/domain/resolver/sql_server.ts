/**
 * The database server of a `sqlresolver` (spec 16 §1.2): MariaDB/MySQL
 * through `mysql2` and PostgreSQL through `pg`, named by privacyIDEA's keys.
 * The connection is read as privacyIDEA reads it: the keys are joined into
 * SQLAlchemy's URL without escaping and parsed back by SQLAlchemy's rules
 * (user and password percent-decoded, the password ending at the first `@`),
 * so a definition behaves here as it did there.
 *
 * Every wait is bounded: opening a connection by {@link CONNECT_TIMEOUT_MS}
 * (or `poolTimeout`, if shorter), a statement and a wait for a pooled
 * connection by `poolTimeout` seconds. A connection whose statement got no
 * answer in time is closed rather than handed to the next request, which
 * would wait behind that statement.
 *
 * @module
 */
import { Kysely, MysqlDialect, PostgresDialect } from "kysely";
import type { MysqlPool, MysqlPoolConnection, MysqlQueryResult } from "kysely";
import type { ExecuteValues, Pool as MysqlDriverPool, PoolConnection } from "mysql2";
import pg from "pg";
import { createHash } from "node:crypto";
import type { Config } from "../../config.ts";
import { ParameterError } from "../../errors.ts";
import { refuseOwnPath } from "./paths.ts";
import { attachPreparedQuery, type SqlEngine, type UserDb } from "./sql_user_store.ts";

/** How to reach the database server of a sqlresolver (never logged: it holds the password). */
export interface SqlServerSettings {
  engine: "mysql" | "postgres";
  /** The `Driver` as stored (for messages). */
  driver: string;
  host: string;
  port: number;
  /** Unix socket: MySQL `unix_socket` (a file), PostgreSQL `host` (a folder). */
  socket?: string;
  database: string;
  user: string;
  password: string;
  /** MySQL `charset`. */
  charset?: string;
  /** PostgreSQL `sslmode`. */
  sslMode?: "disable" | "require" | "verify-ca" | "verify-full";
  /**
   * The CA certificate file (PEM) the server's certificate must chain to:
   * MySQL `ssl_ca` (TLS on), PostgreSQL `sslrootcert`.
   */
  caFile?: string;
  /** MySQL `ssl_check_hostname` (default true): the certificate must name the server. */
  checkHostname?: boolean;
  poolSize: number;
  /** Longest wait for a pooled connection and for one statement, in ms (`poolTimeout`). */
  timeoutMs: number;
  /** Seconds after which a connection is replaced (`poolRecycle`; 0: never). */
  recycleSeconds: number;
}

/** Longest time one connection attempt may take. */
export const CONNECT_TIMEOUT_MS = 5_000;

/** Idle pooled connections are closed after this long (a deleted resolver's pool empties). */
const IDLE_MS = 60_000;

const MYSQL_DIALECTS = new Set([
  "mysql",
  "mysql+pymysql",
  "mysql+mysqldb",
  "mysql+mysqlconnector",
  "mysql+mariadbconnector",
  "mariadb",
  "mariadb+pymysql",
  "mariadb+mysqldb",
  "mariadb+mysqlconnector",
  "mariadb+mariadbconnector",
]);
const POSTGRES_DIALECTS = new Set([
  "postgresql",
  "postgresql+psycopg2",
  "postgresql+psycopg",
  "postgresql+pg8000",
  "postgres",
]);
const SQLITE_DIALECTS = new Set(["", "sqlite", "sqlite3", "sqlite+pysqlite"]);

/** The `Driver` values Tessera serves, for messages. */
export const SUPPORTED_DRIVERS =
  "sqlite; mysql, mysql+pymysql, mariadb, mariadb+mariadbconnector (MariaDB/MySQL); " +
  "postgresql, postgresql+psycopg2, postgresql+psycopg, postgresql+pg8000 (PostgreSQL)";

/** The engine of a `Driver` value (privacyIDEA stores SQLAlchemy dialect names), or undefined. */
export function engineOfDriver(driver: string): SqlEngine | undefined {
  const d = driver.trim().toLowerCase();
  if (SQLITE_DIALECTS.has(d)) return "sqlite";
  if (MYSQL_DIALECTS.has(d)) return "mysql";
  if (POSTGRES_DIALECTS.has(d)) return "postgres";
  return undefined;
}

// SQLAlchemy 1.4's URL pattern (sqlalchemy/engine/url.py, _parse_rfc1738_args)
const URL_REGEXP = new RegExp(
  "^(?<name>[\\w+]+)://" +
    "(?:(?<username>[^:/]*)(?::(?<password>[^@]*))?@)?" +
    "(?:(?:\\[(?<ipv6host>[^/?]+)\\]|(?<ipv4host>[^/:?]+))?(?::(?<port>[^/?]*))?)?" +
    "(?:/(?<database>[^?]*))?" +
    "(?:\\?(?<query>.*))?$",
  "s",
);

/** Python's `unquote`: valid `%XX` sequences decoded as UTF-8, anything else kept. */
function unquote(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text.replace(/(?:%[0-9A-Fa-f]{2})+/g, (run) => {
      try {
        return decodeURIComponent(run);
      } catch {
        return run;
      }
    });
  }
}

/** The connection URL privacyIDEA builds from the keys (spec 16 §1.2), without escaping. */
export function privacyideaUrl(config: Record<string, string>): string {
  const user = config.User ?? "";
  const password = config.Password ?? "";
  const port = (config.Port ?? "").trim();
  const params = config.conParams ?? "";
  return `${config.Driver ?? ""}://${user}${password ? `:${password}` : ""}` +
    `${user || password ? "@" : ""}${config.Server ?? ""}${port ? `:${port}` : ""}` +
    `/${config.Database ?? ""}${params ? `?${params}` : ""}`;
}

function intSetting(
  config: Record<string, string>,
  key: string,
  fallback: number,
  range: [number, number],
  fail: (why: string) => Error,
): number {
  const text = (config[key] ?? "").trim();
  if (text === "") return fallback;
  const n = Number(text);
  if (!/^-?\d+$/.test(text) || n < range[0] || n > range[1]) {
    throw fail(`${key} must be a whole number from ${range[0]} to ${range[1]}, got "${text}"`);
  }
  return n;
}

/**
 * Reads the server settings of a sqlresolver on MariaDB/MySQL or PostgreSQL
 * (`fail` builds the error for a bad value: 400 on save).
 */
export function parseServerSettings(
  engine: "mysql" | "postgres",
  config: Record<string, string>,
  fail: (why: string) => Error,
): SqlServerSettings {
  const m = privacyideaUrl(config).match(URL_REGEXP);
  if (!m?.groups) throw fail("Server, Port, User, Password and Database do not form a URL");
  const g = m.groups;
  let port = engine === "mysql" ? 3306 : 5432;
  if (g.port !== undefined && g.port !== "") {
    if (!/^\d{1,5}$/.test(g.port) || Number(g.port) < 1 || Number(g.port) > 65535) {
      throw fail(
        `the port "${g.port}" is no port number (a password with ":" or "@" must be written ` +
          `%3A and %40)`,
      );
    }
    port = Number(g.port);
  }
  const database = unquote(g.database ?? "");
  if (database === "") throw fail("Database is required");
  const settings: SqlServerSettings = {
    engine,
    driver: config.Driver ?? "",
    host: g.ipv6host ?? g.ipv4host ?? "",
    port,
    database,
    user: unquote(g.username ?? ""),
    password: unquote(g.password ?? ""),
    poolSize: intSetting(config, "poolSize", 5, [1, 100], fail),
    timeoutMs: intSetting(config, "poolTimeout", 10, [1, 600], fail) * 1000,
    recycleSeconds: Math.max(0, intSetting(config, "poolRecycle", 7200, [-1, 1e9], fail)),
  };
  for (const [key, value] of new URLSearchParams(g.query ?? "")) {
    if (engine === "mysql" && key === "charset") {
      if (!/^[A-Za-z0-9_]{1,64}$/.test(value)) {
        throw fail(`conParams charset "${value}" is invalid`);
      }
      settings.charset = value;
    } else if (engine === "mysql" && key === "unix_socket") {
      if (!value.startsWith("/")) throw fail("conParams unix_socket must be an absolute path");
      settings.socket = value;
    } else if (key === (engine === "mysql" ? "ssl_ca" : "sslrootcert")) {
      if (!value.startsWith("/")) throw fail(`conParams ${key} must be an absolute path`);
      settings.caFile = value;
    } else if (engine === "mysql" && key === "ssl_check_hostname") {
      if (!/^(true|false|1|0)$/i.test(value)) {
        throw fail(`conParams ssl_check_hostname "${value}" must be true or false`);
      }
      settings.checkHostname = /^(true|1)$/i.test(value);
    } else if (engine === "postgres" && key === "sslmode") {
      if (!["disable", "require", "verify-ca", "verify-full"].includes(value)) {
        throw fail(
          `conParams sslmode "${value}" is not supported (use disable, require, verify-ca or ` +
            "verify-full)",
        );
      }
      settings.sslMode = value as SqlServerSettings["sslMode"];
    } else if (engine === "postgres" && key === "host") {
      if (!value.startsWith("/")) throw fail("conParams host must be a socket folder (absolute)");
      settings.socket = value;
    } else {
      const known = engine === "mysql"
        ? "charset, unix_socket, ssl_ca, ssl_check_hostname"
        : "sslmode, sslrootcert, host";
      throw fail(`conParams "${key}" is not supported for ${engine} (supported: ${known})`);
    }
  }
  if (settings.host === "" && settings.socket === undefined) settings.host = "localhost";
  if (settings.checkHostname !== undefined && settings.caFile === undefined) {
    throw fail("conParams ssl_check_hostname needs ssl_ca");
  }
  if (engine === "postgres" && settings.caFile !== undefined) {
    if (settings.sslMode === undefined || settings.sslMode === "disable") {
      throw fail("conParams sslrootcert needs sslmode require, verify-ca or verify-full");
    }
  }
  return settings;
}

/** The server a setting names, for the log and admin messages (never the password). */
export function serverName(s: SqlServerSettings): string {
  return s.socket ?? `${s.host.includes(":") ? `[${s.host}]` : s.host}:${s.port}`;
}

/** Options of {@link openServerDb}. */
export interface OpenOptions {
  /** Connections at most (default: the setting's poolSize). */
  poolSize?: number;
  /** Tessera's configuration: the CA file is never one of Tessera's own files. */
  appConfig?: Config;
}

const MAX_CA_BYTES = 1_000_000;
const PEM_CERT_REGEXP = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/;

/**
 * The CA certificates of `s` (read from its file, which must hold a PEM
 * certificate and, with `appConfig`, be none of Tessera's own files;
 * ParameterError otherwise), or undefined when it names none.
 */
export function readServerCa(s: SqlServerSettings, appConfig?: Config): string | undefined {
  const path = s.caFile;
  if (path === undefined) return undefined;
  const key = s.engine === "mysql" ? "ssl_ca" : "sslrootcert";
  if (appConfig !== undefined) refuseOwnPath(appConfig, path, `conParams ${key}`);
  let text: string;
  try {
    const info = Deno.statSync(path);
    if (!info.isFile || info.size > MAX_CA_BYTES) {
      throw new ParameterError(`Cannot use conParams ${key} "${path}": not a PEM certificate file`);
    }
    text = Deno.readTextFileSync(path);
  } catch (err) {
    if (err instanceof ParameterError) throw err;
    throw new ParameterError(`Cannot read conParams ${key} "${path}": ${(err as Error).name}`);
  }
  // the content is never echoed: the file may be any file the server can read
  if (!PEM_CERT_REGEXP.test(text)) {
    throw new ParameterError(`Cannot use conParams ${key} "${path}": it holds no PEM certificate`);
  }
  return text;
}

/** Opens a pooled Kysely handle on the database server of `s` (connects on first use). */
export function openServerDb(s: SqlServerSettings, options: OpenOptions = {}): UserDb {
  const size = options.poolSize ?? s.poolSize;
  const ca = readServerCa(s, options.appConfig);
  return s.engine === "mysql" ? openMysql(s, size, ca) : openPostgres(s, size, ca);
}

/** A timeout of ours: the server did not answer in time. */
export class SqlTimeoutError extends Error {
  constructor(readonly what: string, readonly ms: number) {
    super(`${what}: no answer within ${ms / 1000} s`);
    this.name = "SqlTimeoutError";
  }
}

const ADDRESS_REGEXP = /\b(?:\d{1,3}(?:\.\d{1,3}){3}|\[[0-9a-f:.]+\])(?::\d+)?\b/gi;

/**
 * Why a statement or connection failed, in a few words that name no server
 * (the answer may reach an unauthenticated client; the log names the server).
 */
export function sqlErrorText(err: unknown): string {
  if (err instanceof SqlTimeoutError) return `the server did not answer within ${err.ms / 1000} s`;
  const e = err as { code?: string; message?: string };
  switch (e?.code) {
    case "ECONNREFUSED":
      return "the server refused the connection";
    case "ECONNRESET":
    case "EPIPE":
    case "PROTOCOL_CONNECTION_LOST":
    case "57P01":
      return "the server closed the connection";
    case "ETIMEDOUT":
    case "PROTOCOL_SEQUENCE_TIMEOUT":
    case "57014":
      return "the server did not answer in time";
    case "ENOTFOUND":
    case "EAI_AGAIN":
      return "the server's host name is unknown";
    case "ER_ACCESS_DENIED_ERROR":
    case "ER_DBACCESS_DENIED_ERROR":
    case "28P01":
    case "28000":
      return "the server refused the login";
    case "ER_BAD_DB_ERROR":
    case "3D000":
      return "the database does not exist";
    case "ER_NO_SUCH_TABLE":
    case "42P01":
      return "the table does not exist";
    case "ER_BAD_FIELD_ERROR":
    case "42703":
      return "a column of Map or Where does not exist";
  }
  // a certificate error names the host it expected: the reason alone
  if (
    /^(ERR_TLS_|CERT_|UNABLE_TO_|SELF_SIGNED|DEPTH_ZERO|HANDSHAKE_SSL)/.test(e?.code ?? "") ||
    /certificate/i.test(e?.message ?? "")
  ) {
    return "the server's TLS certificate was not accepted";
  }
  const message = String(e?.message ?? err).split("\n")[0];
  if (/timeout|timed out/i.test(message)) return "the server did not answer in time";
  return message.replace(ADDRESS_REGEXP, "<server>").slice(0, 200);
}

// --- MariaDB / MySQL ---------------------------------------------------------------------------

/** mysql2 marks errors after which the connection cannot be used as fatal. */
function isBrokenMysqlConnection(err: unknown): boolean {
  const e = err as { fatal?: boolean; code?: string };
  return e?.fatal === true || e?.code === "PROTOCOL_SEQUENCE_TIMEOUT";
}

let mysqlLoading: Promise<typeof import("mysql2")> | undefined;

// mysql2 loads with the first connection of a MariaDB/MySQL resolver: most servers have none,
// and it holds about 4 MB resident
function mysqlDriver(): Promise<typeof import("mysql2")> {
  return mysqlLoading ??= import("mysql2");
}

function openMysql(s: SqlServerSettings, size: number, ca: string | undefined): UserDb {
  let opening: Promise<MysqlDriverPool> | undefined;
  const poolOf = () =>
    opening ??= mysqlDriver().then(({ createPool }) => createMysqlPool(createPool));
  function createMysqlPool(createPool: typeof import("mysql2").createPool): MysqlDriverPool {
    const pool = createPool({
      host: s.socket ? undefined : s.host,
      port: s.socket ? undefined : s.port,
      socketPath: s.socket,
      user: s.user,
      password: s.password,
      database: s.database,
      charset: s.charset ?? "utf8mb4",
      connectionLimit: size,
      maxIdle: size,
      idleTimeout: IDLE_MS,
      waitForConnections: true,
      queueLimit: 0,
      connectTimeout: Math.min(CONNECT_TIMEOUT_MS, s.timeoutMs),
      enableKeepAlive: true,
      // ids beyond 2^53 and DECIMAL values stay exact: they come back as text
      supportBigNumbers: true,
      bigNumberStrings: true,
      dateStrings: true,
      multipleStatements: false,
      // ssl_ca: TLS with the server's certificate checked against it (and its name, unless
      // ssl_check_hostname=false)
      ssl: ca === undefined ? undefined : {
        ca,
        rejectUnauthorized: true,
        ...(s.checkHostname === false ? { checkServerIdentity: () => undefined } : {}),
      },
    });
    // an idle connection the server closed reports here; the pool drops it
    pool.on("connection", (c) => c.on("error", () => {}));
    return pool;
  }
  const recycleMs = s.recycleSeconds * 1000;
  const born = new WeakMap<object, number>();
  /** A pooled connection within the wait limit; an old one (poolRecycle) is replaced. */
  function acquire(callback: (err: unknown, conn?: PoolConnection) => void): void {
    let isSettled = false;
    const timer = setTimeout(() => {
      isSettled = true;
      callback(new SqlTimeoutError("waiting for a connection", s.timeoutMs));
    }, s.timeoutMs);
    poolOf().then(getConnection, (err) => {
      if (isSettled) return;
      clearTimeout(timer);
      isSettled = true;
      callback(err);
    });
    function getConnection(pool: MysqlDriverPool): void {
      pool.getConnection((err, conn) => {
        if (isSettled) {
          conn?.release();
          return;
        }
        clearTimeout(timer);
        isSettled = true;
        if (err) return callback(err);
        if (!born.has(conn)) born.set(conn, Date.now());
        if (recycleMs > 0 && Date.now() - born.get(conn)! > recycleMs) {
          conn.destroy();
          return acquire(callback);
        }
        callback(null, conn);
      });
    }
  }
  const bounded: MysqlPool = {
    getConnection(callback) {
      acquire((err, conn) =>
        err || !conn
          ? callback(err, undefined as never)
          : callback(null, boundedMysqlConnection(conn, s.timeoutMs))
      );
    },
    end(callback) {
      if (!opening) return callback(null);
      opening.then(
        (pool) => pool.end((err) => callback(err ?? null)),
        () => callback(null),
      );
    },
  };
  const db: UserDb = new Kysely({ dialect: new MysqlDialect({ pool: bounded }) });
  // the user lookup of every check: a prepared statement (mysql2 keeps it per connection), which
  // spares the server parsing it and the client formatting it
  attachPreparedQuery(db, (sql, params) =>
    new Promise((resolve, reject) => {
      acquire((err, conn) => {
        if (err || !conn) return reject(err);
        conn.execute({ sql, timeout: s.timeoutMs }, params as ExecuteValues[], (e, rows) => {
          if (e && isBrokenMysqlConnection(e)) conn.destroy();
          else conn.release();
          if (e) reject(e);
          else resolve(rows as Record<string, unknown>[]);
        });
      });
    }));
  return db;
}

function boundedMysqlConnection(
  conn: PoolConnection,
  timeoutMs: number,
): MysqlPoolConnection {
  let isBroken = false;
  return {
    config: conn.config,
    threadId: conn.threadId,
    connect: (callback) => conn.connect(callback),
    destroy: () => conn.destroy(),
    query(
      sql: string,
      parameters: unknown,
      callback?: (error: unknown, result: MysqlQueryResult) => void,
    ) {
      // mysql2's options form carries the statement's time limit
      const query = conn.query as unknown as (
        options: { sql: string; timeout: number },
        values: unknown,
        callback: (error: unknown, result: MysqlQueryResult) => void,
      ) => ReturnType<MysqlPoolConnection["query"]>;
      return query.call(conn, { sql, timeout: timeoutMs }, parameters, (err, result) => {
        if (err && isBrokenMysqlConnection(err)) isBroken = true;
        callback?.(err, result);
      });
    },
    release() {
      // a statement that got no answer may still run on that connection
      if (isBroken) conn.destroy();
      else conn.release();
    },
  };
}

// --- PostgreSQL --------------------------------------------------------------------------------

const QUERY_READ_TIMEOUT = "Query read timeout";
const INT8_OID = 20;

// Tessera's own pool reads int8 as numbers (db/postgres.ts); a user store's ids may exceed 2^53
const USER_STORE_TYPES = {
  getTypeParser(oid: number, format?: string) {
    if (oid === INT8_OID && format !== "binary") return (text: string) => text;
    return (pg.types.getTypeParser as (oid: number, format?: string) => unknown)(oid, format);
  },
};

/**
 * A client whose connection attempt is bounded by its own limit (the pool's
 * `connectionTimeoutMillis` is the longer wait for a pooled connection), and
 * whose statement that got no answer in time is closed, not reused.
 */
class BoundedUserStoreClient extends pg.Client {
  constructor(config: pg.ClientConfig & { tesseraConnectMs?: number } = {}) {
    // the pool hands its options with the password made non-enumerable: a spread would drop it
    super({
      ...config,
      password: config.password,
      connectionTimeoutMillis: config.tesseraConnectMs ?? CONNECT_TIMEOUT_MS,
    });
  }

  // deno-lint-ignore no-explicit-any
  override query(...args: any[]): any {
    // deno-lint-ignore no-explicit-any
    const result = (super.query as (...a: any[]) => any)(...args);
    if (result && typeof result.then === "function") {
      return result.catch((err: Error) => {
        if (err?.message === QUERY_READ_TIMEOUT) {
          this.end().catch(() => {});
          // deno-lint-ignore no-explicit-any
          (this as any).connection?.stream?.destroy();
        }
        throw err;
      });
    }
    return result;
  }
}

function openPostgres(s: SqlServerSettings, size: number, ca: string | undefined): UserDb {
  // libpq's modes; as there, require with a root certificate checks the chain (verify-ca)
  const mode = s.sslMode === "require" && ca !== undefined ? "verify-ca" : s.sslMode;
  const ssl = mode === undefined || mode === "disable"
    ? false
    : mode === "require"
    ? { rejectUnauthorized: false }
    : {
      ...(ca === undefined ? {} : { ca }),
      rejectUnauthorized: true,
      ...(mode === "verify-ca" ? { checkServerIdentity: () => undefined } : {}),
    };
  const pool = new pg.Pool({
    host: s.socket ?? s.host,
    port: s.port,
    user: s.user,
    password: s.password,
    database: s.database,
    ssl,
    max: size,
    // the wait for a pooled connection, including opening one
    connectionTimeoutMillis: s.timeoutMs,
    idleTimeoutMillis: IDLE_MS,
    maxLifetimeSeconds: s.recycleSeconds,
    Client: BoundedUserStoreClient,
    // each connection attempt, the statement on the server and, for a server that does
    // not answer at all, on the client
    tesseraConnectMs: Math.min(CONNECT_TIMEOUT_MS, s.timeoutMs),
    statement_timeout: s.timeoutMs,
    query_timeout: s.timeoutMs + 500,
    types: USER_STORE_TYPES,
    application_name: "tessera-sqlresolver",
  } as pg.PoolConfig);
  pool.on("error", () => {});
  pool.on("connect", (client) => client.on("error", () => {}));
  const db: UserDb = new Kysely({ dialect: new PostgresDialect({ pool }) });
  // the user lookup of every check: a named statement, prepared once per connection
  attachPreparedQuery(db, async (sql, params) => {
    const name = `tessera_${createHash("sha1").update(sql).digest("hex").slice(0, 20)}`;
    const res = await pool.query({ name, text: sql, values: params as unknown[] });
    return res.rows;
  });
  return db;
}
