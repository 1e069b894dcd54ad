/**
 * A work queue with a fixed number of slots and a bounded waiting line: work
 * beyond the line is refused at once instead of waiting without end.
 *
 * @module
 */

/** Thrown by {@link BoundedQueue.run} when the waiting line is full. */
export class QueueFullError extends Error {
  constructor(waiting: number) {
    super(`Cannot queue work: ${waiting} callers are already waiting`);
    this.name = "QueueFullError";
  }
}

/** Runs async work with at most `concurrency` jobs at once, the rest in first-come order. */
export class BoundedQueue {
  readonly #concurrency: number;
  #running = 0;
  readonly #waiting: (() => void)[] = [];

  constructor(concurrency: number) {
    if (!(concurrency >= 1)) throw new RangeError("concurrency must be at least 1");
    this.#concurrency = concurrency;
  }

  /** Jobs running now. */
  get running(): number {
    return this.#running;
  }

  /** Jobs waiting for a slot. */
  get waiting(): number {
    return this.#waiting.length;
  }

  /**
   * Runs `work` in a free slot. When every slot is busy it waits, unless
   * `maxWaiting` callers already wait: then it rejects at once with
   * {@link QueueFullError} and `work` never runs.
   */
  async run<T>(work: () => Promise<T>, maxWaiting = Infinity): Promise<T> {
    if (this.#running >= this.#concurrency) {
      if (this.#waiting.length >= maxWaiting) throw new QueueFullError(this.#waiting.length);
      // the finishing job hands its slot over directly (see finally), so
      // #running stays counted and nobody can overtake the line
      await new Promise<void>((resolve) => this.#waiting.push(resolve));
    } else {
      this.#running++;
    }
    try {
      return await work();
    } finally {
      const next = this.#waiting.shift();
      if (next) next();
      else this.#running--;
    }
  }
}
