import type { RecordedEvent, Subscription, SubscriptionMessage } from '../event-store/event-store.ts';
import { encodePosition } from '../event-store/position.ts';
import { CheckpointConflictError, LeaseLostError, UniqueConstraintError, foldingIndexesOf, type DocumentWrite, type ModelTarget, type ProjectionFailure } from '../read-models/read-model-store.ts';
import { schemaOf } from './projection.ts';
import { ReadModelAccessError, StoredDocuments, WriteBatch } from './write-batch.ts';
import { RecentEvents } from './recent-events.ts';
import { InterruptibleDelay } from '../interruptible-delay.ts';
import { ChangeRecords } from './change-records.ts';
import { FoldedWaiters } from './folded-waiters.ts';
import { isDeadLocalHolder, leaseHolderName } from './lease-holders.ts';
import { describeFailure } from './projection-failures.ts';
import type { ProjectorOptions, ProjectorState } from './projector-options.ts';

export type { ProjectorOptions, ProjectorState } from './projector-options.ts';
export { describeFailure, type FailureDescription } from './projection-failures.ts';
export { isDeadLocalHolder, leaseHolderName } from './lease-holders.ts';

const FLUSH_DUE = Symbol('flush-due');
const RENEW_DUE = Symbol('renew-due');

/**
 * Folds the event log into one generation of one projection: subscribes from the generation's stored
 * checkpoint, applies events in order in batches, and commits each batch's writes with its checkpoint.
 * An event the projection cannot fold pauses this projector (and only this one) with the failure stored
 * on the generation, until an operator retries or skips it. Store and network failures are retried.
 */
export class Projector {
  readonly target: ModelTarget;
  #state: ProjectorState = 'starting';
  #checkpoint: bigint | null = null;
  /** How far the stored read model reflects the log, and who waits for a position (see folded, waitFor). */
  readonly #waiters = new FoldedWaiters();
  #eventsFolded = 0;
  #failure: ProjectionFailure | null = null;
  #stopped = false;
  #subscription: Subscription | undefined;
  readonly #delay = new InterruptibleDelay();
  /** After a batch broke a unique index: fold one event per commit until past this position. */
  #isolateUntil: bigint | null = null;
  #lastCommitAt = 0;
  /** The documents this projector read from its generation since its consume loop started (see StoredDocuments). */
  #stored = new StoredDocuments();
  /** Collections whose whileFolding indexes this projector built (or found built) before its first find in them. */
  readonly #findable = new Set<string>();
  readonly #o: Required<Omit<ProjectorOptions, 'onCommit'>> & Pick<ProjectorOptions, 'onCommit'>;
  /** When the lease must be renewed (clock milliseconds); null while not held. */
  #leaseRenewAt: number | null = null;
  /** The change feed's records (Projection.changes), added to the commits that change anything. */
  readonly #changes: ChangeRecords;
  /** What view.eventAt reads: the events folded last, then the log. */
  readonly #recent: RecentEvents;

  constructor(options: ProjectorOptions) {
    this.#o = {
      batchSize: 1000,
      flushIntervalMs: 25,
      commitIntervalMs: 1000,
      progressQuietMs: 100,
      pausePollMs: 500,
      stopWhenCaughtUp: false,
      retryDelayMs: 500,
      leaseTtlMs: 30_000,
      holder: leaseHolderName(),
      ...options,
    };
    this.target = { projection: options.projection.name, generation: options.generation };
    this.#changes = new ChangeRecords(options.projection, this.#o.store, this.target);
    this.#recent = new RecentEvents(this.#o.log);
  }

  get state(): ProjectorState {
    return this.#state;
  }
  /** The checkpoint committed with the read model (what other processes see). */
  get checkpoint(): bigint | null {
    return this.#checkpoint;
  }
  /**
   * The position up to which the read model as stored reflects the log: the committed checkpoint, or further
   * when every event since is one the projection does not handle or folded without a write (nothing to
   * commit, so nothing a reader could miss). What waiters in this process are answered by.
   */
  get folded(): bigint | null {
    return this.#waiters.folded;
  }
  get failure(): ProjectionFailure | null {
    return this.#failure;
  }
  /** Events folded by this projector since it started. */
  get eventsFolded(): number {
    return this.#eventsFolded;
  }

  /** Runs until stopped (or, with stopWhenCaughtUp, until caught up). Resolves to the final state. */
  async run(): Promise<ProjectorState> {
    const { store, logger } = this.#o;
    let retryDelay = this.#o.retryDelayMs;
    while (!this.#stopped) {
      try {
        const record = await store.getGeneration(this.target.projection, this.target.generation);
        if (!record) throw new Error(`generation ${this.target.generation} of ${this.target.projection} does not exist`);
        const previous = this.#checkpoint;
        this.#checkpoint = record.checkpoint;
        this.#failure = record.failure;
        // Waiters that came before the checkpoint was known (a projector just started on a generation).
        if (record.checkpoint !== null) this.#waiters.reached(record.checkpoint);
        if (record.failure) {
          if (this.#state !== 'paused') {
            logger.error({ projection: this.target.projection, failure: describeFailure(record.failure) }, 'projector paused on an event it cannot fold');
          }
          this.#state = 'paused';
          this.#waiters.abandon();
          if (this.#o.stopWhenCaughtUp) {
            await this.releaseLease();
            return this.#state;
          }
          await this.#sleep(this.#o.pausePollMs);
          continue;
        }
        if (!(await this.#holdLease())) {
          // Another projector folds this generation: follow its checkpoint (waiters here still get answers).
          if (this.#state !== 'standby') logger.info({ projection: this.target.projection, generation: this.target.generation }, 'projector on standby: another holds the lease');
          this.#state = 'standby';
          if (record.checkpoint !== null) this.#waiters.reached(record.checkpoint);
          // The holder committed: this process's caches of the read model (ReadModelVersions) must hear of it.
          if (record.checkpoint !== previous) this.#o.onCommit?.({ checkpoint: record.checkpoint, events: this.#eventsFolded, writes: undefined });
          await this.#sleep(Math.min(this.#o.pausePollMs, Math.ceil(this.#o.leaseTtlMs / 3)));
          continue;
        }
        // A commit an earlier holder left half-done (a store that journals its commits) is completed before
        // this one folds: then read the generation again, from the checkpoint it reached.
        if (await store.completeInterruptedCommit(this.target)) continue;
        const skips = new Set((await store.listSkips(this.target.projection)).map((s) => s.eventId));
        this.#state = 'catching-up';
        const outcome = await this.#consume(record.checkpoint, skips);
        retryDelay = this.#o.retryDelayMs;
        if (outcome === 'isolate' || outcome === 'standby' || outcome === 'refold') continue; // fold again from the stored checkpoint
        if (outcome === 'caught-up') {
          this.#state = 'stopped';
          await this.releaseLease();
          return 'live';
        }
      } catch (error) {
        if (this.#stopped) break;
        this.#state = 'retrying';
        logger.warn({ projection: this.target.projection, err: error, retryInMs: retryDelay }, 'projector failed; retrying from its checkpoint');
        await this.#sleep(retryDelay);
        retryDelay = Math.min(retryDelay * 2, 30_000);
      }
    }
    this.#state = 'stopped';
    await this.releaseLease();
    return this.#state;
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    this.#delay.interrupt();
    await this.#subscription?.stop();
  }

  /** Gives up the lease (after run() ended), so another projector takes over at once. */
  async releaseLease(): Promise<void> {
    if (this.#leaseRenewAt === null) return;
    this.#leaseRenewAt = null;
    await this.#o.store.releaseLease(this.target, this.#o.holder).catch(() => undefined);
  }

  /** Takes or renews the lease; false when another holds it. A holder that was a process of this host that is gone is taken over at once. */
  async #holdLease(): Promise<boolean> {
    const now = this.#o.clock.now();
    let held = await this.#o.store.acquireLease(this.target, this.#o.holder, now.toISOString(), this.#o.leaseTtlMs);
    if (!held) {
      const current = await this.#o.store.getLease(this.target);
      if (current && isDeadLocalHolder(current.holder, this.#o.holder)) {
        held = await this.#o.store.acquireLease(this.target, this.#o.holder, now.toISOString(), this.#o.leaseTtlMs, { takeOverFrom: current.holder });
        if (held) this.#o.logger.info({ projection: this.target.projection, previous: current.holder }, 'took over the lease of a projector process that is gone');
      }
    }
    this.#leaseRenewAt = held ? now.getTime() + Math.floor(this.#o.leaseTtlMs / 3) : null;
    return held;
  }

  /** Renews the lease when due; ends the consume loop (standby) when it was taken over. */
  async #keepLease(): Promise<void> {
    if (this.#leaseRenewAt !== null && this.#o.clock.now().getTime() < this.#leaseRenewAt) return;
    if (!(await this.#holdLease())) {
      this.#o.logger.warn({ projection: this.target.projection, generation: this.target.generation }, 'projector lost its lease; on standby');
      throw new ConsumeEnded('standby');
    }
  }

  /**
   * Resolves true once everything up to `position` is folded; false after `timeoutMs`, or at once when the
   * projector is paused on a poison event (it will not get there until an operator acts).
   */
  waitFor(position: bigint, timeoutMs: number): Promise<boolean> {
    return this.#waiters.waitFor(position, timeoutMs, this.#state === 'paused');
  }

  async #consume(from: bigint | null, skips: ReadonlySet<string>): Promise<'stopped' | 'paused' | 'caught-up' | 'isolate' | 'standby' | 'refold'> {
    const { projection, log, flushIntervalMs } = this.#o;
    const subscription = log.store.subscribeToAll({ after: from ?? 'start', filter: projection.filter });
    this.#subscription = subscription;
    if (this.#stopped) await subscription.stop();
    const iterator = subscription[Symbol.asyncIterator]();
    // Each run of the loop reads the store afresh: a failed commit may have left it other than the batch says.
    this.#stored = new StoredDocuments();
    this.#changes.restart();
    let batch = this.#newBatch(from);
    this.#lastCommitAt = performance.now();
    let pending: Promise<IteratorResult<SubscriptionMessage>> | undefined;
    /**
     * When the live batch commits: soon when it holds events (flushIntervalMs), at the commit interval when it
     * only holds progress past events the projection does not handle.
     */
    let flushDue: { folded: boolean; due: Promise<typeof FLUSH_DUE> } | undefined;
    try {
      for (;;) {
        pending ??= iterator.next();
        let next: IteratorResult<SubscriptionMessage> | typeof FLUSH_DUE | typeof RENEW_DUE;
        // While catching up the source is never idle and batches commit by size; once live, an event
        // waits at most flushIntervalMs for its batch to commit, and progress alone (past events the
        // projection does not handle) until the log has been quiet for progressQuietMs, or commitIntervalMs
        // after the last commit while events keep coming.
        if (this.#state === 'live' && batch.checkpoint !== this.#checkpoint) {
          if (batch.events > 0) {
            if (flushDue?.folded === false) flushDue = undefined;
            flushDue ??= { folded: true, due: delay(flushIntervalMs).then(() => FLUSH_DUE) };
          } else {
            // Counted from the last message: each one puts it off, up to the commit interval.
            const dueIn = Math.min(this.#o.progressQuietMs, this.#o.commitIntervalMs - (performance.now() - this.#lastCommitAt));
            flushDue = { folded: false, due: delay(Math.max(1, dueIn)).then(() => FLUSH_DUE) };
          }
          next = await Promise.race([pending, flushDue.due]);
        } else if (this.#state === 'live') {
          // Idle: wake to renew the lease in time.
          const renewIn = Math.max(1, (this.#leaseRenewAt ?? 0) - this.#o.clock.now().getTime());
          const renew = delay(Math.min(renewIn, this.#o.leaseTtlMs)).then((): typeof RENEW_DUE => RENEW_DUE);
          next = await Promise.race([pending, renew]);
        } else {
          next = await pending;
        }
        if (next === RENEW_DUE) {
          await this.#keepLease();
          continue;
        }
        if (next === FLUSH_DUE) {
          batch = await this.#commit(batch);
          flushDue = undefined;
          continue;
        }
        pending = undefined;
        if (next.done) {
          await this.#commit(batch);
          return 'stopped';
        }
        const message = next.value;
        if (message.kind === 'event') {
          const event = message.event;
          if (skips.has(event.id)) {
            this.#o.logger.warn({ projection: projection.name, eventId: event.id, position: encodePosition(event.position) }, 'skipping event as recorded by an operator');
            batch.advance(event.position);
            continue;
          }
          batch.begin(event.position, event);
          const upcast = log.catalog.upcast(event);
          this.#recent.folded(upcast);
          try {
            const folding = projection.apply(upcast, batch.view);
            if (folding) await folding;
            batch.end();
          } catch (error) {
            if (error instanceof ReadModelAccessError) throw error;
            batch.undo();
            await this.#commit(batch);
            await this.#pause(event, error);
            return 'paused';
          }
          // After a batch broke a unique index, its events are folded again one per commit, to find the one to blame.
          const batchSize = this.#isolateUntil !== null && event.position <= this.#isolateUntil ? 1 : this.#o.batchSize;
          if (batch.events >= batchSize || batch.size >= batchSize) {
            batch = await this.#commit(batch);
            flushDue = undefined;
          }
        } else if (message.kind === 'checkpoint') {
          // Progress past events this projection does not handle. Catching up, it rides with the batch,
          // committed by size or elapsed time; live, it is stored at the commit interval (see below).
          batch.advance(message.position);
          if (this.#state !== 'live' && performance.now() - this.#lastCommitAt >= this.#o.commitIntervalMs) {
            batch = await this.#commit(batch);
            flushDue = undefined;
          }
        } else if (this.#state === 'live' && batch.events === 0) {
          // Live, and only past events the projection does not handle: the progress is told to waiters below
          // and stored at the commit interval. (A batch that folded events commits now, writes or not: another
          // process's write waits for this projection's stored checkpoint to pass them.)
          if (message.position !== null) batch.advance(message.position);
        } else {
          if (message.position !== null) batch.advance(message.position);
          batch = await this.#commit(batch);
          flushDue = undefined;
          this.#state = 'live';
          if (this.#o.stopWhenCaughtUp) return 'caught-up';
        }
        // Live, a batch without writes holds only progress: the stored read model already is what it would
        // be after committing it, so waiters hear of it now, without a commit per event.
        if (this.#state === 'live' && batch.size === 0 && batch.checkpoint !== null) this.#waiters.reached(batch.checkpoint);
      }
    } catch (error) {
      if (error instanceof ConsumeEnded) return error.outcome;
      throw error;
    } finally {
      await subscription.stop();
      this.#subscription = undefined;
    }
  }

  /** Commits the batch if it holds anything new, and returns a fresh one. */
  async #commit(batch: WriteBatch): Promise<WriteBatch> {
    this.#lastCommitAt = performance.now();
    const checkpoint = batch.checkpoint;
    if (checkpoint !== null && checkpoint !== this.#checkpoint) {
      let writes: DocumentWrite[] = [];
      await this.#keepLease();
      let change: string | undefined;
      try {
        writes = batch.writes();
        change = await this.#changes.add(writes, checkpoint);
        await this.#o.store.commit(this.target, writes, checkpoint, this.#o.clock.now().toISOString(), { leaseHolder: this.#o.holder, expectedCheckpoint: this.#checkpoint });
      } catch (error) {
        if (error instanceof LeaseLostError) {
          this.#leaseRenewAt = null;
          this.#o.logger.warn({ projection: this.target.projection, generation: this.target.generation }, 'projector lost its lease; on standby');
          throw new ConsumeEnded('standby');
        }
        if (error instanceof CheckpointConflictError) {
          // Another commit landed since this batch's checkpoint was read: what the batch read may be stale.
          this.#o.logger.warn({ projection: this.target.projection, generation: this.target.generation, err: error }, 'the generation moved on under this projector; folding again from its checkpoint');
          throw new ConsumeEnded('refold');
        }
        if (!(error instanceof UniqueConstraintError)) throw error;
        // Retrying the same writes would fail forever. Find the event to blame: fold the batch's events
        // again one per commit; the one whose own commit breaks the index pauses the projector.
        const culprit = batch.events === 1 ? batch.lastEvent : null;
        if (culprit === null) {
          this.#isolateUntil = checkpoint;
          this.#o.logger.warn({ projection: this.target.projection, err: error }, 'a batch broke a unique index; folding its events one by one to find the event');
          throw new ConsumeEnded('isolate');
        }
        await this.#pause(culprit, new Error(`${error.message}. The projection put two documents with one unique value: fix the projection (or the data it folds) and retry, or skip this event`));
        throw new ConsumeEnded('paused');
      }
      this.#stored.wrote(batch.written());
      if (change !== undefined) this.#changes.recorded(change);
      this.#checkpoint = checkpoint;
      this.#eventsFolded += batch.events;
      this.#o.onCommit?.({ checkpoint, events: this.#eventsFolded, writes });
      this.#waiters.reached(checkpoint);
    }
    return this.#newBatch(this.#checkpoint);
  }

  #newBatch(checkpoint: bigint | null): WriteBatch {
    return new WriteBatch(this.#o.store, this.target, checkpoint, this.#stored, (collection) => this.#beforeFind(collection), this.#recent);
  }

  /**
   * A rebuild's generation lacks the whileFolding indexes that are not unique until the projection first
   * finds in their collection (IndexSpec.whileFolding): they are built then. Idempotent, so on a generation
   * that has them it only checks, once per collection.
   */
  async #beforeFind(collection: string): Promise<void> {
    if (this.#findable.has(collection)) return;
    await this.#o.store.createIndexes(foldingIndexesOf(schemaOf(this.#o.projection), { collection }), this.target.generation);
    this.#findable.add(collection);
  }

  async #pause(event: RecordedEvent, error: unknown): Promise<void> {
    const failure: ProjectionFailure = {
      eventId: event.id,
      eventType: event.type,
      streamId: event.streamId,
      position: event.position,
      message: error instanceof Error ? error.message : String(error),
      failedAt: this.#o.clock.now().toISOString(),
    };
    await this.#o.store.setFailure(this.target, failure, failure.failedAt);
    this.#failure = failure;
    this.#state = 'paused';
    this.#o.logger.error({ projection: this.target.projection, failure: describeFailure(failure), err: error }, 'projector paused on an event it cannot fold');
    this.#waiters.abandon();
  }

  #sleep(ms: number): Promise<void> {
    return this.#delay.sleep(ms);
  }
}

/** Ends a consume loop from inside a commit, with the outcome run() acts on. */
class ConsumeEnded extends Error {
  constructor(readonly outcome: 'paused' | 'isolate' | 'standby' | 'refold') {
    super(outcome);
  }
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}
