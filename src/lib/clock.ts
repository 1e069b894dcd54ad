/** Source of the current time; injected so expiry and TOTP logic is testable. */
export interface Clock {
  /** Milliseconds since the Unix epoch. */
  now(): number;
}

/** The real wall clock. */
export const systemClock: Clock = { now: () => Date.now() };

/** A clock that only moves when told to (for tests and benchmarks). */
export class FixedClock implements Clock {
  #ms: number;
  constructor(ms: number) {
    this.#ms = ms;
  }
  now(): number {
    return this.#ms;
  }
  /** Moves the clock forward by `ms` milliseconds. */
  advance(ms: number): void {
    this.#ms += ms;
  }
  /** Sets the clock to `ms`. */
  set(ms: number): void {
    this.#ms = ms;
  }
}
