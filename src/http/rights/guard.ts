/**
 * The one rights step of every request. It runs before the route handler:
 *
 * 1. finds the route that will answer and its rule in {@link ROUTE_RIGHTS}
 *    (no rule → refused, so a new route cannot be reachable unguarded);
 * 2. checks the caller's JWT and role;
 * 3. resolves the objects the handler will touch — the user (after
 *    `user@realm` splitting and the default realm), the token(s) by the one
 *    serial of the request ({@link requestSerial}: the path's first), the
 *    realms a token is put into — into a {@link RequestTarget};
 * 4. decides the policy action on those objects: for an admin, every token is
 *    matched with its own realms (plus its owner's realm) and every user with
 *    the realm they were resolved in, never with a caller-supplied `realm` in
 *    their place; for a user, the token must be theirs;
 * 5. for a token action on all of a user's tokens (a user and no serial),
 *    loads that user's tokens once the request is allowed;
 * 6. hands the target to the handler (`c.var.target`), which acts on exactly
 *    those objects, passes them on to the domain and does not read
 *    `serial`/`user`/`realm` again (the event handlers read the same
 *    target); a token the handler only finds later (a serial inside an
 *    uploaded file) is decided by the same rule through `target.authorizeToken`.
 *
 * @module
 */
import type { Context, MiddlewareHandler } from "hono";
import { matchedRoutes } from "hono/route";
import type { AppEnv, Identity, RequestTarget } from "../context.ts";
import {
  AuthError,
  missingParameter,
  PolicyError,
  ResourceNotFoundError,
  UserError,
} from "../../errors.ts";
import { ROUTE_RIGHTS, routeKey, type RouteRule } from "./route_rights.ts";
import { authenticate, forceCallerParams } from "../auth.ts";
import { pathParam, stringParam } from "../params.ts";
import {
  addAuditPolicies,
  containerRightContext,
  requestConditionData,
  tokenRightContext,
} from "./rights.ts";
import { containerNotFound, findContainer } from "../../domain/container/mod.ts";
import {
  adminRealmScope,
  allowedRealms,
  checkRight,
  loadPolicySet,
  type RightContext,
} from "../../domain/policy/mod.ts";
import { resolveUser, splitUser } from "../../domain/user/mod.ts";
import { realmsOfResolver } from "../../domain/realm/mod.ts";
import {
  findTokenBySerial,
  findTokensBySerials,
  getTokensOfUser,
  isOwner,
  TOKEN_NOT_FOUND_MESSAGE,
  USER_NOT_FOUND_MESSAGE,
} from "../../domain/token/mod.ts";

const PATH_PARAM_REGEXP = /:([A-Za-z0-9_]+)/g;

/**
 * The route that answers the request: the first matched one that is not
 * middleware (`use("*")`); an `all("/path")` route is a handler too.
 */
function answeringRoute(c: Context<AppEnv>): { index: number; method: string; path: string } {
  const routes = matchedRoutes(c);
  const index = routes.findIndex((r) => r.method !== "ALL" || !r.path.endsWith("*"));
  return index < 0
    ? { index, method: "", path: "" }
    : { index, method: routes[index].method, path: routes[index].path };
}

/** The answering route's path parameters, decoded as the handler will see them. */
function pathParamsOf(c: Context<AppEnv>, index: number, path: string): Record<string, string> {
  const out: Record<string, string> = {};
  const saved = c.req.routeIndex;
  c.req.routeIndex = index;
  try {
    for (const m of path.matchAll(PATH_PARAM_REGEXP)) out[m[1]] = pathParam(c, m[1]);
  } finally {
    c.req.routeIndex = saved;
  }
  return out;
}

/**
 * The serial of this request: the path's `:serial`, else the `serial`
 * parameter. Every check and every handler use this one accessor.
 */
export function requestSerial(
  params: Record<string, unknown>,
  path: Record<string, string>,
): string | undefined {
  if (path.serial) return path.serial;
  const v = params.serial;
  return typeof v === "string" && v !== "" ? v : typeof v === "number" ? String(v) : undefined;
}

/** `serials` (list or CSV) or a CSV `serial` of a bulk request; undefined for one serial. */
function bulkSerials(params: Record<string, unknown>, single: string | undefined) {
  const raw = params.serials;
  if (Array.isArray(raw)) return raw.map((s) => String(s).trim()).filter((s) => s !== "");
  if (typeof raw === "string" && raw !== "") {
    return raw.split(",").map((s) => s.trim()).filter((s) => s !== "");
  }
  if (single !== undefined && single.includes(",")) {
    return single.split(",").map((s) => s.trim()).filter((s) => s !== "");
  }
  return undefined;
}

/** A target that names nothing yet. */
function emptyTarget(path: Record<string, string>): RequestTarget {
  return { names: {}, denied: [], tokens: [], userRealms: [], path };
}

/** Resolves the objects of a request (step 3). */
async function resolveTarget(
  c: Context<AppEnv>,
  rule: RouteRule,
  path: Record<string, string>,
): Promise<RequestTarget> {
  const deps = c.get("deps");
  const p = c.get("params");
  const target = emptyTarget(path);
  const objects = rule.objects ?? "none";
  if (objects === "none") return target;
  if (objects === "container" && !rule.createsContainer) {
    const raw = path.container_serial ?? p.container_serial;
    const cserial = typeof raw === "string" && raw !== "" ? raw : undefined;
    if (cserial === undefined) throw missingParameter("container_serial");
    target.names.containerSerial = cserial;
    // an unknown container is a 404 before any right is decided (as privacyIDEA)
    target.container = await findContainer(deps, cserial);
    if (!target.container) throw containerNotFound(cserial);
  }
  if (objects === "token" && rule.serialParams) {
    // the request names its tokens by these parameters (e.g. `from` and `to` of a copy)
    for (const name of rule.serialParams) {
      const serial = stringParam(p, name);
      const t = serial ? await findTokenBySerial(deps, serial) : undefined;
      if (t && !target.tokens.some((x) => x.id === t.id)) target.tokens.push(t);
    }
  } else if (objects === "token" || rule.containerTokens) {
    const serial = requestSerial(p, path);
    // a serial in the path names one token: a `serials` parameter cannot widen it
    const list = path.serial ? undefined : bulkSerials(p, serial);
    target.names.serial = serial;
    if (list) {
      target.serials = list;
      // one lookup for the whole list; the tokens in the list's order
      const found = await findTokensBySerials(deps, list);
      for (const s of list) {
        const t = found.find((x) => x.serial === s);
        if (t) target.tokens.push(t);
      }
    } else if (serial !== undefined) {
      target.serial = serial;
      const t = await findTokenBySerial(deps, serial);
      if (t) target.tokens.push(t);
    }
  }
  const given = rule.ignoresUserParam ? "" : path.user || stringParam(p, "user") || "";
  const realmParam = path.realm || stringParam(p, "realm") || "";
  const resolver = path.resolver || stringParam(p, "resolver") || undefined;
  target.names.user = given || undefined;
  target.names.realm = realmParam || undefined;
  target.names.resolver = resolver;
  if (rule.namesUserByResolver) {
    // a user named by resolver (POST/PUT/DELETE /user): every realm of that resolver
    if (given !== "") target.login = given;
    target.userRealms = resolver ? await realmsOfResolver(deps, resolver) : [];
    target.resolver = resolver;
  } else if (given !== "") {
    const split = await splitUser(deps, given, realmParam || undefined);
    target.user = await resolveUser(deps, split.login, split.realm, resolver);
    if (!rule.isUserFilter) {
      target.login = split.login;
      target.userRealms = split.realm === "" ? [] : [split.realm];
    }
  } else if (realmParam !== "" && (objects === "token" || rule.createsContainer)) {
    target.placeRealm = realmParam.toLowerCase();
  }
  // a list filtered by a named realm: that realm must be allowed
  if (rule.isUserFilter && realmParam !== "") target.filterRealm = realmParam.toLowerCase();
  return target;
}

/**
 * The audit row of an admin's request names whom it concerns, as privacyIDEA's
 * before_request: the user named (resolved, else as given), else the owner of
 * the one token named by serial, else the realm named. Before the rights
 * decision, so a refused request records it too; a user caller's row already
 * names the caller.
 */
function auditObjectOwner(c: Context<AppEnv>, target: RequestTarget): void {
  const audit = c.get("audit");
  const owner = target.user ?? target.container?.owner ??
    (target.serials ? undefined : target.tokens[0]?.owner);
  if (owner) {
    audit.user = owner.login;
    audit.realm = owner.realm;
    audit.resolver = owner.resolver;
  } else if (target.login !== undefined) {
    // as given (the user does not exist): no longer than the column
    audit.user = target.login.slice(0, 255);
    audit.realm = (target.userRealms[0] ?? "").slice(0, 255);
  } else {
    audit.realm = (target.placeRealm ?? target.filterRealm ?? "").slice(0, 255);
  }
}

/** The realm contexts the action must be granted in (step 4, admins). */
function adminContexts(rule: RouteRule, target: RequestTarget, params: Record<string, unknown>) {
  const out: RightContext[] = [];
  if (target.login !== undefined) {
    const resolver = target.user?.resolver ?? target.resolver ?? null;
    // an unknown realm (or a resolver in no realm) is no realm: only unrestricted policies match
    if (target.userRealms.length === 0) out.push({ realm: [], user: target.login, resolver });
    for (const realm of target.userRealms) out.push({ realm, user: target.login, resolver });
  }
  if (target.placeRealm !== undefined) out.push({ realm: target.placeRealm });
  if (target.filterRealm !== undefined) out.push({ realm: target.filterRealm });
  for (const realm of rule.movesTo?.(params) ?? []) out.push({ realm });
  if (target.container) {
    const ctx = containerRightContext(target.container);
    // assigning an owner-less container: the owner condition is not asked (helpdesk admins
    // may give their users containers nobody owns); its realms still are
    out.push(rule.isContainerAssign && !target.container.owner ? { ...ctx, user: null } : ctx);
  }
  if (rule.createsContainer && out.length === 0) {
    // a container that lands in no realm: only admins whose policies are not realm-bound
    out.push({ realm: [] });
  }
  if (rule.createsToken && out.length === 0 && target.tokens.length === 0) {
    // a token that lands in no realm: only admins whose policies are not realm-bound
    out.push({ realm: [] });
  }
  if (out.length === 0 && target.tokens.length === 0) out.push({ realm: null });
  return out;
}

/** Step 4 for an admin: every object must be granted; bulk serials are dropped one by one. */
async function authorizeAdmin(
  c: Context<AppEnv>,
  identity: Identity,
  action: string | undefined,
  rule: RouteRule,
  target: RequestTarget,
): Promise<void> {
  const deps = c.get("deps");
  const base: RightContext = {
    client: c.get("clientIp"),
    userAgent: c.get("userAgent"),
    conditions: requestConditionData(c, target),
    message: rule.message?.("admin"),
    policies: target.policies,
  };
  const granted: string[] = [];
  let scope: Promise<string[] | undefined> | undefined;
  const check = async (ctx: RightContext, into: string[] = granted) => {
    if (action !== undefined) {
      into.push(...await checkRight(deps, identity, action, { ...base, ...ctx }));
      return;
    }
    // no policy action (e.g. custom attributes): the object's realm must be within the
    // realms the admin's policies reach at all
    scope ??= adminRealmScope(deps, identity, base);
    const realms = await scope;
    if (realms === undefined || ctx.realm == null) return;
    const wanted = typeof ctx.realm === "string" ? [ctx.realm] : ctx.realm;
    if (!wanted.some((r) => realms.includes(r.toLowerCase()))) {
      throw new PolicyError(
        "Admin actions are defined, but you are not allowed to act in this realm!",
      );
    }
  };
  // a token the handler finds later (a serial inside an uploaded file) gets the same decision
  target.authorizeToken = async (t) => {
    const names: string[] = [];
    try {
      await check({
        ...tokenRightContext(t),
        conditions: requestConditionData(c, { ...target, tokens: [t] }),
      }, names);
    } catch (err) {
      if (!(err instanceof PolicyError)) throw err;
      return false;
    }
    if (names.length > 0) addAuditPolicies(c, names);
    return true;
  };
  for (const ctx of adminContexts(rule, target, c.get("params"))) await check(ctx);
  if (target.serials) {
    const allowed: string[] = [];
    const what = action ?? "requested";
    for (const serial of target.serials) {
      const t = target.tokens.find((x) => x.serial === serial);
      try {
        // an unknown serial is reported by the handler as failed
        if (t) await check(tokenRightContext(t));
        allowed.push(serial);
      } catch (err) {
        if (!(err instanceof PolicyError)) throw err;
        target.denied.push(serial);
      }
    }
    if (allowed.length === 0) {
      throw new PolicyError(
        `Admin actions are defined, but the action ${what} is not allowed for any of the serials provided!`,
      );
    }
    target.serials = allowed;
    target.tokens = target.tokens.filter((t) => allowed.includes(t.serial));
  } else {
    for (const t of target.tokens) await check(tokenRightContext(t));
  }
  if (granted.length > 0) addAuditPolicies(c, granted);
}

/** Step 4 for a user: the user-scope action, and only the caller's own tokens. */
async function authorizeUser(
  c: Context<AppEnv>,
  identity: Identity,
  action: string | undefined,
  rule: RouteRule,
  target: RequestTarget,
): Promise<void> {
  const isSelf = target.login === undefined ||
    (target.login === identity.username &&
      (target.resolver !== undefined
        ? target.resolver === identity.resolver
        : (target.userRealms[0] ?? "") === identity.realm));
  if (!isSelf) {
    // only a path can still name another user: the parameters were forced to the caller
    throw new PolicyError(
      rule.otherUserMessage ?? "User actions are defined, but you may only act on yourself!",
    );
  }
  if (action !== undefined) {
    const granted = await checkRight(c.get("deps"), identity, action, {
      client: c.get("clientIp"),
      userAgent: c.get("userAgent"),
      conditions: requestConditionData(c, target),
      message: rule.message?.("user"),
      policies: target.policies,
    });
    if (granted.length > 0) addAuditPolicies(c, granted);
  }
  const container = target.container;
  if (container) {
    const owner = container.owner;
    const me = target.user;
    const isOwned = owner !== undefined && me !== undefined && owner.realm === me.realm &&
      (owner.uid && me.uid
        ? owner.uid === me.uid && owner.resolver === me.resolver
        : owner.login === me.login);
    // a user acts only on their own container (assign: also on one nobody owns)
    if (!isOwned && !(rule.isContainerAssign && owner === undefined)) {
      throw new PolicyError(
        `User actions are defined, but the action ${action ?? "requested"} is not allowed!`,
      );
    }
  }
  target.authorizeToken = (t) =>
    Promise.resolve(target.user !== undefined && isOwner(t, target.user));
  const foreign = target.tokens.filter((t) => !target.user || !isOwner(t, target.user));
  if (foreign.length === 0) return;
  if (!target.serials) throw new ResourceNotFoundError(TOKEN_NOT_FOUND_MESSAGE);
  // bulk: another user's serials are reported as unauthorized, never touched
  target.denied.push(...foreign.map((t) => t.serial));
  target.serials = target.serials.filter((s) => !target.denied.includes(s));
  target.tokens = target.tokens.filter((t) => !foreign.includes(t));
}

function actionOf(c: Context<AppEnv>, rule: RouteRule, role: "admin" | "user") {
  if (rule.action === undefined) return undefined;
  if (rule.isAdminActionOnly && role === "user") return undefined;
  return typeof rule.action === "string" ? rule.action : rule.action(c.get("params"), c.req.method);
}

/**
 * Middleware: the rights step of every request (see the module doc), with
 * {@link ROUTE_RIGHTS} plus `extraRules` (routes a test mounts on the app).
 */
export function guard(
  extraRules: Readonly<Record<string, RouteRule>> = {},
): MiddlewareHandler<AppEnv> {
  const rules: Readonly<Record<string, RouteRule>> = { ...ROUTE_RIGHTS, ...extraRules };
  return async (c, next) => await guardRequest(c, next, rules);
}

async function guardRequest(
  c: Context<AppEnv>,
  next: () => Promise<void>,
  rules: Readonly<Record<string, RouteRule>>,
): Promise<void> {
  const route = answeringRoute(c);
  // no route: the app's notFound answers 404/405
  if (route.index < 0) return await next();
  const key = routeKey(route.method, route.path);
  const rule = Object.hasOwn(rules, key) ? rules[key] : undefined;
  if (!rule) {
    // fail closed: a route without a declared right is not reachable
    throw new AuthError(
      `Authentication failure. No right is declared for ${route.method} ${route.path}.`,
      4033,
    );
  }
  const path = pathParamsOf(c, route.index, route.path);
  if (rule.roles === "public") {
    c.set("target", emptyTarget(path));
    return await next();
  }
  const identity = await authenticate(c);
  const roles = rule.roles === "admin" ? ["admin"] : ["admin", "user"];
  if (!roles.includes(identity.role)) {
    throw new AuthError(
      `Authentication failure. You do not have the necessary role (${
        roles.map((r) => `'${r}'`).join(", ")
      }) to access this resource!`,
      4306,
    );
  }
  if (identity.role === "user") {
    forceCallerParams(c, identity);
  }
  const target = await resolveTarget(c, rule, path);
  // the one policy set of this request: the decision and the handler's policy reads
  target.policies = await loadPolicySet(c.get("deps"));
  if (
    rule.createsContainer && identity.role === "admin" && target.login === undefined &&
    target.placeRealm === undefined
  ) {
    // a container an admin limited to realms creates without naming a realm goes into the
    // first realm its container_create policies allow (privacyIDEA's container init)
    const realms = await allowedRealms(c.get("deps"), identity, "container_create", {
      client: c.get("clientIp"),
      userAgent: c.get("userAgent"),
      policies: target.policies,
    });
    if (realms && realms.length > 0) target.placeRealm = realms[0];
  }
  c.set("target", target);
  if (identity.role === "admin" && !rule.namesUserByResolver) auditObjectOwner(c, target);
  const action = actionOf(c, rule, identity.role);
  if (identity.role === "admin") {
    if (action !== undefined || rule.objects !== undefined) {
      await authorizeAdmin(c, identity, action, rule, target);
    }
  } else {
    await authorizeUser(c, identity, action, rule, target);
  }
  if (target.login !== undefined && !target.user && !rule.namesUserByResolver) {
    throw rule.objects === "user"
      ? new UserError(`User <${target.login}@${target.userRealms[0] ?? ""}> does not exist.`)
      : new UserError(USER_NOT_FOUND_MESSAGE);
  }
  if (rule.actsOnUserTokens && target.user && target.serial === undefined) {
    // step 5: all tokens of the checked user, once the request is allowed
    target.userTokens = await getTokensOfUser(c.get("deps"), target.user);
  }
  await next();
}
