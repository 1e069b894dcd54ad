/**
 * Admin/user rights enforcement (spec 04 §4.10). Mount after `adminOnly` or
 * `adminOrUser`: `routes.post("/disable", adminOrUser, requireRight("disable"), …)`.
 *
 * @module
 */
import type { Context, MiddlewareHandler } from "hono";
import type { AppEnv } from "./context.ts";
import { AppError, AuthError, PolicyError } from "../errors.ts";
import {
  allowedRealms,
  checkRight,
  type ConditionData,
  type RightContext,
  rightValue,
  rightValues,
} from "../domain/policy/mod.ts";
import { getUserInfo, resolveUser, splitUser } from "../domain/user/mod.ts";
import { findTokenBySerial, tokenConditionData, type TokenWithInfo } from "../domain/token/mod.ts";

function param(c: Context<AppEnv>, name: string): string | null {
  const v = c.get("params")[name];
  return typeof v === "string" ? v : typeof v === "number" ? String(v) : null;
}

function pathSerial(c: Context<AppEnv>): string | null {
  const v = c.req.param("serial" as never) as string | undefined;
  return v === undefined || v === "" ? null : v;
}

/**
 * Condition data of the request: headers, environment, parameters (no
 * secrets), and lazily the user acted on (`user`/`realm`) and the token of `serial`.
 */
export function requestConditionData(c: Context<AppEnv>): ConditionData {
  const deps = c.get("deps");
  let token: Promise<TokenWithInfo | undefined> | undefined;
  const loadToken = () => {
    const serial = param(c, "serial") ?? pathSerial(c);
    return token ??= serial ? findTokenBySerial(deps, serial) : Promise.resolve(undefined);
  };
  return {
    "HTTP Request header": () => Promise.resolve(Object.fromEntries(c.req.raw.headers.entries())),
    "HTTP Environment": {
      REQUEST_METHOD: c.req.method,
      PATH_INFO: c.req.path,
      REMOTE_ADDR: c.get("clientIp"),
      HTTP_USER_AGENT: c.get("userAgent"),
    },
    "Request Data": c.get("params"),
    userinfo: async () => {
      const given = param(c, "user");
      if (!given) return undefined;
      try {
        const { login, realm } = await splitUser(deps, given, param(c, "realm") || undefined);
        const ref = await resolveUser(deps, login, realm, param(c, "resolver") || undefined);
        return ref ? await getUserInfo(deps, ref) : undefined;
      } catch (err) {
        // an unknown user or realm means "no user" for the condition
        if (err instanceof AppError) return undefined;
        throw err;
      }
    },
    ...tokenConditionData(loadToken),
  };
}

/** The rights context of a request: the user acted on (params), client, agent, condition data. */
export function rightContextOf(c: Context<AppEnv>): RightContext {
  return {
    user: param(c, "user"),
    realm: param(c, "realm")?.toLowerCase() ?? null,
    resolver: param(c, "resolver"),
    serial: param(c, "serial") ?? pathSerial(c),
    client: c.get("clientIp"),
    userAgent: c.get("userAgent"),
    conditions: requestConditionData(c),
  };
}

/** Options of {@link requireRight}. */
export interface RightOptions {
  /** Replaces the default denial message (a function gets the caller's role). */
  message?: string | ((role: "admin" | "user") => string);
  /** Check admins only; user-role callers pass (for endpoints open to both roles). */
  isAdminOnly?: boolean;
  /** Do not match on the request's user/realm/resolver (e.g. audit reads). */
  ignoreUser?: boolean;
}

/**
 * Middleware: the caller must hold `action` (admin scope for admins, user
 * scope for users); `action` may be computed from the request.
 */
export function requireRight(
  action: string | ((c: Context<AppEnv>) => string),
  options: RightOptions = {},
): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const identity = c.get("identity");
    if (!identity) {
      // requireRight must run after adminOnly / adminOrUser
      throw new AuthError("Authentication failure. Missing Authorization header.", 4033);
    }
    if (options.isAdminOnly && identity.role !== "admin") return await next();
    const name = typeof action === "string" ? action : action(c);
    const ctx = rightContextOf(c);
    if (options.ignoreUser) {
      ctx.user = null;
      ctx.realm = null;
      ctx.resolver = null;
      ctx.serial = null;
    }
    const granted = await checkRight(c.get("deps"), identity, name, {
      ...ctx,
      message: typeof options.message === "function"
        ? options.message(identity.role)
        : options.message,
    });
    if (granted.length > 0) addAuditPolicies(c, granted);
    await next();
  };
}

/** {@link requireRight} for admins only; user-role callers pass unchecked. */
export function requireAdminRight(
  action: string | ((c: Context<AppEnv>) => string),
  options: Omit<RightOptions, "isAdminOnly"> = {},
): MiddlewareHandler<AppEnv> {
  return requireRight(action, { ...options, isAdminOnly: true });
}

/** Appends policy names to the audit column `policies`. */
export function addAuditPolicies(c: Context<AppEnv>, names: readonly string[]): void {
  const audit = c.get("audit");
  const all = new Set(audit.policies ? audit.policies.split(",") : []);
  for (const n of names) all.add(n);
  audit.policies = [...all].join(",").slice(0, 1000);
}

/**
 * Realms an admin may see for `action` (realm-limited admin policies), narrowed
 * by the realms the request asked for; undefined when not limited.
 */
export async function visibleRealms(
  c: Context<AppEnv>,
  action: string,
  requested: { realm?: string; realms?: string[] } = {},
): Promise<string[] | undefined> {
  const identity = c.get("identity");
  if (!identity) return undefined;
  const allowed = await allowedRealms(c.get("deps"), identity, action, rightContextOf(c));
  if (allowed === undefined) return undefined;
  if (requested.realms) return allowed.filter((r) => requested.realms!.includes(r));
  if (requested.realm !== undefined) {
    const body = requested.realm.split("*").map((p) => p.replace(/[.+?^${}()|[\]\\]/g, "\\$&"))
      .join(".*");
    const pattern = new RegExp(`^${body}$`);
    return allowed.filter((r) => pattern.test(r));
  }
  return allowed;
}

/**
 * Multi-serial calls (spec 04 §4.10): the serials the caller may apply `action`
 * to, checked one by one on the token realms; the others are `denied`. When
 * none remain, 403/303 "... is not allowed for any of the serials provided!".
 */
export async function serialsAllowed(
  c: Context<AppEnv>,
  action: string,
  serials: readonly string[],
): Promise<{ allowed: string[]; denied: string[] }> {
  const identity = c.get("identity");
  if (!identity || serials.length === 0) return { allowed: [...serials], denied: [] };
  const allowed: string[] = [];
  const denied: string[] = [];
  const base = rightContextOf(c);
  for (const serial of serials) {
    try {
      await checkRight(c.get("deps"), identity, action, { ...base, serial });
      allowed.push(serial);
    } catch (err) {
      if (!(err instanceof PolicyError)) throw err;
      denied.push(serial);
    }
  }
  if (allowed.length === 0) {
    const who = identity.role === "admin" ? "Admin" : "User";
    throw new PolicyError(
      `${who} actions are defined, but the action ${action} is not allowed for any of the serials provided!`,
    );
  }
  return { allowed, denied };
}

/** The caller-scope value of a unique action for this request (e.g. `otp_pin_set_random`). */
export async function requestRightValue(
  c: Context<AppEnv>,
  action: string,
): Promise<string | undefined> {
  const identity = c.get("identity");
  if (!identity) return undefined;
  return await rightValue(c.get("deps"), identity, action, rightContextOf(c));
}

/** The caller-scope values of a multi-valued action for this request (e.g. `hide_tokeninfo`). */
export async function requestRightValues(c: Context<AppEnv>, action: string): Promise<string[]> {
  const identity = c.get("identity");
  if (!identity) return [];
  return await rightValues(c.get("deps"), identity, action, rightContextOf(c));
}
