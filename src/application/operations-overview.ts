import type { Actor } from '../event-store/event-store.ts';
import type { EventLog } from '../event-store/event-log.ts';
import type { Clock } from '../clock.ts';
import type { Projection } from '../projection-engine/projection.ts';
import type { ProjectionOperations } from '../projection-engine/projection-operations.ts';
import { readProjectionStatus, type GenerationStatus, type ProjectionStatus } from '../projection-engine/projection-status.ts';
import { RebuildPausedError, type RebuildProgress } from '../projection-engine/rebuild.ts';
import type { ReadModelReader } from '../read-models/read-model-reader.ts';
import type { ReadModelStore } from '../read-models/read-model-store.ts';
import type { Principal } from '../domain/principal.ts';
import { WEBHOOK_LISTS } from '../../projections/webhooks-queries.ts';
import { CONTACT_FORM_LISTS } from '../../projections/contact-forms-queries.ts';
import { MEDIA_LISTS } from '../../projections/media-queries.ts';
import { isServiceOperator } from '../domain/access/service-operators.ts';

/** The outboxes a project's work waits in: webhook deliveries, contact-form notices, media purges. */
const OUTBOXES = [
  { name: 'webhooks', ...WEBHOOK_LISTS.jobs },
  { name: 'contact-notices', ...CONTACT_FORM_LISTS.jobs },
  { name: 'media-purge', ...MEDIA_LISTS.purges },
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
  /** Whether the caller is one of the service's operators (isServiceOperator): only they see failing events and act. */
  operator: boolean;
  version: string;
  adapters: { eventStore: string; readModels: string; blobs: string };
  projections: Array<ProjectionStatus & { rebuild: RebuildRun | null }>;
  /** Items of this project waiting in each outbox. */
  outboxes: Array<{ name: (typeof OUTBOXES)[number]['name']; pending: number }>;
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
      /** OPERATOR_TENANT_IDS. */
      operatorTenantIds: readonly string[];
    },
  ) {
    this.#operations = deps.operations;
  }

  /** Whether the caller operates the service (see isServiceOperator). */
  async isOperator(principal: Principal): Promise<boolean> {
    if (principal.kind !== 'user' || principal.role !== 'tenant_admin') return false;
    const tenantCount = this.deps.operatorTenantIds.length > 0 ? 0 : await this.deps.reader.count('access', 'tenants', {});
    return isServiceOperator(principal, { operatorTenantIds: this.deps.operatorTenantIds, tenantCount });
  }

  /**
   * The overview for a caller in a project: the project's own outbox backlogs; projection state and lag for
   * every tenant admin, the failing event (stream, id, message) and a rebuild's error only for an operator.
   */
  async overview(projectId: string, operator: boolean): Promise<OperationsOverview> {
    const status = await readProjectionStatus(this.deps.projections, this.deps.store, this.deps.log);
    const outboxes = await Promise.all(OUTBOXES.map(async (o) => ({ name: o.name, pending: await this.deps.reader.count(o.projection, o.collection, { status: 'pending', projectId }) })));
    return {
      operator,
      version: this.deps.version,
      adapters: this.deps.adapters,
      projections: status.map((s) => {
        const rebuild = this.#runs.get(s.name) ?? null;
        if (operator) return { ...s, rebuild: rebuild && { ...rebuild } };
        return { ...s, active: withoutEventDetails(s.active), building: withoutEventDetails(s.building), rebuild: rebuild && { ...rebuild, error: null } };
      }),
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


/** A generation's status without what its failing event says about whose data it is: type, position and time stay. */
function withoutEventDetails(generation: GenerationStatus | null): GenerationStatus | null {
  if (!generation?.failure) return generation;
  return { ...generation, failure: { ...generation.failure, eventId: null, streamId: null, message: null } };
}
