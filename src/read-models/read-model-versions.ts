import type { ProjectionSupervisor } from '../projection-engine/projection-supervisor.ts';
import { encodeNullablePosition } from '../event-store/position.ts';
import type { DocumentWrite, ReadModelStore } from './read-model-store.ts';

/**
 * The current version of some read models (active generation and checkpoint of each), known without a
 * query, so that caches of what was read from them can be checked on every request for free.
 *
 * In a process that runs the projectors, the supervisor reports every commit as it happens, so a cache
 * keyed by the version never serves anything older than the read model. An API-only process (ROLES=api)
 * polls the store instead, every `pollMs`: its caches may lag the read models by that much.
 */
/**
 * A change of one of the read models: the document writes of the commit when known (the projector runs in
 * this process and folded into the generation it already read from); undefined otherwise (a poll saw a new
 * version, a generation was swapped in): anything in it may have changed.
 */
export interface ReadModelChange {
  projection: string;
  writes: readonly DocumentWrite[] | undefined;
}

export class ReadModelVersions {
  readonly #versions = new Map<string, string>();
  readonly #listeners = new Set<(change: ReadModelChange) => void>();
  readonly #generations = new Map<string, number>();
  #current = '';
  #timer: NodeJS.Timeout | undefined;
  #unsubscribe: (() => void) | undefined;

  constructor(
    private readonly store: ReadModelStore,
    private readonly projections: readonly string[],
    private readonly options: { supervisor?: ProjectionSupervisor | undefined; pollMs?: number } = {},
  ) {}

  async start(): Promise<void> {
    await this.#poll();
    if (this.options.supervisor) {
      this.#unsubscribe = this.options.supervisor.onCommit(({ projection, generation, checkpoint, writes }) => {
        if (!this.projections.includes(projection)) return;
        const sameGeneration = this.#generations.get(projection) === generation;
        this.#generations.set(projection, generation);
        this.#set(projection, `${generation}:${encodeNullablePosition(checkpoint)}:live`, sameGeneration ? writes : undefined);
      });
    } else {
      this.#timer = setInterval(() => void this.#poll().catch(() => {}), this.options.pollMs ?? 250);
      this.#timer.unref();
    }
  }

  stop(): void {
    this.#unsubscribe?.();
    if (this.#timer) clearInterval(this.#timer);
  }

  /** Tells `listener` about every change of the read models (see ReadModelChange); returns how to stop. */
  onChange(listener: (change: ReadModelChange) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Changes whenever any of the read models changes. */
  current(): string {
    return this.#current;
  }

  /** The version of one of the read models. */
  of(projection: string): string {
    return this.#versions.get(projection) ?? '';
  }

  async #poll(): Promise<void> {
    for (const name of this.projections) {
      const generation = await this.store.activeGeneration(name);
      const record = generation === null ? null : await this.store.getGeneration(name, generation);
      this.#set(name, `${generation}:${encodeNullablePosition(record?.checkpoint ?? null)}`);
    }
  }

  #set(projection: string, version: string, writes?: readonly DocumentWrite[]): void {
    if (this.#versions.get(projection) === version) return;
    this.#versions.set(projection, version);
    this.#current = this.projections.map((name) => `${name}@${this.#versions.get(name) ?? ''}`).join(',');
    for (const listener of this.#listeners) listener({ projection, writes });
  }
}
