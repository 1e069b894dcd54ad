/**
 * The tokens (with their info) of recently checked users, kept between
 * requests so that `/validate/check` does not read them again each time.
 *
 * The cache holds what the token tables hold, exactly:
 * - it is dropped whole when the connection's epoch or token epoch moves
 *   (direct.ts): any write to `token`, `tokeninfo` or `token_realm` (an
 *   administrator's change, an enrolment, a resync), any rollback, and any
 *   commit of another connection or process (seen within 1 ms);
 * - the hot path's own writes (counter, fail counter, auth counts) do not move
 *   the token epoch: they run with `keepsTokenCache` and {@link patchCachedToken}
 *   writes each one's effect (taken from the statement's result, or computed
 *   from the cached token as the statement computed it) into the cached token
 *   in the same synchronous step (no other request runs between the statement
 *   and the patch).
 * Loading is synchronous too (a direct read), so a load never races a patch.
 * Replay and fail-counter safety never rest on the cache: the counter and
 * fail-counter updates are compare-and-set statements in SQL.
 *
 * Callers get copies (token, info map) they may change; the cached tokens
 * and their info entries are frozen.
 *
 * @module
 */
import { directOf } from "../../db/direct.ts";
import type { InfoEntry, TokenWithInfo } from "./model.ts";

/** Bound on cached owners per database; a full cache starts over. */
const MAX_OWNERS = 1000;

interface Generation {
  epoch: number;
  tokenEpoch: number;
  /** Owner key → ids of that owner's tokens, in the loaded order. */
  owners: Map<string, number[]>;
  tokens: Map<number, TokenWithInfo>;
}

const byDb = new WeakMap<object, Generation>();

function copyOf(t: TokenWithInfo): TokenWithInfo {
  return { ...t, info: { ...t.info }, realms: [] };
}

/** The cache of `db` while its data is current, else undefined. */
function currentOf(db: object): Generation | undefined {
  const g = byDb.get(db);
  const access = directOf(db);
  if (g === undefined || access === undefined) return undefined;
  return g.epoch === access.epoch() && g.tokenEpoch === access.tokenEpoch() ? g : undefined;
}

/**
 * The tokens of the owner `key`: copies of the cached ones, or what `loadNow`
 * reads synchronously (then cached). Undefined when the connection cannot be
 * read directly now (`loadNow` says so by returning undefined, e.g. inside a
 * transaction): the caller then reads through Kysely.
 */
export function ownerTokensNow(
  db: object,
  key: string,
  loadNow: () => TokenWithInfo[] | undefined,
): TokenWithInfo[] | undefined {
  const access = directOf(db);
  if (access === undefined || access.inTransaction()) return undefined;
  // read before loading: another process's commit that lands after the load is
  // seen by a later epoch() and drops what this load put in
  const epoch = access.epoch();
  const tokenEpoch = access.tokenEpoch();
  let g = byDb.get(db);
  if (g !== undefined && (g.epoch !== epoch || g.tokenEpoch !== tokenEpoch)) g = undefined;
  const ids = g?.owners.get(key);
  if (g !== undefined && ids !== undefined) return ids.map((id) => copyOf(g!.tokens.get(id)!));
  const loaded = loadNow();
  if (loaded === undefined) return undefined;
  if (g === undefined) {
    g = { epoch, tokenEpoch, owners: new Map(), tokens: new Map() };
    byDb.set(db, g);
  }
  if (g.owners.size >= MAX_OWNERS) {
    g.owners.clear();
    g.tokens.clear();
  }
  for (const t of loaded) {
    for (const entry of Object.values(t.info)) Object.freeze(entry);
    if (t.owner) Object.freeze(t.owner);
    const kept = Object.freeze({ ...t, info: { ...t.info }, realms: [] });
    g.tokens.set(t.id, kept);
  }
  g.owners.set(key, loaded.map((t) => t.id));
  return loaded.map((t) => copyOf(g!.tokens.get(t.id)!));
}

/** What a hot-path write changed in one token: columns and info entries. */
export interface TokenPatch {
  count?: number;
  failcount?: number;
  info?: Record<string, InfoEntry>;
}

/**
 * Writes the effect of a `keepsTokenCache` statement into the cached token
 * `id` (if it is cached). Call it synchronously right after the statement ran
 * directly on the connection. `patch` is the change, or a function of the
 * cached token that computes it the way the statement did; when it returns
 * undefined (it cannot tell exactly), the whole cache is dropped.
 */
export function patchCachedToken(
  db: object,
  id: number,
  patch: TokenPatch | ((cached: TokenWithInfo) => TokenPatch | undefined),
): void {
  const g = currentOf(db);
  const t = g?.tokens.get(id);
  if (g === undefined || t === undefined) return;
  const change = typeof patch === "function" ? patch(t) : patch;
  if (change === undefined) {
    byDb.delete(db);
    return;
  }
  const info = change.info === undefined ? t.info : { ...t.info };
  for (const [key, entry] of Object.entries(change.info ?? {})) {
    info[key] = Object.freeze({ value: entry.value, type: entry.type });
  }
  g.tokens.set(
    id,
    Object.freeze({
      ...t,
      count: change.count ?? t.count,
      failcount: change.failcount ?? t.failcount,
      info,
    }),
  );
}
