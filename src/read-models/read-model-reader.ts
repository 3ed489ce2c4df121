import { keysetValue, MAX_QUERY_LIMIT, type Document, type DocumentEntry, type Query, type ReadModelQueries } from './read-model-store.ts';

/** Which generation of a projection this process reads, where it decides that itself (ProjectionSupervisor). */
export interface ReadGenerations {
  liveGeneration(projection: string): number | null;
}

/**
 * How the rest of the service reads read models: by projection name, from whichever generation is
 * active. In a process that runs the projectors, `generations` (the supervisor) names it: the generation
 * its live projector folds into, so reads agree with the waits of read-your-writes across a rebuild's
 * swap. Elsewhere (and for a projection the supervisor does not run) the store's active generation is
 * read, cached for `cacheMs` (a swap is seen within that time; the replaced generation stays readable for
 * longer than that before it is dropped).
 */
export class ReadModelReader {
  readonly #active = new Map<string, { generation: number | null; at: number }>();

  constructor(
    private readonly store: ReadModelQueries,
    private readonly options: { cacheMs?: number; generations?: ReadGenerations | undefined } = {},
  ) {}

  async get<T extends Document = Document>(projection: string, collection: string, id: string): Promise<T | null> {
    const generation = await this.activeGeneration(projection);
    return generation === null ? null : ((await this.store.get({ projection, generation }, collection, id)) as T | null);
  }

  /** The documents of these ids that exist, each with its id (ReadModelStore.getMany). */
  async getMany(projection: string, collection: string, ids: readonly string[]): Promise<DocumentEntry[]> {
    const generation = await this.activeGeneration(projection);
    return generation === null ? [] : this.store.getMany({ projection, generation }, collection, ids);
  }

  /** `query.text` searches the collection's textField (see Query.text). */
  async find<T extends Document = Document>(projection: string, collection: string, query?: Query): Promise<T[]> {
    const generation = await this.activeGeneration(projection);
    return generation === null ? [] : ((await this.store.find({ projection, generation }, collection, query)) as T[]);
  }

  /** As find, each document with its id (what keyset pages continue from). */
  async findWithIds(projection: string, collection: string, query?: Query): Promise<DocumentEntry[]> {
    const generation = await this.activeGeneration(projection);
    return generation === null ? [] : this.store.findWithIds({ projection, generation }, collection, query);
  }

  /** The string value of one field of each document found, null where it holds none (ReadModelStore.findStrings). */
  async findStrings(projection: string, collection: string, query: Omit<Query, 'fields'>, field: string): Promise<Array<string | null>> {
    const generation = await this.activeGeneration(projection);
    return generation === null ? [] : this.store.findStrings({ projection, generation }, collection, query, field);
  }

  /**
   * Every document the query matches, however many (find stops at MAX_QUERY_LIMIT): read in keyset pages of
   * `pageSize` in the query's order, each an index range (none walks past the ones before it), letting other
   * work run between pages: reading 90,000 sitemap rows at once held the event loop for half a second. The
   * sort's top-level fields are read along with `fields`. A document written between two pages is seen as
   * it was when its page was read.
   */
  async findAll<T extends Document = Document>(
    projection: string,
    collection: string,
    query: Omit<Query, 'limit' | 'offset' | 'after' | 'text'> & { sort: NonNullable<Query['sort']> },
    options: { pageSize?: number } = {},
  ): Promise<T[]> {
    const pageSize = Math.min(options.pageSize ?? 1_000, MAX_QUERY_LIMIT);
    const fields = query.fields === undefined ? undefined : [...new Set([...query.fields, ...query.sort.map(([field]) => field.split('.')[0]!)])];
    const all: T[] = [];
    let after: Query['after'];
    for (;;) {
      const page = await this.findWithIds(projection, collection, { ...query, ...(fields ? { fields } : {}), limit: pageSize, ...(after ? { after } : {}) });
      for (const entry of page) all.push(entry.doc as T);
      const last = page.at(-1);
      if (page.length < pageSize || !last) return all;
      after = { values: query.sort.map(([field]) => keysetValue(last.doc, field)), id: last.id };
      await new Promise((resolve) => setImmediate(resolve));
    }
  }

  /** With `text`, counts only the documents that match it too (see Query.text). */
  async count(projection: string, collection: string, filter?: Query['filter'], text?: Query['text']): Promise<number> {
    const generation = await this.activeGeneration(projection);
    return generation === null ? 0 : this.store.count({ projection, generation }, collection, filter, text);
  }

  /** The log position the generation read from has folded (null: nothing yet, or no generation). */
  async checkpoint(projection: string): Promise<bigint | null> {
    const generation = await this.activeGeneration(projection);
    return generation === null ? null : ((await this.store.getGeneration(projection, generation))?.checkpoint ?? null);
  }

  /** The version of the projection's code that built the generation read from (null: no generation yet). */
  async builtByVersion(projection: string): Promise<number | null> {
    const generation = await this.activeGeneration(projection);
    return generation === null ? null : ((await this.store.getGeneration(projection, generation))?.version ?? null);
  }

  async activeGeneration(projection: string): Promise<number | null> {
    const live = this.options.generations?.liveGeneration(projection);
    if (live !== undefined && live !== null) return live;
    const cached = this.#active.get(projection);
    const now = performance.now();
    if (cached && now - cached.at < (this.options.cacheMs ?? 1000)) return cached.generation;
    const generation = await this.store.activeGeneration(projection);
    this.#active.set(projection, { generation, at: now });
    return generation;
  }
}
