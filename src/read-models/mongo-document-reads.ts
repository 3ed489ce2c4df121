/**
 * The MongoDB read-model store's reads of documents (get, find, count): a Query as a MongoDB filter, sort and
 * paging (mongo-query.ts), a text condition merged in (mongo-text-search.ts), deep pages of sorted lists from
 * their block index (mongo-deep-pages.ts).
 */
import type { Collection, Db, Sort } from 'mongodb';
import { DOC_FIELD, physicalCollectionName, toMongoAfter, toMongoFilter, toMongoPaging, toMongoSort } from './mongo-query.ts';
import type { StoredDocument } from './mongo-commits.ts';
import type { MongoDeepPages } from './mongo-deep-pages.ts';
import { generationId, type MongoGenerationRegistry } from './mongo-generation-registry.ts';
import type { MongoTextSearch } from './mongo-text-search.ts';
import { assertAfter, assertFields, assertGetManyIds, assertTextTokens, type Document, type DocumentEntry, type ModelTarget, type Query } from './read-model-store.ts';

/** Runs an operation, turning driver errors into the port's (MongoReadModelStore's guard). */
export type Guard = <T>(what: string, operation: () => Promise<T>) => Promise<T>;

export class MongoDocumentReads {
  readonly #db: Db;
  readonly #registry: MongoGenerationRegistry;
  readonly #deepPages: MongoDeepPages;
  readonly #text: MongoTextSearch;
  readonly #guard: Guard;

  constructor(db: Db, registry: MongoGenerationRegistry, deepPages: MongoDeepPages, text: MongoTextSearch, guard: Guard) {
    this.#db = db;
    this.#registry = registry;
    this.#deepPages = deepPages;
    this.#text = text;
    this.#guard = guard;
  }

  async get(target: ModelTarget, collection: string, id: string): Promise<Document | null> {
    const name = physicalCollectionName(target.projection, collection, target.generation);
    return this.#guard('read a document', async () => {
      const stored = await this.#db.collection<StoredDocument>(name).findOne({ _id: id }, { projection: { [DOC_FIELD]: 1 } });
      return stored ? stored.doc : null;
    });
  }

  async getMany(target: ModelTarget, collection: string, ids: readonly string[]): Promise<DocumentEntry[]> {
    assertGetManyIds(ids);
    if (ids.length === 0) return [];
    const name = physicalCollectionName(target.projection, collection, target.generation);
    return this.#guard('read documents', async () => {
      const stored = await this.#db.collection<StoredDocument>(name).find({ _id: { $in: [...ids] } }, { projection: { [DOC_FIELD]: 1 } }).toArray();
      return stored.map((entry) => ({ id: entry._id, doc: entry.doc }));
    });
  }

  async find(target: ModelTarget, collection: string, query: Query = {}): Promise<Document[]> {
    return (await this.findWithIds(target, collection, query)).map((entry) => entry.doc);
  }

  /**
   * With a text condition and no sort, most relevant first by MongoDB's text score (more occurrences in
   * a shorter text score higher), ties by id.
   */
  async findWithIds(target: ModelTarget, collection: string, query: Query = {}): Promise<DocumentEntry[]> {
    assertFields(query.fields);
    // Only the fields asked for leave the server (Query.fields).
    const projection = query.fields === undefined ? { [DOC_FIELD]: 1 } : Object.fromEntries(query.fields.map((field) => [`${DOC_FIELD}.${field}`, 1]));
    const stored = await this.#find(target, collection, query, projection);
    return stored.map((s) => ({ id: s._id, doc: s.doc ?? {} }));
  }

  async findStrings(target: ModelTarget, collection: string, query: Omit<Query, 'fields'>, field: string): Promise<Array<string | null>> {
    assertFields([field]);
    const stored = await this.#find(target, collection, query, { [`${DOC_FIELD}.${field}`]: 1 });
    return stored.map((s) => {
      const value = s.doc?.[field];
      return typeof value === 'string' ? value : null;
    });
  }

  /** The stored documents a query finds, with the projection given. */
  async #find(target: ModelTarget, collection: string, query: Query, projection: Record<string, number>): Promise<StoredDocument[]> {
    const name = physicalCollectionName(target.projection, collection, target.generation);
    assertAfter(query);
    // The keyset condition goes under $or (one clause): the text condition (toMongoText) uses $and.
    const filter = query.after === undefined ? toMongoFilter(query.filter) : { ...toMongoFilter(query.filter), $or: [toMongoAfter(query.sort, query.after)] };
    const { skip, limit } = toMongoPaging(query);
    if (query.text !== undefined) assertTextTokens(query.text);
    const sort: Sort =
      query.text !== undefined && query.sort === undefined
        ? { score: { $meta: 'textScore' }, _id: 1 }
        : toMongoSort(query.sort);
    return this.#guard('find documents', async () => {
      const where = await this.#text.withText(name, target, collection, filter, query.text);
      if (where === null || limit === 0) return [];
      const documents = this.#db.collection<StoredDocument>(name);
      let from = where;
      let skipped = skip;
      // A deep page of a sorted list: a range from its block's first key (mongo-deep-pages.ts).
      const mongoSort = toMongoSort(query.sort);
      if (query.text === undefined && query.after === undefined && skip >= this.#deepPages.blockSize && mongoSort.length - 1 === (query.sort?.length ?? 0)) {
        const fields = mongoSort.slice(0, -1).map(([path]) => path.slice(DOC_FIELD.length + 1));
        const list = { collection: documents as unknown as Collection<Document>, filter: where, sort: mongoSort, fields, stamp: await this.#commitStamp(target, collection) };
        const start = await this.#deepPages.locate(list, skip);
        if (start === 'beyond') return [];
        if (start !== null) {
          from = { ...where, $or: [toMongoAfter(query.sort, start.after)] };
          skipped = start.skip;
        }
      }
      return documents.find(from, { projection }).sort(sort).skip(skipped).limit(limit).toArray();
    });
  }

  /** The checkpoint of the last commit that wrote the collection (of one written before stamps: the generation's). */
  async #commitStamp(target: ModelTarget, collection: string): Promise<string> {
    const record = await this.#registry.records.findOne({ _id: generationId(target.projection, target.generation) }, { projection: { checkpoint: 1, [`stamps.${collection}`]: 1 } });
    return record?.stamps?.[collection] ?? record?.checkpoint ?? '';
  }

  /** Deep pages read through a block index (`counted`), and with skip() (`offset`), since the store opened. */
  deepPageReads(): { counted: number; offset: number } {
    return { ...this.#deepPages.reads };
  }

  async count(target: ModelTarget, collection: string, filter?: Query['filter'], text?: Query['text']): Promise<number> {
    const name = physicalCollectionName(target.projection, collection, target.generation);
    const mongoFilter = toMongoFilter(filter);
    if (text !== undefined) assertTextTokens(text);
    return this.#guard('count documents', async () => {
      const where = await this.#text.withText(name, target, collection, mongoFilter, text);
      return where === null ? 0 : this.#db.collection<StoredDocument>(name).countDocuments(where);
    });
  }
}
