import type { AppendContext, EventLog } from '../event-store/event-log.ts';
import type { RecordedEvent } from '../event-store/event-store.ts';
import { StreamNotFoundError, WrongExpectedVersionError } from '../event-store/errors.ts';
import type { Decider, DomainEvent } from '../domain/decider.ts';
import type { AggregateSnapshots } from './aggregate-snapshots.ts';
import { WriteContentionError } from './application-errors.ts';
import { DEFAULT_WRITE_RETRY, type WriteRetryPolicy } from './write-retry.ts';

export interface CommandResult<State, Event extends DomainEvent> {
  /** Events appended by this command (none when the decision was a no-op). */
  events: Event[];
  /** State after the command. */
  state: State;
  /** Global position of the last event appended, or of the stream's last event for a no-op. */
  position: bigint | null;
  /** Revision of the stream's last event, or null for a stream that does not exist. */
  streamRevision: bigint | null;
}

/**
 * Loads an aggregate's state from its stream: through `snapshots` when given (a verified cached state or
 * stored snapshot, then only the events after it), else by folding the whole stream.
 */
export async function loadAggregate<State, Event extends DomainEvent>(
  log: EventLog,
  streamId: string,
  decider: Pick<Decider<State, unknown, Event, unknown>, 'initialState' | 'evolve'>,
  snapshots?: AggregateSnapshots<State>,
): Promise<{ state: State; revision: bigint | null; position: bigint | null }> {
  if (snapshots) return snapshots.load(log, streamId, decider);
  let state = decider.initialState();
  let revision: bigint | null = null;
  let position: bigint | null = null;
  try {
    for await (const event of log.readStream(streamId)) {
      state = decider.evolve(state, { type: event.type, data: event.data, actor: event.metadata.actor } as Event);
      revision = event.revision;
      position = event.position;
    }
  } catch (error) {
    if (!(error instanceof StreamNotFoundError)) throw error;
  }
  return { state, revision, position };
}

/**
 * Runs a command against one aggregate: load its stream, decide, append with the revision that was read
 * (optimistic concurrency). When another writer got in first, the command is decided again against the
 * new state after a jittered, growing wait (see write-retry.ts): a decision that depended on the old state
 * then fails in the decider (for example REVISION_CONFLICT for a stale revision number), never by
 * overwriting. A command that loses every round is refused with WriteContentionError (retryable), having
 * written nothing.
 *
 * Each attempt happens at one instant: the log's clock read after the stream is loaded, or the context's `now`
 * when that is later (a caller deciding on a clock of its own that runs ahead, as the scheduled publisher's in
 * tests; the same clock is never ahead). The context's `now` (when it has one: the time a decision writes into
 * its events, such as a revision's publishedAt) is set to it, and the events are stamped with it (occurredAt).
 * So an event never says it was published a moment before the log says it happened (reads "as of" that
 * instant see it), and, read after every event already in the stream was appended, the instant is never
 * before theirs on one clock.
 */
export async function handleCommand<State, Command, Event extends DomainEvent, Context>(
  log: EventLog,
  streamId: string,
  decider: Decider<State, Command, Event, Context>,
  command: Command,
  context: Context,
  appendContext: AppendContext,
  options: { retry?: WriteRetryPolicy; snapshots?: AggregateSnapshots<State> } = {},
): Promise<CommandResult<State, Event>> {
  const retry = options.retry ?? DEFAULT_WRITE_RETRY;
  for (let attempt = 1; ; attempt++) {
    const loaded = await loadAggregate(log, streamId, decider, options.snapshots);
    // One instant per attempt, read once the stream is loaded: the decision's "now" and the events' occurredAt.
    const instant = instantOf(context, log.now());
    const events = decider.decide(command, loaded.state, atInstant(context, instant));
    if (events.length === 0) return { events, state: loaded.state, position: loaded.position, streamRevision: loaded.revision };
    try {
      const result = await log.append(streamId, events, loaded.revision ?? 'no_stream', { ...appendContext, occurredAt: instant });
      const state = events.reduce((s, e) => decider.evolve(s, { ...e, actor: appendContext.actor }), loaded.state);
      options.snapshots?.remember(streamId, { state, revision: result.nextExpectedRevision, position: result.position });
      return { events, state, position: result.position, streamRevision: result.nextExpectedRevision };
    } catch (error) {
      if (!(error instanceof WrongExpectedVersionError)) throw error;
      if (attempt >= retry.attempts) throw new WriteContentionError(streamId, attempt);
      await retry.sleep(retry.delayMs(attempt));
    }
  }
}

export type { RecordedEvent };

/** The attempt's instant: the log's time, or the context's `now` when it is later. */
function instantOf(context: unknown, logNow: Date): Date {
  const now = context !== null && typeof context === 'object' && 'now' in context ? (context as { now: unknown }).now : undefined;
  const asked = now instanceof Date ? now.getTime() : typeof now === 'string' ? Date.parse(now) : Number.NaN;
  return asked > logNow.getTime() ? new Date(asked) : logNow;
}

/**
 * The decision context at the attempt's instant: its `now` (a Date, or an ISO string for the deciders that
 * keep times as strings) replaced by the instant; a context without `now` as it is.
 */
function atInstant<Context>(context: Context, instant: Date): Context {
  if (context === null || typeof context !== 'object' || !('now' in context)) return context;
  const now = (context as { now: unknown }).now;
  if (now instanceof Date) return { ...context, now: instant };
  if (typeof now === 'string') return { ...context, now: instant.toISOString() };
  return context;
}
