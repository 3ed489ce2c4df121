import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { EventLog } from '../event-store/event-log.ts';
import type { Projection } from '../projection-engine/projection.ts';
import { readProjectionStatus, type ProjectionStatus } from '../projection-engine/projection-status.ts';
import type { ProjectionSupervisor } from '../projection-engine/projection-supervisor.ts';
import type { ReadModelStore } from '../read-models/read-model-store.ts';
import { HttpMetrics } from './http-metrics.ts';

const PROJECTION_STATES: ReadonlyArray<ProjectionStatus['state']> = ['live', 'behind', 'paused', 'outdated', 'not-started'];

/** How an outbox item ended: the outbox's own word for a performed item, or one of these. */
export type OutboxOutcome = string;

let processRegistry: Registry | undefined;

/**
 * Node's process metrics (CPU, memory, event loop delay, GC), collected once per process however many
 * services it runs (tests start many): their observers live as long as the process.
 */
function processMetrics(): Registry {
  if (!processRegistry) {
    processRegistry = new Registry();
    collectDefaultMetrics({ register: processRegistry });
  }
  return processRegistry;
}

/**
 * The Prometheus metrics of one service process (prom-client, one registry per service, so that several
 * services in one process never share counters). Everything that is counted on a hot path is counted by a
 * pre-resolved child (no label hashing per request); everything that needs a store read (projection state
 * and lag, the log head) is read when Prometheus scrapes, never in between.
 *
 * Names start with `annals_`; Node's own process metrics (CPU, memory, event loop delay, GC) keep their
 * standard names.
 */
export class ServiceMetrics {
  readonly registry = new Registry();
  readonly http: HttpMetrics;
  readonly #eventsAppended: Counter<'type'>;
  readonly #outboxItems: Counter<'outbox' | 'outcome'>;
  readonly #outboxSeconds: Histogram<'outbox'>;
  readonly #mail: Counter<'transport' | 'result'>;

  constructor() {
    const registers = [this.registry];
    this.http = new HttpMetrics(this.registry);
    this.#eventsAppended = new Counter({ name: 'annals_events_appended_total', help: 'Events this process appended to the event log, by event type.', labelNames: ['type'], registers });
    this.#outboxItems = new Counter({
      name: 'annals_outbox_items_total',
      help: 'Outbox items performed, by outbox (webhooks, contact-notices, media-purge) and outcome: webhooks delivered, failed or abandoned; notices sent, failed or skipped; "error" when performing threw; "deferred" when left pending for a later try.',
      labelNames: ['outbox', 'outcome'],
      registers,
    });
    this.#outboxSeconds = new Histogram({
      name: 'annals_outbox_perform_seconds',
      help: 'Time to perform one outbox item (a webhook POST, a notice, a purge), by outbox.',
      labelNames: ['outbox'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers,
    });
    this.#mail = new Counter({ name: 'annals_mail_messages_total', help: 'Mail handed to the transport, by transport (smtp, eml-files) and result (sent, duplicate, failed).', labelNames: ['transport', 'result'], registers });
  }

  eventsAppended(types: readonly string[]): void {
    for (const type of types) this.#eventsAppended.inc({ type });
  }

  outboxOutcome(outbox: string, outcome: OutboxOutcome, seconds: number): void {
    this.#outboxItems.inc({ outbox, outcome });
    if (outcome !== 'deferred') this.#outboxSeconds.observe({ outbox }, seconds);
  }

  mailSent(transport: string, result: 'sent' | 'duplicate' | 'failed'): void {
    this.#mail.inc({ transport, result });
  }

  /**
   * Projection state, checkpoint and lag, and the log head, read from the stores at scrape time (so an
   * API-only process reports them too); readiness from this process's projectors when it runs them.
   */
  watchProjections(deps: { projections: readonly Projection[]; store: ReadModelStore; log: EventLog; supervisor: ProjectionSupervisor | undefined }): void {
    const registers = [this.registry];
    const deepPageReads = deps.store.deepPageReads?.bind(deps.store);
    if (deepPageReads) {
      new Counter({
        name: 'annals_deep_page_reads_total',
        help: 'Sorted list pages this process read at an offset of 64 or more, by how the offset was found: counts (the list counted in blocks) or offset (walked with OFFSET: not counted yet, or counts dropped). Embedded read models only.',
        labelNames: ['found_by'],
        registers,
        collect() {
          const reads = deepPageReads();
          this.reset();
          this.inc({ found_by: 'counts' }, reads.counted);
          this.inc({ found_by: 'offset' }, reads.offset);
        },
      });
    }
    let reading: Promise<ProjectionStatus[]> | undefined;
    // The gauges below are collected one after another for one scrape: read the status once for all.
    const status = () => {
      reading ??= readProjectionStatus(deps.projections, deps.store, deps.log).finally(() => setImmediate(() => (reading = undefined)));
      return reading;
    };
    const position = (value: string | null) => (value === null ? 0 : Number(value));
    new Gauge({
      name: 'annals_event_log_head_position',
      help: 'The last position of the event log (all processes\' appends): events on SQLite, bytes of log on EventStoreDB.',
      registers,
      async collect() {
        this.set(position((await status())[0]?.head ?? null));
      },
    });
    new Gauge({
      name: 'annals_projection_checkpoint_position',
      help: 'Log position up to which each projection\'s serving generation has folded the log.',
      labelNames: ['projection'],
      registers,
      async collect() {
        for (const s of await status()) this.set({ projection: s.name }, position(s.active?.checkpoint ?? null));
      },
    });
    new Gauge({
      name: 'annals_projection_lag_positions',
      help: 'Log head minus the projection\'s checkpoint: events on SQLite, bytes of log on EventStoreDB.',
      labelNames: ['projection'],
      registers,
      async collect() {
        for (const s of await status()) this.set({ projection: s.name }, position(s.active?.lag ?? null));
      },
    });
    new Gauge({
      name: 'annals_projection_state',
      help: 'Each projection\'s state: 1 for the one it is in (live, behind, paused, outdated, not-started), 0 for the others.',
      labelNames: ['projection', 'state'],
      registers,
      async collect() {
        for (const s of await status()) for (const state of PROJECTION_STATES) this.set({ projection: s.name, state }, s.state === state ? 1 : 0);
      },
    });
    if (deps.supervisor) {
      const supervisor = deps.supervisor;
      new Gauge({
        name: 'annals_projection_ready',
        help: 'Whether this process\'s projector for each projection passes its /readyz check (1) or not (0): not paused, not retrying, within READINESS_MAX_LAG_MS of the log.',
        labelNames: ['projection'],
        registers,
        collect() {
          for (const [check, result] of Object.entries(supervisor.readiness().checks)) this.set({ projection: check.replace(/^projection:/, '') }, result.ok ? 1 : 0);
        },
      });
    }
  }

  /** The text Prometheus scrapes: this service's metrics and the process's. */
  scrape(): Promise<string> {
    return Registry.merge([processMetrics(), this.registry]).metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }
}
