/**
 * Per-key limits on attempts (e.g. logins per client address): how many may
 * be in progress at once, and how many may fail within a time window. The
 * counts live in memory, bounded in size; the caller supplies the time.
 *
 * @module
 */

/** The limits of an {@link AttemptLimiter}. */
export interface AttemptLimits {
  /** Failures per key within `windowMs`; once reached, the key is refused until the window ends. */
  maxFailures: number;
  /** Length of the failure window in milliseconds; it starts at the key's first failure. */
  windowMs: number;
  /** Attempts of one key in progress at once. */
  maxPending: number;
  /** Keys tracked at most; when full, expired keys go first, then the oldest. */
  maxKeys: number;
}

/** The answer of {@link AttemptLimiter.begin}. */
export type Admission =
  | {
    allowed: true;
    /** Ends the attempt; a failure counts against the key's window. Call exactly once. */
    finish(failed: boolean, now: number): void;
  }
  | {
    allowed: false;
    /** `failures`: the window's failures are used up; `pending`: too many at once. */
    reason: "failures" | "pending";
    /** When the key will be admitted again at the earliest (0 when it depends on others). */
    retryAfterMs: number;
  };

interface Entry {
  failures: number;
  /** Time of the first failure of the current window. */
  windowStart: number;
  pending: number;
}

/** Counts attempts and failures per key (see the module doc). */
export class AttemptLimiter {
  readonly #limits: AttemptLimits;
  readonly #entries = new Map<string, Entry>();

  constructor(limits: AttemptLimits) {
    this.#limits = limits;
  }

  /** Number of keys tracked now. */
  get size(): number {
    return this.#entries.size;
  }

  /** Admits or refuses an attempt of `key` at time `now` (ms). */
  begin(key: string, now: number): Admission {
    const { maxFailures, windowMs, maxPending } = this.#limits;
    let entry = this.#entries.get(key);
    if (entry !== undefined) {
      if (entry.failures > 0 && now - entry.windowStart >= windowMs) entry.failures = 0;
      if (entry.failures >= maxFailures) {
        return {
          allowed: false,
          reason: "failures",
          retryAfterMs: entry.windowStart + windowMs - now,
        };
      }
      // attempts in progress may all fail: they count against the window
      // already, so a burst cannot run more attempts than the window allows
      if (entry.pending >= maxPending || entry.failures + entry.pending >= maxFailures) {
        return { allowed: false, reason: "pending", retryAfterMs: 0 };
      }
    } else {
      this.#makeRoom(now);
      entry = { failures: 0, windowStart: now, pending: 0 };
      this.#entries.set(key, entry);
    }
    entry.pending++;
    const held = entry;
    let finished = false;
    return {
      allowed: true,
      finish: (failed, at) => {
        if (finished) return;
        finished = true;
        held.pending--;
        if (failed) {
          if (held.failures === 0 || at - held.windowStart >= windowMs) {
            held.failures = 0;
            held.windowStart = at;
          }
          held.failures++;
        }
        if (held.pending === 0 && held.failures === 0 && this.#entries.get(key) === held) {
          this.#entries.delete(key);
        }
      },
    };
  }

  #makeRoom(now: number): void {
    const { maxKeys, windowMs } = this.#limits;
    if (this.#entries.size < maxKeys) return;
    for (const [key, e] of this.#entries) {
      if (e.pending === 0 && (e.failures === 0 || now - e.windowStart >= windowMs)) {
        this.#entries.delete(key);
      }
    }
    // still full: forget the oldest tenth at once, so a stream of new keys
    // does not pay for a full scan each (an attempt in progress of a forgotten
    // key finishes on its detached entry)
    if (this.#entries.size >= maxKeys) {
      let drop = Math.max(1, Math.ceil(maxKeys / 10));
      for (const key of this.#entries.keys()) {
        if (drop-- === 0) break;
        this.#entries.delete(key);
      }
    }
  }
}
