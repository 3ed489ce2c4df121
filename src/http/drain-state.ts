/**
 * Whether the process is shutting down. Shared by the HTTP server (which starts draining on close()) and the
 * health routes (which answer 503 while draining, so load balancers stop sending traffic). One per process;
 * draining never ends.
 */
export class DrainState {
  #since: Date | undefined;
  readonly #listeners = new Set<() => void>();

  get draining(): boolean {
    return this.#since !== undefined;
  }

  /** When draining began, or undefined. */
  get since(): Date | undefined {
    return this.#since;
  }

  /** Start draining (idempotent). */
  begin(now: Date = new Date()): void {
    if (this.#since !== undefined) return;
    this.#since = now;
    for (const listener of this.#listeners) listener();
    this.#listeners.clear();
  }

  /**
   * Calls `listener` once draining begins (at once when it has): for responses that never end by themselves
   * (event streams), which end then so that the server can close. Returns what stops listening.
   */
  onBegin(listener: () => void): () => void {
    if (this.#since !== undefined) {
      listener();
      return () => {};
    }
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }
}
