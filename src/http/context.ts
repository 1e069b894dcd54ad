/**
 * The Hono environment of Tessera: per-request variables.
 *
 * @module
 */
import type { Deps } from "../deps.ts";
import type { AuditEntry } from "../domain/audit/mod.ts";

/** Who called: from a verified JWT. */
export interface Identity {
  username: string;
  realm: string;
  role: "admin" | "user";
  resolver: string;
  authtype: string;
  rights: string[];
}

/** Request parameters merged from query, form, JSON body and path (spec 01 §1). */
export type Params = Record<string, unknown>;

/** The audit row of the request, plus the outcome a handler may set explicitly. */
export interface RequestAudit extends AuditEntry {
  /** Authentication outcome; defaults to "status < 400" when a handler leaves it unset. */
  outcome?: boolean;
}

/** Hono environment type of the app. */
export type AppEnv = {
  Bindings: { remoteAddr?: { hostname?: string } } | undefined;
  Variables: {
    deps: Deps;
    params: Params;
    identity: Identity | undefined;
    audit: RequestAudit;
    clientIp: string;
    userAgent: string;
    /** Set by /validate and /auth: envelope id 2 with result.authentication. */
    authStyle: boolean;
  };
};
