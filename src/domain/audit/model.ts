/**
 * The audit row and its searchable columns: the types the store, the writer
 * and the search share (no imports, so each can depend on it).
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
