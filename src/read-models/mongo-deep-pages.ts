/**
 * Deep pages of the MongoDB read-model store in bounded work. `skip(k)` makes the server step over k index
 * keys (and, with a filter on fields the index does not hold, k documents): the cost grows with the page
 * number, and a crawler asking for the deepest pages makes every request the most expensive one.
 *
 * For a sorted list read deep (one filter and one sort, e.g. a form set's entries in one locale by
 * publishedAt), this keeps a block index in memory: the sort key (sort values and id) of every BLOCK_SIZE-th
 * document, found by one walk of the list (its keys only). The page at offset k is then a range query from the
 * key just before its block (Query.after's keyset condition), skipping fewer than BLOCK_SIZE documents.
 *
 * The index is kept exact by the collection's commit stamp (the checkpoint of the last commit that wrote it,
 * stored with the generation's checkpoint by every commit: mongo-commits.ts): a read that finds another
 * stamp than the index was built at builds it again. Builds have a time budget per second; beyond it, and for
 * lists it cannot key (sort fields holding anything but strings, numbers and nothing, or both strings and
 * numbers), a page is read with skip() as before. A page read while a commit is being applied on a server
 * without transactions may be off by what that commit moves, as any page read during a commit would be.
 */
import type { Collection, Sort } from 'mongodb';
import { valueAt } from './document-values.ts';
import { DOC_FIELD } from './mongo-query.ts';
import type { Document } from './read-model-store.ts';

/** Documents per block: the most a deep page skips. */
export const BLOCK_SIZE = 128;
/** Lists kept at once (least recently read dropped first). */
const MAX_LISTS = 64;
/** Time that building block indexes may take per second; beyond it, deep pages use skip() until the next second. */
const BUILD_BUDGET_MS_PER_SECOND = 200;
/** How long a list found not keyable is left to skip() before it is tried again. */
const UNKEYABLE_RETRY_MS = 60_000;

export type KeyValue = string | number | null;

/** Where a page starts: after the document of this key, skipping `skip` more (fewer than BLOCK_SIZE). */
export interface PageStart {
  after: { values: KeyValue[]; id: string };
  skip: number;
}

interface BlockIndex {
  stamp: string;
  /** The key of the document at index (b + 1) * blockSize - 1, for each full block b. */
  boundaries: Array<{ values: KeyValue[]; id: string }>;
  total: number;
}

interface ListState {
  index?: BlockIndex;
  /** Not keyable until then (clock milliseconds). */
  unkeyableUntil?: number;
}

export interface DeepPageList {
  /** The physical collection, the MongoDB filter and sort as sent: what makes the list. */
  collection: Collection<Document>;
  filter: Record<string, unknown>;
  sort: Sort;
  /** The sort's document fields (without `doc.`), in order: the key's values. */
  fields: readonly string[];
  /** The collection's current commit stamp. */
  stamp: string;
}

export class MongoDeepPages {
  readonly #lists = new Map<string, ListState>();
  readonly #blockSize: number;
  #budgetSecond = 0;
  #spentMs = 0;
  readonly reads = { counted: 0, offset: 0 };

  constructor(options: { blockSize?: number } = {}) {
    this.#blockSize = options.blockSize ?? BLOCK_SIZE;
  }

  get blockSize(): number {
    return this.#blockSize;
  }

  /**
   * Where the page at `offset` of the list starts, or null when it is read with skip(offset) (not deep, not
   * keyable, over the build budget); 'beyond' when the list holds no document at that offset.
   */
  async locate(list: DeepPageList, offset: number): Promise<PageStart | 'beyond' | null> {
    if (offset < this.#blockSize) return null;
    const name = `${list.collection.collectionName}\n${JSON.stringify(list.filter)}\n${JSON.stringify(list.sort)}`;
    let state = this.#lists.get(name);
    if (state) {
      this.#lists.delete(name);
      this.#lists.set(name, state);
    } else {
      state = {};
      this.#lists.set(name, state);
      if (this.#lists.size > MAX_LISTS) this.#lists.delete(this.#lists.keys().next().value!);
    }
    if (state.unkeyableUntil !== undefined && Date.now() < state.unkeyableUntil) return this.#skipped();
    if (state.index?.stamp !== list.stamp) {
      if (!this.#withinBudget()) return this.#skipped();
      const started = performance.now();
      const built = await this.#build(list);
      this.#spentMs += performance.now() - started;
      if (built === null) {
        state.unkeyableUntil = Date.now() + UNKEYABLE_RETRY_MS;
        delete state.index;
        return this.#skipped();
      }
      state.index = built;
      delete state.unkeyableUntil;
    }
    const index = state.index;
    this.reads.counted += 1;
    if (offset >= index.total) return 'beyond';
    const block = Math.floor(offset / this.#blockSize);
    const boundary = index.boundaries[block - 1]!;
    return { after: { values: [...boundary.values], id: boundary.id }, skip: offset - block * this.#blockSize };
  }

  /** Forgets the lists of these collections (dropped). */
  forget(collections: readonly string[]): void {
    const names = new Set(collections);
    for (const key of [...this.#lists.keys()]) if (names.has(key.slice(0, key.indexOf('\n')))) this.#lists.delete(key);
  }

  #skipped(): null {
    this.reads.offset += 1;
    return null;
  }

  #withinBudget(): boolean {
    const second = Math.floor(Date.now() / 1000);
    if (second !== this.#budgetSecond) {
      this.#budgetSecond = second;
      this.#spentMs = 0;
    }
    return this.#spentMs < BUILD_BUDGET_MS_PER_SECOND;
  }

  /** One walk of the list's keys; null when a key holds what a keyset cannot order (see the module's comment). */
  async #build(list: DeepPageList): Promise<BlockIndex | null> {
    const projection = Object.fromEntries(list.fields.map((field) => [`${DOC_FIELD}.${field}`, 1]));
    const types: Array<'string' | 'number' | undefined> = list.fields.map(() => undefined);
    const boundaries: BlockIndex['boundaries'] = [];
    let total = 0;
    for await (const stored of list.collection.find(list.filter, { projection, sort: list.sort, batchSize: 10_000 })) {
      total += 1;
      const values: KeyValue[] = [];
      for (let i = 0; i < list.fields.length; i++) {
        const value = valueAt((stored[DOC_FIELD] as Document | undefined) ?? {}, list.fields[i]!);
        if (value === undefined || value === null) {
          values.push(null);
          continue;
        }
        const type = typeof value === 'string' ? 'string' : typeof value === 'number' && Number.isFinite(value) ? 'number' : null;
        if (type === null || (types[i] !== undefined && types[i] !== type)) return null;
        types[i] = type;
        values.push(value as string | number);
      }
      if (total % this.#blockSize === 0) boundaries.push({ values, id: stored['_id'] as unknown as string });
    }
    return { stamp: list.stamp, boundaries, total };
  }
}
