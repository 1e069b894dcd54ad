/**
 * Opens the database named by the config's URL and runs migrations.
 *
 * @module
 */
import { Kysely } from "kysely";
import { type MigrationResultSet, Migrator } from "kysely/migration";
import { LockWaitingSqliteDialect, NodeSqliteDatabase } from "./sqlite_adapter.ts";
import { attachDirect } from "./direct.ts";
import { MIGRATIONS } from "./migrations/mod.ts";
import { isPostgresUrl, openPostgres, type PostgresOptions } from "./postgres.ts";
import type { Database, Db } from "./schema.ts";

/**
 * Opens a database from a URL: `sqlite:<path>`, `:memory:`, or
 * `postgres://user:password@host:port/db` (`?sslmode=…` for TLS).
 * `statementTimeoutMs` bounds every call: PostgreSQL's statements and pool
 * waits, SQLite's wait for another connection's write lock (busy timeout).
 */
export function openDatabase(url: string, options: PostgresOptions = {}): Db {
  if (isPostgresUrl(url)) return openPostgres(url, options);
  let path: string;
  if (url === ":memory:" || url === "sqlite::memory:") path = ":memory:";
  else if (url.startsWith("sqlite:")) path = url.slice("sqlite:".length);
  else throw new Error(`Unsupported database URL "${url}": expected sqlite:<path> or postgres://…`);
  const raw = new NodeSqliteDatabase(path, {
    hotPathTables: true,
    busyTimeoutMs: options.statementTimeoutMs,
  });
  const db = new Kysely<Database>({ dialect: new LockWaitingSqliteDialect(raw) });
  attachDirect(db, raw.direct);
  connections.set(db, raw);
  return db;
}

const connections = new WeakMap<Db, NodeSqliteDatabase>();

/** The SQLite connection under a handle {@link openDatabase} returned (tests, benchmarks). */
export function sqliteConnectionOf(db: Db): NodeSqliteDatabase | undefined {
  return connections.get(db);
}

/** Thrown when the database holds migrations this build does not know. */
export class DatabaseTooNewError extends Error {}

/** Runs every pending migration; refuses a database newer than this build. */
export async function migrateToLatest(db: Db): Promise<string[]> {
  const migrator = new Migrator({
    db,
    provider: { getMigrations: () => Promise.resolve(MIGRATIONS) },
  });
  const known = new Set(Object.keys(MIGRATIONS));
  const unknown = await appliedUnknown(db, known);
  if (unknown.length > 0) {
    throw new DatabaseTooNewError(
      `The database was migrated by a newer Tessera (unknown migrations: ${
        unknown.join(", ")
      }); refusing to start`,
    );
  }
  const result: MigrationResultSet = await migrator.migrateToLatest();
  if (result.error) {
    const failed = result.results?.find((r) => r.status === "Error")?.migrationName ?? "?";
    throw new Error(
      `Migration ${failed} failed: ${(result.error as Error).message ?? result.error}`,
    );
  }
  return (result.results ?? []).filter((r) => r.status === "Success").map((r) => r.migrationName);
}

async function appliedUnknown(db: Db, known: Set<string>): Promise<string[]> {
  const tables = await db.introspection.getTables();
  if (!tables.some((t) => t.name === "kysely_migration")) return [];
  // deno-lint-ignore no-explicit-any
  const rows = await (db as Kysely<any>).selectFrom("kysely_migration").select("name").execute();
  return rows.map((r: { name: string }) => r.name).filter((n: string) => !known.has(n));
}
