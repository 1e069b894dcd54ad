/**
 * Authentication of API callers: the JWT of the request and the caller's identity.
 *
 * @module
 */
import type { Context } from "hono";
import type { AppEnv, Identity } from "./context.ts";
import { AuthError } from "../errors.ts";
import { verifyJwt } from "./jwt.ts";

/** The bare JWT of the request (`PI-Authorization`, else `Authorization`), if any. */
export function tokenOf(c: Context<AppEnv>): string | undefined {
  const prefix = c.get("deps").config.auth.headerPrefix;
  const raw = (prefix ? c.req.header(`${prefix}-Authorization`) : undefined) ??
    c.req.header("Authorization");
  if (raw === undefined || raw.trim() === "") return undefined;
  const t = raw.trim();
  // a "Bearer " prefix is a harmless extension (spec 01 §5)
  return t.toLowerCase().startsWith("bearer ") ? t.slice(7).trim() : t;
}

/** Verifies the caller's JWT, stores the identity and fills the audit row. */
export async function authenticate(c: Context<AppEnv>): Promise<Identity> {
  const token = tokenOf(c);
  if (token === undefined) {
    throw new AuthError("Authentication failure. Missing Authorization header.", 4033);
  }
  const identity = await verifyJwt(c.get("deps"), token);
  c.set("identity", identity);
  const audit = c.get("audit");
  if (identity.role === "admin") {
    audit.administrator = identity.username;
  } else {
    audit.user = identity.username;
    audit.realm = identity.realm;
    audit.resolver = identity.resolver;
  }
  return identity;
}

/**
 * A user-role caller can only act on himself: `user`, `realm` and `resolver`
 * are overwritten and `userid` dropped (spec 01 §5).
 */
export function forceCallerParams(c: Context<AppEnv>, identity: Identity): void {
  const p = c.get("params");
  p.user = identity.username;
  p.realm = identity.realm;
  p.resolver = identity.resolver;
  delete p.userid;
}
