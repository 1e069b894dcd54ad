/**
 * A monotonic stopwatch for response timing (not for business time: that is
 * the injected clock).
 *
 * @module
 */

/** Measures real elapsed time from its creation. */
export class Stopwatch {
  readonly #started = performance.now();

  /** Milliseconds since the stopwatch was created. */
  elapsedMs(): number {
    return performance.now() - this.#started;
  }

  /** Resolves once at least `ms` milliseconds have passed since creation. */
  async waitUntil(ms: number): Promise<void> {
    // timers may fire a fraction of a millisecond early: wait again for what is left
    for (let left = ms - this.elapsedMs(); left > 0; left = ms - this.elapsedMs()) {
      await new Promise((resolve) => setTimeout(resolve, Math.ceil(left)));
    }
  }
}
