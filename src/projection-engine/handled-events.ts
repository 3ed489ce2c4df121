import type { SubscriptionFilter } from '../event-store/event-store.ts';
import type { Projection } from './projection.ts';

/** What decides whether a projection handles an event: its type and its stream. */
export interface EventAddress {
  type: string;
  streamId: string;
}

/**
 * Whether a subscription with this filter delivers the event, as every event store adapter decides it
 * (test/event-store/event-store.conformance.ts holds each to it): of one of the types, when types are
 * given, and in a stream whose id starts with one of the prefixes, when prefixes are given; no filter
 * delivers everything. Empty lists are refused (assertPortableFilter): adapters read them differently.
 */
export function filterMatches(filter: SubscriptionFilter | undefined, event: EventAddress): boolean {
  if (!filter) return true;
  if (filter.eventTypes && !filter.eventTypes.includes(event.type)) return false;
  if (filter.streamPrefixes && !filter.streamPrefixes.some((prefix) => event.streamId.startsWith(prefix))) return false;
  return true;
}

/**
 * Refuses a filter whose meaning differs between event stores: an empty list of types or prefixes is "none"
 * on SQLite and "any" on EventStoreDB. A projection that handles nothing has no use; one that handles
 * everything leaves the list out.
 */
export function assertPortableFilter(projection: Pick<Projection, 'name' | 'filter'>): void {
  const { eventTypes, streamPrefixes } = projection.filter ?? {};
  if (eventTypes?.length === 0) throw new Error(`projection ${projection.name}: filter.eventTypes is empty (leave it out to handle every type)`);
  if (streamPrefixes?.length === 0) throw new Error(`projection ${projection.name}: filter.streamPrefixes is empty (leave it out to handle every stream)`);
}

/**
 * Which projections handle which events: the projections a write's events reach, and so the only ones
 * its read-your-writes wait needs (a projection no event of the write reaches holds what it held before).
 * Exactly what each projection's subscription delivers (filterMatches); `apply` may still ignore an event
 * it is delivered, which counts as handled (it may write, so the write waits for it).
 */
export class HandledEvents {
  readonly #projections: ReadonlyArray<{ name: string; filter: SubscriptionFilter | undefined }>;

  constructor(projections: ReadonlyArray<Pick<Projection, 'name' | 'filter'>>) {
    for (const projection of projections) assertPortableFilter(projection);
    this.#projections = projections.map(({ name, filter }) => ({ name, filter }));
  }

  /** The projections known, in the order given. */
  get names(): string[] {
    return this.#projections.map((p) => p.name);
  }

  /** Whether the projection handles the event; a projection not known handles nothing. */
  handles(projection: string, event: EventAddress): boolean {
    const known = this.#projections.find((p) => p.name === projection);
    return known !== undefined && filterMatches(known.filter, event);
  }

  /** The projections that handle at least one of the events, in the order given. */
  handlersOf(events: readonly EventAddress[]): string[] {
    return this.#projections.filter((p) => events.some((event) => filterMatches(p.filter, event))).map((p) => p.name);
  }
}
