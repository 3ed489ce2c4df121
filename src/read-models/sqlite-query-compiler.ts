/**
 * The SQL compiler of the SQLite read-model store's queries: a Query's filter, sort, text condition and keyset
 * (Query.after) as the WHERE, ORDER BY and FROM of a SELECT over a collection's table (as `d`), with its
 * parameters. Builds strings only: the store prepares and runs them.
 */
import { sqlParameter } from './document-values.ts';
import type { Columns } from './sqlite-document-columns.ts';
import { fieldExpression, searchTableName, tableName } from './sqlite-document-sql.ts';
import { ReadModelError, assertTextTokens, type FieldCondition, type ModelTarget, type Query } from './read-model-store.ts';
import { RANGE_OPERATORS, rangeBounds } from './range-bounds.ts';

/** The FROM and WHERE of a query (see fromClause), with their parameters and the search table it joins, if any. */
export interface From {
  sql: string;
  params: unknown[];
  search: string | null;
}

/**
 * The ORDER BY keys of every read: the sort keys, then `relevance` (bm25 of a text search without a sort),
 * then the id tie-break in the direction of the last sort key, which the declared indexes end with.
 */
export function orderBy(sort: Query['sort'], relevance?: string): string {
  const order = (sort ?? []).map(([field, direction]) => `${fieldExpression(field)} ${direction === 'desc' ? 'DESC' : 'ASC'}`);
  if (relevance !== undefined) order.push(relevance);
  order.push(`d.id ${sort?.at(-1)?.[1] === 'desc' ? 'DESC' : 'ASC'}`);
  return order.join(', ');
}

export function whereClause(filter: Query['filter']): { where: string; params: unknown[] } {
  const clauses: string[] = [];
  const params: unknown[] = [];
  for (const [field, condition] of Object.entries(filter ?? {})) {
    const expr = fieldExpression(field);
    const [sql, values] = conditionSql(expr, condition);
    clauses.push(sql);
    params.push(...values);
  }
  return { where: clauses.length ? ` WHERE ${clauses.join(' AND ')}` : '', params };
}

function conditionSql(expr: string, condition: FieldCondition): [string, unknown[]] {
  if (condition === null) return [`${expr} IS NULL`, []];
  if (typeof condition !== 'object') return [`${expr} = ?`, [sqlParameter(condition)]];
  if (('$in' in condition || '$ne' in condition) && Object.keys(condition).length !== 1) {
    throw new ReadModelError(`invalid condition ${JSON.stringify(condition)}: $in and $ne stand alone`);
  }
  if ('$in' in condition) {
    // As on MongoDB, null in the list also matches a missing field.
    const values = condition.$in.filter((v) => v !== null);
    const orNull = values.length < condition.$in.length ? [`${expr} IS NULL`] : [];
    const parts = [...(values.length ? [`${expr} IN (${values.map(() => '?').join(', ')})`] : []), ...orNull];
    return [parts.length ? `(${parts.join(' OR ')})` : '0', values.map(sqlParameter)];
  }
  if ('$ne' in condition) return [condition.$ne === null ? `${expr} IS NOT NULL` : `${expr} IS NOT ?`, condition.$ne === null ? [] : [sqlParameter(condition.$ne)]];
  const bounds = rangeBounds(expr, condition);
  return [bounds.map(([operator]) => `${expr} ${RANGE_OPERATORS[operator]} ?`).join(' AND '), bounds.map(([, operand]) => operand)];
}

/**
 * The FROM and WHERE of a query: the documents as `d`, joined with the search table on rowid when
 * there is a text condition. Null when the text condition is empty (it matches nothing): the caller then
 * checks the collection can be searched.
 */
export function fromClause(target: ModelTarget, collection: string, filter: Query['filter'], text: Query['text']): From | null {
  const table = tableName(target, collection);
  const { where, params } = whereClause(filter);
  if (text === undefined) return { sql: `"${table}" d${where}`, params, search: null };
  assertTextTokens(text);
  const search = searchTableName(target, collection);
  if (text.length === 0) return null;
  const match = text.map((token) => `"${token.replaceAll('"', '""')}"`).join(' ');
  return {
    sql: `"${search}" JOIN "${table}" d ON d.rowid = "${search}".rowid WHERE "${search}" MATCH ?${where ? ` AND ${where.slice(' WHERE '.length)}` : ''}`,
    params: [match, ...params],
    search,
  };
}

/**
 * The conditions of a keyset page (Query.after): the documents after the given one, read as consecutive
 * segments that each walk an index range (each condition with its parameters, in reading order). One sort
 * key: ascending, null values come first, so after a null value the rest of the nulls and then every value;
 * descending, values first and then the nulls. More keys: one condition spelling out the order key by key.
 */
export function keysetSegments(sort: NonNullable<Query['sort']>, after: NonNullable<Query['after']>): Array<[string, unknown[]]> {
  const { values, id } = after;
  const descending = sort.at(-1)?.[1] === 'desc';
  const idAfter: [string, unknown[]] = [`d.id ${descending ? '<' : '>'} ?`, [id]];
  let segments: Array<[string, unknown[]]>;
  if (sort.length === 0) {
    segments = [idAfter];
  } else if (sort.length === 1) {
    const key = fieldExpression(sort[0]![0]);
    const value = values[0]!;
    if (value === null) {
      segments = descending ? [[`${key} IS NULL AND ${idAfter[0]}`, [id]]] : [[`${key} IS NULL AND ${idAfter[0]}`, [id]], [`${key} IS NOT NULL`, []]];
    } else {
      // The redundant bound on the key alone lets SQLite walk the index range (it does not for the row value).
      const rows: [string, unknown[]] = [`${key} ${descending ? '<=' : '>='} ? AND (${key}, d.id) ${descending ? '<' : '>'} (?, ?)`, [value, value, id]];
      segments = descending ? [rows, [`${key} IS NULL`, []]] : [rows];
    }
  } else {
    const clauses: string[] = [];
    const params: unknown[] = [];
    for (let i = 0; i <= sort.length; i++) {
      const parts: string[] = [];
      const partParams: unknown[] = [];
      for (let j = 0; j < i; j++) {
        const key = fieldExpression(sort[j]![0]);
        if (values[j] === null) parts.push(`${key} IS NULL`);
        else {
          parts.push(`${key} = ?`);
          partParams.push(values[j]);
        }
      }
      if (i === sort.length) {
        parts.push(idAfter[0]);
        partParams.push(id);
      } else {
        const key = fieldExpression(sort[i]![0]);
        const value = values[i];
        if (sort[i]![1] === 'asc') {
          if (value === null) parts.push(`${key} IS NOT NULL`);
          else {
            parts.push(`${key} > ?`);
            partParams.push(value);
          }
        } else {
          if (value === null) continue;
          parts.push(`(${key} < ? OR ${key} IS NULL)`);
          partParams.push(value);
        }
      }
      clauses.push(`(${parts.join(' AND ')})`);
      params.push(...partParams);
    }
    segments = [[`(${clauses.join(' OR ')})`, params]];
  }
  return segments;
}

/** The SQL of plain queries (see PlainQueries.of), one per shape. */
export interface PlainQuery {
  sql: string;
  params: unknown[];
  table: string;
}

/** The plain queries' SQL, made once per shape (see of). */
export class PlainQueries {
  /** SQL of plain queries by shape. */
  readonly #plainSql = new Map<string, string>();

  /**
   * The statement and parameters of the most common read, made once per shape: equality conditions on
   * scalars only, a sort or none, no text or keyset (a single document by a unique key, a list page).
   * Undefined for any other query, which findWithIds builds as it comes. The same SQL string each time also
   * makes the statement lookup cheap (its hash is kept with the string).
   *
   * An offset needs no separate read of the page's row ids first: when an index serves the filter and the
   * sort, SQLite steps over the skipped index entries and seeks a document only for the rows it returns
   * (deferred seek); at offset 4,980 of 10,000 that one statement took ~170 µs where ids-then-documents
   * took ~210.
   */
  of(target: ModelTarget, collection: string, query: Query, doc: Columns): PlainQuery | undefined {
    if (query.text !== undefined) return undefined;
    const table = tableName(target, collection);
    let key = `${table}\n${doc.id}\n`;
    const params: unknown[] = [];
    for (const field in query.filter) {
      const value = query.filter[field];
      if (typeof value !== 'string' && typeof value !== 'number' && typeof value !== 'boolean') return undefined;
      params.push(sqlParameter(value));
      // Checks the name (once per name): no valid one holds the separators, so no two shapes share a key.
      fieldExpression(field);
      key += `${field}\u0001`;
    }
    key += '\n';
    for (const [field, direction] of query.sort ?? []) {
      fieldExpression(field);
      key += `${field} ${direction === 'desc' ? 'desc' : 'asc'}\u0001`;
    }
    let sql = this.#plainSql.get(key);
    if (sql === undefined) {
      const { where } = whereClause(query.filter);
      sql = `SELECT ${doc.select} FROM "${table}" d${where} ORDER BY ${orderBy(query.sort)} LIMIT +? OFFSET +?`;
      if (this.#plainSql.size > 1_000) this.#plainSql.clear();
      this.#plainSql.set(key, sql);
    }
    return { sql, params, table };
  }
}
