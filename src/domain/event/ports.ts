/**
 * The event engine's view of users and tokens. Every lookup and token change a
 * condition or handler needs goes through these functions, which call the user
 * and token domain modules.
 *
 * @module
 */
import type { Deps } from "../../deps.ts";
import {
  deleteTokenInfo,
  deleteTokens,
  disableTokens,
  enableTokens,
  findTokenBySerial,
  getTokenBySerial,
  getTokensOfUser,
  initToken,
  setDescription,
  setFailcount,
  setPin,
  setTokenFields,
  setTokenInfo,
  setTokenRealms,
  type TokenWithInfo,
  unassignTokens,
} from "../token/mod.ts";
import { getUserInfo, listUsers, resolveUser, splitUser } from "../user/mod.ts";
import { challengesOfTransaction } from "../challenge/mod.ts";
// TODO(#3): use a user-module function for policy-free attribute writes once it exists
import { deleteAttribute, upsertAttribute } from "../user/attribute_store.ts";

/** A resolved user. */
export interface EventUser {
  login: string;
  realm: string;
  resolver: string;
  uid: string;
}

/** A token as conditions and handlers see it (no secrets: encrypted info is left out). */
export interface EventToken {
  serial: string;
  type: string;
  active: boolean;
  description: string;
  owner?: EventUser;
  realms: string[];
  failCount: number;
  maxFail: number;
  otpCounter: number;
  info: Record<string, string>;
  rolloutState: string;
  /** Validity period and last successful authentication in ms, when set. */
  validityStart?: number;
  validityEnd?: number;
  lastAuth?: number;
}

/** Parses the token module's time stamps (`2026-01-01T10:00+0000`, `2026-01-01 10:00:00.123000+0000`). */
export function parseStamp(text: string | undefined): number | undefined {
  if (!text) return undefined;
  const m = text.trim().match(
    /^(\d{4}-\d{2}-\d{2})[T ](\d{2}:\d{2})(:\d{2})?(\.\d+)?\s*(Z|[+-]\d{2}:?\d{2})?$/,
  );
  if (!m) return undefined;
  let zone = m[5] ?? "Z";
  if (zone !== "Z" && !zone.includes(":")) zone = `${zone.slice(0, 3)}:${zone.slice(3)}`;
  const ms = Date.parse(`${m[1]}T${m[2]}${m[3] ?? ":00"}${(m[4] ?? "").slice(0, 4)}${zone}`);
  return Number.isFinite(ms) ? ms : undefined;
}

/** A token as conditions and handlers see it. */
export function eventTokenOf(t: TokenWithInfo): EventToken {
  const info: Record<string, string> = {};
  for (const [k, v] of Object.entries(t.info)) {
    if (v.type !== "password") info[k] = v.value;
  }
  return {
    serial: t.serial,
    type: t.type,
    active: t.active,
    description: t.description,
    owner: t.owner ? { ...t.owner } : undefined,
    realms: [...t.realms],
    failCount: t.failcount,
    maxFail: t.maxfail,
    otpCounter: t.count,
    info,
    rolloutState: t.rolloutState,
    validityStart: parseStamp(info.validity_period_start),
    validityEnd: parseStamp(info.validity_period_end),
    lastAuth: parseStamp(info.last_auth),
  };
}

/** Splits `login@realm` and resolves the user; undefined when there is no such user. */
export async function findUser(
  deps: Deps,
  login: string,
  realm?: string,
  resolver?: string,
): Promise<EventUser | undefined> {
  try {
    const split = await splitUser(deps, login, realm);
    return await resolveUser(deps, split.login, split.realm, resolver);
  } catch (err) {
    deps.log.debug("Event handling: user lookup failed", { error: (err as Error).message });
    return undefined;
  }
}

/** The attributes of a user (email, givenname, …); empty when unknown. */
export async function userAttributes(
  deps: Deps,
  user: EventUser,
): Promise<Record<string, string>> {
  try {
    return await getUserInfo(deps, user);
  } catch {
    return {};
  }
}

/** The tokens with `serial`, or the tokens of `user`. */
export async function findTokens(
  deps: Deps,
  query: { serial?: string; user?: EventUser },
): Promise<EventToken[]> {
  if (query.serial) {
    const t = await findTokenBySerial(deps, query.serial);
    return t ? [eventTokenOf(t)] : [];
  }
  if (query.user) return (await getTokensOfUser(deps, query.user)).map(eventTokenOf);
  return [];
}

/** A change the Token handler makes to one token. */
export type TokenChange =
  | { op: "enable" | "disable" | "delete" | "unassign" }
  | { op: "realms"; realms: string[]; onlyRealm: boolean }
  | { op: "description"; description: string }
  | { op: "tokeninfo"; key: string; value: string }
  | { op: "deleteTokeninfo"; key: string }
  | { op: "failcount"; value: number }
  | { op: "maxfail"; value: number }
  | { op: "countwindow"; value: number }
  | { op: "validity"; start?: string; end?: string }
  | { op: "pin"; pin: string };

/**
 * Applies one change to the token `serial` (the handler's target, looked up once here: the
 * token as it is now, after the request's own changes); throws when the token is unknown or
 * the token module refuses.
 */
export async function changeToken(deps: Deps, serial: string, change: TokenChange): Promise<void> {
  const token = await getTokenBySerial(deps, serial);
  const tokens = [token];
  switch (change.op) {
    case "enable":
      await enableTokens(deps, tokens);
      return;
    case "disable":
      await disableTokens(deps, tokens);
      return;
    case "delete":
      await deleteTokens(deps, tokens);
      return;
    case "unassign":
      await unassignTokens(deps, tokens);
      return;
    case "realms": {
      const current = change.onlyRealm ? [] : token.realms;
      await setTokenRealms(deps, token, [...current, ...change.realms]);
      return;
    }
    case "description":
      await setDescription(deps, tokens, change.description);
      return;
    case "tokeninfo":
      await setTokenInfo(deps, token, change.key, change.value);
      return;
    case "deleteTokeninfo":
      await deleteTokenInfo(deps, token, change.key);
      return;
    case "failcount":
      await setFailcount(deps, tokens, change.value);
      return;
    case "maxfail":
      await setTokenFields(deps, tokens, { maxFailcount: change.value });
      return;
    case "countwindow":
      await setTokenFields(deps, tokens, { countWindow: change.value });
      return;
    case "validity":
      await setTokenFields(deps, tokens, {
        validityPeriodStart: change.start,
        validityPeriodEnd: change.end,
      });
      return;
    case "pin":
      await setPin(deps, tokens, change.pin);
      return;
  }
}

/** Enrols a token; returns its serial. */
export async function enrollToken(
  deps: Deps,
  params: Record<string, unknown>,
  user?: EventUser,
): Promise<string> {
  const realm = typeof params.realm === "string" && params.realm ? params.realm : undefined;
  const result = await initToken(deps, params, { user, realm });
  return result.serial;
}

/** Sets or deletes (`value` undefined) a custom user attribute (no policy check: admin config). */
export async function setCustomAttribute(
  deps: Deps,
  user: EventUser,
  key: string,
  value: string | undefined,
): Promise<void> {
  if (value === undefined) await deleteAttribute(deps.db, user, key);
  else await upsertAttribute(deps.db, user, { key, value, type: "" });
}

/** The email addresses of every user of `realm` that has one (capped at `limit`). */
export async function realmEmails(deps: Deps, realm: string, limit = 500): Promise<string[]> {
  const users = await listUsers(deps, {
    realms: [realm],
    search: { email: "*" },
    attributes: ["email"],
  });
  return users.map((u) => u.email).filter((e): e is string => typeof e === "string" && e !== "")
    .slice(0, limit);
}

/** A challenge as the challenge conditions see it. */
export interface EventChallenge {
  session: string;
  expiresAt: number;
}

/** The challenges of `serial` in transaction `transactionId`. */
export async function findChallenges(
  deps: Deps,
  serial: string,
  transactionId: string,
): Promise<EventChallenge[]> {
  const rows = await challengesOfTransaction(deps, transactionId, [serial]);
  return rows.map((r) => ({ session: r.session, expiresAt: r.expiresAt }));
}
