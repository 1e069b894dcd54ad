/**
 * The audit row, its searchable columns and its columns' widths: what the
 * store, the writer and the search share (no imports, so each can depend on it).
 *
 * @module
 */

/** One audit row as written. Never holds passwords, PINs, OTPs or secrets. */
export interface AuditEntry {
  ts: number;
  action: string;
  success: boolean;
  serial: string;
  tokenType: string;
  user: string;
  realm: string;
  resolver: string;
  administrator: string;
  client: string;
  userAgent: string;
  info: string;
  policies: string;
  durationMs: number;
  node: string;
  /** The request's id (`X-Request-ID`, `request_id` in its log lines); empty outside HTTP. */
  requestId: string;
  /**
   * The answer of an authentication request (`/validate/check`, `radiuscheck`, `samlcheck`,
   * `triggerchallenge`): `ACCEPT`, `REJECT`, `CHALLENGE` or `DECLINED`; "" for other requests
   * and for authentication requests that failed with an error, as privacyIDEA.
   */
  authentication: string;
}

/** Searchable audit columns (`GET /audit/` filters). */
export const AUDIT_FILTER_COLUMNS = [
  "action",
  "serial",
  "token_type",
  "user",
  "realm",
  "resolver",
  "administrator",
  "client",
  "user_agent",
  "info",
  "node",
  "policies",
  "request_id",
  "authentication",
] as const;

/**
 * The width (characters) of each text column of the audit table, as the
 * migrations create it (0001_foundation, 0017_audit_request_id,
 * 0020_audit_authentication). PostgreSQL refuses a longer value, which would
 * cost the request its row, so {@link fitAuditEntry} cuts every field to its
 * width before it is written. tests/http/audit_widths_test.ts compares this
 * table with the migrated schema on both engines.
 */
export const AUDIT_COLUMN_WIDTHS = {
  action: 200,
  serial: 40,
  tokenType: 40,
  user: 255,
  realm: 255,
  resolver: 255,
  administrator: 255,
  client: 100,
  userAgent: 255,
  info: 1000,
  policies: 1000,
  node: 255,
  requestId: 128,
  authentication: 12,
} as const satisfies Partial<Record<keyof AuditEntry, number>>;

const WIDTHS = Object.entries(AUDIT_COLUMN_WIDTHS) as [keyof typeof AUDIT_COLUMN_WIDTHS, number][];

/** The first `width` characters (code points, as PostgreSQL counts them) of `text`. */
function cut(text: string, width: number): string {
  // a string of at most `width` UTF-16 units has at most `width` characters
  if (text.length <= width) return text;
  let end = 0;
  for (let count = 0; count < width && end < text.length; count++) {
    end += text.codePointAt(end)! > 0xffff ? 2 : 1;
  }
  return text.slice(0, end);
}

/**
 * `entry` with every text field cut to its column's width and each NUL
 * character (which PostgreSQL's text refuses; a request path may hold one) as
 * U+FFFD; the entry itself when all fit.
 */
export function fitAuditEntry(entry: AuditEntry): AuditEntry {
  let out: AuditEntry | undefined;
  for (const [key, width] of WIDTHS) {
    const value = entry[key];
    // a value of another type is the database's to refuse (the writer logs and skips that row)
    if (typeof value !== "string") continue;
    if (value.length <= width && !value.includes("\0")) continue;
    const fitted = cut(value.replaceAll("\0", "\uFFFD"), width);
    if (fitted === value) continue;
    out ??= { ...entry };
    out[key] = fitted;
  }
  return out ?? entry;
}
