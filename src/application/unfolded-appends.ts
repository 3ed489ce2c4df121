import type { AppendedEvents } from '../event-store/event-log.ts';
import type { HandledEvents } from '../projection-engine/handled-events.ts';

interface Unfolded {
  position: bigint;
  /** The projections that handle one of its events and are not yet known to have folded it. */
  handlers: string[];
}

/** Appends between two looks for what is folded, when no write waits. */
const PRUNE_EVERY = 256;

/** How far each projection is known to have folded the log; undefined when not known (yet). */
export type FoldedPosition = (projection: string) => bigint | null | undefined;

/**
 * The appends this process made that projections handling them may not have folded yet: what a write
 * waits for to read its own writes. An append no projection handles is never kept (a write of only such
 * events waits for nothing); one is dropped once every projection handling it is known to have folded it.
 * What is folded is forgotten on every wait, and every PRUNE_EVERY appends (a process whose writes do not
 * wait, such as a projector-only one, appends too). At most `limit` are kept (the oldest go first): more
 * are left only while projections stall, and the writes that made them have given up waiting.
 */
export class UnfoldedAppends {
  /** In the order appended: positions almost always ascend (concurrent appends may finish out of order). */
  #unfolded: Unfolded[] = [];
  #added = 0;

  constructor(
    private readonly handled: HandledEvents,
    private readonly folded: FoldedPosition,
    private readonly limit = 10_000,
  ) {}

  /** Remembers an append of this process (EventLog.onAppended). */
  add(append: AppendedEvents): void {
    const handlers = this.handled.handlersOf(append.types.map((type) => ({ type, streamId: append.streamId })));
    if (handlers.length === 0) return;
    this.#unfolded.push({ position: append.position, handlers });
    if (++this.#added % PRUNE_EVERY === 0) this.targets(-1n);
    if (this.#unfolded.length > this.limit) this.#unfolded.splice(0, this.#unfolded.length - this.limit);
  }

  /** Appends kept (for tests and metrics). */
  get size(): number {
    return this.#unfolded.length;
  }

  /**
   * What a write at `position` waits for: for each projection (among `only`, when given) that handles an
   * append of this process at or before `position` and is not known to have folded it, the position of the
   * last such append. Empty when none does. Forgets what is folded.
   */
  targets(position: bigint, only?: readonly string[]): Map<string, bigint> {
    const targets = new Map<string, bigint>();
    const kept: Unfolded[] = [];
    for (const append of this.#unfolded) {
      const handlers = append.handlers.filter((name) => {
        const at = this.folded(name);
        return at === undefined || at === null || at < append.position;
      });
      if (handlers.length === 0) continue;
      append.handlers = handlers;
      kept.push(append);
      if (append.position > position) continue;
      for (const name of handlers) {
        if (only && !only.includes(name)) continue;
        const target = targets.get(name);
        if (target === undefined || append.position > target) targets.set(name, append.position);
      }
    }
    this.#unfolded = kept;
    return targets;
  }
}
