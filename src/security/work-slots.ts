/**
 * A bound on how many expensive tasks (password hashing) run at once, with a bounded queue behind it. Hashing a
 * password (scrypt, about 100 ms of one core) runs on libuv's thread pool; eight at once took both cores of a
 * small machine and every pool thread, and every other request waited. With a slot per spare core the event
 * loop keeps a core, and the pool keeps threads for file and DNS work. Beyond the queue, tasks are refused
 * at once (SlotsFullError) rather than piling up.
 */
export class SlotsFullError extends Error {
  override name = 'SlotsFullError';
  constructor(readonly retryAfterSeconds: number) {
    super('too many tasks waiting for a slot');
  }
}

export interface WorkSlotsOptions {
  /** Tasks running at once. */
  concurrency: number;
  /** Tasks waiting at most; more are refused. */
  maxQueued: number;
}

export class WorkSlots {
  readonly #concurrency: number;
  readonly #maxQueued: number;
  readonly #queue: Array<() => void> = [];
  #running = 0;

  constructor(options: WorkSlotsOptions) {
    if (!Number.isInteger(options.concurrency) || options.concurrency < 1) throw new RangeError(`concurrency must be a positive whole number, got ${options.concurrency}`);
    if (!Number.isInteger(options.maxQueued) || options.maxQueued < 0) throw new RangeError(`maxQueued must be a whole number, got ${options.maxQueued}`);
    this.#concurrency = options.concurrency;
    this.#maxQueued = options.maxQueued;
  }

  /** Tasks running now. */
  get running(): number {
    return this.#running;
  }

  /** Tasks waiting now. */
  get queued(): number {
    return this.#queue.length;
  }

  /** Runs `task` when a slot is free; SlotsFullError at once when the queue is full. */
  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.#running >= this.#concurrency) {
      if (this.#queue.length >= this.#maxQueued) throw new SlotsFullError(1);
      await new Promise<void>((resolve) => this.#queue.push(resolve));
    } else {
      this.#running += 1;
    }
    try {
      return await task();
    } finally {
      const next = this.#queue.shift();
      // The slot passes straight to the next task, or is freed.
      if (next) next();
      else this.#running -= 1;
    }
  }
}
