/**
 * How far a projector's stored read model reflects the log (folded), and the waiters for a position (read
 * your writes in this process): answered once it is reached, or abandoned while the projector is paused.
 */

export class FoldedWaiters {
  /** How far the stored read model reflects the log: the checkpoint, or past it when nothing since is to be written. */
  #folded: bigint | null = null;
  #waiters: Array<{ position: bigint; resolve: (reached?: boolean) => void }> = [];

  get folded(): bigint | null {
    return this.#folded;
  }

  /**
   * Resolves true once everything up to `position` is folded; false after `timeoutMs`, or at once when the
   * projector is `paused` on a poison event (it will not get there until an operator acts).
   */
  waitFor(position: bigint, timeoutMs: number, paused: boolean): Promise<boolean> {
    if (this.#folded !== null && this.#folded >= position) return Promise.resolve(true);
    if (paused) return Promise.resolve(false);
    return new Promise((resolve) => {
      const waiter = { position, resolve: (reached = true) => { clearTimeout(timer); resolve(reached); } };
      const timer = setTimeout(() => {
        this.#waiters = this.#waiters.filter((w) => w !== waiter);
        resolve(false);
      }, timeoutMs);
      this.#waiters.push(waiter);
    });
  }

  /** Paused: nobody waits for it (read your writes must not stall on a projection an operator has to fix). */
  abandon(): void {
    const waiters = this.#waiters;
    this.#waiters = [];
    for (const waiter of waiters) waiter.resolve(false);
  }

  /** The stored read model reflects the log up to `position` (see folded): waiters up to it are answered. */
  reached(position: bigint): void {
    if (this.#folded === null || position > this.#folded) this.#folded = position;
    if (this.#waiters.length === 0) return;
    const folded = this.#folded;
    const ready = this.#waiters.filter((w) => w.position <= folded);
    this.#waiters = this.#waiters.filter((w) => w.position > folded);
    for (const waiter of ready) waiter.resolve();
  }
}
