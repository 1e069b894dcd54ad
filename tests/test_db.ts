/**
 * The database of a test app: SQLite in memory, or — when the test run was
 * started on PostgreSQL (`TEST_PG_URL`, set by `tests/run.ts`) — a
 * fresh PostgreSQL database copied from the migrated template
 * `TEST_PG_TEMPLATE`, dropped again on close. One switch for the
 * whole suite: every test that builds its app with `createTestApp()` runs on
 * the engine of the run.
 *
 * @module
 */
import { sql } from "kysely";
import { migrateToLatest, openDatabase } from "../src/db/database.ts";
import type { Db } from "../src/db/schema.ts";

/** The PostgreSQL cluster URL of this run, or undefined for SQLite. */
export const TEST_PG_URL: string | undefined = Deno.env.get("TEST_PG_URL") || undefined;
const TEMPLATE = Deno.env.get("TEST_PG_TEMPLATE") || "tessera_template";

/** The engine of this test run. */
export const TEST_ENGINE: "sqlite" | "postgres" = TEST_PG_URL ? "postgres" : "sqlite";

let counter = 0;

/** Runs one statement on the cluster's `postgres` database with a connection of its own. */
async function adminStatement(query: ReturnType<typeof sql>): Promise<void> {
  // a connection per statement: a pool kept open across tests would trip Deno's leak checks
  const admin = openDatabase(TEST_PG_URL!, { poolSize: 1 });
  try {
    await query.execute(admin);
  } finally {
    await admin.destroy();
  }
}

/** A migrated database for one test app, and how to drop it. */
export interface TestDatabase {
  url: string;
  db: Db;
  /** Closes the handle and removes the database. */
  drop(): Promise<void>;
}

function dbUrl(base: string, name: string): string {
  const u = new URL(base);
  u.pathname = `/${name}`;
  return u.toString();
}

/** Opens a new, migrated test database on the run's engine. */
export async function openTestDatabase(): Promise<TestDatabase> {
  if (!TEST_PG_URL) {
    const db = openDatabase(":memory:");
    await migrateToLatest(db);
    return { url: ":memory:", db, drop: () => db.destroy() };
  }
  const name = `t_${Deno.pid}_${++counter}_${crypto.randomUUID().slice(0, 8)}`;
  await adminStatement(sql`create database ${sql.id(name)} template ${sql.id(TEMPLATE)}`);
  const url = dbUrl(TEST_PG_URL, name);
  const db = openDatabase(url, { poolSize: 4 });
  return {
    url,
    db,
    async drop() {
      await db.destroy();
      await adminStatement(sql`drop database if exists ${sql.id(name)} with (force)`);
    },
  };
}

/** Drops a test database by URL (after its handles are closed elsewhere). */
export async function dropTestDatabase(url: string): Promise<void> {
  if (!TEST_PG_URL) return;
  const name = new URL(url).pathname.slice(1);
  await adminStatement(sql`drop database if exists ${sql.id(name)} with (force)`);
}
