/**
 * Counts the SQL statements a test app's database runs, by their text, without a hook in
 * production code: on SQLite through the connection's `observe` (every statement, direct
 * or through Kysely, ends there), on PostgreSQL by wrapping `pg.Client.prototype.query`
 * for the duration of the count (every statement of the handle goes through a pooled
 * client). One count at a time per process; a test file's tests run one after another.
 *
 * @module
 */
import pg from "pg";
import type { Db } from "../src/db/schema.ts";
import { sqliteConnectionOf } from "../src/db/database.ts";

/**
 * A token lookup: a statement that reads whole rows of the token table (`select * … from
 * "token"`), as every token_store function that loads tokens does. Counts, existence checks
 * and other tables' subqueries on `token` are no lookups.
 */
export const TOKEN_LOOKUP = /^\s*select \*[\s\S]*?\bfrom "token"(?![\w"])/i;

/** Runs `fn` and returns the statements matching `match` it ran on `db`, in order. */
export async function statementsDuring<T>(
  db: Db,
  match: RegExp,
  fn: () => Promise<T>,
): Promise<{ result: T; statements: string[] }> {
  const statements: string[] = [];
  const note = (sql: string) => {
    if (match.test(sql)) statements.push(sql.replace(/\s+/g, " "));
  };
  const sqlite = sqliteConnectionOf(db);
  if (sqlite) {
    const before = sqlite.observe;
    sqlite.observe = (sql, ms) => {
      note(sql);
      before?.(sql, ms);
    };
    try {
      return { result: await fn(), statements };
    } finally {
      sqlite.observe = before;
    }
  }
  const proto = pg.Client.prototype as unknown as { query: (...args: unknown[]) => unknown };
  const original = proto.query;
  proto.query = function (this: unknown, ...args: unknown[]) {
    const first = args[0];
    const text = typeof first === "string" ? first : (first as { text?: string })?.text;
    if (typeof text === "string") note(text);
    return original.apply(this, args);
  };
  try {
    return { result: await fn(), statements };
  } finally {
    proto.query = original;
  }
}
