import type { Logger } from 'pino';
import type { Clock } from '../clock.ts';
import type { Actor } from '../event-store/event-store.ts';
import type { EventLog } from '../event-store/event-log.ts';
import { encodePosition } from '../event-store/position.ts';
import { OPERATIONS_STREAM, projectionEventSkipped } from '../domain/operations-events.ts';
import type { GenerationRecord, ReadModelStore } from '../read-models/read-model-store.ts';
import type { Projection } from './projection.ts';
import { describeFailure, type FailureDescription } from './projector.ts';
import { startRebuild, type RebuildProgress, type RebuildResult } from './rebuild.ts';

/** An operator command that cannot be carried out as asked; the message says why. */
export class OperationError extends Error {
  override name = 'OperationError';
}

/** What operators do to projections: rebuild, retry a paused one, skip the event it is paused on. */
export class ProjectionOperations {
  readonly #drops = new Set<Promise<void>>();

  constructor(
    private readonly deps: { projections: readonly Projection[]; log: EventLog; store: ReadModelStore; clock: Clock; logger: Logger },
  ) {}

  projection(name: string): Projection {
    const projection = this.deps.projections.find((p) => p.name === name);
    if (!projection) throw new OperationError(`no projection named ${JSON.stringify(name)}; known: ${this.deps.projections.map((p) => p.name).join(', ')}`);
    return projection;
  }

  /**
   * Resolves once the new generation is swapped in; the replaced one is dropped after its grace in the
   * background (see droppedAll), so rebuilding every projection waits for no grace in between.
   */
  rebuild(name: string, options: { onProgress?: (p: RebuildProgress) => void; dropGraceMs?: number } = {}): Promise<RebuildResult> {
    const { log, store, clock, logger } = this.deps;
    const handle = startRebuild({ projection: this.projection(name), log, store, clock, logger, ...options });
    const dropped = handle.dropped.finally(() => this.#drops.delete(dropped));
    this.#drops.add(dropped);
    return handle.result;
  }

  /** Resolves once every generation replaced by rebuild() so far has been dropped (before the store closes). */
  async droppedAll(): Promise<void> {
    await Promise.all([...this.#drops]);
  }

  /** Clears the failure, so the projector tries the event again. */
  async retry(name: string): Promise<{ projection: string; generation: number; retrying: FailureDescription }> {
    const paused = await this.#paused(name);
    await this.deps.store.setFailure(paused, null, this.deps.clock.now().toISOString());
    return { projection: name, generation: paused.generation, retrying: describeFailure(paused.failure!) };
  }

  /**
   * Records that the projection passes over the event it is paused on (kept for every later rebuild,
   * and appended to the log as an audit event), then lets the projector resume.
   */
  async skip(name: string, reason: string, actor: Actor): Promise<{ projection: string; generation: number; skipped: FailureDescription }> {
    const paused = await this.#paused(name);
    const failure = paused.failure!;
    const now = this.deps.clock.now().toISOString();
    await this.deps.log.append(
      OPERATIONS_STREAM,
      [{
        type: projectionEventSkipped.type,
        data: {
          projection: name,
          eventId: failure.eventId,
          eventType: failure.eventType,
          streamId: failure.streamId,
          position: encodePosition(failure.position),
          reason,
          failure: failure.message.slice(0, 4000),
        },
      }],
      'any',
      { actor },
    );
    await this.deps.store.addSkip({ projection: name, eventId: failure.eventId, position: failure.position, reason, actor: `${actor.type}:${actor.id}`, skippedAt: now });
    await this.deps.store.setFailure(paused, null, now);
    return { projection: name, generation: paused.generation, skipped: describeFailure(failure) };
  }

  /** The active generation if it is paused, else the newest paused generation being rebuilt. */
  async #paused(name: string): Promise<GenerationRecord> {
    this.projection(name);
    const generations = await this.deps.store.listGenerations(name);
    const paused =
      generations.find((g) => g.state === 'active' && g.failure) ??
      generations.filter((g) => g.state === 'building' && g.failure).sort((a, b) => b.generation - a.generation)[0];
    if (!paused) throw new OperationError(`projection ${name} is not paused: nothing to retry or skip`);
    return paused;
  }
}
