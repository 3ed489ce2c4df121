/**
 * Whether the process is shutting down. Shared by the HTTP server (which starts draining on close()) and the
 * health routes (which answer 503 while draining, so load balancers stop sending traffic). One per process;
 * draining never ends.
 */
export class DrainState {
  #since: Date | undefined;

  get draining(): boolean {
    return this.#since !== undefined;
  }

  /** When draining began, or undefined. */
  get since(): Date | undefined {
    return this.#since;
  }

  /** Start draining (idempotent). */
  begin(now: Date = new Date()): void {
    this.#since ??= now;
  }
}
