/**
 * A delay that another part of the program can cut short: loops that wait for new work or for a stop
 * signal sleep on it, and `interrupt()` wakes them at once.
 */
export class InterruptibleDelay {
  #interrupt: (() => void) | undefined;

  /** Resolves after `ms`, or as soon as `interrupt()` is called. */
  sleep(ms: number): Promise<void> {
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
}
