/**
 * The SQLite event store's subscription to the whole log: catch-up, then live (woken by appends, polled as
 * a backstop).
 */
import type Database from 'better-sqlite3';
import type { AppendNotifier } from './append-notifier.ts';
import type { Subscription, SubscriptionFilter, SubscriptionMessage } from './event-store.ts';
import { InterruptibleDelay } from '../interruptible-delay.ts';
import { EVENT_COLUMNS, toRecorded, type EventRow } from './sqlite-event-rows.ts';

/** Catch-up-then-live subscription over the events table. */
export class SqliteSubscription implements Subscription {
  readonly #statement: Database.Statement<unknown[], EventRow>;
  readonly #params: (after: bigint, limit: bigint) => unknown[];
  readonly #head: Database.Statement<[], { head: bigint | null }>;
  readonly #snapshot: <T>(fn: () => T) => T;
  #stopped = false;
  /**
   * Woken by appends. An append's wake-up may come while this subscription is not asleep (its consumer is still
   * busy with a message it was given): it is remembered (wake()), or the event would wait for the next poll
   * (250 ms by default: a write's read-your-writes wait, now and then).
   */
  readonly #delay = new InterruptibleDelay();
  readonly #unlisten: () => void;
  /**
   * The rows of this process's appends since the subscription last read (AppendNotifier), in position order:
   * when they follow on from `after`, the subscription takes them instead of querying the log (one query per
   * projection per append was ~0.4 ms of a command's CPU). Bounded: beyond pageSize rows it queries instead.
   */
  #appended: EventRow[] = [];
  /** The log must be queried, not only the rows appended here read: at the start, after another process's append or a poll. */
  #mustQuery = true;
  readonly #matches: (row: EventRow) => boolean;

  constructor(
    db: Database.Database,
    notifier: AppendNotifier,
    private after: bigint,
    filter: SubscriptionFilter,
    private readonly options: { pageSize: number; pollIntervalMs: number; onStop: (s: SqliteSubscription) => void },
  ) {
    const where = ['position > ?'];
    const typeParams: string[] = [];
    const prefixParams: Array<bigint | string> = [];
    if (filter.eventTypes) {
      where.push(filter.eventTypes.length ? `type IN (${filter.eventTypes.map(() => '?').join(', ')})` : '0');
      typeParams.push(...filter.eventTypes);
    }
    if (filter.streamPrefixes) {
      where.push(filter.streamPrefixes.length ? `(${filter.streamPrefixes.map(() => 'substr(stream_id, 1, ?) = ?').join(' OR ')})` : '0');
      // substr counts characters (code points), as [...prefix] does; prefix.length counts UTF-16 units.
      for (const prefix of filter.streamPrefixes) prefixParams.push(BigInt([...prefix].length), prefix);
    }
    this.#statement = db.prepare<unknown[], EventRow>(`SELECT ${EVENT_COLUMNS} FROM events WHERE ${where.join(' AND ')} ORDER BY position ASC LIMIT +?`).raw(true);
    this.#params = (afterPosition, limit) => [afterPosition, ...typeParams, ...prefixParams, limit];
    this.#head = db.prepare('SELECT max(position) AS head FROM events');
    // A read transaction gives the page and the head one consistent snapshot.
    this.#snapshot = <T>(fn: () => T) => db.transaction(fn).deferred() as T;
    this.#matches = matcher(filter);
    this.#unlisten = notifier.listen((rows) => this.#onAppend(rows));
  }

  #onAppend(rows: readonly EventRow[] | undefined): void {
    if (rows === undefined || this.#appended.length + rows.length > this.options.pageSize) {
      this.#appended = [];
      this.#mustQuery = true;
    } else {
      this.#appended.push(...rows);
    }
    this.#delay.wake();
  }

  /** The rows appended here that follow on from `after`, taken; undefined when there are none, or a gap before them. */
  #takeAppended(): EventRow[] | undefined {
    const rows = this.#appended;
    this.#appended = [];
    let first = 0;
    while (first < rows.length && rows[first]![0] <= this.after) first++;
    if (first === rows.length || rows[first]![0] !== this.after + 1n) return undefined;
    return first === 0 ? rows : rows.slice(first);
  }

  async *[Symbol.asyncIterator](): AsyncIterator<SubscriptionMessage> {
    const page = BigInt(this.options.pageSize);
    let caughtUpAt: bigint | null | undefined;
    try {
      while (!this.#stopped) {
        this.#delay.forgetWake();
        const appended = this.#mustQuery ? undefined : this.#takeAppended();
        // Everything up to this position has been considered: the last row appended here, or the head when queried.
        let considered: bigint | null;
        if (appended) {
          for (const row of appended) {
            if (this.#stopped) return;
            this.after = row[0];
            if (this.#matches(row)) yield { kind: 'event', event: toRecorded(row) };
          }
          considered = this.after;
        } else {
          this.#mustQuery = false;
          const { rows, head } = this.#snapshot(() => ({
            rows: this.#statement.all(...this.#params(this.after, page)),
            head: this.#head.get()?.head ?? null,
          }));
          for (const row of rows) {
            if (this.#stopped) return;
            this.after = row[0];
            yield { kind: 'event', event: toRecorded(row) };
          }
          if (BigInt(rows.length) === page) {
            // Queries and parsing are synchronous: let timers and I/O run between pages, so a long
            // catch-up neither starves the HTTP server nor the consumer's own timers.
            await yieldToEventLoop();
            continue;
          }
          // Everything up to the head at the time of the query has been considered.
          if (head !== null && head > this.after) this.after = head;
          considered = head === null ? null : this.after;
        }
        if (caughtUpAt !== this.after) {
          caughtUpAt = this.after;
          yield { kind: 'caught-up', position: considered };
        }
        await this.#waitForAppend();
      }
    } finally {
      await this.stop();
    }
  }

  async #waitForAppend(): Promise<void> {
    if (this.#stopped) return;
    await this.#delay.sleep(this.options.pollIntervalMs);
    // Woken by nothing appended here: the poll, or another process's append (#onAppend set #mustQuery).
    if (this.#appended.length === 0) this.#mustQuery = true;
  }

  async stop(): Promise<void> {
    if (this.#stopped) return;
    this.#stopped = true;
    this.#unlisten();
    this.#delay.interrupt();
    this.options.onStop(this);
  }
}

/** Whether a row passes the filter, as the query's WHERE decides (substr by code points is a string prefix). */
function matcher(filter: SubscriptionFilter): (row: EventRow) => boolean {
  const types = filter.eventTypes ? new Set(filter.eventTypes) : undefined;
  const prefixes = filter.streamPrefixes;
  return (row) => (!types || types.has(row[4])) && (!prefixes || prefixes.some((prefix) => row[1].startsWith(prefix)));
}

function yieldToEventLoop(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
