/**
 * Read-only access to a privacyIDEA database (spec 12 §4): whole tables of a
 * fixed list, as plain rows, from SQLite, PostgreSQL or MariaDB/MySQL. Nothing
 * is written to the source. Every table is read in one (read-only) transaction,
 * so a privacyIDEA that keeps running meanwhile cannot hand over tokens of one
 * moment and their tokeninfo of another.
 *
 * Values come as the engines hold them (booleans as 0/1 on MySQL, t/f text
 * nowhere: the drivers decode them); JSON columns come as their text on every
 * engine, never parsed, so a value is carried as privacyIDEA stored it.
 *
 * @module
 */
import { DatabaseSync } from "node:sqlite";
import { Buffer } from "node:buffer";
import pg from "pg";
import type mysql from "mysql2/promise";
import { ParameterError } from "../../errors.ts";

/** One row as the source returns it (column names as privacyIDEA spells them). */
export type PiRow = Record<string, unknown>;

/** The privacyIDEA tables the migration carries over (read whole). */
export const PI_CARRIED_TABLES = [
  "token",
  "tokeninfo",
  "tokenowner",
  "tokenrealm",
  "realm",
  "resolver",
  "resolverconfig",
  "resolverrealm",
  "policy",
  "policycondition",
  "description",
  "eventhandler",
  "eventhandleroption",
  "eventhandlercondition",
  "machineresolver",
  "machineresolverconfig",
  "machinetoken",
  "machinetokenoptions",
  "radiusserver",
  "smtpserver",
  "admin",
  "config",
] as const;

/** Every privacyIDEA table the migration reads or reports on. */
export const PI_TABLES = [
  ...PI_CARRIED_TABLES,
  "tokengroup",
  "tokentokengroup",
  "tokencontainer",
  "tokencontainerowner",
  "tokencontainerrealm",
  "tokencontainerstates",
  "tokencontainerinfo",
  "tokencontainertoken",
  "tokencontainertemplate",
  "smsgateway",
  "smsgatewayoption",
  "privacyideaserver",
  "caconnector",
  "caconnectorconfig",
  "subscription",
  "periodictask",
  "periodictaskoption",
  "customuserattribute",
  "serviceid",
  "pidea_audit",
  "challenge",
  "alembic_version",
] as const;

/** A table name of {@link PI_TABLES}. */
export type PiTable = (typeof PI_TABLES)[number];

/** An open privacyIDEA database. */
export interface PiSource {
  /** Whether the schema has `table`. */
  has(table: PiTable): Promise<boolean>;
  /** Every row of `table` ordered by its first column; [] when the schema lacks the table. */
  rows(table: PiTable): Promise<PiRow[]>;
  /** Number of rows of `table` (0 when absent). */
  count(table: PiTable): Promise<number>;
  close(): Promise<void>;
}

function sqlitePath(url: string): string | undefined {
  if (url.startsWith("sqlite:")) {
    // SQLAlchemy form: sqlite:///relative or sqlite:////absolute
    const rest = url.slice("sqlite:".length);
    return rest.startsWith("//") ? rest.slice(2).replace(/^\/(?=\/)/, "") : rest;
  }
  if (!url.includes("://")) return url;
  return undefined;
}

function quoted(table: PiTable): string {
  // names come from PI_TABLES only; quoting keeps them literal
  return `"${table}"`;
}

function openSqlite(path: string): PiSource {
  let db: DatabaseSync;
  try {
    db = new DatabaseSync(path, { readOnly: true });
    db.prepare("select count(*) from sqlite_master").get();
    // one read transaction: every table as of one moment
    db.exec("begin");
  } catch (err) {
    throw new ParameterError(
      `Cannot open the privacyIDEA database "${path}": ${(err as Error).message}`,
    );
  }
  const exists = (t: PiTable) =>
    db.prepare("select 1 from sqlite_master where type = 'table' and name = ?").get(t) !==
      undefined;
  return {
    has: (t) => Promise.resolve(exists(t)),
    rows: (t) =>
      Promise.resolve(
        exists(t) ? db.prepare(`select * from ${quoted(t)} order by 1`).all() as PiRow[] : [],
      ),
    count: (t) =>
      Promise.resolve(
        exists(t)
          ? Number((db.prepare(`select count(*) as n from ${quoted(t)}`).get() as { n: number }).n)
          : 0,
      ),
    close: () => {
      db.exec("rollback");
      db.close();
      return Promise.resolve();
    },
  };
}

/** `url` without its password, for messages: `scheme://user@host:port/db`. */
export function serverOf(url: string): string {
  try {
    const u = new URL(url);
    u.password = "";
    u.search = "";
    return u.toString();
  } catch {
    return url.replace(/\/\/([^:@/]*):[^@/]*@/, "//$1@").replace(/\?.*$/, "");
  }
}

// json and jsonb as the text PostgreSQL holds (pg would parse them)
const PG_JSON_OIDS = new Set([114, 3802]);

async function openPostgres(url: string): Promise<PiSource> {
  const client = new pg.Client({
    connectionString: url,
    types: {
      getTypeParser: ((oid: number, format?: "text" | "binary") =>
        PG_JSON_OIDS.has(oid)
          ? (text: string) =>
            text
          : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
    },
  });
  // a server that is down or refuses the login: the client reports it here, with no password
  client.on("error", () => {});
  try {
    await client.connect();
    await client.query("begin transaction isolation level repeatable read read only");
  } catch (err) {
    await client.end().catch(() => {});
    throw new ParameterError(
      `Cannot connect to the privacyIDEA database ${serverOf(url)}: ${(err as Error).message}`,
    );
  }
  const exists = async (t: PiTable) =>
    (await client.query("select to_regclass($1) as r", [`public.${t}`])).rows[0].r !== null;
  return {
    has: exists,
    rows: async (t) =>
      (await exists(t)) ? (await client.query(`select * from ${quoted(t)} order by 1`)).rows : [],
    count: async (t) =>
      (await exists(t))
        ? Number((await client.query(`select count(*) as n from ${quoted(t)}`)).rows[0].n)
        : 0,
    close: async () => {
      await client.query("rollback").catch(() => {});
      await client.end();
    },
  };
}

/** Query parameters of a MySQL URL that Tessera honours (SQLAlchemy's pymysql/mysqldb names). */
const MYSQL_PARAMETERS = [
  "charset",
  "unix_socket",
  "connect_timeout",
  "ssl_ca",
  "ssl_cert",
  "ssl_key",
  "ssl_check_hostname",
] as const;

/** How to reach a MariaDB/MySQL server, read from a URL (see {@link openPiSource}). */
export interface MysqlTarget {
  host: string;
  port: number;
  user: string;
  password: string;
  database: string;
  socketPath?: string;
  connectTimeoutMs: number;
  ssl?: { ca?: string; cert?: string; key?: string; verifyIdentity: boolean };
}

const MYSQL_SCHEME = /^(mysql|mariadb)(\+\w+)?:\/\//;

/**
 * Reads `mysql://user:pw@host[:port]/db[?…]` (also `mariadb://` and SQLAlchemy's
 * `mysql+pymysql://`, `mysql+mysqldb://`, `mariadb+mariadbconnector://` …, as pi.cfg's
 * `SQLALCHEMY_DATABASE_URI` has it). Certificates named by `ssl_*` are read here.
 */
export async function mysqlTargetOf(url: string): Promise<MysqlTarget> {
  const shown = serverOf(url);
  let u: URL;
  try {
    u = new URL(url.replace(MYSQL_SCHEME, "mysql://"));
  } catch {
    throw new ParameterError(
      `Cannot read the database URL ${shown}: expected mysql://user:password@host[:port]/database`,
    );
  }
  const database = decodeURIComponent(u.pathname.replace(/^\//, ""));
  if (database === "" || database.includes("/")) {
    throw new ParameterError(
      `Cannot read the database URL ${shown}: it names no database (mysql://user:password@host/database)`,
    );
  }
  const params = new Map<string, string>();
  for (const [k, v] of u.searchParams) params.set(k, v);
  const unknown = [...params.keys()].filter((k) =>
    !(MYSQL_PARAMETERS as readonly string[]).includes(k)
  );
  if (unknown.length > 0) {
    // an ignored TLS or socket setting could connect otherwise than the operator meant
    throw new ParameterError(
      `Cannot use the database URL parameters ${unknown.join(", ")} (supported: ${
        MYSQL_PARAMETERS.join(", ")
      })`,
    );
  }
  const charset = params.get("charset");
  if (charset !== undefined && !/^utf8(mb[34])?$/i.test(charset)) {
    throw new ParameterError(
      `Cannot use charset=${charset}: Tessera reads the database as utf8mb4 (utf8 and utf8mb4 are accepted)`,
    );
  }
  const timeout = params.get("connect_timeout") ?? "10";
  if (!/^\d+$/.test(timeout) || Number(timeout) < 1 || Number(timeout) > 600) {
    throw new ParameterError(
      `Cannot use connect_timeout=${timeout}: expected whole seconds from 1 to 600`,
    );
  }
  const readPem = async (name: string): Promise<string | undefined> => {
    const path = params.get(name);
    if (path === undefined) return undefined;
    try {
      return await Deno.readTextFile(path);
    } catch (err) {
      throw new ParameterError(`Cannot read ${name} "${path}": ${(err as Error).message}`);
    }
  };
  const [ca, cert, key] = [
    await readPem("ssl_ca"),
    await readPem("ssl_cert"),
    await readPem("ssl_key"),
  ];
  const checkHostname = params.get("ssl_check_hostname");
  if (checkHostname !== undefined && !/^(true|false|1|0)$/i.test(checkHostname)) {
    throw new ParameterError(
      `Cannot use ssl_check_hostname=${checkHostname}: expected true or false`,
    );
  }
  const isTls = ca !== undefined || cert !== undefined || key !== undefined;
  if (!isTls && checkHostname !== undefined) {
    throw new ParameterError("ssl_check_hostname needs ssl_ca (or ssl_cert and ssl_key)");
  }
  return {
    host: u.hostname.replace(/^\[|\]$/g, "") || "localhost",
    port: u.port === "" ? 3306 : Number(u.port),
    user: decodeURIComponent(u.username),
    password: decodeURIComponent(u.password),
    database,
    socketPath: params.get("unix_socket"),
    connectTimeoutMs: Number(timeout) * 1000,
    ssl: isTls
      ? { ca, cert, key, verifyIdentity: !/^(false|0)$/i.test(checkHostname ?? "true") }
      : undefined,
  };
}

/** A MySQL value as the other engines give it: binary text as a string. */
function plainMysqlValue(v: unknown): unknown {
  return Buffer.isBuffer(v) ? v.toString("utf8") : v;
}

async function openMysql(url: string): Promise<PiSource> {
  const target = await mysqlTargetOf(url);
  const where = target.socketPath
    ? `${serverOf(url)} (socket ${target.socketPath})`
    : serverOf(url);
  // mysql2 loads with the first MariaDB/MySQL migration source: the server rarely needs it
  const { default: mysql } = await import("mysql2/promise");
  let conn: mysql.Connection;
  try {
    conn = await mysql.createConnection({
      host: target.host,
      port: target.port,
      user: target.user,
      password: target.password,
      database: target.database,
      socketPath: target.socketPath,
      connectTimeout: target.connectTimeoutMs,
      charset: "utf8mb4",
      // dates as text: no time zone of this machine is applied to privacyIDEA's values
      dateStrings: true,
      supportBigNumbers: true,
      ssl: target.ssl
        ? {
          ca: target.ssl.ca,
          cert: target.ssl.cert,
          key: target.ssl.key,
          rejectUnauthorized: true,
          verifyIdentity: target.ssl.verifyIdentity,
        }
        : undefined,
      // JSON columns (MySQL's JSON type, MariaDB's JSON alias) as their text, as elsewhere
      jsonStrings: true,
    });
  } catch (err) {
    throw new ParameterError(
      `Cannot connect to the privacyIDEA database ${where}: ${(err as Error).message}`,
    );
  }
  // the client reports a lost connection here too; the failing query says it to the caller
  conn.on("error", () => {});
  try {
    await conn.query("set session transaction isolation level repeatable read");
    await conn.query("start transaction with consistent snapshot, read only");
  } catch (err) {
    await conn.end().catch(() => {});
    throw new ParameterError(
      `Cannot read the privacyIDEA database ${where}: ${(err as Error).message}`,
    );
  }
  // names come from PI_TABLES only; backticks keep them literal (MySQL's identifier quote)
  const exists = async (t: PiTable) => {
    const [rows] = await conn.query(
      "select count(*) as n from information_schema.tables " +
        "where table_schema = database() and table_name = ?",
      [t],
    );
    return Number((rows as { n: number }[])[0].n) > 0;
  };
  return {
    has: exists,
    rows: async (t) => {
      if (!(await exists(t))) return [];
      const [rows] = await conn.query(`select * from \`${t}\` order by 1`);
      return (rows as PiRow[]).map((r) =>
        Object.fromEntries(Object.entries(r).map(([k, v]) => [k, plainMysqlValue(v)]))
      );
    },
    count: async (t) => {
      if (!(await exists(t))) return 0;
      const [rows] = await conn.query(`select count(*) as n from \`${t}\``);
      return Number((rows as { n: number }[])[0].n);
    },
    close: async () => {
      await conn.query("rollback").catch(() => {});
      await conn.end().catch(() => {});
    },
  };
}

/**
 * Opens a privacyIDEA database by URL: `sqlite:///path` (SQLAlchemy form),
 * `sqlite:path` or a plain file path, `postgresql://…` (also `+psycopg2`),
 * `mysql://…` or `mariadb://…` (also `mysql+pymysql://` and the other SQLAlchemy
 * driver suffixes; see {@link mysqlTargetOf}).
 */
export async function openPiSource(url: string): Promise<PiSource> {
  const pgUrl = url.replace(/^postgresql\+\w+:\/\//, "postgresql://");
  if (/^postgres(ql)?:\/\//.test(pgUrl)) return await openPostgres(pgUrl);
  if (MYSQL_SCHEME.test(url)) return await openMysql(url);
  const path = sqlitePath(url);
  if (path === undefined) {
    throw new ParameterError(
      `Cannot read the database URL "${serverOf(url)}": expected sqlite:///<path>, ` +
        "postgresql://…, mysql://… or mariadb://…",
    );
  }
  return openSqlite(path);
}
