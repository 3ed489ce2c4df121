import type { Logger } from 'pino';
import type { Clock } from '../clock.ts';
import type { EventLog } from '../event-store/event-log.ts';
import type { DocumentWrite, ReadModelSchema, ReadModelStore } from '../read-models/read-model-store.ts';
import { schemaOf, type Projection } from './projection.ts';
import { Projector, describeFailure, type ProjectorOptions } from './projector.ts';
import { startRebuild, type RebuildHandle } from './rebuild.ts';

export interface SupervisorOptions {
  projections: readonly Projection[];
  /** Projections an earlier release maintained and this one does not: their generations are dropped at start. */
  retired?: readonly ReadModelSchema[];
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
/**
 * A commit of a live projector: its new checkpoint and the document writes it made (what changed); writes
 * undefined when the generation reads come from is another one (a start, a swap): anything may differ.
 */
export type CommitListener = (progress: { projection: string; generation: number; checkpoint: bigint | null; writes: readonly DocumentWrite[] | undefined }) => void;

interface LiveRun {
  projection: Projection;
  projector: Projector;
  done: Promise<unknown>;
  /** Resolves once another run (a swapped-in generation) has taken this one's place. */
  replaced: Promise<void>;
  markReplaced: () => void;
}

/**
 * How long following a swapped-in generation waits for its projector to fold what the replaced one had
 * folded before reads and waits move to it (well within a rebuild's drop grace, DROP_GRACE_MS).
 */
const FOLLOW_CATCH_UP_MS = 2000;
/** When the head sampled at start was appended, for readiness: before any lag allowed (see start). */
const HELD_AT_START = Number.NEGATIVE_INFINITY;

export interface ReadinessCheck {
  ok: boolean;
  detail?: string;
}

/**
 * Runs one live projector per projection on its active generation. At start it creates the first
 * generation of a new projection, and rebuilds in the background a projection whose code version
 * changed (the old generation serves until the new one is swapped in; it first gets the collections and
 * indexes of the new code, which folds into it meanwhile). It follows swaps made by rebuilds, in this
 * process or another (the CLI), and reports readiness.
 *
 * The supervisor decides which generation this process reads (liveGeneration, which ReadModelReader
 * follows when given the supervisor): the one its live projector folds into. So a write's wait (waitFor)
 * and the reads after it always meet the same generation. A swap is followed by starting a projector on
 * the new generation beside the old one; reads and waits move to it once it has folded everything the old
 * one had, and a wait that was pending on the old one carries on with the new one.
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
    this.#o = { readinessMaxLagMs: 5000, watchIntervalMs: 1000, retired: [], ...options };
  }

  /** Listens to commits of every live projector; returns the function that stops listening. */
  onCommit(listener: CommitListener): () => void {
    this.#commitListeners.add(listener);
    return () => this.#commitListeners.delete(listener);
  }

  #notify(projection: string, generation: number, checkpoint: bigint | null, writes: readonly DocumentWrite[] | undefined): void {
    for (const listener of this.#commitListeners) {
      try {
        listener({ projection, generation, checkpoint, writes });
      } catch (error) {
        this.#o.logger.warn({ err: error, projection }, 'commit listener failed');
      }
    }
  }

  async start(): Promise<void> {
    for (const schema of this.#o.retired) await this.#dropRetired(schema);
    for (const projection of this.#o.projections) await this.#startProjection(projection);
    // What the log already held counts as older than any lag allowed: how long ago it was appended is not known
    // (a restart, a restored or imported log), and a projector still folding it serves an incomplete view.
    await this.#sampleHead(HELD_AT_START);
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
    const deadline = performance.now() + timeoutMs;
    const projections = [...this.#runs.keys()].filter((name) => !names || names.includes(name));
    const results = await Promise.all(projections.map((name) => this.#waitForProjection(name, position, deadline)));
    return results.every(Boolean);
  }

  /** Waits on the projection's live run; when a swapped-in generation replaces it meanwhile, on that one. */
  async #waitForProjection(name: string, position: bigint, deadline: number): Promise<boolean> {
    for (;;) {
      const run = this.#runs.get(name);
      if (!run) return true;
      const reached = await Promise.race([run.projector.waitFor(position, Math.max(0, deadline - performance.now())), run.replaced.then(() => 'replaced' as const)]);
      if (reached !== 'replaced') return reached;
      if (performance.now() >= deadline) return false;
    }
  }

  /**
   * How far the live projector of `name` has folded the log (Projector.folded); undefined when this process
   * runs none for it.
   */
  folded(name: string): bigint | null | undefined {
    return this.#runs.get(name)?.projector.folded;
  }

  /**
   * Whether this process's projector of `name` folds the log live itself (it holds the lease): then every
   * commit that changes the read model is told to onCommit's listeners before anything reads it, and a cache
   * keyed by them (ReadModelVersions) is never stale. False on standby, paused or not run here.
   */
  foldsLive(name: string): boolean {
    return this.#runs.get(name)?.projector.state === 'live';
  }

  /** The generation this process reads each projection from: the one its live projector folds into. */
  liveGeneration(name: string): number | null {
    return this.#runs.get(name)?.projector.target.generation ?? null;
  }

  readiness(): { ready: boolean; checks: Record<string, ReadinessCheck> } {
    const now = performance.now();
    const checks: Record<string, ReadinessCheck> = {};
    for (const [name, run] of this.#runs) {
      const { projector } = run;
      if (projector.state === 'paused' && projector.failure) {
        const f = describeFailure(projector.failure);
        checks[`projection:${name}`] = { ok: false, detail: `paused at event ${f.eventId} (${f.eventType}): ${f.message}` };
        continue;
      }
      const checkpoint = projector.folded ?? 0n;
      const oldestUnfolded = this.#samples.find((s) => s.position > checkpoint);
      const behindMs = oldestUnfolded ? now - oldestUnfolded.at : 0;
      checks[`projection:${name}`] =
        projector.state === 'retrying' ? { ok: false, detail: 'retrying after a store failure' }
        : oldestUnfolded?.at === HELD_AT_START ? { ok: false, detail: `folding the log this process found at start: at position ${checkpoint} of ${oldestUnfolded.position}` }
        : behindMs > this.#o.readinessMaxLagMs ? { ok: false, detail: `behind the log by more than ${Math.round(behindMs)} ms` }
        : { ok: true };
    }
    return { ready: Object.values(checks).every((c) => c.ok), checks };
  }

  /** A projection no longer maintained: its read models are dropped (their space reclaimed), whatever state they were in. */
  async #dropRetired(schema: ReadModelSchema): Promise<void> {
    const generations = await this.#o.store.listGenerations(schema.projection);
    for (const g of generations) await this.#o.store.dropGeneration(schema, g.generation);
    if (generations.length > 0) {
      this.#o.logger.info({ projection: schema.projection, generations: generations.map((g) => g.generation) }, 'dropped the read models of a projection this release no longer maintains');
    }
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
      if (record && record.version !== projection.version) {
        await this.#prepareServingGeneration(projection, active, record.version);
        this.#rebuildInBackground(projection, record.version);
      } else {
        await this.#addDeclaredIndexes(projection, active);
      }
    }
    this.#runs.set(projection.name, this.#startLive(projection, active));
    this.#notify(projection.name, active, null, undefined);
  }

  /**
   * Until the background rebuild swaps in, the new code folds into the generation the old code built:
   * it gets the new code's collections and indexes first (createGeneration adds what is missing and
   * leaves the generation's record as it is), so that folding does not fail on a collection the old
   * code never had. Indexes the old documents break (a new unique index) are left to the rebuild.
   */
  async #prepareServingGeneration(projection: Projection, generation: number, version: number): Promise<void> {
    const now = this.#o.clock.now().toISOString();
    try {
      await this.#o.store.createGeneration(schemaOf(projection), generation, version, now);
    } catch (error) {
      this.#o.logger.warn({ err: error, projection: projection.name, generation }, 'the serving generation cannot take every index of the new code; adding its collections only');
      await this.#o.store.createGeneration(schemaOf(projection), generation, version, now, { deferIndexes: true });
    }
  }

  /**
   * An index the code declares that the serving generation lacks (added by a release that kept the
   * projection's version: the documents' shape did not change) is built at start, instead of waiting for
   * the next rebuild; existing indexes are left as they are (idempotent). One the documents break (a new
   * unique index) is left to a rebuild, with a warning.
   */
  async #addDeclaredIndexes(projection: Projection, generation: number): Promise<void> {
    try {
      await this.#o.store.createIndexes(schemaOf(projection), generation);
    } catch (error) {
      this.#o.logger.warn({ err: error, projection: projection.name, generation }, 'an index the code declares cannot be built on the serving generation; it is left to a rebuild');
    }
  }

  /** Starts a live projector on the generation; the caller registers the run (reads and waits go to it). */
  #startLive(projection: Projection, generation: number): LiveRun {
    const projector = new Projector({
      projection,
      generation,
      log: this.#o.log,
      store: this.#o.store,
      clock: this.#o.clock,
      logger: this.#o.logger,
      ...this.#o.projector,
      // Only the run this process reads from reports its commits (a follower catching up does not).
      onCommit: ({ checkpoint, writes }) => {
        if (this.#runs.get(projection.name)?.projector === projector) this.#notify(projection.name, generation, checkpoint, writes);
      },
    });
    const done = projector.run().catch((error: unknown) => this.#o.logger.error({ err: error, projection: projection.name }, 'projector stopped'));
    let markReplaced = () => {};
    const replaced = new Promise<void>((resolve) => (markReplaced = resolve));
    return { projection, projector, done, replaced, markReplaced };
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
        if (active !== null && active !== run.projector.target.generation) await this.#follow(run, active);
      }
    } catch (error) {
      this.#o.logger.warn({ err: error }, 'projection watch failed');
    }
  }

  /**
   * Moves a projection to a swapped-in generation without a moment where a write's wait and the reads after
   * it disagree: a projector on the new generation catches up beside the old one, and the run (what this
   * process reads and waits on) is replaced in the same turn in which the new one is found to have folded
   * everything the old one had. After FOLLOW_CATCH_UP_MS it is replaced regardless (the old generation is
   * about to be dropped); waits carry on with the new one.
   */
  async #follow(run: LiveRun, generation: number): Promise<void> {
    const name = run.projection.name;
    this.#o.logger.info({ projection: name, from: run.projector.target.generation, to: generation }, 'following swapped-in generation');
    const next = this.#startLive(run.projection, generation);
    const deadline = performance.now() + FOLLOW_CATCH_UP_MS;
    for (;;) {
      const folded = run.projector.folded;
      const caughtUp = folded === null || (next.projector.folded !== null && next.projector.folded >= folded);
      if (caughtUp || this.#stopped || performance.now() >= deadline) break;
      await next.projector.waitFor(folded, Math.max(1, deadline - performance.now()));
    }
    this.#runs.set(name, next);
    run.markReplaced();
    this.#notify(name, generation, next.projector.checkpoint, undefined);
    await run.projector.stop();
    await run.done;
    if (this.#stopped) {
      await next.projector.stop();
      await next.done;
    }
  }

  /** Records the log's head when it moved, seen at `at` (performance.now(); HELD_AT_START for the first). */
  async #sampleHead(at?: number): Promise<void> {
    const head = await this.#o.log.headPosition();
    const now = at ?? performance.now();
    if (head !== null && (this.#samples.length === 0 || this.#samples[this.#samples.length - 1]!.position !== head)) {
      this.#samples.push({ position: head, at: now });
    }
    // Keep what readiness needs: samples the slowest projector has not reached, plus a margin.
    const slowest = [...this.#runs.values()].reduce<bigint | null>((min, r) => {
      const c = r.projector.folded ?? 0n;
      return min === null || c < min ? c : min;
    }, null);
    while (this.#samples.length > 1 && slowest !== null && this.#samples[1]!.position <= slowest) this.#samples.shift();
    if (this.#samples.length > 10_000) this.#samples.splice(0, this.#samples.length - 10_000);
  }
}
