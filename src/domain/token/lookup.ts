/**
 * Token lookups: by serial (one or a list), by owner, by tokeninfo or credential.
 * The request path looks tokens up once, in the rights step (`src/http/rights/guard.ts`);
 * the functions acting on tokens take the objects found.
 *
 * @module
 */
import type { Deps } from "../../deps.ts";
import { ResourceNotFoundError } from "../../errors.ts";
import type { Token, TokenWithInfo, UserRef } from "./model.ts";
import * as store from "./token_store.ts";

/** Text of the 601 error for unknown serials. */
export const TOKEN_NOT_FOUND_MESSAGE = "The requested token could not be found.";

/** Text of the 904 error for unknown users in token queries. */
export const USER_NOT_FOUND_MESSAGE = "The user can not be found in any resolver in this realm!";

/** The token with `serial` (info and realms included); 404 when unknown. */
export async function getTokenBySerial(deps: Deps, serial: string): Promise<TokenWithInfo> {
  const t = await store.findBySerial(deps.db, serial);
  if (!t) throw new ResourceNotFoundError(TOKEN_NOT_FOUND_MESSAGE);
  return (await store.withInfo(deps.db, [t]))[0];
}

/** The token with `serial` or undefined (no error); realms unless `withRealms` is false. */
export async function findTokenBySerial(
  deps: Deps,
  serial: string,
  options: { withRealms?: boolean } = {},
): Promise<TokenWithInfo | undefined> {
  const t = await store.findBySerial(deps.db, serial);
  return t ? (await store.withInfo(deps.db, [t], options.withRealms !== false))[0] : undefined;
}

/** The tokens of these serials that exist (info and realms included), in one lookup. */
export async function findTokensBySerials(
  deps: Deps,
  serials: readonly string[],
): Promise<TokenWithInfo[]> {
  const tokens = await store.findBySerials(deps.db, [...new Set(serials)]);
  return await store.withInfo(deps.db, tokens, true);
}

/**
 * `tokens` as they are now (read again, in one lookup, in their order): the same tokens,
 * after something changed them; a token deleted since is left out.
 */
export async function reloadTokens(
  deps: Deps,
  tokens: readonly TokenWithInfo[],
): Promise<TokenWithInfo[]> {
  if (tokens.length === 0) return [];
  const now = await findTokensBySerials(deps, tokens.map((t) => t.serial));
  return tokens.flatMap((t) => now.filter((x) => x.id === t.id));
}

/**
 * The tokens of `type` whose tokeninfo `key` equals `value` (info and realms
 * included), at most `limit` (default 10).
 */
export async function findTokensByInfo(
  deps: Deps,
  query: { type: string; key: string; value: string; limit?: number },
): Promise<TokenWithInfo[]> {
  const tokens = await store.findByTypeAndInfo(deps.db, { ...query, limit: query.limit ?? 10 });
  return await store.withInfo(deps.db, tokens, true);
}

/** The token holding the WebAuthn/passkey credential with this `credential_id_hash`, if any. */
export async function findTokenByCredentialIdHash(
  deps: Deps,
  hash: string,
): Promise<TokenWithInfo | undefined> {
  const t = await store.findByCredentialIdHash(deps.db, hash);
  return t ? (await store.withInfo(deps.db, [t], false))[0] : undefined;
}

/** The tokens a user owns (info included; realms unless `withRealms` is false). */
export async function getTokensOfUser(
  deps: Deps,
  user: UserRef,
  options: { withRealms?: boolean } = {},
): Promise<TokenWithInfo[]> {
  if (options.withRealms === false) return await store.findByOwnerWithInfo(deps.db, user);
  const tokens = await store.findByOwner(deps.db, user);
  return await store.withInfo(deps.db, tokens, true);
}

/** True if `user` owns `token`. */
export function isOwner(token: Token, user: UserRef): boolean {
  const o = token.owner;
  if (!o) return false;
  if (o.realm !== user.realm) return false;
  if (user.uid && o.uid) {
    return o.uid === user.uid && (!user.resolver || o.resolver === user.resolver);
  }
  return o.login === user.login;
}
