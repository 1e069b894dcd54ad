/**
 * The service credential of one HTTP-family resolver instance: the headers a
 * token request produced (`Authorization: Bearer …`), reused until shortly
 * before the token expires.
 *
 * Cache rule: per process and per resolver instance, only when the token
 * answer says how long the token lives (`expires_in`), for that time less a
 * tenth (at least 5 s). The instance — and with it the token — is replaced
 * whenever the stored resolver definition changes, on every node (instances
 * are keyed by the stored row). A user store that refuses a cached token (401)
 * makes the instance drop it and ask once for a new one. It holds a credential
 * only, never user data, so a stale entry cannot change who a user is.
 *
 * @module
 */

/** What a token request gave. */
export interface FetchedToken {
  /** Headers to add to user-store requests (empty: none). */
  headers: Record<string, string>;
  /** Seconds the token lives, when the answer said so. */
  expiresIn?: number;
}

/** Headers from the cache or a fresh token request. */
export interface TokenHeaders {
  headers: Record<string, string>;
  /** Whether they came from an earlier token request. */
  isCached: boolean;
}

/** A cached token with single-flight refresh: parallel requests share one token request. */
export class TokenCache {
  #now: () => number;
  #token?: { headers: Record<string, string>; usableUntil: number };
  #pending?: Promise<FetchedToken>;

  constructor(now: () => number) {
    this.#now = now;
  }

  /** The cached headers while usable, else those of a new token request made by `fetch`. */
  async get(fetch: () => Promise<FetchedToken>): Promise<TokenHeaders> {
    const now = this.#now();
    if (this.#token && now < this.#token.usableUntil) {
      return { headers: this.#token.headers, isCached: true };
    }
    this.#token = undefined;
    let pending = this.#pending;
    if (!pending) {
      pending = fetch();
      this.#pending = pending;
      const clear = () => {
        if (this.#pending === pending) this.#pending = undefined;
      };
      pending.then(clear, clear);
    }
    const fetched = await pending;
    const lifetime = fetched.expiresIn === undefined
      ? 0
      : fetched.expiresIn - Math.max(5, fetched.expiresIn / 10);
    if (lifetime > 0) {
      this.#token = { headers: fetched.headers, usableUntil: now + lifetime * 1000 };
    }
    return { headers: fetched.headers, isCached: false };
  }

  /** Forgets the cached token (the user store refused it). */
  drop(): void {
    this.#token = undefined;
  }
}

/** `expires_in` of a token answer as seconds, if it is a positive number (or numeric text). */
export function expiresInOf(answer: unknown): number | undefined {
  if (answer === null || typeof answer !== "object") return undefined;
  const raw = (answer as Record<string, unknown>).expires_in;
  const n = typeof raw === "number" ? raw : typeof raw === "string" ? Number(raw) : NaN;
  return Number.isFinite(n) && n > 0 ? n : undefined;
}
