/**
 * The SQLite read-model store's reads of documents (get, find, count, queryPlan), on the event loop's
 * connection in the turn's read transaction (LoopConnection.readStmt): the SQL is the query compiler's
 * (sqlite-query-compiler.ts), deep pages of sorted lists are counted (SqliteDeepPages).
 */
import type Database from 'better-sqlite3';
import { DEEP_OFFSET, type SqliteDeepPages } from './sqlite-deep-pages.ts';
import { documentColumns, rowsOf, stringColumn, type Columns, type DocumentRow } from './sqlite-document-columns.ts';
import { searchTableName, tableName } from './sqlite-document-sql.ts';
import type { LoopConnection } from './sqlite-loop-connection.ts';
import { PlainQueries, fromClause, keysetSegments, orderBy, type From } from './sqlite-query-compiler.ts';
import { MAX_QUERY_LIMIT, ReadModelError, assertAfter, assertGetManyIds, type Document, type DocumentEntry, type ModelTarget, type Query } from './read-model-store.ts';

export class SqliteDocumentReads {
  readonly #conn: LoopConnection;
  /** Counts of the sorted lists read deep, so that a deep page does not walk every entry before it. */
  readonly #deepPages: SqliteDeepPages;
  /** Deep pages read so far (deepPageReads). */
  readonly #deepPageReads = { counted: 0, offset: 0 };
  /** SQL of plain queries by shape (see PlainQueries). */
  readonly #plainQueries = new PlainQueries();

  constructor(conn: LoopConnection, deepPages: SqliteDeepPages) {
    this.#conn = conn;
    this.#deepPages = deepPages;
  }

  deepPageReads(): { counted: number; offset: number } {
    return { ...this.#deepPageReads };
  }

  async get(target: ModelTarget, collection: string, id: string): Promise<Document | null> {
    const statement = this.#conn.readStmt(`SELECT json(doc) AS doc FROM "${tableName(target, collection)}" WHERE id = ?`);
    // Plucked: the JSON text itself, no row object around it (this statement is read no other way).
    const json = statement?.pluck(true).get(id) as string | undefined;
    return json === undefined ? null : (JSON.parse(json) as Document);
  }

  async getMany(target: ModelTarget, collection: string, ids: readonly string[]): Promise<DocumentEntry[]> {
    assertGetManyIds(ids);
    if (ids.length === 0) return [];
    // One statement for any number of ids: they arrive as one JSON array.
    const statement = this.#conn.readStmt(`SELECT id, json(doc) AS doc FROM "${tableName(target, collection)}" WHERE id IN (SELECT value FROM json_each(?))`);
    const rows = (statement?.all(JSON.stringify(ids)) ?? []) as Array<{ id: string; doc: string }>;
    return rows.map((row) => ({ id: row.id, doc: JSON.parse(row.doc) as Document }));
  }

  async find(target: ModelTarget, collection: string, query: Query = {}): Promise<Document[]> {
    return (await this.findWithIds(target, collection, query)).map((entry) => entry.doc);
  }

  async findWithIds(target: ModelTarget, collection: string, query: Query = {}): Promise<DocumentEntry[]> {
    const doc = documentColumns(query.fields);
    return (this.#findRows(target, collection, query, doc) as DocumentRow[]).map((row) => ({ id: row[0] as string, doc: doc.decode(row) }));
  }

  async findStrings(target: ModelTarget, collection: string, query: Omit<Query, 'fields'>, field: string): Promise<Array<string | null>> {
    return this.#findRows(target, collection, query, stringColumn(field)).map((value) => (typeof value === 'string' ? value : null));
  }

  /** The rows a find reads, as `doc` selects and reads them. */
  #findRows(target: ModelTarget, collection: string, query: Query, doc: Columns): unknown[] {
    assertAfter(query);
    if (query.after !== undefined) return this.#findAfter(target, collection, query, doc);
    const plain = this.#plainQueries.of(target, collection, query, doc);
    const limit = Math.min(query.limit ?? MAX_QUERY_LIMIT, MAX_QUERY_LIMIT);
    const offset = Math.max(0, query.offset ?? 0);
    if (plain) {
      if (offset >= DEEP_OFFSET && query.sort?.length) {
        const deep = this.#deepPages.page(plain.table, (query.filter ?? {}) as Record<string, string | number | boolean>, query.sort, doc, limit, offset);
        if (deep !== undefined) {
          this.#deepPageReads.counted++;
          return deep;
        }
        this.#deepPageReads.offset++;
      }
      return rowsOf(doc, this.#conn.readStmt(plain.sql), [...plain.params, limit, offset]);
    }
    const from = this.#from(target, collection, query.filter, query.text);
    if (!from) return [];
    // bm25: lower is more relevant (more occurrences of rarer tokens, in a shorter text).
    const relevance = query.sort === undefined && from.search ? `bm25("${from.search}") ASC` : undefined;
    const sql = `SELECT ${doc.select} FROM ${from.sql} ORDER BY ${orderBy(query.sort, relevance)} LIMIT +? OFFSET +?`;
    return rowsOf(doc, this.#fromStmt(sql, target, collection, from), [...from.params, limit, offset]);
  }

  /**
   * SQLite's plan (EXPLAIN QUERY PLAN, one line per step) for a find of the common shape (equality filter, sort,
   * Query.fields; see PlainQueries.of), or with `stringsOf` for findStrings of that field: whether an index serves
   * it, and whether the index alone does (COVERING).
   * A diagnostic, for tests and for whoever wonders why a read is slow.
   */
  queryPlan(target: ModelTarget, collection: string, query: Query = {}, stringsOf?: string): string[] {
    const plain = this.#plainQueries.of(target, collection, query, stringsOf === undefined ? documentColumns(query.fields) : stringColumn(stringsOf));
    if (!plain || query.after !== undefined) throw new ReadModelError('queryPlan explains finds by equality, sort and fields only');
    const rows = this.#conn.stmt(`EXPLAIN QUERY PLAN ${plain.sql}`).all(...plain.params, query.limit ?? MAX_QUERY_LIMIT, query.offset ?? 0) as Array<{ detail: string }>;
    return rows.map((row) => row.detail);
  }

  /**
   * A keyset page (Query.after): the documents after the given one, read as consecutive segments that each
   * walk an index range (keysetSegments).
   */
  #findAfter(target: ModelTarget, collection: string, query: Query, doc: Columns): unknown[] {
    const sort = query.sort ?? [];
    const limit = Math.min(query.limit ?? MAX_QUERY_LIMIT, MAX_QUERY_LIMIT);
    const segments = keysetSegments(sort, query.after!);
    const order = orderBy(sort);
    const found: unknown[] = [];
    for (const [condition, params] of segments) {
      if (found.length >= limit) break;
      const from = this.#from(target, collection, query.filter, query.text);
      if (!from) return [];
      const where = from.sql.includes(' WHERE ') ? ` AND ${condition}` : ` WHERE ${condition}`;
      const sql = `SELECT ${doc.select} FROM ${from.sql}${where} ORDER BY ${order} LIMIT +?`;
      found.push(...rowsOf(doc, this.#fromStmt(sql, target, collection, from), [...from.params, ...params, limit - found.length]));
    }
    return found;
  }

  async count(target: ModelTarget, collection: string, filter?: Query['filter'], text?: Query['text']): Promise<number> {
    const from = this.#from(target, collection, filter, text);
    if (!from) return 0;
    // Without a filter the search table alone answers: the triggers keep exactly one row in it per
    // document with tokens, so the join (a read of every matching document) would change nothing.
    const sql =
      from.search && Object.keys(filter ?? {}).length === 0
        ? `SELECT count(*) AS n FROM "${from.search}" WHERE "${from.search}" MATCH ?`
        : `SELECT count(*) AS n FROM ${from.sql}`;
    const row = this.#fromStmt(sql, target, collection, from)?.get(...from.params) as { n: number } | undefined;
    return Number(row?.n ?? 0);
  }

  /**
   * The FROM and WHERE of a query (fromClause). Null when the text condition is empty (it matches nothing),
   * after checking the collection can be searched.
   */
  #from(target: ModelTarget, collection: string, filter: Query['filter'], text: Query['text']): From | null {
    const from = fromClause(target, collection, filter, text);
    if (from === null) this.#assertSearchable(target, collection);
    return from;
  }

  /** A read statement; null when the generation does not exist, ReadModelError when a searched collection has no textField. */
  #fromStmt(sql: string, target: ModelTarget, collection: string, from: { search: string | null }): Database.Statement | null {
    const statement = this.#conn.readStmt(sql);
    if (!statement && from.search) this.#assertSearchable(target, collection);
    return statement;
  }

  #assertSearchable(target: ModelTarget, collection: string): void {
    const exists = this.#conn.stmt(`SELECT name FROM sqlite_schema WHERE type = 'table' AND name IN (?, ?)`)
      .all(tableName(target, collection), searchTableName(target, collection)) as Array<{ name: string }>;
    if (exists.length === 1 && exists[0]!.name === tableName(target, collection)) {
      throw new ReadModelError(`collection ${collection} of ${target.projection} has no textField: it cannot be searched`);
    }
  }
}
