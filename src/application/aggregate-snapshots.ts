import { LRUCache } from 'lru-cache';
import type { Logger } from 'pino';
import type { Clock } from '../clock.ts';
import type { EventLog } from '../event-store/event-log.ts';
import { StreamNotFoundError } from '../event-store/errors.ts';
import type { Decider, DomainEvent } from '../domain/decider.ts';
import type { SnapshotStore } from '../snapshots/snapshot-store.ts';

/** An aggregate's state after the stream's last event (revision and position null: no stream). */
export interface LoadedAggregate<State> {
  state: State;
  revision: bigint | null;
  position: bigint | null;
}

type Evolver<State, Event extends DomainEvent> = Pick<Decider<State, unknown, Event, unknown>, 'initialState' | 'evolve'>;

interface Base<State> {
  state: State;
  revision: bigint;
  position: bigint;
  /** Revision of the snapshot last stored for the stream (-1n: none known). */
  stored: bigint;
  /** Size of the state's JSON (what the cache counts). */
  bytes: number;
}

export interface AggregateSnapshotOptions {
  /** Names the aggregate in stored snapshots (for example 'entry'). */
  kind: string;
  /** Version of the state's shape: raise it when evolve or the state changes, and older snapshots are ignored. */
  version: number;
  /** Persistent snapshots; without one, only the in-process cache is used. */
  store?: SnapshotStore;
  /** A snapshot is stored once this many events were folded since the last one (default 16). */
  every?: number;
  /**
   * Memory for cached states, in bytes of their JSON, least recently used dropped first (default 64 MiB;
   * 0 turns the cache off). A state larger than a tenth of it is not cached.
   */
  cacheBytes?: number;
  clock: Clock;
  logger?: Logger;
}

/**
 * Loads aggregates without folding their whole stream: from an in-process cache of recent states, else
 * from a stored snapshot, then folds only the events after it. Both are optimisations only, with the same
 * answer as folding the stream from its start:
 * - a cached state or a snapshot is used only after the stream confirms it: the event at its revision
 *   must be at its global position (positions are unique across the log), and a snapshot must be of this
 *   kind and state version; otherwise it is dropped and the stream is folded from the start;
 * - the events after it are always read, so writes by other processes are never missed;
 * - storing a snapshot is best effort: a failure is logged and the load still answers.
 * With a state whose size does not grow with the history (the entry aggregate's), a load costs the same
 * at 10 and at 10,000 events.
 */
export class AggregateSnapshots<State> {
  readonly #cache: LRUCache<string, Base<State>> | null;
  readonly #every: number;
  #warned = false;

  constructor(private readonly options: AggregateSnapshotOptions) {
    this.#every = options.every ?? 16;
    const bytes = options.cacheBytes ?? 64 * 1024 * 1024;
    this.#cache = bytes > 0 ? new LRUCache<string, Base<State>>({ maxSize: bytes, maxEntrySize: Math.max(1, Math.floor(bytes / 10)), sizeCalculation: (base) => base.bytes }) : null;
  }

  get kind(): string {
    return this.options.kind;
  }

  async load<Event extends DomainEvent>(log: EventLog, streamId: string, decider: Evolver<State, Event>): Promise<LoadedAggregate<State>> {
    const cached = this.#cache?.get(streamId);
    const base = cached ?? (await this.#stored(streamId));
    if (base) {
      const resumed = await this.#foldFrom(log, streamId, decider, base);
      if (resumed) return resumed;
      this.#cache?.delete(streamId);
      await this.options.store?.delete(streamId).catch((error: unknown) => this.#warn(error));
    }
    return this.#foldFrom(log, streamId, decider, null) as Promise<LoadedAggregate<State>>;
  }

  /** After an append: the state at the new revision, so the next load starts there. */
  remember(streamId: string, loaded: LoadedAggregate<State>): void {
    if (loaded.revision === null || loaded.position === null || !this.#cache) return;
    const current = this.#cache.peek(streamId);
    if (current && current.revision >= loaded.revision) return;
    this.#cache.set(streamId, based(loaded.state, loaded.revision, loaded.position, current?.stored ?? -1n));
  }

  /** Forgets every cached state (stored snapshots stay). */
  clearCache(): void {
    this.#cache?.clear();
  }

  /**
   * Folds the stream from `base` (verified: the stream's event at base.revision must sit at base.position)
   * or from its start. Null when the base does not match the stream.
   */
  async #foldFrom<Event extends DomainEvent>(log: EventLog, streamId: string, decider: Evolver<State, Event>, base: Base<State> | null): Promise<LoadedAggregate<State> | null> {
    let state = base?.state ?? decider.initialState();
    let revision: bigint | null = base?.revision ?? null;
    let position: bigint | null = base?.position ?? null;
    let verified = base === null;
    try {
      for await (const event of log.readStream(streamId, base ? { fromRevision: base.revision } : undefined)) {
        if (!verified) {
          if (event.revision !== base!.revision || event.position !== base!.position) return null;
          verified = true;
          continue;
        }
        state = decider.evolve(state, { type: event.type, data: event.data, actor: event.metadata.actor } as Event);
        revision = event.revision;
        position = event.position;
      }
    } catch (error) {
      if (!(error instanceof StreamNotFoundError)) throw error;
      if (base) return null;
      return { state: decider.initialState(), revision: null, position: null };
    }
    if (!verified) return null;
    if (revision !== null && position !== null) {
      let stored = base?.stored ?? -1n;
      if (revision - stored >= BigInt(this.#every)) stored = await this.#store(streamId, { state, revision, position, stored });
      // Nothing folded after the base and nothing stored: the base is the entry as it is (its size measured already).
      const unchanged = base !== null && revision === base.revision && stored === base.stored;
      this.#cache?.set(streamId, unchanged ? base : based(state, revision, position, stored));
    }
    return { state, revision, position };
  }

  async #stored(streamId: string): Promise<Base<State> | null> {
    const store = this.options.store;
    if (!store) return null;
    try {
      const snapshot = await store.get(streamId);
      if (!snapshot || snapshot.kind !== this.options.kind || snapshot.version !== this.options.version) return null;
      return based(snapshot.state as State, snapshot.revision, snapshot.position, snapshot.revision);
    } catch (error) {
      this.#warn(error);
      return null;
    }
  }

  /** Stores a snapshot; answers the revision now stored (the previous one when storing failed). */
  async #store(streamId: string, base: Omit<Base<State>, 'bytes'>): Promise<bigint> {
    const store = this.options.store;
    if (!store) return base.stored;
    try {
      await store.put({ streamId, kind: this.options.kind, version: this.options.version, revision: base.revision, position: base.position, state: base.state, takenAt: this.options.clock.now().toISOString() });
      return base.revision;
    } catch (error) {
      this.#warn(error);
      return base.stored;
    }
  }

  #warn(error: unknown): void {
    if (this.#warned) return;
    this.#warned = true;
    this.options.logger?.warn({ err: error, kind: this.options.kind }, 'aggregate snapshots unavailable; loading from the log');
  }
}

function based<State>(state: State, revision: bigint, position: bigint, stored: bigint): Base<State> {
  return { state, revision, position, stored, bytes: JSON.stringify(state)?.length ?? 0 };
}
