/**
 * Authentication of API callers: the JWT of the request and the caller's identity.
 *
 * @module
 */
import type { Context } from "hono";
import type { AppEnv, Identity } from "./context.ts";
import { AppError, AuthError, HttpError, httpStatusOf } from "../errors.ts";
import { verifyJwt } from "./jwt.ts";
import { isTransientDbError } from "../db/transient_error.ts";
import { AUTHENTICATION_FAILED, isPolicyFlagSet } from "../domain/validate/mod.ts";

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

/** Who a failed request is about, for the `hide_specific_error_message` policies. */
function flagContext(c: Context<AppEnv>) {
  const audit = c.get("audit");
  return {
    user: audit?.user || undefined,
    realm: audit?.realm || undefined,
    clientIp: c.get("clientIp") ?? "",
    userAgent: c.get("userAgent") ?? "",
  };
}

/**
 * Authentication policy `hide_specific_error_message` (privacyIDEA 3.13): an
 * AuthError (a failed `/auth`, a refused JWT) says only `Authentication
 * failed.`, in the message and `detail.message`, without `loginmode`; the
 * audit keeps the real reason. Matched on the user the request names, if any.
 */
export async function hiddenAuthError(c: Context<AppEnv>, err: AuthError): Promise<AuthError> {
  const deps = c.get("deps");
  try {
    const hide = await isPolicyFlagSet(
      deps,
      "authentication",
      "hide_specific_error_message",
      flagContext(c),
    );
    if (!hide) return err;
  } catch (policyErr) {
    // the policies cannot be read (e.g. a conflict): the error goes out as it is
    deps.log.warn("Cannot read hide_specific_error_message", { error: policyErr as Error });
    return err;
  }
  const { loginmode: _, ...detail } = err.detail ?? {};
  return new AuthError(AUTHENTICATION_FAILED, err.code, {
    ...detail,
    message: AUTHENTICATION_FAILED,
  });
}

/**
 * Token policies `hide_specific_error_message_for_ttype` and
 * `…_for_offline_refill` (privacyIDEA 3.13): any error of the endpoint becomes
 * `message` with `code`, under the original error's HTTP status; the audit
 * keeps the real reason. Other errors are returned as they are.
 */
export async function hiddenTokenError(
  c: Context<AppEnv>,
  err: unknown,
  hide: { action: string; message: string; code: number },
): Promise<unknown> {
  const deps = c.get("deps");
  const isSet = await isPolicyFlagSet(deps, "token", hide.action, flagContext(c))
    .catch(() => false);
  if (!isSet) return err;
  const audit = c.get("audit");
  if (audit) {
    audit.info ||= err instanceof AppError ? err.message : "An internal server error occurred";
  }
  if (!(err instanceof AppError)) {
    deps.log.error("Unhandled error", { path: c.req.path, error: err as Error });
  }
  // the original error's status (a database that is away: 503, as it would have been)
  const status = !(err instanceof AppError) && isTransientDbError(err) ? 503 : httpStatusOf(err);
  return new HttpError(status, hide.message, hide.code);
}
