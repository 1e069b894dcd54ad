/**
 * Which engine a database handle runs on, for the few statements whose SQL
 * differs between SQLite and PostgreSQL (JSON aggregation, for one).
 *
 * @module
 */
import { PostgresAdapter } from "kysely";
import type { Db } from "./schema.ts";

/** Whether `db` (a handle or a transaction of one) runs on PostgreSQL. */
export function isPostgres(db: Db): boolean {
  return db.getExecutor().adapter instanceof PostgresAdapter;
}
