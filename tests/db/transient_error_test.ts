import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { isTransientDbError } from "../../src/db/transient_error.ts";

function withProps(message: string, props: Record<string, unknown>): Error {
  return Object.assign(new Error(message), props);
}

const CASES: { name: string; err: unknown; isTransient: boolean }[] = [
  {
    name: "SQLite busy (statement)",
    err: withProps("database is locked", { code: "ERR_SQLITE_ERROR", errcode: 5 }),
    isTransient: true,
  },
  {
    name: "SQLite busy (exec, message only)",
    err: withProps("database is locked", { code: "ERR_SQLITE_ERROR" }),
    isTransient: true,
  },
  {
    name: "SQLite locked table (extended code 262)",
    err: withProps("database table is locked", { code: "ERR_SQLITE_ERROR", errcode: 262 }),
    isTransient: true,
  },
  {
    name: "SQLite disk full",
    err: withProps("database or disk is full", { code: "ERR_SQLITE_ERROR", errcode: 13 }),
    isTransient: true,
  },
  {
    name: "SQLite NOT NULL constraint (1299)",
    err: withProps("NOT NULL constraint failed: audit.action", {
      code: "ERR_SQLITE_ERROR",
      errcode: 1299,
    }),
    isTransient: false,
  },
  {
    name: "node:sqlite value that cannot be bound",
    err: withProps("Provided value cannot be bound to SQLite parameter 2.", {
      code: "ERR_INVALID_ARG_TYPE",
    }),
    isTransient: false,
  },
  {
    name: "PostgreSQL admin shutdown 57P01",
    err: withProps("terminating connection due to administrator command", { code: "57P01" }),
    isTransient: true,
  },
  {
    name: "PostgreSQL starting up 57P03",
    err: withProps("the database system is starting up", { code: "57P03" }),
    isTransient: true,
  },
  {
    name: "PostgreSQL too many connections 53300",
    err: withProps("sorry, too many clients already", { code: "53300" }),
    isTransient: true,
  },
  {
    name: "PostgreSQL connection failure 08006",
    err: withProps("connection failure", { code: "08006" }),
    isTransient: true,
  },
  {
    name: "PostgreSQL deadlock 40P01",
    err: withProps("deadlock detected", { code: "40P01" }),
    isTransient: true,
  },
  {
    name: "PostgreSQL value too long 22001",
    err: withProps("value too long for type character varying(40)", { code: "22001" }),
    isTransient: false,
  },
  {
    name: "PostgreSQL NUL byte 22021",
    err: withProps('invalid byte sequence for encoding "UTF8": 0x00', { code: "22021" }),
    isTransient: false,
  },
  {
    name: "PostgreSQL not-null violation 23502",
    err: withProps('null value in column "action" violates not-null constraint', {
      code: "23502",
    }),
    isTransient: false,
  },
  {
    name: "connection refused",
    err: withProps("connect ECONNREFUSED 127.0.0.1:5432", { code: "ECONNREFUSED" }),
    isTransient: true,
  },
  {
    name: "connection reset",
    err: withProps("read ECONNRESET", { code: "ECONNRESET" }),
    isTransient: true,
  },
  {
    name: "node-postgres lost connection",
    err: new Error("Connection terminated unexpectedly"),
    isTransient: true,
  },
  {
    name: "node-postgres pool timeout",
    err: new Error("timeout exceeded when trying to connect"),
    isTransient: true,
  },
  {
    name: "refused on every address (AggregateError)",
    err: new AggregateError([withProps("connect ECONNREFUSED ::1:5432", { code: "ECONNREFUSED" })]),
    isTransient: true,
  },
  {
    name: "wrapped cause",
    err: new Error("Cannot write", {
      cause: withProps("database is locked", { code: "ERR_SQLITE_ERROR", errcode: 5 }),
    }),
    isTransient: true,
  },
  { name: "a plain TypeError", err: new TypeError("x is undefined"), isTransient: false },
  { name: "not an error", err: "database is locked", isTransient: false },
  { name: "undefined", err: undefined, isTransient: false },
];

for (const c of CASES) {
  Deno.test(`isTransientDbError: ${c.name} → ${c.isTransient}`, () => {
    assert.equal(isTransientDbError(c.err), c.isTransient);
  });
}

Deno.test("isTransientDbError: the errors node:sqlite really throws on a locked file", () => {
  const dir = Deno.makeTempDirSync();
  const a = new DatabaseSync(`${dir}/t.sqlite`);
  const b = new DatabaseSync(`${dir}/t.sqlite`);
  try {
    a.exec("PRAGMA journal_mode = WAL; CREATE TABLE t (x INTEGER NOT NULL)");
    b.exec("PRAGMA busy_timeout = 0");
    a.exec("BEGIN IMMEDIATE");
    assert.throws(() => b.exec("INSERT INTO t VALUES (1)"), (e) => isTransientDbError(e));
    assert.throws(() => b.prepare("INSERT INTO t VALUES (?)").run(1), (e) => isTransientDbError(e));
    a.exec("COMMIT");
    assert.throws(
      () => b.prepare("INSERT INTO t VALUES (?)").run(null),
      (e) => !isTransientDbError(e),
    );
  } finally {
    a.close();
    b.close();
    Deno.removeSync(dir, { recursive: true });
  }
});
