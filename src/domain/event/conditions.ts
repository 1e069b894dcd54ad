/**
 * Event conditions (spec 05 §6): their definitions for `/event/conditions/<m>`
 * and their evaluation against a request. All configured conditions must hold;
 * unknown names are ignored.
 *
 * @module
 */
import type { Deps } from "../../deps.ts";
import { inNetwork, type Network, parseIp, parseNetwork } from "../../lib/ip.ts";
import type { EventContext } from "./types.ts";
import { isTrue } from "./types.ts";
import {
  compareInt,
  compareValues,
  parseDuration,
  parseKeyComparison,
  replaceNow,
} from "./compare.ts";
import {
  contextSerial,
  contextToken,
  contextTokens,
  contextUser,
  contextUserInfo,
  detailOf,
  resultOf,
  tokensOfUser,
} from "./facts.ts";
import { readCounter } from "./event_store.ts";
import { findChallenges, findUser } from "./ports.ts";
import { containerCountOfUser, containerOfToken, contextContainer } from "./container_facts.ts";
import { CONTAINER_TYPES, STATE_TYPES } from "../container/mod.ts";

/** Definition of one condition. */
export interface ConditionDef {
  type: "str" | "multi" | "regexp";
  desc: string;
  group: "general" | "user" | "token" | "counter" | "challenge" | "container";
  value?: unknown[];
}

const BOOL = ["True", "False"];

function def(
  type: ConditionDef["type"],
  group: ConditionDef["group"],
  desc: string,
  value?: unknown[],
): ConditionDef {
  return value ? { type, desc, group, value } : { type, desc, group };
}

/** Every condition Tessera knows (identical for every module). */
export const CONDITIONS: Record<string, ConditionDef> = {
  client_ip: def(
    "str",
    "general",
    "The client IP must be in this CSV of IPs/networks (-x excludes)",
  ),
  logged_in_user: def("str", "general", "The logged-in role", ["admin", "user"]),
  result_value: def("str", "general", "The result.value of the response is true or false", BOOL),
  result_status: def("str", "general", "The result.status of the response is true or false", BOOL),
  result_authentication: def(
    "str",
    "general",
    "The result.authentication of the response",
    ["ACCEPT", "REJECT", "CHALLENGE", "DECLINED"],
  ),
  detail_error_message: def("regexp", "general", "A regex searched in detail.error.message"),
  detail_message: def("regexp", "general", "A regex searched in detail.message"),
  realm: def("str", "user", "The user is in one of these realms (CSV)"),
  resolver: def("str", "user", "The user is in one of these resolvers (CSV)"),
  user_info: def("str", "user", "'<attribute> <comparator> <value>' on the user's attributes"),
  user_token_number: def("str", "user", "The number of tokens of the user, like >2"),
  user_container_number: def("str", "user", "The number of containers of the user, like >2"),
  tokentype: def("multi", "token", "The token type is one of these (CSV)"),
  serial: def("regexp", "token", "A regex matched at the start of the serial"),
  tokenrealm: def("multi", "token", "A token realm is one of these (CSV)"),
  tokenresolver: def("multi", "token", "A token resolver is one of these (CSV)"),
  token_locked: def("str", "token", "The token has reached its maximum fail count", BOOL),
  token_has_owner: def("str", "token", "The token has an owner", BOOL),
  token_is_orphaned: def("str", "token", "The token's owner no longer exists", BOOL),
  token_validity_period: def("str", "token", "The token is within its validity period", BOOL),
  token_is_in_container: def("str", "token", "The token is in a container", BOOL),
  otp_counter: def("str", "token", "The OTP counter, like >100"),
  count_auth: def("str", "token", "The number of authentications, like >100"),
  count_auth_success: def("str", "token", "The number of successful authentications"),
  count_auth_fail: def("str", "token", "The number of failed authentications"),
  failcounter: def("str", "token", "The fail counter, like >3"),
  last_auth: def("str", "token", "The last successful authentication is older than 7h, 10d, 1y…"),
  tokeninfo: def("str", "token", "'<key> <comparator> <value>' on the tokeninfo"),
  rollout_state: def("str", "token", "The rollout state of the token"),
  counter: def("str", "counter", "'<counter name> <comparator> <integer>' on an event counter"),
  challenge_session: def("regexp", "challenge", "A regex matched on the challenge session"),
  challenge_expired: def("str", "challenge", "The challenge has expired", BOOL),
  container_state: def(
    "multi",
    "container",
    "The container has all these states (it may have others too)",
    Object.keys(STATE_TYPES).map((name) => ({ name })),
  ),
  container_exact_state: def(
    "multi",
    "container",
    "The container has exactly these states",
    Object.keys(STATE_TYPES).map((name) => ({ name })),
  ),
  container_has_owner: def("str", "container", "The container has an owner", BOOL),
  container_has_token: def("str", "container", "The container holds at least one token", BOOL),
  container_type: def(
    "str",
    "container",
    "The container is of this type",
    Object.keys(CONTAINER_TYPES),
  ),
  container_realm: def(
    "multi",
    "container",
    "A container realm is one of these (CSV); not checked when the container has no realm",
  ),
  container_resolver: def(
    "multi",
    "container",
    "The owner's resolver is one of these (CSV); not checked when the container has no owner",
  ),
  container_info: def("str", "container", "'<key> <comparator> <value>' on the container info"),
  container_last_authentication: def(
    "str",
    "container",
    "The last authentication with the container was within this time (8h, 7d, 1y…)",
  ),
  container_last_synchronization: def(
    "str",
    "container",
    "The last synchronization of the container was within this time (8h, 7d, 1y…)",
  ),
};

function csv(value: string): string[] {
  return value.split(",").map((s) => s.trim()).filter((s) => s !== "");
}

function boolMatches(value: string, actual: boolean): boolean {
  return isTrue(value) === actual;
}

// parsed networks and compiled regexps per condition text: pure caches, bounded
const MEMO_LIMIT = 1000;
const NETWORKS = new Map<string, { nets: Network[]; excluded: Network[] }>();
const REGEXPS = new Map<string, RegExp | null>();

function memo<K, V>(map: Map<K, V>, key: K, make: () => V): V {
  let v = map.get(key);
  if (v === undefined && !map.has(key)) {
    if (map.size >= MEMO_LIMIT) map.clear();
    v = make();
    map.set(key, v);
  }
  return v as V;
}

function regexp(source: string): RegExp | null {
  return memo(REGEXPS, source, () => {
    try {
      return new RegExp(source);
    } catch {
      return null;
    }
  });
}

function searchRegexp(pattern: string, text: string): boolean {
  return regexp(pattern)?.test(text) ?? false;
}

function networks(value: string): { nets: Network[]; excluded: Network[] } {
  return memo(NETWORKS, value, () => {
    const nets: Network[] = [];
    const excluded: Network[] = [];
    for (const entry of csv(value)) {
      const negative = entry.startsWith("-") || entry.startsWith("!");
      const net = parseNetwork(negative ? entry.slice(1) : entry);
      if (net) (negative ? excluded : nets).push(net);
    }
    return { nets, excluded };
  });
}

function clientMatches(value: string, ctx: EventContext): boolean {
  const addr = ctx.cache.has("clientAddr")
    ? ctx.cache.get("clientAddr") as ReturnType<typeof parseIp>
    : parseIp(ctx.request.clientIp);
  ctx.cache.set("clientAddr", addr);
  if (!addr) return false;
  const { nets, excluded } = networks(value);
  return nets.some((n) => inNetwork(addr, n)) && !excluded.some((n) => inNetwork(addr, n));
}

function infoInt(info: Record<string, string>, key: string): number {
  const n = Number.parseInt(info[key] ?? "0", 10);
  return Number.isFinite(n) ? n : 0;
}

/** Conditions on the request and response only: evaluated without any lookup. */
const QUICK = new Map<string, (value: string, ctx: EventContext) => boolean>(Object.entries({
  client_ip: (value, ctx) => ctx.request.clientIp ? clientMatches(value, ctx) : true,
  logged_in_user: (value, ctx) => (ctx.request.identity?.role ?? "user") === value,
  result_value: (value, ctx) => boolMatches(value, Boolean(resultOf(ctx).value)),
  result_status: (value, ctx) => boolMatches(value, Boolean(resultOf(ctx).status)),
  result_authentication: (value, ctx) => resultOf(ctx).authentication === value,
  detail_error_message: (value, ctx) => {
    const err = detailOf(ctx).error as Record<string, unknown> | undefined;
    return searchRegexp(value, String(err?.message ?? ""));
  },
  detail_message: (value, ctx) => searchRegexp(value, String(detailOf(ctx).message ?? "")),
}));

/** Evaluates one condition that may need lookups; true when it holds or is skipped. */
async function holds(deps: Deps, name: string, value: string, ctx: EventContext): Promise<boolean> {
  const now = deps.clock.now();
  switch (name) {
    case "realm": {
      const user = await contextUser(deps, ctx);
      return user !== undefined && csv(value).includes(user.realm);
    }
    case "resolver": {
      const user = await contextUser(deps, ctx);
      return user !== undefined && csv(value).includes(user.resolver);
    }
    case "user_info": {
      const cmp = parseKeyComparison(value);
      const info = await contextUserInfo(deps, ctx);
      if (!cmp || !(cmp.key in info)) return false;
      return compareValues(info[cmp.key], cmp.cmp, replaceNow(cmp.value, now), now);
    }
    case "user_token_number": {
      const user = await contextUser(deps, ctx);
      if (!user) return true;
      return compareInt((await contextTokensOfUser(deps, ctx)).length, value);
    }
    case "user_container_number": {
      const user = await contextUser(deps, ctx);
      return user ? compareInt(await containerCountOfUser(deps, user), value) : true;
    }
    case "serial": {
      const serial = contextSerial(ctx) || (await contextToken(deps, ctx))?.serial || "";
      if (!serial) return true;
      return regexp(`^(?:${value})`)?.test(serial) ?? false;
    }
    case "tokenrealm":
    case "tokenresolver": {
      const token = await contextToken(deps, ctx);
      if (!token) return true;
      const have = name === "tokenrealm" ? token.realms : token.owner ? [token.owner.resolver] : [];
      if (have.length === 0) return true;
      const want = csv(value);
      return have.some((h) => want.includes(h));
    }
    case "token_locked": {
      const token = await contextToken(deps, ctx);
      if (token) return boolMatches(value, token.failCount >= token.maxFail);
      // [quirk] without a single token: any locked token of the user, whatever the value
      const tokens = await contextTokens(deps, ctx);
      return tokens.some((t) => t.failCount >= t.maxFail);
    }
    case "counter": {
      const m = value.match(/^\s*(\S+?)\s*('?(?:==|!=|>=|<=|=|<|>)'?\s*-?\d+)\s*$/);
      if (!m) return false;
      return compareInt(await readCounter(deps.db, m[1]), m[2]);
    }
    case "challenge_session":
    case "challenge_expired": {
      const challenge = await singleChallenge(deps, ctx);
      if (!challenge) return false;
      if (name === "challenge_expired") return boolMatches(value, challenge.expiresAt < now);
      return regexp(`^(?:${value})`)?.test(challenge.session) ?? false;
    }
  }
  if (name.startsWith("container_")) return await containerHolds(deps, name, value, ctx, now);
  if (!(name in CONDITIONS)) return true; // unknown names are stored and ignored
  return await tokenHolds(deps, name, value, ctx, now);
}

async function contextTokensOfUser(deps: Deps, ctx: EventContext) {
  const user = await contextUser(deps, ctx);
  if (!user) return [];
  const key = "usertokens";
  if (!ctx.cache.has(key)) {
    ctx.cache.set(key, await tokensOfUser(deps, ctx, user));
  }
  return ctx.cache.get(key) as unknown[];
}

/**
 * The one challenge of the token's (else the container's) serial and the request's
 * `transaction_id`, if exactly one.
 */
async function singleChallenge(deps: Deps, ctx: EventContext) {
  const tid = ctx.request.params.transaction_id ?? detailOf(ctx).transaction_id;
  if (typeof tid !== "string" || tid === "") return undefined;
  // the token's challenge, else the container's (a smartphone's registration or sync)
  const serial = (await contextToken(deps, ctx))?.serial ??
    (await contextContainer(deps, ctx))?.serial;
  if (!serial) return undefined;
  const found = await findChallenges(deps, serial, tid);
  return found.length === 1 ? found[0] : undefined;
}

/** Token-only conditions: skipped without a single token. */
async function tokenHolds(
  deps: Deps,
  name: string,
  value: string,
  ctx: EventContext,
  now: number,
): Promise<boolean> {
  const token = await contextToken(deps, ctx);
  if (!token) return true;
  const info = token.info;
  switch (name) {
    case "tokentype":
      return csv(value).includes(token.type);
    case "token_has_owner":
      return boolMatches(value, token.owner !== undefined);
    case "token_is_orphaned": {
      if (!token.owner) return boolMatches(value, false);
      const exists = await findUser(
        deps,
        token.owner.login,
        token.owner.realm,
        token.owner.resolver,
      );
      return boolMatches(value, exists === undefined);
    }
    case "token_validity_period": {
      const start = token.validityStart;
      const end = token.validityEnd;
      const within = (start === undefined || start <= now) && (end === undefined || now <= end);
      return boolMatches(value, within);
    }
    case "token_is_in_container":
      return boolMatches(value, (await containerOfToken(deps, token.serial)) !== undefined);
    case "otp_counter":
      return compareInt(token.otpCounter, value);
    case "count_auth":
      return compareInt(infoInt(info, "count_auth"), value);
    case "count_auth_success":
      return compareInt(infoInt(info, "count_auth_success"), value);
    case "count_auth_fail":
      return compareInt(infoInt(info, "count_auth") - infoInt(info, "count_auth_success"), value);
    case "failcounter":
      return compareInt(token.failCount, value);
    case "last_auth": {
      const dur = parseDuration(value);
      if (token.lastAuth === undefined || dur === undefined) return false;
      return now - token.lastAuth > dur;
    }
    case "tokeninfo": {
      const cmp = parseKeyComparison(value);
      if (!cmp || !(cmp.key in info)) return false;
      return compareValues(info[cmp.key], cmp.cmp, replaceNow(cmp.value, now), now);
    }
    case "rollout_state": {
      const norm = (s: string) => s === "enrolled" ? "" : s;
      return norm(token.rolloutState) === norm(value);
    }
  }
  return true;
}

/** Container-only conditions: skipped without a container (spec 05 §6.2). */
async function containerHolds(
  deps: Deps,
  name: string,
  value: string,
  ctx: EventContext,
  now: number,
): Promise<boolean> {
  const c = await contextContainer(deps, ctx);
  if (!c) return true;
  switch (name) {
    case "container_state":
      return csv(value).every((s) => c.states.includes(s));
    case "container_exact_state": {
      const want = csv(value);
      return want.length === c.states.length && want.every((s) => c.states.includes(s));
    }
    case "container_has_owner":
      return boolMatches(value, c.owner !== undefined);
    case "container_has_token":
      return boolMatches(value, c.tokens.length > 0);
    case "container_type":
      return c.type === value;
    case "container_realm": {
      // realms are stored in lower case
      if (c.realms.length === 0) return true;
      const want = csv(value).map((r) => r.toLowerCase());
      return c.realms.some((r) => want.includes(r));
    }
    case "container_resolver":
      return c.owner === undefined || csv(value).includes(c.owner.resolver);
    case "container_info": {
      const cmp = parseKeyComparison(value);
      const entry = cmp ? c.info.find((i) => i.key === cmp.key) : undefined;
      if (!cmp || !entry) return false;
      return compareValues(entry.value, cmp.cmp, replaceNow(cmp.value, now), now);
    }
    case "container_last_authentication":
    case "container_last_synchronization": {
      const at = name === "container_last_authentication" ? c.lastSeen : c.lastUpdated;
      const dur = parseDuration(value);
      if (at === null || dur === undefined) return false;
      return now - at <= dur;
    }
  }
  return true;
}

/** Conditions of one definition, split into cheap request/response checks and lookups. */
export interface CompiledConditions {
  quick: [(value: string, ctx: EventContext) => boolean, string][];
  slow: [string, string][];
}

/** Splits a definition's conditions once (the engine caches the result). */
export function compileConditions(conditions: Record<string, string>): CompiledConditions {
  const out: CompiledConditions = { quick: [], slow: [] };
  for (const [name, value] of Object.entries(conditions)) {
    const quick = QUICK.get(name);
    if (quick) out.quick.push([quick, String(value)]);
    else if (Object.hasOwn(CONDITIONS, name)) out.slow.push([name, String(value)]);
    // unknown names are stored and ignored
  }
  return out;
}

/** True when every cheap condition holds (no lookups, no awaiting). */
export function quickConditionsHold(cc: CompiledConditions, ctx: EventContext): boolean {
  for (const [check, value] of cc.quick) if (!check(value, ctx)) return false;
  return true;
}

/** True when every lookup condition holds. */
export async function slowConditionsHold(
  deps: Deps,
  cc: CompiledConditions,
  ctx: EventContext,
): Promise<boolean> {
  for (const [name, value] of cc.slow) if (!(await holds(deps, name, value, ctx))) return false;
  return true;
}

/** True when every configured condition holds. */
export async function conditionsHold(
  deps: Deps,
  conditions: Record<string, string>,
  ctx: EventContext,
): Promise<boolean> {
  const cc = compileConditions(conditions);
  return quickConditionsHold(cc, ctx) && await slowConditionsHold(deps, cc, ctx);
}
