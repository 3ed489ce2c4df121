import type { Actor } from '../event-store/event-store.ts';
import type { EventLog } from '../event-store/event-log.ts';
import type { Clock } from '../clock.ts';
import type { Projection } from '../projection-engine/projection.ts';
import { ProjectionOperations } from '../projection-engine/projection-operations.ts';
import { readProjectionStatus, type ProjectionStatus } from '../projection-engine/projection-status.ts';
import { RebuildPausedError, type RebuildProgress } from '../projection-engine/rebuild.ts';
import type { ReadModelReader } from '../read-models/read-model-reader.ts';
import type { ReadModelStore } from '../read-models/read-model-store.ts';

/** The outboxes a project's work waits in: webhook deliveries, contact-form notices, media purges. */
const OUTBOXES = [
  { name: 'webhooks', projection: 'webhooks', collection: 'jobs' },
  { name: 'contact-notices', projection: 'contact-forms', collection: 'jobs' },
  { name: 'media-purge', projection: 'media', collection: 'purges' },
] as const;

/** A rebuild started from the admin API, as far as it has come (kept in this process's memory). */
export interface RebuildRun {
  projection: string;
  state: 'running' | 'done' | 'paused' | 'failed';
  startedAt: string;
  finishedAt: string | null;
  events: number;
  /** Fraction of the log covered, 0..1. */
  fraction: number;
  generation: number | null;
  error: string | null;
}

export interface OperationsOverview {
  version: string;
  adapters: { eventStore: string; readModels: string; blobs: string };
  projections: Array<ProjectionStatus & { rebuild: RebuildRun | null }>;
  /** Items of this project waiting in each outbox. */
  outboxes: Array<{ name: string; pending: number }>;
}

/**
 * What the console's operations page shows and does: projection status with the failing event, retry,
 * skip with a reason (recorded in the log), rebuild with progress; the project's outbox backlogs; the
 * version and adapters in use. Projections are the service's, shared by every project it holds.
 */
export class OperationsOverviewService {
  readonly #runs = new Map<string, RebuildRun>();
  readonly #operations: ProjectionOperations;

  constructor(
    private readonly deps: {
      projections: readonly Projection[];
      log: EventLog;
      store: ReadModelStore;
      reader: ReadModelReader;
      operations: ProjectionOperations;
      version: string;
      adapters: OperationsOverview['adapters'];
      clock: Clock;
    },
  ) {
    this.#operations = deps.operations;
  }

  async overview(projectId: string): Promise<OperationsOverview> {
    const status = await readProjectionStatus(this.deps.projections, this.deps.store, this.deps.log);
    const outboxes = await Promise.all(OUTBOXES.map(async (o) => ({ name: o.name, pending: await this.deps.reader.count(o.projection, o.collection, { status: 'pending', projectId }) })));
    return {
      version: this.deps.version,
      adapters: this.deps.adapters,
      projections: status.map((s) => ({ ...s, rebuild: this.#runs.get(s.name) ?? null })),
      outboxes,
    };
  }

  retry(name: string) {
    return this.#operations.retry(name);
  }

  skip(name: string, reason: string, actor: Actor) {
    return this.#operations.skip(name, reason, actor);
  }

  /** Starts a rebuild into a new generation and answers at once; `overview` shows its progress. One at a time per projection. */
  startRebuild(name: string): RebuildRun {
    this.#operations.projection(name);
    const current = this.#runs.get(name);
    if (current?.state === 'running') return current;
    const run: RebuildRun = { projection: name, state: 'running', startedAt: this.deps.clock.now().toISOString(), finishedAt: null, events: 0, fraction: 0, generation: null, error: null };
    this.#runs.set(name, run);
    const progress = (p: RebuildProgress) => {
      run.events = p.events;
      run.fraction = p.fraction;
    };
    this.#operations.rebuild(name, { onProgress: progress }).then(
      (result) => Object.assign(run, { state: 'done', finishedAt: this.deps.clock.now().toISOString(), events: result.events, fraction: 1, generation: result.generation }),
      (error: unknown) =>
        Object.assign(run, { state: error instanceof RebuildPausedError ? 'paused' : 'failed', finishedAt: this.deps.clock.now().toISOString(), error: error instanceof Error ? error.message : String(error) }),
    );
    return { ...run };
  }
}

