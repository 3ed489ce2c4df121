/**
 * Unique indexes of the MongoDB read-model store, without partial indexes. Pure: no I/O.
 *
 * The port's unique indexes ignore documents whose indexed fields are missing or null, as SQL does. MongoDB
 * indexes a missing field as null, so a plain unique index on the fields would let one document lack them.
 * Instead, each stored document holds, under `_unique.<index name>`, its key in that index (the JSON of its
 * values) when none of them is missing or null, and nothing otherwise; a unique sparse index on that field
 * enforces it. Servers without partial indexes (FerretDB, wire-compatible cloud services) enforce it alike,
 * and so does every commit's own check (findUniqueViolation), which a journaled commit makes before it
 * records anything: a journal must never hold writes that a unique index would refuse half-way through.
 */
import { valueAt } from './document-values.ts';
import type { Document, DocumentWrite, ReadModelSchema } from './read-model-store.ts';

/** Field of a stored document holding its keys in the collection's unique indexes. */
export const UNIQUE_KEYS_FIELD = '_unique';

/** A unique index as a commit needs it: its name (IndexSpec.name) and the document fields it covers. */
export interface UniqueKeySpec {
  name: string;
  fields: readonly string[];
}

/** The unique indexes a schema declares, by collection (collections without any left out). */
export function uniqueKeySpecsOf(schema: ReadModelSchema): Record<string, UniqueKeySpec[]> {
  const specs: Record<string, UniqueKeySpec[]> = {};
  for (const [collection, spec] of Object.entries(schema.collections)) {
    const unique = (spec.indexes ?? []).filter((index) => index.unique).map((index) => ({ name: index.name, fields: index.fields.map(([field]) => field) }));
    if (unique.length > 0) specs[collection] = unique;
  }
  return specs;
}

/** The document's key in a unique index: the JSON of its values, or null when one is missing or null (not indexed). */
export function uniqueKeyOf(doc: Readonly<Document>, fields: readonly string[]): string | null {
  const values: unknown[] = [];
  for (const field of fields) {
    const value = valueAt(doc, field);
    if (value === undefined || value === null) return null;
    values.push(value);
  }
  return JSON.stringify(values);
}

/** What a stored document holds under UNIQUE_KEYS_FIELD: its key in each unique index it is in; undefined when in none. */
export function uniqueKeysOf(doc: Readonly<Document>, specs: readonly UniqueKeySpec[]): Record<string, string> | undefined {
  let keys: Record<string, string> | undefined;
  for (const spec of specs) {
    const key = uniqueKeyOf(doc, spec.fields);
    if (key !== null) (keys ??= {})[spec.name] = key;
  }
  return keys;
}

export interface UniqueViolation {
  index: string;
  /** The document whose write would take a key another holds. */
  id: string;
  /** The document that holds it. */
  holder: string;
}

/**
 * Applies one collection's writes to the keys of its unique indexes as the commit applies them (the deletes,
 * then the puts in position order: see planCollectionWrites), and answers the first write that would take a
 * key another document holds, or null. `stored` holds the stored documents of the written ids (absent:
 * none stored), `holders` the stored documents that hold any of the keys the puts take: together, every
 * document whose key can matter. Stale writes (not newer than the stored document) must be left out.
 */
export function findUniqueViolation(
  specs: readonly UniqueKeySpec[],
  deletes: readonly Pick<DocumentWrite, 'id'>[],
  puts: readonly Pick<DocumentWrite, 'id' | 'doc'>[],
  stored: ReadonlyMap<string, Readonly<Document>>,
  holders: readonly { id: string; doc: Readonly<Document> }[],
): UniqueViolation | null {
  for (const spec of specs) {
    const holderOf = new Map<string, string>();
    const keyOf = new Map<string, string | null>();
    for (const { id, doc } of holders) {
      const key = uniqueKeyOf(doc, spec.fields);
      if (key !== null && !stored.has(id)) holderOf.set(key, id);
    }
    for (const [id, doc] of stored) {
      const key = uniqueKeyOf(doc, spec.fields);
      keyOf.set(id, key);
      if (key !== null) holderOf.set(key, id);
    }
    const release = (id: string) => {
      const key = keyOf.get(id);
      if (key !== undefined && key !== null && holderOf.get(key) === id) holderOf.delete(key);
      keyOf.set(id, null);
    };
    for (const { id } of deletes) release(id);
    for (const { id, doc } of puts) {
      release(id);
      const key = uniqueKeyOf(doc!, spec.fields);
      if (key === null) continue;
      const holder = holderOf.get(key);
      if (holder !== undefined && holder !== id) return { index: spec.name, id, holder };
      holderOf.set(key, id);
      keyOf.set(id, key);
    }
  }
  return null;
}
