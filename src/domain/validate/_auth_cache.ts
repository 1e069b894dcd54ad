/**
 * Policy `auth_cache` (spec 15 §3.1): the same `pass` that authenticated a
 * user may authenticate again within a time, without the token check. The
 * value is `<d1>`, `<d1>/<d2>` or `<d1>/<n>` (durations `30s`, `5m`, `4h`,
 * `2d`, `1y`): an entry counts while its first use is younger than d1, its
 * last use younger than d2, and it was used fewer than n times. The entries
 * live in the database (every node sees them), as keyed hashes of `pass`.
 *
 * @module
 */
import type { Deps } from "../../deps.ts";
import { PolicyError } from "../../errors.ts";
import { hashPin, verifyPin } from "../../lib/crypto.ts";
import {
  addAuthCacheEntry,
  authCacheEntries,
  type AuthCacheUser,
  deleteAuthCacheEntries,
  useAuthCacheEntry,
} from "./validate_store.ts";

/** The message of an authentication the cache decided. */
export const AUTH_CACHE_MESSAGE = "Authenticated by AuthCache.";

/** A parsed `auth_cache` value: the limits in milliseconds before `now`, and the uses. */
export interface AuthCacheRule {
  /** An entry whose first use is this old or older no longer counts. */
  firstMs: number;
  /** An entry whose last use is this old or older no longer counts. */
  lastMs: number;
  /** Uses of one entry (0: no limit). */
  maxUses: number;
}

const DURATION_REGEXP = /^\s*\+?\s*(\d{1,9})\s*([smhdy])\s*$/;
const UNIT_MS: Record<string, number> = {
  s: 1000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
  y: 365 * 86_400_000,
};

function durationMs(text: string, value: string): number {
  const m = text.match(DURATION_REGEXP);
  if (!m) {
    // privacyIDEA fails with an unexpected error; a clear refusal names the policy value
    throw new PolicyError(
      `Cannot parse the auth_cache value "${value}": expected a duration like 4h, 4h/5m or 2d/3`,
    );
  }
  return Number(m[1]) * UNIT_MS[m[2]];
}

/** Parses an `auth_cache` value; PolicyError (403) when it cannot be read. */
export function parseAuthCache(value: string): AuthCacheRule {
  const [first, second] = value.split("/");
  const firstMs = durationMs(first, value);
  if (second === undefined) return { firstMs, lastMs: firstMs, maxUses: 0 };
  if (/^\d+$/.test(second)) return { firstMs, lastMs: firstMs, maxUses: Number(second) };
  return { firstMs, lastMs: durationMs(second, value), maxUses: 0 };
}

/**
 * Whether `pass` authenticates `who` from the cache now; a hit is counted
 * (compare-and-set, so `n` uses hold across parallel requests and nodes).
 * A miss drops the user's entries that are used up, too old, or hold this
 * `pass` (an entry that timed out is not revived by the next success).
 */
export async function isInAuthCache(
  deps: Deps,
  who: AuthCacheUser,
  pass: string,
  rule: AuthCacheRule,
): Promise<boolean> {
  const now = deps.clock.now();
  const firstLimit = now - rule.firstMs;
  const lastLimit = now - rule.lastMs;
  const entries = await authCacheEntries(deps.db, who);
  if (entries.length === 0) return false;
  const pepper = deps.keys.pinPepper;
  const matches = new Map(entries.map((e) => [e.id, verifyPin(pepper, e.passHash, pass)]));
  for (const e of entries) {
    if (!(e.firstAuth > firstLimit && e.lastAuth > lastLimit)) continue;
    if (!matches.get(e.id)) continue;
    if (rule.maxUses > 0 && e.authCount >= rule.maxUses) continue;
    if (await useAuthCacheEntry(deps.db, e.id, { now, maxUses: rule.maxUses })) return true;
  }
  const stale = entries.filter((e) =>
    (rule.maxUses > 0 && e.authCount >= rule.maxUses) || e.firstAuth < firstLimit ||
    matches.get(e.id)
  );
  await deleteAuthCacheEntries(deps.db, stale.map((e) => e.id));
  return false;
}

/** Remembers that `pass` authenticated `who` (after a successful check under the policy). */
export async function rememberInAuthCache(
  deps: Deps,
  who: AuthCacheUser,
  pass: string,
  rule: AuthCacheRule,
): Promise<void> {
  const now = deps.clock.now();
  await addAuthCacheEntry(deps.db, who, {
    passHash: hashPin(deps.keys.pinPepper, pass, deps.random),
    now,
    expiredBefore: now - rule.firstMs,
  });
}
