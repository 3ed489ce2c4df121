/**
 * Pure translation of the read-model port's queries, names and index specs to MongoDB terms. No I/O.
 *
 * A stored document is `{_id: id, _pos: <encoded position>, doc: {...}}`: the user's document lives under
 * `doc`, so its keys never clash with the reserved `_id` and `_pos`, and every field path the port names
 * (filters, sorts, indexes) is addressed as `doc.<path>`.
 */
import {
  assertCollectionName,
  assertFieldPath,
  assertIndexOptions,
  assertProjectionName,
  MAX_QUERY_LIMIT,
  ReadModelError,
  type FieldCondition,
  type IndexSpec,
  type Query,
  type Scalar,
} from './read-model-store.ts';
import { UNIQUE_KEYS_FIELD } from './mongo-unique-keys.ts';
import { rangeBounds } from './range-bounds.ts';

/** Field of a stored document holding the user's document. */
export const DOC_FIELD = 'doc';
/** Field of a stored document holding the encoded position of the event that last wrote it. */
export const POSITION_FIELD = '_pos';

export type MongoFilter = Record<string, unknown>;
export type MongoSort = Array<[field: string, direction: 1 | -1]>;

/** Index description in the shape `Collection.createIndexes` takes. */
export interface MongoIndex {
  name: string;
  key: Record<string, 1 | -1>;
  unique?: boolean;
  sparse?: boolean;
}

const INDEX_NAME = /^[a-z0-9_]{1,64}$/;

/** Name of a collection's text index: outside the names an IndexSpec may take ([a-z0-9_]). */
export const TEXT_INDEX_NAME = 'search-text';
/**
 * The field a text index reads a document's language from. MongoDB's default, `language`, would let a
 * document field named so pick a stemmer (or fail the write with an unsupported language): this name is
 * one no document holds, so every document is indexed with `default_language: 'none'` (no stemming, no
 * stop words), as SQLite indexes the tokens as they are.
 */
export const TEXT_LANGUAGE_OVERRIDE = 'annalsTextIndexLanguageOverride';

/** A text index description in the shape `Collection.createIndexes` takes. */
export interface MongoTextIndex {
  name: string;
  key: Record<string, 1 | 'text'>;
  default_language: string;
  language_override: string;
}

/**
 * The text index over a collection's textField (`doc.<path>`), compound with its textPrefix fields (equality
 * prefixes: the index then holds one text index per combination of their values).
 */
export function toMongoTextIndex(textField: string, textPrefix: readonly string[] = []): MongoTextIndex {
  const key: Record<string, 1 | 'text'> = {};
  for (const field of textPrefix) key[docPath(field)] = 1;
  key[docPath(textField)] = 'text';
  return { name: TEXT_INDEX_NAME, key, default_language: 'none', language_override: TEXT_LANGUAGE_OVERRIDE };
}

/**
 * The prefix fields (`doc.<path>`) of a text index as listIndexes describes it: the keys before the text
 * part (`_fts`).
 */
export function textIndexPrefix(key: Record<string, unknown>): string[] {
  const prefix: string[] = [];
  for (const path of Object.keys(key)) {
    if (path === '_fts') break;
    prefix.push(path);
  }
  return prefix;
}

/** Throws ReadModelError unless the filter names every prefix field of the text index with an equality. */
export function assertTextPrefix(filter: MongoFilter, prefix: readonly string[], collection: string): void {
  const missing = prefix.filter((path) => {
    const condition = filter[path] as { $eq?: unknown } | undefined;
    return condition === undefined || typeof condition !== 'object' || condition === null || !('$eq' in condition);
  });
  if (missing.length > 0) {
    throw new ReadModelError(`a text query on ${collection} must filter ${missing.map((p) => p.slice(DOC_FIELD.length + 1)).join(', ')} by equality (its search is per ${missing.join(', ')})`);
  }
}

/**
 * The text condition on a collection whose text index covers `textPath` (`doc.<path>`), to merge into a
 * filter. `$text` finds the candidates through the text index and scores them; its phrases are ANDed but
 * matched as substrings of the field (and MongoDB's tokenizer also cuts at punctuation), so each token
 * must also occur as a whole space-delimited token: "js" does not match a text holding only "json".
 */
export function toMongoText(textPath: string, tokens: readonly string[]): MongoFilter {
  return {
    $text: {
      $search: tokens.map((token) => `"${token}"`).join(' '),
      $language: 'none',
      $caseSensitive: false,
      $diacriticSensitive: true,
    },
    // Case-insensitive like the text index (and SQLite's tokenizer); tokens of indexTokens are lower-case anyway.
    $and: tokens.map((token) => ({ [textPath]: { $regex: `(?:^| )${escapeRegex(token)}(?: |$)`, $options: 'i' } })),
  };
}

function escapeRegex(text: string): string {
  return text.replace(/[\\^$.|?*+()[\]{}#-]/g, '\\$&');
}

/** `doc.<path>` for a document field path, after validating it. */
export function docPath(field: string): string {
  assertFieldPath(field);
  return `${DOC_FIELD}.${field}`;
}

/** The physical collection of one collection of one generation of a projection. */
export function physicalCollectionName(projection: string, collection: string, generation: number): string {
  assertProjectionName(projection);
  assertCollectionName(collection);
  assertGenerationNumber(generation);
  return `rm.${projection}.${collection}.g${generation}`;
}

export function assertGenerationNumber(generation: number): void {
  if (!Number.isSafeInteger(generation) || generation < 0) {
    throw new ReadModelError(`invalid generation ${String(generation)}: use a non-negative integer`);
  }
}

function isScalar(value: unknown): value is Scalar {
  return (
    value === null ||
    typeof value === 'string' ||
    typeof value === 'boolean' ||
    (typeof value === 'number' && Number.isFinite(value))
  );
}

function invalidCondition(field: string, condition: unknown, why: string): ReadModelError {
  let shown: string;
  try {
    shown = JSON.stringify(condition) ?? String(condition);
  } catch {
    shown = String(condition);
  }
  return new ReadModelError(`invalid condition on ${JSON.stringify(field)}: ${shown} (${why})`);
}

/**
 * One field condition as a MongoDB operator expression. Equality is always written with `$eq`, so a
 * value can never be read as an operator document. MongoDB's own semantics apply: `null` (equality or in
 * `$in`) also matches a missing field, `$ne` also matches a missing field, and the range operators only
 * compare values of the operand's type (a number never matches a string bound).
 */
export function toMongoCondition(field: string, condition: FieldCondition): MongoFilter {
  if (isScalar(condition)) return { $eq: condition };
  if (typeof condition !== 'object' || Array.isArray(condition)) {
    throw invalidCondition(field, condition, 'expected a string, a finite number, a boolean, null or one operator');
  }
  const entries = Object.entries(condition);
  const [operator, operand] = entries[0] ?? [];
  if (entries.length === 1 && operator === '$in') {
    if (!Array.isArray(operand) || !operand.every(isScalar)) throw invalidCondition(field, condition, '$in takes an array of strings, finite numbers, booleans or nulls');
    return { $in: [...operand] };
  }
  if (entries.length === 1 && operator === '$ne') {
    if (!isScalar(operand)) throw invalidCondition(field, condition, '$ne takes a string, a finite number, a boolean or null');
    return { $ne: operand };
  }
  // Anything else is a range (one bound, or a lower and an upper one), checked as every adapter checks it.
  return Object.fromEntries(rangeBounds(field, condition));
}

/** The port's filter (every condition must hold) as a MongoDB filter on the stored documents. */
export function toMongoFilter(filter?: Query['filter']): MongoFilter {
  const result: MongoFilter = {};
  if (filter === undefined) return result;
  if (filter === null || typeof filter !== 'object' || Array.isArray(filter)) {
    throw new ReadModelError('invalid filter: expected an object of field conditions');
  }
  for (const [field, condition] of Object.entries(filter)) {
    result[docPath(field)] = toMongoCondition(field, condition);
  }
  return result;
}

/**
 * A keyset condition (Query.after) as a MongoDB filter, to AND with the query's filter: the documents after
 * the given sort values and id, key by key. null and missing fields order first ascending and last
 * descending, as MongoDB sorts them; `{field: null}` matches both.
 */
export function toMongoAfter(sort: Query['sort'], after: NonNullable<Query['after']>): MongoFilter {
  const keys = (sort ?? []).map(([field, direction]) => [docPath(field), direction] as const);
  const descending = keys.at(-1)?.[1] === 'desc';
  const or: MongoFilter[] = [];
  for (let i = 0; i <= keys.length; i++) {
    const clause: MongoFilter[] = [];
    for (let j = 0; j < i; j++) clause.push({ [keys[j]![0]]: after.values[j] === null ? null : { $eq: after.values[j] } });
    if (i === keys.length) {
      clause.push({ _id: { [descending ? '$lt' : '$gt']: after.id } });
    } else {
      const [path, direction] = keys[i]!;
      const value = after.values[i];
      if (direction === 'asc') clause.push(value === null ? { [path]: { $ne: null } } : { [path]: { $gt: value } });
      else if (value === null) continue;
      else clause.push({ $or: [{ [path]: { $lt: value } }, { [path]: null }] });
    }
    or.push(clause.length === 1 ? clause[0]! : { $and: clause });
  }
  return or.length === 1 ? or[0]! : { $or: or };
}

/**
 * The port's sort as a MongoDB sort. The stored `_id` (the document id) always comes last as a tie-breaker,
 * so that equal sort keys, and queries without a sort, come back in one stable order (by id) and offsets
 * page through them without gaps or repeats. A field named twice counts where it is first named.
 */
export function toMongoSort(sort?: Query['sort']): MongoSort {
  const result: MongoSort = [];
  const seen = new Set<string>();
  for (const entry of sort ?? []) {
    if (!Array.isArray(entry) || entry.length !== 2) throw new ReadModelError('invalid sort: expected [field, "asc" | "desc"] pairs');
    const [field, direction] = entry as readonly [string, unknown];
    if (direction !== 'asc' && direction !== 'desc') {
      throw new ReadModelError(`invalid sort direction ${JSON.stringify(direction)} for ${JSON.stringify(field)}: use "asc" or "desc"`);
    }
    const path = docPath(field);
    if (seen.has(path)) continue;
    seen.add(path);
    result.push([path, direction === 'asc' ? 1 : -1]);
  }
  // Ties by id, in the direction of the last sort key (Query.sort); every non-unique index ends the same way.
  result.push(['_id', result.length > 0 ? result[result.length - 1]![1] : 1]);
  return result;
}

function assertCount(name: string, value: unknown): asserts value is number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
    throw new ReadModelError(`invalid ${name} ${String(value)}: use a non-negative integer`);
  }
}

/**
 * Skip and limit of a query. The limit defaults to, and is capped at, MAX_QUERY_LIMIT. A limit of 0 is
 * returned as 0 and means "no documents" (the caller must not pass it to MongoDB, where 0 means no limit).
 */
export function toMongoPaging(query?: Pick<Query, 'limit' | 'offset'>): { skip: number; limit: number } {
  const limit = query?.limit ?? MAX_QUERY_LIMIT;
  const skip = query?.offset ?? 0;
  assertCount('limit', limit);
  assertCount('offset', skip);
  return { skip, limit: Math.min(limit, MAX_QUERY_LIMIT) };
}

/**
 * A batch's final writes to one collection, in the order they are applied (ReadModelStore.commit): the
 * deletes (which only free unique values), then the puts by position.
 */
export function planCollectionWrites<W extends { doc: unknown; position: bigint }>(writes: readonly W[]): { deletes: W[]; puts: W[] } {
  const deletes = writes.filter((w) => w.doc === null);
  const puts = writes.filter((w) => w.doc !== null).sort((a, b) => (a.position < b.position ? -1 : a.position > b.position ? 1 : 0));
  return { deletes, puts };
}

/** Suffix of the index that enforces a unique IndexSpec (see toMongoIndexes). */
export const UNIQUE_INDEX_SUFFIX = '__unique';

/**
 * The MongoDB indexes of an IndexSpec:
 * - under the spec's name, the index queries use: `doc.<field>` in the declared order, then the id (the
 *   tie-break of sorted queries, Query.sort), so the index serves the whole sort;
 * - for a unique spec, also `<name>__unique`: unique and sparse over the document's key in it
 *   (`_unique.<name>`, see mongo-unique-keys.ts), which only documents whose indexed fields are all non-null
 *   hold: uniqueness with SQL's null semantics, without a partial index.
 */
export function toMongoIndexes(spec: IndexSpec): MongoIndex[] {
  // Checked as on SQLite, and left out: a MongoDB index holds only its keys (see IndexSpec.include).
  assertIndexOptions(spec);
  const lookup = toMongoIndex({ ...spec, unique: false });
  if (!spec.unique) return [lookup];
  return [lookup, { name: `${spec.name}${UNIQUE_INDEX_SUFFIX}`, key: { [`${UNIQUE_KEYS_FIELD}.${spec.name}`]: 1 }, unique: true, sparse: true }];
}

/** The query index of an IndexSpec (see toMongoIndexes). */
function toMongoIndex(spec: IndexSpec): MongoIndex {
  if (typeof spec.name !== 'string' || !INDEX_NAME.test(spec.name)) {
    throw new ReadModelError(`invalid index name ${JSON.stringify(spec.name)}: use [a-z0-9_]`);
  }
  if (!Array.isArray(spec.fields) || spec.fields.length === 0) {
    throw new ReadModelError(`index ${spec.name} names no field`);
  }
  const key: Record<string, 1 | -1> = {};
  for (const [field, direction] of spec.fields) {
    const path = docPath(field);
    if (direction !== 1 && direction !== -1) {
      throw new ReadModelError(`invalid direction ${JSON.stringify(direction)} for ${JSON.stringify(field)} in index ${spec.name}: use 1 or -1`);
    }
    if (path in key) throw new ReadModelError(`index ${spec.name} names ${JSON.stringify(field)} twice`);
    key[path] = direction;
  }
  // The id tie-break of sorted queries (Query.sort), so that the index serves the whole sort.
  key['_id'] = spec.fields[spec.fields.length - 1]![1];
  if (spec.unique) throw new ReadModelError(`index ${spec.name}: a unique index is made by toMongoIndexes`);
  return { name: spec.name, key };
}
