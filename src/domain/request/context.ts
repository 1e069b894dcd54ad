/**
 * The objects one request acts on, resolved once near the edge and checked by the rights
 * step (`src/http/rights/guard.ts`) before the handler runs. The handler, the token
 * functions and the event handlers act on exactly these objects: none of them looks up
 * again what the request names (STYLE.md, "Requests: resolve once, decide once, act on
 * what was decided").
 *
 * @module
 */
import type { TokenWithInfo, UserRef } from "../token/model.ts";
import type { PolicySet } from "../policy/match.ts";
import type { Container } from "../container/mod.ts";

/** How the request named its objects: the parameters the rights step resolved. */
export interface RequestNames {
  /** The serial: the path's, else the `serial` parameter. */
  serial?: string;
  /** The `user` parameter (or path part) as given, before `user@realm` splitting. */
  user?: string;
  /** The `realm` parameter as given. */
  realm?: string;
  /** The `resolver` parameter as given. */
  resolver?: string;
  /** The container serial: the path's, else the `container_serial` parameter. */
  containerSerial?: string;
}

/** The request's objects, resolved and checked (see the module doc). */
export interface RequestContext {
  /** What the request named; the objects below are what those names resolved to. */
  names: RequestNames;
  /** The serial of the request: the path's, else the `serial` parameter. */
  serial?: string;
  /** A bulk request's serials that passed the check (unknown ones included). */
  serials?: string[];
  /** A bulk request's serials refused by the check (other realm, other user). */
  denied: string[];
  /** The existing tokens of `serial`/`serials`, as checked. */
  tokens: TokenWithInfo[];
  /**
   * The tokens of {@link user} when the request acts on all of a user's tokens (a token
   * action naming a user and no serial); loaded once the request was allowed.
   */
  userTokens?: TokenWithInfo[];
  /** The login asked for (after `user@realm` splitting). */
  login?: string;
  /** The user acted on, when the login resolved. */
  user?: UserRef;
  /** The realms the user belongs to: the resolved realm, or every realm of `resolver`. */
  userRealms: string[];
  /** A user named by resolver (`/user` create, update, delete). */
  resolver?: string;
  /** The `realm` a new token is put into when no user is named. */
  placeRealm?: string;
  /** The `realm` a list is filtered by (`GET /token/`, `GET /user/`). */
  filterRealm?: string;
  /** The container of `container_serial`, as checked (container routes). */
  container?: Container;
  /**
   * The policy set the rights step decided with; the request's later policy reads use it
   * too (absent on public endpoints).
   */
  policies?: PolicySet;
}

/**
 * The realms an action on `token` is decided in: its token realms plus its owner's realm
 * (the owner's realm counts even where no token realm was written).
 */
export function tokenRealms(token: TokenWithInfo): string[] {
  const realms = [...token.realms];
  if (token.owner?.realm && !realms.includes(token.owner.realm)) realms.push(token.owner.realm);
  return realms;
}

/**
 * The realms an action on a container is decided in: its realms plus its owner's realm
 * (privacyIDEA matches the owner or one of the container's realms).
 */
export function containerRealms(container: Container): string[] {
  const realms = [...container.realms];
  if (container.owner?.realm && !realms.includes(container.owner.realm)) {
    realms.push(container.owner.realm);
  }
  return realms;
}
