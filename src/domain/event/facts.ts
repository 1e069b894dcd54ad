/**
 * The facts conditions and handlers use (spec 05 §6.1): the user, serial and
 * token of the request, looked up lazily and cached per request. The objects
 * the rights step resolved and checked (`request.checked`) are those facts
 * while the request still names them: the user always, the tokens before the
 * endpoint ran (after it, a token is read as the endpoint left it). Only what
 * the request did not name to the rights step (a pre handler changed the
 * parameters, a serial the response names, a public endpoint) is looked up here.
 *
 * @module
 */
import type { Deps } from "../../deps.ts";
import type { EventContext } from "./types.ts";
import {
  type EventToken,
  eventTokenOf,
  type EventUser,
  findTokens,
  findUser,
  userAttributes,
} from "./ports.ts";

async function cached<T>(ctx: EventContext, key: string, make: () => Promise<T>): Promise<T> {
  if (ctx.cache.has(key)) return ctx.cache.get(key) as T;
  const v = await make();
  ctx.cache.set(key, v);
  return v;
}

function str(v: unknown): string {
  return typeof v === "string" ? v : typeof v === "number" ? String(v) : "";
}

/** The response `detail` object (empty in pre position). */
export function detailOf(ctx: EventContext): Record<string, unknown> {
  const d = ctx.response?.body?.detail;
  return d && typeof d === "object" && !Array.isArray(d) ? d as Record<string, unknown> : {};
}

/** The response `result` object (empty in pre position). */
export function resultOf(ctx: EventContext): Record<string, unknown> {
  const r = ctx.response?.body?.result;
  return r && typeof r === "object" && !Array.isArray(r) ? r as Record<string, unknown> : {};
}

/** The request serial, else `detail.serial` of the response, else the audit serial. */
export function contextSerial(ctx: EventContext): string {
  return str(ctx.request.params.serial) || ctx.request.pathSerial || str(detailOf(ctx).serial) ||
    ctx.request.audit.serial;
}

/**
 * The user `login` (+ `realm`, `resolver`) names: the checked user when the rights step
 * resolved it from exactly these names, else looked up.
 */
async function userNamed(
  deps: Deps,
  ctx: EventContext,
  login: string,
  realm: string | undefined,
  resolver: string | undefined,
): Promise<EventUser | undefined> {
  const checked = ctx.request.checked;
  if (
    checked?.user !== undefined && checked.names.user === login &&
    (checked.names.realm ?? "") === (realm ?? "") &&
    (checked.names.resolver ?? "") === (resolver ?? "")
  ) {
    return { ...checked.user };
  }
  return await findUser(deps, login, realm, resolver);
}

/**
 * The tokens of `serial`: the checked ones while the endpoint has not run (pre handlers),
 * when the request named this serial to the rights step; else read now.
 */
async function tokensOfSerial(deps: Deps, ctx: EventContext, serial: string) {
  const checked = ctx.request.checked;
  if (ctx.position === "pre" && checked?.serial === serial && checked.serials === undefined) {
    return checked.tokens.map(eventTokenOf);
  }
  return await findTokens(deps, { serial });
}

/**
 * The tokens of `user`: the checked ones while the endpoint has not run, when the rights
 * step loaded this user's tokens; else read now.
 */
export async function tokensOfUser(
  deps: Deps,
  ctx: EventContext,
  user: EventUser,
): Promise<EventToken[]> {
  const checked = ctx.request.checked;
  const owner = checked?.user;
  if (
    ctx.position === "pre" && checked?.userTokens !== undefined && owner !== undefined &&
    owner.login === user.login && owner.realm === user.realm && owner.resolver === user.resolver
  ) {
    return checked.userTokens.map(eventTokenOf);
  }
  return await findTokens(deps, { user });
}

/** The request's user; without one, the owner of the request serial's token. */
export async function contextUser(deps: Deps, ctx: EventContext): Promise<EventUser | undefined> {
  return await cached(ctx, "user", async () => {
    const id = ctx.request.identity;
    if (id?.role === "user") {
      // a user-role caller only ever acts on himself, whatever the parameters say
      return await userNamed(deps, ctx, id.username, id.realm, id.resolver || undefined);
    }
    const p = ctx.request.params;
    const login = str(p.user) || (ctx.event === "auth" ? str(p.username) : "");
    if (login) {
      return await userNamed(
        deps,
        ctx,
        login,
        str(p.realm) || undefined,
        str(p.resolver) || undefined,
      );
    }
    const serial = str(p.serial);
    if (serial) {
      const tokens = await tokensOfSerial(deps, ctx, serial);
      if (tokens.length === 1) return tokens[0].owner;
    }
    return undefined;
  });
}

/** The tokens of the context: those of the serial, else the user's. */
export async function contextTokens(deps: Deps, ctx: EventContext): Promise<EventToken[]> {
  return await cached(ctx, "tokens", async () => {
    const serial = contextSerial(ctx);
    const user = await contextUser(deps, ctx);
    if (serial) {
      const tokens = await tokensOfSerial(deps, ctx, serial);
      // pre handlers run before the endpoint's ownership checks: a user-role caller
      // must not make them act on someone else's token
      if (ctx.request.identity?.role !== "user") return tokens;
      return tokens.filter((t) =>
        user !== undefined && t.owner?.login === user.login && t.owner?.realm === user.realm
      );
    }
    return user ? await tokensOfUser(deps, ctx, user) : [];
  });
}

/** "The token": only when exactly one token results. */
export async function contextToken(deps: Deps, ctx: EventContext): Promise<EventToken | undefined> {
  const tokens = await contextTokens(deps, ctx);
  return tokens.length === 1 ? tokens[0] : undefined;
}

/** The serials a Token action works on: the context serial, else the single token's. */
export async function contextSerials(deps: Deps, ctx: EventContext): Promise<string[]> {
  const serial = contextSerial(ctx);
  if (serial && ctx.request.identity?.role !== "user") return [serial];
  // for user-role callers only serials of their own tokens
  const token = await contextToken(deps, ctx);
  return token ? [token.serial] : [];
}

/** The attributes of the context user (cached). */
export async function contextUserInfo(
  deps: Deps,
  ctx: EventContext,
): Promise<Record<string, string>> {
  return await cached(ctx, "userinfo", async () => {
    const user = await contextUser(deps, ctx);
    return user ? await userAttributes(deps, user) : {};
  });
}

/** The user a `tokenowner` / `logged_in_user` option means. */
export async function chosenUser(
  deps: Deps,
  ctx: EventContext,
  which: string,
): Promise<EventUser | undefined> {
  if (which === "logged_in_user") {
    const id = ctx.request.identity;
    if (!id || id.role !== "user") return undefined;
    return await userNamed(deps, ctx, id.username, id.realm, id.resolver || undefined);
  }
  const token = await contextToken(deps, ctx);
  if (token?.owner) return token.owner;
  return await contextUser(deps, ctx);
}

/** The common tags of spec 05 §5.1 that need no recipient or enrolment data. */
export async function commonTags(
  deps: Deps,
  ctx: EventContext,
): Promise<Record<string, string | undefined>> {
  const id = ctx.request.identity;
  const user = await contextUser(deps, ctx);
  const info = await contextUserInfo(deps, ctx);
  const token = await contextToken(deps, ctx);
  const now = new Date(deps.clock.now()).toISOString();
  return {
    admin: id?.role === "admin" ? id.username : undefined,
    realm: id?.role === "admin" ? id.realm : user?.realm,
    action: ctx.request.path,
    serial: contextSerial(ctx) || token?.serial,
    url: undefined,
    user: info.givenname,
    givenname: info.givenname,
    surname: info.surname,
    username: user?.login,
    userrealm: user?.realm,
    tokentype: token?.type,
    tokendescription: token?.description,
    time: now.slice(11, 19),
    date: now.slice(0, 10),
    client_ip: ctx.request.clientIp,
    ua_browser: ctx.request.userAgent.split("/")[0] || undefined,
    ua_string: ctx.request.userAgent,
  };
}
