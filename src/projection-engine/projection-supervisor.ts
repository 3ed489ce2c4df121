import type { Logger } from 'pino';
import type { Clock } from '../clock.ts';
import type { EventLog } from '../event-store/event-log.ts';
import type { ReadModelStore } from '../read-models/read-model-store.ts';
import { schemaOf, type Projection } from './projection.ts';
import { Projector, describeFailure, type ProjectorOptions } from './projector.ts';
import { startRebuild, type RebuildHandle } from './rebuild.ts';

export interface SupervisorOptions {
  projections: readonly Projection[];
  log: EventLog;
  store: ReadModelStore;
  clock: Clock;
  logger: Logger;
  /** /readyz fails when a projection has not folded an event this long after it was appended. */
  readinessMaxLagMs?: number;
  /** How often the supervisor samples the log head and looks for swapped-in generations. */
  watchIntervalMs?: number;
  projector?: Pick<ProjectorOptions, 'batchSize' | 'flushIntervalMs' | 'commitIntervalMs' | 'pausePollMs' | 'retryDelayMs'>;
}

/** Told after every commit of a live projector, and when a projection's live generation changes. */
export type CommitListener = (progress: { projection: string; generation: number; checkpoint: bigint | null }) => void;

interface LiveRun {
  projection: Projection;
  projector: Projector;
  done: Promise<unknown>;
}

export interface ReadinessCheck {
  ok: boolean;
  detail?: string;
}

/**
 * Runs one live projector per projection on its active generation. At start it creates the first
 * generation of a new projection, and rebuilds in the background a projection whose code version
 * changed (the old generation serves until the new one is swapped in). It follows swaps made by
 * rebuilds, in this process or another (the CLI), and reports readiness.
 */
export class ProjectionSupervisor {
  readonly #runs = new Map<string, LiveRun>();
  readonly #rebuilds = new Map<string, RebuildHandle>();
  readonly #samples: Array<{ position: bigint; at: number }> = [];
  readonly #commitListeners = new Set<CommitListener>();
  #timer: NodeJS.Timeout | undefined;
  #watching: Promise<void> | undefined;
  #stopped = false;
  readonly #o: Required<Omit<SupervisorOptions, 'projector'>> & Pick<SupervisorOptions, 'projector'>;

  constructor(options: SupervisorOptions) {
    this.#o = { readinessMaxLagMs: 5000, watchIntervalMs: 1000, ...options };
  }

  /** Listens to commits of every live projector; returns the function that stops listening. */
  onCommit(listener: CommitListener): () => void {
    this.#commitListeners.add(listener);
    return () => this.#commitListeners.delete(listener);
  }

  #notify(projection: string, generation: number, checkpoint: bigint | null): void {
    for (const listener of this.#commitListeners) {
      try {
        listener({ projection, generation, checkpoint });
      } catch (error) {
        this.#o.logger.warn({ err: error, projection }, 'commit listener failed');
      }
    }
  }

  async start(): Promise<void> {
    for (const projection of this.#o.projections) await this.#startProjection(projection);
    await this.#sampleHead();
    this.#timer = setInterval(() => {
      this.#watching ??= this.#watch().finally(() => (this.#watching = undefined));
    }, this.#o.watchIntervalMs);
    this.#timer.unref();
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    clearInterval(this.#timer);
    await this.#watching;
    await Promise.all([...this.#rebuilds.values()].map((r) => r.stop()));
    await Promise.all([...this.#runs.values()].map(async (run) => {
      await run.projector.stop();
      await run.done;
    }));
  }

  /**
   * Resolves true once every projection has folded the log up to `position`, false after the timeout. A
   * projection paused on a poison event is not waited for (it answers false at once).
   */
  async waitFor(position: bigint, timeoutMs: number, names?: readonly string[]): Promise<boolean> {
    const runs = [...this.#runs.values()].filter((r) => !names || names.includes(r.projection.name));
    const results = await Promise.all(runs.map((r) => r.projector.waitFor(position, timeoutMs)));
    return results.every(Boolean);
  }

  /** The generation each projection currently serves from. */
  liveGeneration(name: string): number | null {
    return this.#runs.get(name)?.projector.target.generation ?? null;
  }

  readiness(): { ready: boolean; checks: Record<string, ReadinessCheck> } {
    const now = Date.now();
    const checks: Record<string, ReadinessCheck> = {};
    for (const [name, run] of this.#runs) {
      const { projector } = run;
      if (projector.state === 'paused' && projector.failure) {
        const f = describeFailure(projector.failure);
        checks[`projection:${name}`] = { ok: false, detail: `paused at event ${f.eventId} (${f.eventType}): ${f.message}` };
        continue;
      }
      const checkpoint = projector.checkpoint ?? 0n;
      const oldestUnfolded = this.#samples.find((s) => s.position > checkpoint);
      const behindMs = oldestUnfolded ? now - oldestUnfolded.at : 0;
      checks[`projection:${name}`] =
        projector.state === 'retrying' ? { ok: false, detail: 'retrying after a store failure' }
        : behindMs > this.#o.readinessMaxLagMs ? { ok: false, detail: `behind the log by more than ${behindMs} ms` }
        : { ok: true };
    }
    return { ready: Object.values(checks).every((c) => c.ok), checks };
  }

  async #startProjection(projection: Projection): Promise<void> {
    const { store, clock } = this.#o;
    let active = await store.activeGeneration(projection.name);
    const generations = await store.listGenerations(projection.name);
    // Retired generations whose drop was interrupted serve no one.
    for (const g of generations.filter((g) => g.state === 'retired')) await store.dropGeneration(schemaOf(projection), g.generation);
    if (active === null) {
      const generation = Math.max(0, ...generations.map((g) => g.generation)) + 1;
      await store.createGeneration(schemaOf(projection), generation, projection.version, clock.now().toISOString());
      await store.activateGeneration(projection.name, generation, null, clock.now().toISOString());
      active = generation;
    } else {
      const record = await store.getGeneration(projection.name, active);
      if (record && record.version !== projection.version) this.#rebuildInBackground(projection, record.version);
    }
    this.#startLive(projection, active);
  }

  #startLive(projection: Projection, generation: number): void {
    const projector = new Projector({
      projection,
      generation,
      log: this.#o.log,
      store: this.#o.store,
      clock: this.#o.clock,
      logger: this.#o.logger,
      ...this.#o.projector,
      onCommit: ({ checkpoint }) => this.#notify(projection.name, generation, checkpoint),
    });
    this.#notify(projection.name, generation, null);
    const done = projector.run().catch((error: unknown) => this.#o.logger.error({ err: error, projection: projection.name }, 'projector stopped'));
    this.#runs.set(projection.name, { projection, projector, done });
  }

  #rebuildInBackground(projection: Projection, fromVersion: number): void {
    const { logger } = this.#o;
    logger.info({ projection: projection.name, fromVersion, toVersion: projection.version }, 'projection code changed: rebuilding in the background');
    const handle = startRebuild({ projection, log: this.#o.log, store: this.#o.store, clock: this.#o.clock, logger });
    this.#rebuilds.set(projection.name, handle);
    handle.result
      .then((result) => logger.info({ ...result, checkpoint: String(result.checkpoint) }, 'background rebuild finished'))
      .catch((error: unknown) => logger.error({ err: error, projection: projection.name }, 'background rebuild failed'))
      .finally(() => this.#rebuilds.delete(projection.name));
  }

  /** Samples the head for readiness and follows generations swapped in by rebuilds. */
  async #watch(): Promise<void> {
    try {
      await this.#sampleHead();
      for (const [name, run] of this.#runs) {
        if (this.#stopped) return;
        const active = await this.#o.store.activeGeneration(name);
        if (active !== null && active !== run.projector.target.generation) {
          this.#o.logger.info({ projection: name, from: run.projector.target.generation, to: active }, 'following swapped-in generation');
          await run.projector.stop();
          await run.done;
          if (!this.#stopped) this.#startLive(run.projection, active);
        }
      }
    } catch (error) {
      this.#o.logger.warn({ err: error }, 'projection watch failed');
    }
  }

  async #sampleHead(): Promise<void> {
    const head = await this.#o.log.headPosition();
    const now = Date.now();
    if (head !== null && (this.#samples.length === 0 || this.#samples[this.#samples.length - 1]!.position !== head)) {
      this.#samples.push({ position: head, at: now });
    }
    // Keep what readiness needs: samples the slowest projector has not reached, plus a margin.
    const slowest = [...this.#runs.values()].reduce<bigint | null>((min, r) => {
      const c = r.projector.checkpoint ?? 0n;
      return min === null || c < min ? c : min;
    }, null);
    while (this.#samples.length > 1 && slowest !== null && this.#samples[1]!.position <= slowest) this.#samples.shift();
    if (this.#samples.length > 10_000) this.#samples.splice(0, this.#samples.length - 10_000);
  }
}
