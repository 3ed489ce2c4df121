import type { ProjectionSupervisor } from './projection-supervisor.ts';
import { encodeNullablePosition } from '../event-store/position.ts';
import type { DocumentWrite, ReadModelStore } from '../read-models/read-model-store.ts';
import type { Projection } from './projection.ts';
import { changeRecordOf, changesAfter, EVERYTHING, latestChange, type ChangeRecord } from './change-feed.ts';

/**
 * A change of one of the read models, and what it changed: the scopes of its commit (Projection.changes) when
 * known; an empty set when it changed nothing (a checkpoint moved past events the projection does not fold);
 * undefined when anything in it may have changed (a generation swapped in, a projection without a change feed
 * wrote documents, a poll found a gap in the feed).
 */
export interface ReadModelChange {
  projection: string;
  scopes: ReadonlySet<string> | undefined;
}

/** What ReadModelVersions needs of a projection's definition. */
export type VersionedProjection = Pick<Projection, 'name' | 'changes'>;

/**
 * The current version of some read models (active generation and checkpoint of each), known without a
 * query, so that caches of what was read from them can be checked on every request for free.
 *
 * In a process that runs the projectors, the supervisor reports every commit as it happens, so a cache
 * keyed by the version never serves anything older than the read model. An API-only process (ROLES=api)
 * polls the store instead, every `pollMs`, and at once when the store tells of another process's commit
 * (ReadModelStore.watchOtherCommits: SQLite, within ~5-25 ms): its caches may lag the read models by that much. Either way the
 * listeners hear what each change changed: from the commit's change record (change-feed.ts) as the
 * supervisor reports it, or, polling, from the records committed since the last poll.
 */
export class ReadModelVersions {
  readonly #versions = new Map<string, string>();
  /** Polling: the generation and checkpoint each projection had at the last poll. */
  readonly #polled = new Map<string, string>();
  readonly #listeners = new Set<(change: ReadModelChange) => void>();
  readonly #generations = new Map<string, number>();
  /** Polling: the generation and newest change record seen of each projection with a change feed. */
  readonly #feeds = new Map<string, { generation: number; lastChange: string | null }>();
  #timer: NodeJS.Timeout | undefined;
  #unsubscribe: (() => void) | undefined;
  #unwatch: (() => void) | undefined;
  #polling: Promise<void> | undefined;
  #pollAgain = false;

  constructor(
    private readonly store: ReadModelStore,
    private readonly projections: readonly VersionedProjection[],
    private readonly options: { supervisor?: ProjectionSupervisor | undefined; pollMs?: number } = {},
  ) {}

  async start(): Promise<void> {
    await this.#poll();
    if (this.options.supervisor) {
      this.#unsubscribe = this.options.supervisor.onCommit(({ projection, generation, checkpoint, writes }) => {
        const definition = this.projections.find((p) => p.name === projection);
        if (!definition) return;
        const sameGeneration = this.#generations.get(projection) === generation;
        this.#generations.set(projection, generation);
        this.#set(projection, `${generation}:${encodeNullablePosition(checkpoint)}:live`, sameGeneration && writes ? committedScopes(definition, writes) : undefined);
      });
    } else {
      this.#timer = setInterval(() => this.#pollSoon(), this.options.pollMs ?? 250);
      this.#timer.unref();
      // Where the store can tell (SQLite), another process's commit is a cue to poll at once.
      this.#unwatch = this.store.watchOtherCommits?.(() => this.#pollSoon());
    }
  }

  stop(): void {
    this.#unsubscribe?.();
    this.#unwatch?.();
    this.#unwatch = undefined;
    if (this.#timer) clearInterval(this.#timer);
  }

  /** A poll now, or right after the one running (one at a time: each goes on from what the last one saw). */
  #pollSoon(): void {
    if (this.#polling) {
      this.#pollAgain = true;
      return;
    }
    this.#polling = this.#poll()
      .catch(() => {})
      .finally(() => {
        this.#polling = undefined;
        if (this.#pollAgain) {
          this.#pollAgain = false;
          this.#pollSoon();
        }
      });
  }

  /** Tells `listener` about every change of the read models (see ReadModelChange); returns how to stop. */
  onChange(listener: (change: ReadModelChange) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** The version of one of the read models: it changes when what the read model holds may have changed, not when only its checkpoint moved. */
  of(projection: string): string {
    return this.#versions.get(projection) ?? '';
  }

  async #poll(): Promise<void> {
    for (const definition of this.projections) {
      const name = definition.name;
      const generation = await this.store.activeGeneration(name);
      const record = generation === null ? null : await this.store.getGeneration(name, generation);
      const position = `${generation}:${encodeNullablePosition(record?.checkpoint ?? null)}`;
      if (this.#polled.get(name) === position) continue;
      const scopes = definition.changes ? await this.#polledScopes(name, generation, encodeNullablePosition(record?.checkpoint ?? null)) : undefined;
      this.#polled.set(name, position);
      this.#set(name, position, scopes);
    }
  }

  /**
   * What changed in a projection with a change feed since the last poll: the scopes of the records committed
   * since, up to the checkpoint the poll read, when they follow the last one seen unbroken in the same
   * generation; otherwise anything (undefined), and the newest record up to the checkpoint is where the next
   * poll starts.
   */
  async #polledScopes(projection: string, generation: number | null, checkpoint: string | null): Promise<ReadonlySet<string> | undefined> {
    const seen = this.#feeds.get(projection);
    if (generation === null) {
      this.#feeds.delete(projection);
      return undefined;
    }
    const target = { projection, generation };
    if (seen !== undefined && seen.generation === generation && checkpoint !== null) {
      const records = await changesAfter(this.store, target, seen.lastChange, checkpoint);
      if (records !== 'gap') {
        if (records.length > 0) seen.lastChange = records.at(-1)!.at;
        return scopesOf(records);
      }
    }
    // A generation that has folded nothing has no record a reader may trust yet.
    this.#feeds.set(projection, { generation, lastChange: checkpoint === null ? null : await latestChange(this.store, target, checkpoint) });
    return undefined;
  }

  #set(projection: string, version: string, scopes: ReadonlySet<string> | undefined): void {
    // Nothing readers see changed (the checkpoint moved past events the projection does not fold, or its
    // commit changed nothing they serve): what was read from it, and cached by its version, stays valid.
    if (scopes?.size === 0 || this.#versions.get(projection) === version) return;
    this.#versions.set(projection, version);
    for (const listener of this.#listeners) listener({ projection, scopes });
  }
}

/** What a commit this process's projector reports changed (see ReadModelChange). */
function committedScopes(projection: VersionedProjection, writes: readonly DocumentWrite[]): ReadonlySet<string> | undefined {
  if (writes.length === 0) return NOTHING;
  if (!projection.changes) return undefined;
  const record = changeRecordOf(writes);
  return record === undefined ? NOTHING : scopesOf([record]);
}

/** The scopes of change records together; undefined when one of them changed anything (EVERYTHING). */
function scopesOf(records: readonly ChangeRecord[]): ReadonlySet<string> | undefined {
  const scopes = new Set<string>();
  for (const record of records) {
    for (const scope of record.scopes) {
      if (scope === EVERYTHING) return undefined;
      scopes.add(scope);
    }
  }
  return scopes;
}

const NOTHING: ReadonlySet<string> = new Set();
