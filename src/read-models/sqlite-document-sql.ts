/**
 * The names and field expressions of the SQLite read-model store's SQL: the table of each collection of each
 * generation, its search table, and the json_extract expressions of document fields that declared indexes and
 * queries share (so that SQLite picks the indexes).
 */
import { ReadModelError, assertCollectionName, assertFieldPath, assertProjectionName, type ModelTarget } from './read-model-store.ts';

/**
 * The JSON text of a top-level field of a document, as a find with Query.fields reads it. NULL when the
 * document has no such field.
 */
export function fieldColumnExpression(doc: string, field: string): string {
  return `${doc} -> '$.${field}'`;
}

/** Names checked and made once: every query names its table and fields, and reads are the hot path. */
const tableNames = new Map<string, string>();
const fieldExpressions = new Map<string, string>();

/** Table of one collection of one generation. Projection names hold no '_', so the name is unambiguous. */
export function tableName(target: ModelTarget, collection: string): string {
  const key = `${target.projection}\n${collection}\n${target.generation}`;
  let name = tableNames.get(key);
  if (name === undefined) {
    assertProjectionName(target.projection);
    assertCollectionName(collection);
    if (!Number.isSafeInteger(target.generation) || target.generation < 1) throw new ReadModelError(`invalid generation ${target.generation}`);
    name = `rm_${target.projection.replaceAll('-', '_')}__${collection}__g${target.generation}`;
    if (tableNames.size > 10_000) tableNames.clear();
    tableNames.set(key, name);
  }
  return name;
}

/**
 * The FTS5 table of a collection's search tokens. Its own prefix: no document table or index name
 * (all "rm_...") can collide with it or with the shadow tables FTS5 adds ("<name>_data", ...).
 */
export function searchTableName(target: ModelTarget, collection: string): string {
  return `fts_${tableName(target, collection).slice('rm_'.length)}`;
}

/** The textField's value when it is a string, else NULL. */
export function textExpression(doc: string, field: string): string {
  assertFieldPath(field);
  return `(CASE WHEN json_type(${doc}, '$.${field}') = 'text' THEN json_extract(${doc}, '$.${field}') END)`;
}

export function fieldExpression(field: string): string {
  let expression = fieldExpressions.get(field);
  if (expression === undefined) {
    assertFieldPath(field);
    expression = `json_extract(doc, '$.${field}')`;
    if (fieldExpressions.size > 10_000) fieldExpressions.clear();
    fieldExpressions.set(field, expression);
  }
  return expression;
}
