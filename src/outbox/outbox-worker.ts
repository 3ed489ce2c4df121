import type { Logger } from 'pino';
import type { EventLog, PendingEvent } from '../event-store/event-log.ts';
import { WrongExpectedVersionError } from '../event-store/errors.ts';
import { MAX_GET_MANY_IDS, type Document, type DocumentWrite, type Query } from '../read-models/read-model-store.ts';
import type { ReadModelReader } from '../read-models/read-model-reader.ts';
import { InterruptibleDelay } from '../interruptible-delay.ts';

/** The stream an outbox item's completion event is appended to (once: the expectation is "no stream"). */
export const outboxCompletionStream = (outbox: string, itemId: string): string => `outbox-${outbox}-${itemId}`;

/**
 * An outbox: side effects (webhook deliveries, e-mails) the log asks for, performed outside any request
 * and outside any projection.
 *
 * The work list is a read model: a projection folds the events that ask for work into items with
 * `status: 'pending'`, and folds each item's completion event into a finished status. The worker performs
 * pending items and appends one completion event per item, on the item's own stream with the expectation
 * "no stream", so an item completes once even with two workers. Because completions are events, a
 * rebuild of the outbox projection arrives at the same finished items: replaying history never performs
 * anything again. A crash after performing but before the completion is appended leaves the item pending,
 * and it is performed again on restart (at least once; receivers dedupe).
 *
 * Optional refinements (webhooks use them): `partitioning` bounds how many items of one partition (one
 * receiver) are in flight, so a slow partition never takes every slot; `order` sorts pending items;
 * `retryLater` marks errors (a store briefly unavailable) after which the item stays pending and is tried
 * again at a later poll instead of being recorded as failed.
 */
export interface OutboxPartitioning {
  /** The item field holding the partition key. */
  field: string;
  /** Most items of one partition in flight at once. */
  concurrency: number;
  /** Keys of the partitions that may have pending items (e.g. from a per-partition counter the projection keeps). */
  pendingKeys(): Promise<string[]>;
}

export interface OutboxDefinition<Item extends Document, Outcome> {
  /** For logs and stream names: [a-z0-9-]. */
  name: string;
  /** The projection holding the items, and the collection within it. */
  projection: string;
  collection: string;
  /**
   * The projection version whose items this outbox reads. After an upgrade the generation built by the
   * older code serves until the background rebuild swaps in (it may lack the collection, or hold items
   * folded before the outbox existed): until the generation read from was built by this version or a later
   * one, the worker waits, saying so once (info). Default: any generation.
   */
  projectionVersion?: number;
  /** The item's id within the collection (the document id its projection stores it under). */
  idOf(item: Item): string;
  /** Performs the side effect. Throwing is recorded as a failed outcome through `completion`. */
  perform(item: Item, signal: AbortSignal): Promise<Outcome>;
  /** The event that records how the item ended, for the projection to fold. */
  completion(item: Item, result: { ok: true; outcome: Outcome } | { ok: false; error: string }): PendingEvent;
  /** Bounds in-flight items per partition; without it, items are taken in `order` up to the overall concurrency. */
  partitioning?: OutboxPartitioning;
  /** How pending items are taken (e.g. oldest first); default: the store's order. */
  order?: Query['sort'];
  /** True for an error `perform` threw that should leave the item pending for a later try (no completion recorded). */
  retryLater?(error: unknown): boolean;
  /** A word for how a performed item ended, for metrics (a webhook "delivered" or "failed"); default "done". */
  outcomeLabel?(outcome: Outcome): string;
}

/**
 * Told how each item ended (metrics): the definition's outcome label, "error" when `perform` threw, or
 * "deferred" when the item was left pending for a later try; with the time `perform` took.
 */
export type OutboxObserver = (report: { outbox: string; outcome: string; seconds: number }) => void;

export interface OutboxWorkerOptions {
  log: EventLog;
  reader: ReadModelReader;
  logger: Logger;
  /** Items performed at once. */
  concurrency?: number;
  /** How often to look for pending items when idle (and not told of commits). */
  pollIntervalMs?: number;
  observer?: OutboxObserver;
  /**
   * The read models' commits (ProjectionSupervisor, where this process runs the projectors): the worker looks at
   * once when its projection's commit writes its collection (see heard), so the poll is only the fallback.
   */
  commits?: { onCommit(listener: (commit: { projection: string; writes: readonly DocumentWrite[] | undefined }) => void): () => void };
}

export class OutboxWorker<Item extends Document, Outcome> {
  readonly #inFlight = new Map<string, Promise<void>>();
  readonly #inFlightByKey = new Map<string, number>();
  /** Partition of each claimed id (partitioned outboxes only). */
  readonly #keyOf = new Map<string, string>();
  readonly #delay = new InterruptibleDelay();
  readonly #abort = new AbortController();
  #running: Promise<void> | undefined;
  #stopped = false;
  #stopHearing: (() => void) | undefined;

  constructor(
    private readonly definition: OutboxDefinition<Item, Outcome>,
    private readonly options: OutboxWorkerOptions,
  ) {}

  start(): void {
    this.#stopHearing ??= this.options.commits?.onCommit((commit) => this.#heard(commit));
    this.#running ??= this.#loop();
  }

  /** Stops taking new items and waits for the ones in flight to finish and be recorded. */
  async stop(): Promise<void> {
    this.#stopped = true;
    this.#stopHearing?.();
    this.#delay.interrupt();
    await this.#running;
    await Promise.allSettled(this.#inFlight.values());
  }

  /**
   * Wakes the worker now (e.g. after a projection folded new items); a poke that comes while it is looking is
   * remembered, and it looks again right after, so that no item listed meanwhile waits for the next poll.
   */
  poke(): void {
    this.#delay.wake();
  }

  /**
   * A read model's commit (OutboxWorkerOptions.commits): one of the outbox's projection that wrote its
   * collection (items listed, or finished), or that may have (a swap: writes unknown), wakes the worker, so
   * that work starts when it is listed rather than at the next poll.
   */
  #heard(commit: { projection: string; writes: readonly DocumentWrite[] | undefined }): void {
    if (commit.projection !== this.definition.projection) return;
    if (commit.writes === undefined || commit.writes.some((write) => write.collection === this.definition.collection)) this.poke();
  }

  async #loop(): Promise<void> {
    const { definition, options } = this;
    const concurrency = options.concurrency ?? 4;
    // Ids performed (or being performed) that the read model may still list as pending: an id is
    // released only once the projection has folded its completion and no longer lists it.
    const claimed = new Set<string>();
    let round = 0;
    while (!this.#stopped) {
      try {
        if (!(await this.#projectionCurrent())) {
          await this.#delay.sleep(options.pollIntervalMs ?? 250);
          continue;
        }
        await this.#releaseFolded(claimed);
        const partitioning = definition.partitioning;
        if (partitioning) {
          // Each round starts with another partition, so that when the overall limit binds, every partition gets turns.
          const keys = await partitioning.pendingKeys();
          const start = keys.length === 0 ? 0 : round++ % keys.length;
          for (let i = 0; i < keys.length && this.#inFlight.size < concurrency && !this.#stopped; i++) {
            const key = keys[(start + i) % keys.length]!;
            const busy = this.#inFlightByKey.get(key) ?? 0;
            if (busy >= partitioning.concurrency) continue;
            const claimedInKey = [...claimed].filter((id) => this.#keyOf.get(id) === key).length;
            const pending = await options.reader.find<Item>(definition.projection, definition.collection, {
              filter: { status: 'pending', [partitioning.field]: key },
              ...(definition.order ? { sort: definition.order } : {}),
              limit: partitioning.concurrency + claimedInKey,
            });
            for (const item of pending) {
              if ((this.#inFlightByKey.get(key) ?? 0) >= partitioning.concurrency || this.#inFlight.size >= concurrency || this.#stopped) break;
              this.#launch(definition.idOf(item), item, claimed, key);
            }
          }
        } else {
          const pending = await options.reader.find<Item>(definition.projection, definition.collection, {
            filter: { status: 'pending' },
            ...(definition.order ? { sort: definition.order } : {}),
            limit: concurrency + claimed.size,
          });
          for (const item of pending) {
            if (this.#inFlight.size >= concurrency || this.#stopped) break;
            this.#launch(definition.idOf(item), item, claimed);
          }
        }
      } catch (error) {
        options.logger.warn({ err: error, outbox: definition.name }, 'outbox: reading pending items failed');
      }
      await this.#delay.sleep(options.pollIntervalMs ?? 250);
    }
  }

  #current = false;
  #waitingSaid = false;

  /** Whether the generation read from was built by the projection version the outbox needs (see projectionVersion). */
  async #projectionCurrent(): Promise<boolean> {
    const { definition, options } = this;
    if (this.#current || definition.projectionVersion === undefined) return true;
    const builtBy = await options.reader.builtByVersion(definition.projection);
    if (builtBy !== null && builtBy >= definition.projectionVersion) {
      this.#current = true;
      if (this.#waitingSaid) options.logger.debug({ outbox: definition.name, projection: definition.projection }, 'outbox: projection current, taking items');
      return true;
    }
    if (!this.#waitingSaid) {
      this.#waitingSaid = true;
      options.logger.info(
        { outbox: definition.name, projection: definition.projection, builtByVersion: builtBy, needsVersion: definition.projectionVersion },
        'outbox: waiting for the projection to be rebuilt by the current code before taking items',
      );
    }
    return false;
  }

  /**
   * Releases the claims of performed items the read model no longer lists as pending: their documents read
   * by id (the primary key, so the check costs the same however many items wait or are done).
   */
  async #releaseFolded(claimed: Set<string>): Promise<void> {
    const { definition, options } = this;
    const performed = [...claimed].filter((id) => !this.#inFlight.has(id));
    for (let i = 0; i < performed.length; i += MAX_GET_MANY_IDS) {
      const chunk = performed.slice(i, i + MAX_GET_MANY_IDS);
      const found = await options.reader.getMany(definition.projection, definition.collection, chunk);
      const pending = new Set(found.filter((entry) => entry.doc['status'] === 'pending').map((entry) => entry.id));
      for (const id of chunk) {
        if (pending.has(id)) continue;
        claimed.delete(id);
        this.#keyOf.delete(id);
      }
    }
  }

  #launch(id: string, item: Item, claimed: Set<string>, key?: string): void {
    if (claimed.has(id)) return;
    claimed.add(id);
    if (key !== undefined) {
      this.#keyOf.set(id, key);
      this.#inFlightByKey.set(key, (this.#inFlightByKey.get(key) ?? 0) + 1);
    }
    const task = this.#performOne(id, item)
      .then((performed) => {
        // Left pending on purpose (retryLater): take it again at a later poll.
        if (!performed) claimed.delete(id);
      })
      .finally(() => {
        this.#inFlight.delete(id);
        if (key !== undefined) {
          const left = (this.#inFlightByKey.get(key) ?? 1) - 1;
          if (left > 0) this.#inFlightByKey.set(key, left);
          else this.#inFlightByKey.delete(key);
          if (!claimed.has(id)) this.#keyOf.delete(id);
        }
        this.#delay.interrupt();
      });
    this.#inFlight.set(id, task);
  }

  /** False when the item was left pending to be tried again later (retryLater). */
  async #performOne(id: string, item: Item): Promise<boolean> {
    const { definition, options } = this;
    let result: { ok: true; outcome: Outcome } | { ok: false; error: string };
    const started = performance.now();
    const observe = (outcome: string) => options.observer?.({ outbox: definition.name, outcome, seconds: (performance.now() - started) / 1000 });
    try {
      result = { ok: true, outcome: await definition.perform(item, this.#abort.signal) };
    } catch (error) {
      if (definition.retryLater?.(error)) {
        observe('deferred');
        options.logger.warn({ err: error, outbox: definition.name, item: id }, 'outbox: not performed now; it will be tried again');
        return false;
      }
      result = { ok: false, error: error instanceof Error ? error.message : String(error) };
    }
    observe(result.ok ? (definition.outcomeLabel?.(result.outcome) ?? 'done') : 'error');
    try {
      await options.log.append(outboxCompletionStream(definition.name, id), [definition.completion(item, result)], 'no_stream', {
        actor: { type: 'system', id: `outbox:${definition.name}` },
      });
    } catch (error) {
      if (error instanceof WrongExpectedVersionError) return true; // another worker recorded it first
      options.logger.error({ err: error, outbox: definition.name, item: id }, 'outbox: performed but could not record the completion; it will be performed again');
    }
    return true;
  }
}
