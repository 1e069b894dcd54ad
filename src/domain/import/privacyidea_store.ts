/**
 * Read-only access to a privacyIDEA database (spec 12 §4): whole tables of a
 * fixed list, as plain rows, from SQLite or PostgreSQL. Nothing is written
 * to the source.
 *
 * @module
 */
import { DatabaseSync } from "node:sqlite";
import pg from "pg";
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
  "smsgateway",
  "privacyideaserver",
  "caconnector",
  "subscription",
  "periodictask",
  "customuserattribute",
  "serviceid",
  "pidea_audit",
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
    close: () => Promise.resolve(db.close()),
  };
}

async function openPostgres(url: string): Promise<PiSource> {
  const client = new pg.Client({ connectionString: url });
  try {
    await client.connect();
  } catch (err) {
    throw new ParameterError(
      `Cannot connect to the privacyIDEA database: ${(err as Error).message}`,
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
    close: async () => await client.end(),
  };
}

/**
 * Opens a privacyIDEA database by URL: `sqlite:///path` (SQLAlchemy form),
 * `sqlite:path` or a plain file path, `postgresql://…` (also `+psycopg2`).
 */
export async function openPiSource(url: string): Promise<PiSource> {
  const pgUrl = url.replace(/^postgresql\+\w+:\/\//, "postgresql://");
  if (/^postgres(ql)?:\/\//.test(pgUrl)) return await openPostgres(pgUrl);
  if (/^mysql(\+\w+)?:\/\//.test(url)) {
    throw new ParameterError(
      "Cannot read MySQL/MariaDB databases yet: copy the privacyIDEA database into PostgreSQL or SQLite first (e.g. with pgloader), then import from there",
    );
  }
  const path = sqlitePath(url);
  if (path === undefined) {
    throw new ParameterError(
      `Cannot read the database URL "${url}": expected sqlite:///<path> or postgresql://…`,
    );
  }
  return openSqlite(path);
}
