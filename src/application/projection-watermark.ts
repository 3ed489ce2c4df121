import type { ReadModelStore } from '../read-models/read-model-store.ts';
import type { ProjectionSupervisor } from '../projection-engine/projection-supervisor.ts';
import type { Projection } from '../projection-engine/projection.ts';
import type { EventLog } from '../event-store/event-log.ts';
import { HandledEvents } from '../projection-engine/handled-events.ts';
import { UnfoldedAppends, type FoldedPosition } from './unfolded-appends.ts';
import { StoredProgress, type StoredProgressOptions } from './stored-progress.ts';

export interface ProjectionWatermarkOptions extends StoredProgressOptions {
  /** The projections the service maintains: which events each handles (Projection.filter). */
  projections: ReadonlyArray<Pick<Projection, 'name' | 'filter'>>;
  /** The log this process appends through: its appends are what its writes wait for. */
  log: EventLog;
  store: ReadModelStore;
  /** The projectors, when this process runs them: they answer at once, from memory. */
  supervisor: ProjectionSupervisor | undefined;
  /** Appends not yet folded that are remembered at most (see UnfoldedAppends). */
  maxUnfoldedAppends?: number;
}

/** Events read at most to find which a projection handles between its checkpoint and a position (waitForLog). */
const LOG_LOOKAHEAD = 10_000;

/**
 * Read your writes: after appending, a handler waits (bounded) until the read models it will read show
 * its write. It waits only for the projections that handle the events it appended (Projection.filter,
 * exactly as their subscriptions deliver events: HandledEvents): a write no projection handles answers at
 * once, and a projection that does not handle the write's events never delays it, however slowly it
 * moves. What this process appended is heard from the log (EventLog.onAppended) and kept until folded
 * (UnfoldedAppends), so that a write also finds this process's earlier writes folded.
 *
 * Where the projectors run in this process, the supervisor answers from memory as they fold. In an API-only
 * process (ROLES=api), StoredProgress reads the stored checkpoints on the store's commit cues.
 */
export class ProjectionWatermark {
  readonly #handled: HandledEvents;
  readonly #unfolded: UnfoldedAppends;
  readonly #stored: StoredProgress | undefined;
  readonly #supervisor: ProjectionSupervisor | undefined;
  readonly #log: EventLog;
  readonly #unlisten: () => void;

  constructor(options: ProjectionWatermarkOptions) {
    this.#handled = new HandledEvents(options.projections);
    this.#supervisor = options.supervisor;
    this.#stored = options.supervisor ? undefined : new StoredProgress(options.store, options);
    const supervisor = options.supervisor;
    const stored = this.#stored;
    const folded: FoldedPosition = supervisor ? (name) => supervisor.folded(name) : (name) => stored!.folded(name);
    this.#unfolded = new UnfoldedAppends(this.#handled, folded, options.maxUnfoldedAppends);
    this.#log = options.log;
    this.#unlisten = options.log.onAppended((append) => this.#unfolded.add(append));
  }

  /**
   * After this process appended up to `position`: true once every projection (among those named, when named)
   * that handles an event this process appended at or before `position` has folded it; at once when none
   * does. False on timeout, or at once when one of them is paused on a poison event (it will not get there
   * until an operator acts, and a write must not wait for it).
   */
  waitFor(position: bigint, timeoutMs: number, projections?: readonly string[]): Promise<boolean> {
    const targets = this.#unfolded.targets(position, projections);
    if (targets.size === 0) return Promise.resolve(true);
    return this.#waitForTargets(targets, timeoutMs);
  }

  /**
   * True once the named projections have folded every event of the log up to `position`, whoever appended it
   * (an as-of read asks the publication history to have folded what the log holds now). In an API-only process,
   * the events between a projection's stored checkpoint and `position` are read from the log (at most
   * LOG_LOOKAHEAD of them) to find the last it handles: its checkpoint moves past the others only now and then.
   */
  async waitForLog(position: bigint, timeoutMs: number, projections: readonly string[]): Promise<boolean> {
    if (this.#supervisor) return this.#supervisor.waitFor(position, timeoutMs, projections);
    const stored = this.#stored!;
    await stored.refresh();
    const targets = new Map<string, bigint>();
    for (const name of projections) {
      const checkpoint = stored.folded(name);
      if (checkpoint === undefined || (checkpoint !== null && checkpoint >= position)) continue;
      const target = await this.#lastHandled(name, checkpoint, position);
      if (target !== null) targets.set(name, target);
    }
    return targets.size === 0 ? true : stored.waitFor(targets, timeoutMs);
  }

  /** Stops listening to the log and the store. */
  close(): void {
    this.#unlisten();
    this.#stored?.close();
  }

  async #waitForTargets(targets: ReadonlyMap<string, bigint>, timeoutMs: number): Promise<boolean> {
    if (this.#stored) return this.#stored.waitFor(targets, timeoutMs);
    const supervisor = this.#supervisor!;
    const reached = await Promise.all([...targets].map(([name, position]) => supervisor.waitFor(position, timeoutMs, [name])));
    return reached.every(Boolean);
  }

  /** The position of the last event after `after` and up to `upTo` the projection handles (null: none); `upTo` when there are too many to read. */
  async #lastHandled(projection: string, after: bigint | null, upTo: bigint): Promise<bigint | null> {
    let last: bigint | null = null;
    let read = 0;
    for await (const event of this.#log.store.readAll({ after: after ?? 'start', maxCount: LOG_LOOKAHEAD })) {
      if (event.position > upTo) return last;
      if (this.#handled.handles(projection, event)) last = event.position;
      if (++read === LOG_LOOKAHEAD) return upTo;
    }
    return last;
  }
}
