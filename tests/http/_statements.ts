/**
 * Counts the statements a request sends to the database: SQLite through the
 * connection's statement observer (the direct path and Kysely's alike),
 * PostgreSQL through the driver's client. Used by the tests that count token
 * lookups per request.
 *
 * @module
 */
import pg from "pg";
import type { TestApp } from "../test_app.ts";
import { TEST_ENGINE } from "../test_db.ts";
import { sqliteConnectionOf } from "../../src/db/database.ts";

/** A statement that reads the `token` table (not `tokeninfo` or `token_realm`). */
export const TOKEN_READ_REGEXP =
  /^\s*(?:with|select)\b[\s\S]*\b(?:from|join)\s+"?token"?(?:\s|$|,|\))/i;

/** The statements `fn` sends to the database of `t`, on the engine of the run. */
export async function statementsOf(t: TestApp, fn: () => Promise<unknown>): Promise<string[]> {
  const seen: string[] = [];
  if (TEST_ENGINE === "sqlite") {
    const conn = sqliteConnectionOf(t.deps.db)!;
    conn.observe = (sql) => seen.push(sql);
    try {
      await fn();
    } finally {
      conn.observe = undefined;
    }
    return seen;
  }
  // every statement of the pool goes through pg's Client.query (the pool's client class
  // extends it); this test's app is the only one of the process sending statements now
  const proto = pg.Client.prototype as unknown as { query: (...a: unknown[]) => unknown };
  const original = proto.query;
  proto.query = function (this: unknown, ...args: unknown[]) {
    const text = typeof args[0] === "string" ? args[0] : (args[0] as { text?: string })?.text;
    if (text) seen.push(text);
    return original.apply(this, args);
  };
  try {
    await fn();
  } finally {
    proto.query = original;
  }
  return seen;
}
