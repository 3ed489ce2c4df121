/**
 * A delay that another part of the program can cut short: loops that wait for new work or for a stop
 * signal sleep on it, and `interrupt()` wakes them at once.
 *
 * A loop that sleeps until something happens (an append, a commit elsewhere) uses `wake()` instead: a wake-up
 * that comes while the loop is not asleep (busy with what it read last) is remembered, and its next sleep
 * returns at once, so no news waits for the next poll. The loop calls `forgetWake()` as it starts to read:
 * what came before then, the read sees.
 */
export class InterruptibleDelay {
  #interrupt: (() => void) | undefined;
  #woken = false;

  /** Resolves after `ms`, or as soon as `interrupt()` or `wake()` is called; at once after a `wake()` not yet slept on. */
  sleep(ms: number): Promise<void> {
    if (this.#woken) {
      this.#woken = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        if (this.#interrupt === done) this.#interrupt = undefined;
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.#interrupt = done;
    });
  }

  /** Ends the current sleep, if any. */
  interrupt(): void {
    this.#interrupt?.();
  }

  /** Ends the current sleep, or, with nobody asleep, the next one as it begins. */
  wake(): void {
    if (this.#interrupt) this.#interrupt();
    else this.#woken = true;
  }

  /** Whether a wake-up came since the last `forgetWake()` and has not been slept on. */
  get woken(): boolean {
    return this.#woken;
  }

  /** Drops a remembered wake-up (the caller is about to read what it was about). */
  forgetWake(): void {
    this.#woken = false;
  }
}
