/**
 * The declared indexes of a generation's collections on MongoDB (and its text index, mongo-text-search.ts).
 */
import type { Db } from 'mongodb';
import type { MongoCommits } from './mongo-commits.ts';
import { physicalCollectionName, toMongoIndexes, toMongoTextIndex, TEXT_INDEX_NAME, UNIQUE_INDEX_SUFFIX } from './mongo-query.ts';
import type { MongoTextSearch } from './mongo-text-search.ts';
import { ReadModelError, type ReadModelSchema } from './read-model-store.ts';

/**
 * Creates the indexes the collections lack. One that exists under its name is left as it is when its keys
 * are the ones declared, and refused with ReadModelError otherwise (a changed definition needs a new
 * generation); a unique index made by an earlier version (partial, over the fields) is kept as it is.
 */
export async function createDeclaredIndexes(db: Db, textSearch: MongoTextSearch, commits: MongoCommits, schema: ReadModelSchema, generation: number): Promise<void> {
  for (const [collection, spec] of Object.entries(schema.collections)) {
    const name = physicalCollectionName(schema.projection, collection, generation);
    const declared = [...(spec.indexes ?? []).flatMap(toMongoIndexes), ...(spec.textField === undefined ? [] : [toMongoTextIndex(spec.textField, spec.textPrefix)])];
    if (declared.length === 0) continue;
    const unsupported = new Set(spec.textField === undefined ? [] : await textSearch.withoutTextIndex(schema.projection, generation));
    const existing = new Map((await db.collection(name).listIndexes().toArray()).map((index) => [index.name as string, index]));
    const missing = declared.filter((index) => {
      if (index.name === TEXT_INDEX_NAME && unsupported.has(collection)) return false;
      const found = existing.get(index.name);
      if (!found) return true;
      const legacyUnique = index.name.endsWith(UNIQUE_INDEX_SUFFIX) && 'partialFilterExpression' in found;
      if (index.name !== TEXT_INDEX_NAME && !legacyUnique && JSON.stringify(found['key']) !== JSON.stringify(index.key)) {
        throw new ReadModelError(`index ${index.name} of ${collection} (${schema.projection} generation ${generation}) exists with other keys: ${JSON.stringify(found['key'])}`);
      }
      return false;
    });
    try {
      if (missing.length > 0) await db.collection(name).createIndexes(missing.filter((index) => index.name !== TEXT_INDEX_NAME));
      const text = missing.find((index) => index.name === TEXT_INDEX_NAME);
      if (text) await textSearch.createTextIndex(schema.projection, generation, collection, name, text);
    } finally {
      commits.forgetIndexes([name], { projection: schema.projection, generation });
    }
  }
}
