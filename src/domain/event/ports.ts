/**
 * The event engine's view of users and tokens. Every lookup and token change a
 * condition or handler needs goes through these functions, which call the user
 * and token domain modules.
 *
 * @module
 */
import type { Deps } from "../../deps.ts";

/** A resolved user. */
export interface EventUser {
  login: string;
  realm: string;
  resolver: string;
  uid: string;
}

/** A token as conditions and handlers see it. */
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
}

/** Splits `login@realm` and resolves the user; undefined when there is no such user. */
export async function findUser(
  _deps: Deps,
  _login: string,
  _realm?: string,
  _resolver?: string,
): Promise<EventUser | undefined> {
  return await Promise.resolve(undefined);
}

/** The attributes of a user (email, givenname, …); empty when unknown. */
export async function userAttributes(
  _deps: Deps,
  _user: EventUser,
): Promise<Record<string, string>> {
  return await Promise.resolve({});
}

/** The tokens with `serial`, or the tokens of `user`. */
export async function findTokens(
  _deps: Deps,
  _query: { serial?: string; user?: EventUser },
): Promise<EventToken[]> {
  return await Promise.resolve([]);
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

/** Applies one change to the token `serial`; throws when the token module cannot. */
export async function changeToken(
  _deps: Deps,
  _serial: string,
  change: TokenChange,
): Promise<void> {
  await Promise.resolve();
  throw new Error(`Token change "${change.op}" is not available`);
}

/** Enrols a token; returns its serial. */
export async function enrollToken(
  _deps: Deps,
  _params: Record<string, unknown>,
  _user?: EventUser,
): Promise<string> {
  await Promise.resolve();
  throw new Error("Token enrolment is not available");
}

/** Sets or deletes (`value` undefined) a custom user attribute. */
export async function setCustomAttribute(
  _deps: Deps,
  _user: EventUser,
  _key: string,
  _value: string | undefined,
): Promise<void> {
  await Promise.resolve();
  throw new Error("Custom user attributes are not available");
}
