/**
 * Tells errors of the database (busy, locked, unreachable, restarting) from
 * errors of the statement or its values: the first kind goes away by itself
 * and is worth retrying, the second never does.
 *
 * @module
 */

// SQLite primary result codes that say nothing about the statement: BUSY, LOCKED,
// NOMEM, READONLY (e.g. a file made read-only for a moment), IOERR, FULL, CANTOPEN, PROTOCOL
const SQLITE_TRANSIENT_CODES = new Set([5, 6, 7, 8, 10, 13, 14, 15]);
// `exec()` errors of node:sqlite carry only the message
const SQLITE_TRANSIENT_REGEXP =
  /database is locked|database table is locked|database is busy|disk I\/O error|database or disk is full|unable to open database|out of memory|readonly database|database is not open/i;

// PostgreSQL SQLSTATE classes of the server's state, not the statement's: 08 connection
// exception, 40 transaction rollback (serialization failure, deadlock), 53 insufficient
// resources (too many connections, disk full), 57 operator intervention (admin or crash
// shutdown, cannot connect now, query canceled), 58 system error (I/O)
const PG_TRANSIENT_CLASSES = new Set(["08", "40", "53", "57", "58"]);
// lock_not_available; read_only_sql_transaction (a standby during a failover)
const PG_TRANSIENT_STATES = new Set(["55P03", "25006"]);

// socket and name lookup errors of the driver's connection
const NET_TRANSIENT_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ECONNABORTED",
  "EPIPE",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ENETDOWN",
  "EADDRNOTAVAIL",
  "EAI_AGAIN",
  "ENOTFOUND",
]);
// node-postgres reports a lost or unobtainable connection with these messages and no code, and
// a statement the client stopped waiting for (a server that does not answer) with "Query read
// timeout"
const PG_CONNECTION_REGEXP =
  /connection terminated|connection error|not queryable|timeout exceeded when trying to connect|server closed the connection|the database system is (?:starting up|shutting down|in recovery)|connection refused|query read timeout/i;

const SQLSTATE_REGEXP = /^[0-9A-Z]{5}$/;

/**
 * True when `err` comes from the database's state (SQLite busy or locked,
 * PostgreSQL unreachable, restarting or shut down by an admin), so the same
 * statement may succeed later; false for errors of the statement or its values
 * (constraints, types, lengths), which a retry cannot fix.
 */
export function isTransientDbError(err: unknown): boolean {
  for (let e: unknown = err, depth = 0; e !== undefined && e !== null && depth < 5; depth++) {
    if (typeof e !== "object") return false;
    const { code, errcode, message, errors, cause } = e as {
      code?: unknown;
      errcode?: unknown;
      message?: unknown;
      errors?: unknown;
      cause?: unknown;
    };
    const text = typeof message === "string" ? message : "";
    if (code === "ERR_SQLITE_ERROR") {
      if (typeof errcode === "number") return SQLITE_TRANSIENT_CODES.has(errcode & 0xff);
      return SQLITE_TRANSIENT_REGEXP.test(text);
    }
    if (code === "ERR_INVALID_STATE") return SQLITE_TRANSIENT_REGEXP.test(text);
    if (typeof code === "string") {
      if (NET_TRANSIENT_CODES.has(code)) return true;
      if (SQLSTATE_REGEXP.test(code)) {
        return PG_TRANSIENT_CLASSES.has(code.slice(0, 2)) || PG_TRANSIENT_STATES.has(code);
      }
    }
    if (PG_CONNECTION_REGEXP.test(text)) return true;
    // a connection attempt to several addresses fails with all their errors
    if (Array.isArray(errors) && errors.some((x) => isTransientDbError(x))) return true;
    e = cause;
  }
  return false;
}

/**
 * True when the client gave up waiting for a statement's answer (the server
 * stopped answering): unlike a refused connection or a cancelled statement,
 * the statement may have taken effect.
 */
export function isLostAnswer(err: unknown): boolean {
  for (let e: unknown = err, depth = 0; e !== undefined && e !== null && depth < 5; depth++) {
    if (typeof e !== "object") return false;
    const { message, cause } = e as { message?: unknown; cause?: unknown };
    if (typeof message === "string" && LOST_ANSWER_REGEXP.test(message)) return true;
    e = cause;
  }
  return false;
}

// node-postgres's query_timeout (see postgres.ts)
const LOST_ANSWER_REGEXP = /^Query read timeout$/;
