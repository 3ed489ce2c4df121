import type { Logger } from 'pino';
import type { Clock } from '../clock.ts';
import type { EventLog } from '../event-store/event-log.ts';
import type { ProjectionFailure, ReadModelStore } from '../read-models/read-model-store.ts';
import { schemaOf, type Projection } from './projection.ts';
import { Projector, describeFailure } from './projector.ts';

export interface RebuildProgress {
  /** Events folded so far. */
  events: number;
  /** Fraction of the log covered, 0..1, by position. */
  fraction: number;
  checkpoint: bigint | null;
  head: bigint | null;
}

export interface RebuildOptions {
  projection: Projection;
  log: EventLog;
  store: ReadModelStore;
  clock: Clock;
  logger: Logger;
  onProgress?: (progress: RebuildProgress) => void;
  /**
   * How long the replaced generation stays readable after the swap before it is dropped, in the background:
   * the rebuild's result does not wait for it (RebuildHandle.dropped does).
   */
  dropGraceMs?: number;
  /** Documents (or events) per commit; REBUILD_BATCH_SIZE by default. */
  batchSize?: number;
}

export interface RebuildResult {
  projection: string;
  generation: number;
  previousGeneration: number | null;
  events: number;
  checkpoint: bigint | null;
  durationMs: number;
}

export class RebuildPausedError extends Error {
  override name = 'RebuildPausedError';
  constructor(readonly projection: string, readonly generation: number, readonly failure: ProjectionFailure) {
    super(
      `rebuild of ${projection} paused at event ${failure.eventId} (${failure.eventType}, position ${describeFailure(failure).position}): ${failure.message}. ` +
        `Fix the projection and run the rebuild again, or skip the event with: projections skip ${projection} --reason "..."`,
    );
  }
}

/**
 * How long the replaced generation stays readable after the swap. Readers move off it within their cache
 * (1 s) or, in a process running the projectors, once the supervisor has followed the swap (its watch,
 * 1 s, and at most FOLLOW_CATCH_UP_MS, 2 s): this leaves room for a busy machine.
 */
export const DROP_GRACE_MS = 6000;

/**
 * Documents (or events) a rebuild commits at a time. Every commit writes each page it changed again (to the
 * WAL, then the database), and document ids are random (entry UUIDs), so a commit's inserts land on pages
 * spread over each collection's whole id index (and its whileFolding indexes): the bigger the generation,
 * the more pages every commit rewrites, however few documents it holds. Rebuilding public-content at
 * 100,000 entries (a 1 GB read model) wrote 7.0 GB at 2,000 documents a commit and 4.4 GB at 10,000
 * (`bench:eventstore --log`, both with the 0.6 GB copy of the log). A commit then holds the process for
 * ~170 ms instead of ~50 (SQLite is synchronous), and the batch that many documents in memory.
 */
export const REBUILD_BATCH_SIZE = 10_000;

/** A running rebuild, so the service can stop it on shutdown. */
export interface RebuildHandle {
  /** Resolves once the new generation is swapped in. */
  result: Promise<RebuildResult>;
  /**
   * Resolves once the replaced generation is dropped, DROP_GRACE_MS after the swap (at once when there was
   * none, or the rebuild failed). Never rejects: a failed drop is logged, and the supervisor drops retired
   * generations at its next start.
   */
  dropped: Promise<void>;
  stop(): Promise<void>;
}

/**
 * Replays the whole log into a new generation of the projection while the active generation keeps
 * serving, then swaps the new one in once it has caught up. The projector that serves live updates
 * notices the swap and continues from the new generation's checkpoint. Replaying folds events into
 * read models only: side effects come from outboxes whose completions are themselves events, so a
 * rebuild never sends anything again.
 */
export function startRebuild(options: RebuildOptions): RebuildHandle {
  let projector: Projector | undefined;
  let stopped = false;
  let dropped: Promise<void> = Promise.resolve();
  const result = (async (): Promise<RebuildResult> => {
    const { projection, store, clock, log, logger } = options;
    const started = performance.now();
    const generations = await store.listGenerations(projection.name);
    // A generation left 'building' by an interrupted rebuild is of no use: start over.
    for (const g of generations.filter((g) => g.state === 'building')) await store.dropGeneration(schemaOf(projection), g.generation);
    const generation = Math.max(0, ...generations.map((g) => g.generation)) + 1;
    await store.createGeneration(schemaOf(projection), generation, projection.version, clock.now().toISOString(), { deferIndexes: true });
    const head = await log.headPosition();
    logger.info({ projection: projection.name, generation }, 'rebuild started');
    projector = new Projector({
      projection,
      generation,
      log,
      store,
      clock,
      logger,
      stopWhenCaughtUp: true,
      batchSize: options.batchSize ?? REBUILD_BATCH_SIZE,
      onCommit: ({ checkpoint, events }) => {
        const fraction = head === null || head === 0n || checkpoint === null ? 1 : Math.min(1, Number((checkpoint * 10_000n) / head) / 10_000);
        options.onProgress?.({ events, fraction, checkpoint, head });
      },
    });
    if (stopped) await projector.stop();
    const outcome = await projector.run();
    if (outcome === 'paused' && projector.failure) throw new RebuildPausedError(projection.name, generation, projector.failure);
    if (outcome !== 'live') throw new Error(`rebuild of ${projection.name} stopped before it caught up`);
    await store.createIndexes(schemaOf(projection), generation);
    const previous = await store.activeGeneration(projection.name);
    await store.activateGeneration(projection.name, generation, previous, clock.now().toISOString());
    logger.info({ projection: projection.name, generation, previousGeneration: previous, events: projector.eventsFolded }, 'rebuild swapped in');
    if (previous !== null) {
      // Readers mid-request may still read the replaced generation: it goes after a grace, in the background,
      // so the next rebuild (of this or another projection) does not wait for it.
      dropped = new Promise((resolve) => setTimeout(resolve, options.dropGraceMs ?? DROP_GRACE_MS))
        .then(() => store.dropGeneration(schemaOf(projection), previous))
        .catch((error: unknown) => logger.warn({ err: error, projection: projection.name, generation: previous }, 'dropping the replaced generation failed; it goes at the next start'));
    }
    return {
      projection: projection.name,
      generation,
      previousGeneration: previous,
      events: projector.eventsFolded,
      checkpoint: projector.checkpoint,
      durationMs: Math.round(performance.now() - started),
    };
  })();
  return {
    result,
    get dropped() {
      return result.then(
        () => dropped,
        () => undefined,
      );
    },
    stop: async () => {
      stopped = true;
      await projector?.stop();
    },
  };
}
