/**
 * What the stand-in saw of its callers, for tests to assert on: the calls open now by kind (a read the
 * client abandoned without cancelling stays open on a real server too, holding its resources), how many of
 * each were made, how many records each read asked for, and where each subscription to $all asked to start.
 */
export type CallKind = 'read' | 'subscription' | 'append' | 'batch-append' | 'delete' | 'tombstone' | 'server-features' | 'gossip';

export class CallLedger {
  readonly #open = new Map<CallKind, number>();
  readonly #made = new Map<CallKind, number>();
  readonly subscriptionStarts: Array<bigint | 'start' | 'end'> = [];
  /** Every read (not subscription): of $all or of which stream, and how many records it asked for. */
  readonly reads: Array<{ of: string; count: bigint }> = [];

  /** Counts a call as open until the returned function is called (idempotent). */
  opened(kind: CallKind): () => void {
    this.#open.set(kind, (this.#open.get(kind) ?? 0) + 1);
    this.#made.set(kind, (this.#made.get(kind) ?? 0) + 1);
    let closed = false;
    return () => {
      if (closed) return;
      closed = true;
      this.#open.set(kind, this.#open.get(kind)! - 1);
    };
  }

  /** Forgets what was made (calls open now stay counted as open). */
  reset(): void {
    this.#made.clear();
    this.subscriptionStarts.length = 0;
    this.reads.length = 0;
  }

  open(kind: CallKind): number {
    return this.#open.get(kind) ?? 0;
  }

  made(kind: CallKind): number {
    return this.#made.get(kind) ?? 0;
  }
}
