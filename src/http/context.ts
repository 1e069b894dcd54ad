/**
 * The Hono environment of Tessera: per-request variables.
 *
 * @module
 */
import type { Deps } from "../deps.ts";
import type { AuditEntry } from "../domain/audit/mod.ts";
import type { TokenWithInfo } from "../domain/token/mod.ts";
import type { RequestContext } from "../domain/request/context.ts";
import type { PendingCommits } from "../db/direct.ts";

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
  /** Set by a handler whose requests write no audit row (the web interface's static files). */
  isUnaudited?: boolean;
}

/**
 * The objects a request acts on, resolved and checked by the rights step
 * (`guard.ts`) before the handler runs: the domain's {@link RequestContext}
 * plus what only HTTP knows. Handlers act on these, never on the raw
 * `serial`/`user`/`realm` parameters, and pass the checked objects on.
 */
export interface RequestTarget extends RequestContext {
  /** The path parameters of the answering route (decoded). */
  path: Record<string, string>;
  /**
   * The rights decision for a token the handler finds only later (a serial named inside an
   * uploaded file): the same rule as for a token the request names. Resolves to false when
   * refused; absent on public routes.
   */
  authorizeToken?: (token: TokenWithInfo) => Promise<boolean>;
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
    /**
     * The user a trusted proxy authenticated (`server.remote_user_header`, privacyIDEA's
     * REMOTE_USER); undefined when none or when the header is not believed.
     */
    remoteUser: string | undefined;
    /** The request's objects, resolved and checked (see {@link RequestTarget}). */
    target: RequestTarget;
    /** Set by /validate and /auth: envelope id 2 with result.authentication. */
    authStyle: boolean;
    /**
     * The request's hot-path writes a handler leaves uncommitted (SQLite's write group): the
     * audit step commits them with the request's audit row before the answer leaves.
     */
    writes: PendingCommits;
  };
};
