/**
 * What a find of the SQLite read-model store selects of each document and how it reads its statement's rows:
 * the whole document, the fields of Query.fields, or findStrings' one string.
 */
import type Database from 'better-sqlite3';
import type { PageColumns } from './sqlite-deep-pages.ts';
import { fieldColumnExpression, textExpression } from './sqlite-document-sql.ts';
import { assertFields, type Document, type Query } from './read-model-store.ts';

/** A row of a find of documents, as the statement gives it in raw mode: the document's id, then the columns of its DocumentColumns. */
export type DocumentRow = unknown[];

/** What a find selects of each document (PageColumns.select, table alias d), and how its statement is read. */
export interface Columns extends PageColumns {
  /** Tells these columns from others (in keys of prepared SQL). */
  id: number;
}

/** Columns that make a Document of a row (find, findWithIds): the id, then the document or its fields. */
export interface DocumentColumns extends Columns {
  decode(row: DocumentRow): Document;
}

/**
 * The rows of a find's statement (null: the generation does not exist), as its columns read them. Never rows
 * as objects (a property per column on an object per row): a list page of 20 read in ~17 µs as arrays
 * against ~19.5 as objects, and in ~8.5 as the plucked strings of findStrings. Each SELECT list is read
 * one way only, so a prepared statement is never switched back.
 */
export function rowsOf(columns: Columns, statement: Database.Statement | null, params: unknown[]): unknown[] {
  return statement ? columns.read(statement, params) : [];
}

const readRaw = (statement: Database.Statement, params: unknown[]): unknown[] => statement.raw(true).all(...params);
const readPlucked = (statement: Database.Statement, params: unknown[]): unknown[] => statement.pluck(true).all(...params);

const WHOLE_DOCUMENT: DocumentColumns = { id: 0, select: 'd.id AS id, json(d.doc) AS doc', read: readRaw, decode: (row) => JSON.parse(row[1] as string) as Document };
/** By the fields' names joined with ',' (a character no valid name holds; the count tells ['a,b'] from ['a', 'b']). */
const fieldColumns = new Map<string, DocumentColumns & { count: number }>();
/** findStrings' column of each field, by its name. */
const stringColumns = new Map<string, Columns>();
let lastColumnsId = 0;

/**
 * How a query reads its documents: whole (as JSON text), or only the fields of Query.fields, one column
 * each (`->` gives a field's JSON text, SQL NULL when the document lacks it), so the rest is never decoded.
 * Checks the fields (ReadModelError) and makes their columns once per list of names: reads are the hot path.
 */
export function documentColumns(fields: Query['fields']): DocumentColumns {
  if (fields === undefined) return WHOLE_DOCUMENT;
  const key = Array.isArray(fields) ? fields.join(',') : '';
  const known = fieldColumns.get(key);
  if (known !== undefined && known.count === fields.length) return known;
  assertFields(fields);
  const names = [...fields];
  const made = {
    id: ++lastColumnsId,
    count: names.length,
    select: `d.id AS id, ${names.map((field, i) => `${fieldColumnExpression('d.doc', field)} AS f${i}`).join(', ')}`,
    read: readRaw,
    decode(row: DocumentRow): Document {
      const doc: Document = {};
      for (let i = 0; i < names.length; i++) {
        const value = row[i + 1];
        if (typeof value === 'string') doc[names[i]!] = JSON.parse(value);
      }
      return doc;
    },
  };
  if (fieldColumns.size > 1_000) fieldColumns.clear();
  fieldColumns.set(key, made);
  return made;
}

/**
 * The column of findStrings, alone (no id), read plucked: the field's string as SQLite holds it (no JSON text
 * to parse), NULL for anything else. The same expression is what an index includes (IndexSpec.include), so
 * SQLite reads it from there.
 */
export function stringColumn(field: string): Columns {
  let known = stringColumns.get(field);
  if (known === undefined) {
    assertFields([field]);
    known = { id: ++lastColumnsId, select: `${textExpression('d.doc', field)} AS s0`, read: readPlucked };
    if (stringColumns.size > 1_000) stringColumns.clear();
    stringColumns.set(field, known);
  }
  return known;
}
