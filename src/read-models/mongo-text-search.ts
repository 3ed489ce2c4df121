/**
 * Text search on the MongoDB read-model store: a collection's text index (none on a server without text
 * indexes, noted on the generation's record), and a text condition merged into a query's filter, with the
 * field the index covers found from the index itself (listIndexes), so a replica that never saw the schema
 * can search too.
 */
import { MongoServerError, type Db } from 'mongodb';
import { assertTextPrefix, textIndexPrefix, toMongoText, TEXT_INDEX_NAME, type MongoFilter } from './mongo-query.ts';
import { generationId, type MongoGenerationRegistry } from './mongo-generation-registry.ts';
import { ReadModelError, TextSearchUnavailableError, type ModelTarget, type Query } from './read-model-store.ts';

/** What a server without text indexes answers a text index with: IndexNotFound ("can't find index with key"), NotImplemented. */
const TEXT_INDEX_UNSUPPORTED = new Set([27, 238]);
const NAMESPACE_NOT_FOUND = 26;

export class MongoTextSearch {
  readonly #db: Db;
  readonly #registry: MongoGenerationRegistry;
  /** Physical collection → the field its text index covers (`doc.<textField>`); only found ones are kept. */
  readonly #textPaths = new Map<string, { path: string; prefix: string[] }>();

  constructor(db: Db, registry: MongoGenerationRegistry) {
    this.#db = db;
    this.#registry = registry;
  }

  /** Forgets what was found of a collection's text index (the collection is dropped). */
  forget(name: string): void {
    this.#textPaths.delete(name);
  }

  /**
   * A collection's text index. A server that has no text indexes (it refuses the key or the options as
   * unknown: FerretDB v1) gets none, and the generation's record notes it: the read model works without
   * search, and text queries fail with TextSearchUnavailableError, on every replica.
   */
  async createTextIndex(projection: string, generation: number, collection: string, name: string, index: object): Promise<void> {
    try {
      await this.#db.collection(name).createIndexes([index as never]);
    } catch (error) {
      if (!(error instanceof MongoServerError && TEXT_INDEX_UNSUPPORTED.has(error.code as number))) throw error;
      await this.#registry.records.updateOne({ _id: generationId(projection, generation) }, { $addToSet: { withoutTextIndex: collection } });
    }
  }

  /**
   * The filter with the text condition merged in; null when the condition matches nothing (no tokens, or
   * the collection does not exist). Fails when the collection has no text index.
   */
  async withText(name: string, target: ModelTarget, collection: string, filter: MongoFilter, text: Query['text']): Promise<MongoFilter | null> {
    if (text === undefined) return filter;
    const index = await this.#textPath(name, target, collection);
    if (index === null || text.length === 0) return null;
    assertTextPrefix(filter, index.prefix, collection);
    return { ...filter, ...toMongoText(index.path, text) };
  }

  /** The field the collection's text index covers, and its prefix fields; null when the collection does not exist. */
  async #textPath(name: string, target: ModelTarget, collection: string): Promise<{ path: string; prefix: string[] } | null> {
    const cached = this.#textPaths.get(name);
    if (cached !== undefined) return cached;
    let indexes: Array<{ name?: string; weights?: Record<string, unknown>; key?: Record<string, unknown> }>;
    try {
      indexes = await this.#db.collection(name).listIndexes().toArray();
    } catch (error) {
      if (error instanceof MongoServerError && error.code === NAMESPACE_NOT_FOUND) return null;
      throw error;
    }
    const textIndex = indexes.find((index) => index.name === TEXT_INDEX_NAME);
    const paths = Object.keys(textIndex?.weights ?? {});
    if (paths.length !== 1) {
      if ((await this.withoutTextIndex(target.projection, target.generation)).includes(collection)) {
        throw new TextSearchUnavailableError(`the MongoDB server of the read models has no text indexes: ${collection} of ${target.projection} cannot be searched`);
      }
      throw new ReadModelError(
        `collection ${collection} of ${target.projection} (generation ${target.generation}) has no text index: it declares no textField, or its indexes are not created yet`,
      );
    }
    const found = { path: paths[0]!, prefix: textIndexPrefix(textIndex?.key ?? {}) };
    this.#textPaths.set(name, found);
    return found;
  }

  /** The collections of a generation whose text index the server could not build. */
  async withoutTextIndex(projection: string, generation: number): Promise<string[]> {
    const record = await this.#registry.records.findOne({ _id: generationId(projection, generation) }, { projection: { withoutTextIndex: 1 } });
    return record?.withoutTextIndex ?? [];
  }
}
