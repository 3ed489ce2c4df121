import type { Logger } from 'pino';
import type { EventLog, PendingEvent } from '../event-store/event-log.ts';
import { WrongExpectedVersionError } from '../event-store/errors.ts';
import type { Document } from '../read-models/read-model-store.ts';
import type { ReadModelReader } from '../read-models/read-model-reader.ts';
import { InterruptibleDelay } from '../interruptible-delay.ts';

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
 */
export interface OutboxDefinition<Item extends Document, Outcome> {
  /** For logs and stream names: [a-z0-9-]. */
  name: string;
  /** The projection holding the items, and the collection within it. */
  projection: string;
  collection: string;
  /** The item's id within the collection (the document id its projection stores it under). */
  idOf(item: Item): string;
  /** Performs the side effect. Throwing is recorded as a failed outcome through `completion`. */
  perform(item: Item, signal: AbortSignal): Promise<Outcome>;
  /** The event that records how the item ended, for the projection to fold. */
  completion(item: Item, result: { ok: true; outcome: Outcome } | { ok: false; error: string }): PendingEvent;
}

export interface OutboxWorkerOptions {
  log: EventLog;
  reader: ReadModelReader;
  logger: Logger;
  /** Items performed at once. */
  concurrency?: number;
  /** How often to look for pending items when idle. */
  pollIntervalMs?: number;
}

export class OutboxWorker<Item extends Document, Outcome> {
  readonly #inFlight = new Map<string, Promise<void>>();
  readonly #delay = new InterruptibleDelay();
  readonly #abort = new AbortController();
  #running: Promise<void> | undefined;
  #stopped = false;

  constructor(
    private readonly definition: OutboxDefinition<Item, Outcome>,
    private readonly options: OutboxWorkerOptions,
  ) {}

  start(): void {
    this.#running ??= this.#loop();
  }

  /** Stops taking new items and waits for the ones in flight to finish and be recorded. */
  async stop(): Promise<void> {
    this.#stopped = true;
    this.#delay.interrupt();
    await this.#running;
    await Promise.allSettled(this.#inFlight.values());
  }

  /** Wakes the worker now (e.g. after a projection folded new items). */
  poke(): void {
    this.#delay.interrupt();
  }

  async #loop(): Promise<void> {
    const { definition, options } = this;
    const concurrency = options.concurrency ?? 4;
    // Ids performed (or being performed) that the read model may still list as pending: an id is
    // released only once the projection has folded its completion and no longer lists it.
    const claimed = new Set<string>();
    while (!this.#stopped) {
      try {
        for (const id of claimed) {
          if (this.#inFlight.has(id)) continue;
          const current = await options.reader.get<Item>(definition.projection, definition.collection, id);
          if (current?.['status'] !== 'pending') claimed.delete(id);
        }
        const pending = await options.reader.find<Item>(definition.projection, definition.collection, {
          filter: { status: 'pending' },
          limit: concurrency + claimed.size,
        });
        for (const item of pending) {
          const id = definition.idOf(item);
          if (claimed.has(id) || this.#inFlight.size >= concurrency || this.#stopped) continue;
          claimed.add(id);
          const task = this.#performOne(id, item).finally(() => {
            this.#inFlight.delete(id);
            this.#delay.interrupt();
          });
          this.#inFlight.set(id, task);
        }
      } catch (error) {
        options.logger.warn({ err: error, outbox: definition.name }, 'outbox: reading pending items failed');
      }
      await this.#delay.sleep(options.pollIntervalMs ?? 250);
    }
  }

  async #performOne(id: string, item: Item): Promise<void> {
    const { definition, options } = this;
    let result: { ok: true; outcome: Outcome } | { ok: false; error: string };
    try {
      result = { ok: true, outcome: await definition.perform(item, this.#abort.signal) };
    } catch (error) {
      result = { ok: false, error: error instanceof Error ? error.message : String(error) };
    }
    try {
      await options.log.append(`outbox-${definition.name}-${id}`, [definition.completion(item, result)], 'no_stream', {
        actor: { type: 'system', id: `outbox:${definition.name}` },
      });
    } catch (error) {
      if (error instanceof WrongExpectedVersionError) return; // another worker recorded it first
      options.logger.error({ err: error, outbox: definition.name, item: id }, 'outbox: performed but could not record the completion; it will be performed again');
    }
  }
}
