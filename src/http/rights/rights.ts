/**
 * Rights helpers for handlers, on the objects {@link guard} resolved:
 * policy condition data, realm visibility of list endpoints, caller-scope
 * action values. The rights decision itself is made once, in `guard.ts`.
 *
 * @module
 */
import type { Context } from "hono";
import type { AppEnv, RequestTarget } from "../context.ts";
import {
  adminRealmScope,
  allowedRealms,
  checkRight,
  type ConditionData,
  type RightContext,
  rightValue,
  rightValues,
} from "../../domain/policy/mod.ts";
import { getUserAttributes } from "../../domain/user/mod.ts";
import { tokenConditionData, type TokenWithInfo } from "../../domain/token/mod.ts";
import { containerRealms, tokenRealms } from "../../domain/request/context.ts";
import type { Container } from "../../domain/container/mod.ts";
import { PolicyError } from "../../errors.ts";

/**
 * The request's own condition data: headers, environment and parameters (the
 * conditions never see `pass` or `password`); the caller adds the user and the
 * token the request is about.
 */
export function requestSections(c: Context<AppEnv>): ConditionData {
  return {
    "HTTP Request header": () => Promise.resolve(Object.fromEntries(c.req.raw.headers.entries())),
    "HTTP Environment": {
      REQUEST_METHOD: c.req.method,
      PATH_INFO: c.req.path,
      REMOTE_ADDR: c.get("clientIp"),
      HTTP_USER_AGENT: c.get("userAgent"),
    },
    "Request Data": c.get("params"),
  };
}

/**
 * Condition data of the request: headers, environment, parameters (no
 * secrets), and lazily the user and the token the request acts on.
 */
export function requestConditionData(c: Context<AppEnv>, target: RequestTarget): ConditionData {
  const deps = c.get("deps");
  const token = target.tokens[0];
  return {
    ...requestSections(c),
    userinfo: () => target.user ? getUserAttributes(deps, target.user) : Promise.resolve(undefined),
    ...tokenConditionData(() => Promise.resolve(token)),
  };
}

/**
 * The policy context of an action on `token`: its realms plus its owner's realm
 * ({@link tokenRealms}), its owner. The rights step decides every token with it.
 */
export function tokenRightContext(token: TokenWithInfo): RightContext {
  return {
    realm: tokenRealms(token),
    user: token.owner?.login ?? null,
    resolver: token.owner?.resolver ?? null,
  };
}

/**
 * The policy context of an action on a container: its realms plus its owner's realm, and its
 * owner (`ownerless`: no owner is "any user", as privacyIDEA's container_assign_user).
 */
export function containerRightContext(container: Container): RightContext {
  return {
    realm: containerRealms(container),
    user: container.owner?.login ?? null,
    resolver: container.owner?.resolver ?? null,
  };
}

/** The policy context of the request's main object: its container, token, else its user. */
function objectContext(target: RequestTarget): RightContext {
  if (target.container) return containerRightContext(target.container);
  const t = target.tokens[0];
  if (t) return tokenRightContext(t);
  if (target.login !== undefined) {
    return {
      realm: target.userRealms[0] ?? [],
      user: target.login,
      resolver: target.user?.resolver ?? null,
    };
  }
  return {};
}

/** The rights context of a request: its main object, client, agent, condition data. */
export function rightContextOf(c: Context<AppEnv>): RightContext {
  const target = c.get("target");
  return {
    ...objectContext(target),
    client: c.get("clientIp"),
    userAgent: c.get("userAgent"),
    conditions: requestConditionData(c, target),
    policies: target.policies,
  };
}

/** Appends policy names to the audit column `policies`. */
export function addAuditPolicies(c: Context<AppEnv>, names: readonly string[]): void {
  const audit = c.get("audit");
  const all = new Set(audit.policies ? audit.policies.split(",") : []);
  for (const n of names) all.add(n);
  audit.policies = [...all].join(",").slice(0, 1000);
}

function wildcardFilter(allowed: string[], pattern: string): string[] {
  const body = pattern.split("*").map((p) => p.replace(/[.+?^${}()|[\]\\]/g, "\\$&")).join(".*");
  const re = new RegExp(`^${body}$`, "i");
  return allowed.filter((r) => re.test(r));
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
  const ctx = {
    client: c.get("clientIp"),
    userAgent: c.get("userAgent"),
    policies: c.get("target")?.policies,
  };
  const allowed = await allowedRealms(c.get("deps"), identity, action, ctx);
  if (allowed === undefined) return undefined;
  if (requested.realms) return allowed.filter((r) => requested.realms!.includes(r));
  if (requested.realm !== undefined) return wildcardFilter(allowed, requested.realm);
  return allowed;
}

/**
 * Realms an admin's policies reach at all (any action): the realm list of
 * `GET /realm/`; undefined when not limited.
 */
export async function adminVisibleRealms(c: Context<AppEnv>): Promise<string[] | undefined> {
  const identity = c.get("identity");
  if (!identity || identity.role !== "admin") return undefined;
  return await adminRealmScope(c.get("deps"), identity, {
    client: c.get("clientIp"),
    userAgent: c.get("userAgent"),
    policies: c.get("target")?.policies,
  });
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

/**
 * Whether the caller may do `action` on a container the handler found itself (`/token/init`
 * with `container_serial`): the rule of the rights step for container routes (an admin's right
 * must reach its owner or one of its realms; a user must own it and hold the user right).
 */
export async function mayActOnContainer(
  c: Context<AppEnv>,
  container: Container,
  action: string,
): Promise<boolean> {
  const identity = c.get("identity");
  if (!identity) return false;
  if (identity.role === "user") {
    const owner = container.owner;
    const me = c.get("target")?.user;
    const isOwned = owner !== undefined && me !== undefined && owner.realm === me.realm &&
      (owner.uid && me.uid
        ? owner.uid === me.uid && owner.resolver === me.resolver
        : owner.login === me.login);
    if (!isOwned) return false;
  }
  try {
    const granted = await checkRight(c.get("deps"), identity, action, {
      ...(identity.role === "admin" ? containerRightContext(container) : {}),
      client: c.get("clientIp"),
      userAgent: c.get("userAgent"),
      policies: c.get("target")?.policies,
    });
    if (granted.length > 0) addAuditPolicies(c, granted);
    return true;
  } catch (err) {
    if (err instanceof PolicyError) return false;
    throw err;
  }
}
