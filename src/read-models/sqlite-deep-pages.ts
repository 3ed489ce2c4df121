/**
 * Deep pages of the SQLite read-model store in bounded time. `LIMIT 20 OFFSET 4980` makes SQLite step over
 * 4,980 index entries (~28 ns each: 140 µs at page 250, 2.8 ms at offset 100,000); the cost grows with the
 * page number, and a crawler asking for the deepest pages makes every request the most expensive one.
 *
 * For a sorted list that is read deep (one filter's values and one sort, e.g. a form set's entries in one
 * locale by publishedAt), this keeps its keys counted in blocks of ~32 (counted-blocks.ts): the page at
 * offset k starts at most one block's walk after a known key, whatever k is. The blocks are built from the
 * index on the first deep read of the list (one walk of it), and kept exact by the store's commits, which
 * tell this every document they change in a table it counts (its values before, the document after).
 *
 * Which commits the counts hold is known by number: every commit of documents adds one to the file's count
 * (document_commits), which a deep read reads in its own read transaction. The counts serve a read that sees
 * the commits they hold, no more and no fewer. The store's commits run on its writer thread and are told
 * here once they have committed, so a read may see a commit of this store's not told yet: it is left to
 * OFFSET, and the counts go on once the commit is told. A commit by another connection (another process)
 * is a number no commit of this store's accounts for: the counts are dropped, and rebuilt on a later deep
 * read once the file has been quiet for a second. Lists whose later sort keys hold NULL, or whose keys are
 * not scalars, are left to OFFSET.
 */
import type Database from 'better-sqlite3';
import { sqlParameter, valueAt } from './document-values.ts';
import { CountedBlocks, sortKeyOrder, type SortDirection, type SortKey, type SqlValue } from './counted-blocks.ts';

/**
 * Keys per block when built; a block is cut in two above twice this. A page starts with a walk of up to a
 * block's keys, each checked against the block's start (~60 ns): page 250 of 10,000 (skip 116 with blocks of
 * 128) cost 63.5 / 57.4 µs a request that way, 50.9 / 50.0 with blocks of 32 (64: 53.7). Smaller blocks mean
 * more of them to walk past in `locate` (3,125 for a list of 100,000) and more cuts as a list grows.
 */
export const BLOCK_SIZE = 32;
/** Offsets from which a page is found through the blocks; below, SQLite steps over the entries itself. */
export const DEEP_OFFSET = 2 * BLOCK_SIZE;
/** Lists counted at once (least recently read dropped first). */
const MAX_LISTS = 64;
/** Time that building lists may take per second; beyond it, deep pages use OFFSET until the next second. */
const BUILD_BUDGET_MS_PER_SECOND = 200;
/** How long the file must go without another connection's commit before lists are built again. */
const QUIET_BEFORE_BUILD_MS = 1_000;
/** How long a list found not countable (NULL in a later sort key) is left to OFFSET before it is tried again. */
const UNCOUNTABLE_RETRY_MS = 60_000;

type Scalar = string | number | boolean;
/** What the rows of a page are: the SELECT list (table alias d), and how a statement of it is read (raw, plucked). */
export interface PageColumns {
  select: string;
  read(statement: Database.Statement, params: unknown[]): unknown[];
}

/** What the store lends this: its SQL for a field and an order, and its prepared statements. */
export interface DeepPagesSql {
  field(path: string): string;
  orderBy(sort: ReadonlyArray<readonly [string, SortDirection]>): string;
  /** A prepared statement, or null when the table does not exist (a generation dropped meanwhile). */
  statement(sql: string): Database.Statement | null;
}

/** A document write to a counted table, as the commit saw it. */
export interface CountedWrite {
  table: string;
  /** The table's counted fields of the document before the write (countedFieldsBefore); undefined if it had none. */
  before: CountedValues | undefined;
  id: string;
  /** The document after the write; null when it was removed. */
  doc: Record<string, unknown> | null;
}

/** A document's values of a table's counted fields, with the fields they were read for (a list dropped later in the same commit changes the table's fields). */
export interface CountedValues {
  fields: readonly string[];
  values: readonly SqlValue[];
}

/** The lists counted in one table. */
interface CountedTable {
  lists: Set<SortedList>;
  /** The fields of the lists' filters and sorts, each once: the values countedFieldsBefore reads, in this order. */
  fields: string[];
  /** The SELECT of a document's values of `fields`, by id (made when the lists change, not at each write). */
  selectFields: string;
}

class SortedList {
  readonly order: (a: SortKey, b: SortKey) => number;
  /** Keys whose first sort value is NULL, and the others: apart, so that a block never spans both. */
  nulls: CountedBlocks;
  values: CountedBlocks;

  /**
   * The SELECTs of pages (#walk) made so far, by the columns' SELECT list, then by part and whether the walk
   * starts after a key: the same string each time, so that the statement is found without building its SQL.
   */
  readonly walkSql = new Map<string, Array<string | undefined>>();
  /** A block grew past twice BLOCK_SIZE when it could not be cut (see #rebalance): the next deep read cuts it. */
  uncut = false;

  constructor(
    readonly key: string,
    readonly table: string,
    readonly filter: ReadonlyArray<readonly [string, SqlValue]>,
    readonly sort: ReadonlyArray<readonly [string, SortDirection]>,
  ) {
    this.order = sortKeyOrder(sort.map(([, direction]) => direction));
    this.nulls = new CountedBlocks(this.order);
    this.values = new CountedBlocks(this.order);
  }

  /** The two parts in the list's order: NULLs first ascending, last descending (as SQLite sorts). */
  get parts(): [CountedBlocks, CountedBlocks] {
    return this.sort[0]![1] === 'asc' ? [this.nulls, this.values] : [this.values, this.nulls];
  }

  partOf(key: SortKey): CountedBlocks {
    return key.values[0] === null ? this.nulls : this.values;
  }
}

export class SqliteDeepPages {
  readonly #lists = new Map<string, SortedList>();
  /** Lists whose keys could not be counted, with when that was found (so that each deep read does not walk them again). */
  readonly #uncountable = new Map<string, number>();
  /** Lists by table, the fields the table's lists are counted by, and the SELECT of a document's values of them. */
  readonly #byTable = new Map<string, CountedTable>();
  /** The count of document commits the counts hold (see the module's comment); undefined before the first deep read. */
  #countsAt: number | undefined;
  /** Commits of the store on their way (asked for, not yet told). */
  #inFlight = 0;
  #quietSince = -Infinity;
  #budgetSecond = 0;
  #budgetUsedMs = 0;

  constructor(
    private readonly sql: DeepPagesSql,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /**
   * The rows of the page at `offset` (deep: ≥ DEEP_OFFSET) of a list given by equality filters and a sort,
   * with the given columns; undefined to leave it to OFFSET (no usable counts, and no budget to build them).
   */
  page(table: string, filter: Readonly<Record<string, Scalar>>, sort: ReadonlyArray<readonly [string, SortDirection]>, columns: PageColumns, limit: number, offset: number): unknown[] | undefined {
    const seen = this.#commitsSeenWith(table);
    if (seen === undefined || !this.#inStep(seen.n, seen.table)) return undefined;
    const list = this.#list(table, filter, sort);
    if (!list) return undefined;
    if (list.uncut) {
      // This read sees the file as the counts hold it, so the keys to cut at are read right.
      this.#rebalance(list, () => true);
      if (!this.#lists.has(list.key)) return undefined;
    }
    const [first, second] = list.parts;
    let part = first;
    let at = offset;
    if (at >= first.total) {
      part = second;
      at -= first.total;
    }
    const position = part.locate(at);
    if (!position) return [];
    const rows = this.#walk(list, part, position.after, position.skip, limit, columns);
    if (rows === null) return undefined;
    if (rows.length < limit && part === first && second.total > 0) {
      const rest = this.#walk(list, second, undefined, 0, limit - rows.length, columns);
      if (rest === null) return undefined;
      rows.push(...rest);
    }
    return rows;
  }

  /**
   * For a commit of writes to this table: undefined if no list of it is counted; otherwise the counted fields and
   * the SELECT of a document's values of them by id, which the commit runs before each write (its `before`).
   */
  countedFields(table: string): { fields: readonly string[]; selectFields: string } | undefined {
    const counted = this.#byTable.get(table);
    return counted ? { fields: counted.fields, selectFields: counted.selectFields } : undefined;
  }

  /** A commit of the store's is on its way: reads that see it before it is told are left to OFFSET. */
  commitStarted(): void {
    this.#inFlight++;
  }

  /** A commit that did not commit, or of which it is not known (the next deep read finds out). */
  commitEnded(): void {
    this.#inFlight--;
  }

  /**
   * A commit of the store's has committed as number `n` (the file's count of document commits after it), with
   * `writes`, the documents it changed in the tables it read counted fields of (`countedTables`), among all
   * the tables it wrote (`writtenTables`).
   */
  committed(n: number, writes: readonly CountedWrite[], writtenTables: ReadonlySet<string>, countedTables: ReadonlySet<string>): void {
    this.#inFlight--;
    // Nothing counted yet, or counted from a read that saw this commit already.
    if (this.#countsAt === undefined || n <= this.#countsAt) return;
    if (n > this.#countsAt + 1) {
      // Another connection committed in between.
      this.#othersCommitted();
      this.#countsAt = undefined;
      return;
    }
    // A list counted while this commit was on its way: the commit did not read its documents' values before.
    this.forgetTables([...writtenTables].filter((table) => !countedTables.has(table)));
    if (writes.length > 0) this.#apply(writes, () => this.#commitsSeen() === n);
    this.#countsAt = n;
  }

  /**
   * Brings the counts up to date with a committed batch (in its order); a list that cannot follow is dropped.
   * `exact`: whether reads now see the file as the batch left it (no later commit), which cutting a block needs
   * (asked only then: it is a read of the file); without it the cut waits for a deep read (#rebalance).
   */
  #apply(writes: readonly CountedWrite[], exact: () => boolean): void {
    const touched = new Set<SortedList>();
    for (const write of writes) {
      const table = this.#byTable.get(write.table);
      if (!table) continue;
      const after = write.doc ? table.fields.map((field) => sqlValueOf(valueAt(write.doc!, field))) : undefined;
      for (const list of [...table.lists]) {
        try {
          const before = write.before ? keyIn(list, write.before.fields, write.before.values, write.id) : undefined;
          const now = after ? keyIn(list, table.fields, after, write.id) : undefined;
          if (before === false || now === false) throw new Error('not countable');
          if (before) list.partOf(before).remove(before);
          if (now) list.partOf(now).add(now);
          touched.add(list);
        } catch {
          this.#drop(list);
        }
      }
    }
    for (const list of touched) if (this.#lists.has(list.key)) this.#rebalance(list, exact);
  }

  /** Forgets the lists of tables that are gone (a dropped generation). */
  forgetTables(tables: Iterable<string>): void {
    for (const table of tables) for (const list of this.#byTable.get(table)?.lists ?? []) this.#drop(list);
  }

  clear(): void {
    for (const list of [...this.#lists.values()]) this.#drop(list);
    this.#uncountable.clear();
  }

  /** Lists counted now (for tests and metrics). */
  get size(): number {
    return this.#lists.size;
  }

  /** The count of document commits this read sees (in the turn's read transaction); undefined if unreadable. */
  #commitsSeen(): number | undefined {
    const value = this.sql.statement('SELECT n FROM document_commits WHERE id = 0')?.pluck().get() as number | bigint | undefined;
    return value === undefined ? undefined : Number(value);
  }

  /** As #commitsSeen, with the number of the last commit that wrote `table` (table_commits; undefined when none is recorded), in one statement. */
  #commitsSeenWith(table: string): { n: number; table: number | undefined } | undefined {
    const row = this.sql.statement('SELECT d.n, t.n FROM document_commits d LEFT JOIN table_commits t ON t.name = ? WHERE d.id = 0')?.raw(true).get(table) as
      | [number | bigint, number | bigint | null]
      | undefined;
    return row === undefined ? undefined : { n: Number(row[0]), table: row[1] === null ? undefined : Number(row[1]) };
  }

  /**
   * Whether the counts hold what a read that sees `seen` commits sees. A number not told yet may be a commit of
   * the store's on its way (not for now), or, with none on its way, another connection's: the counts are dropped.
   */
  #inStep(seen: number, tableWrittenAt: number | undefined): boolean {
    if (seen === this.#countsAt) return true;
    // Commits the counts were not told of (the store's, on their way back from its writer thread, or another
    // connection's) that wrote nothing of the list's table: its lists' counts hold what this read sees. Under
    // 20 publishes a second most commits are other projections': without this, every deep read between one of
    // them landing and its reply being handled walked the list with OFFSET (~2.8 ms at offset 100,000), which
    // made the event loop slower to handle the replies, and deep pages collapsed to ~190 requests a second.
    if (this.#countsAt !== undefined && tableWrittenAt !== undefined && seen > this.#countsAt && tableWrittenAt <= this.#countsAt) return true;
    if (this.#inFlight > 0) return false;
    if (this.#countsAt !== undefined) this.#othersCommitted();
    this.#countsAt = seen;
    return true;
  }

  #othersCommitted(): void {
    this.clear();
    this.#quietSince = this.now();
  }

  #list(table: string, filter: Readonly<Record<string, Scalar>>, sort: ReadonlyArray<readonly [string, SortDirection]>): SortedList | undefined {
    const filterEntries = Object.entries(filter).map(([field, value]) => [field, sqlParameter(value)] as const);
    const key = JSON.stringify([table, filterEntries, sort]);
    const known = this.#lists.get(key);
    if (known) {
      // Least recently read last.
      this.#lists.delete(key);
      this.#lists.set(key, known);
      return known;
    }
    const started = this.now();
    if (started - this.#quietSince < QUIET_BEFORE_BUILD_MS) return undefined;
    const foundUncountable = this.#uncountable.get(key);
    if (foundUncountable !== undefined && started - foundUncountable < UNCOUNTABLE_RETRY_MS) return undefined;
    const second = Math.floor(started / 1000);
    if (second !== this.#budgetSecond) {
      this.#budgetSecond = second;
      this.#budgetUsedMs = 0;
    }
    if (this.#budgetUsedMs >= BUILD_BUDGET_MS_PER_SECOND) return undefined;
    const list = this.#build(key, table, filterEntries, sort);
    this.#budgetUsedMs += this.now() - started;
    if (list === null) {
      if (this.#uncountable.size >= MAX_LISTS * 4) this.#uncountable.clear();
      this.#uncountable.set(key, started);
    }
    if (!list) return undefined;
    if (this.#lists.size >= MAX_LISTS) this.#drop(this.#lists.values().next().value!);
    this.#lists.set(key, list);
    const lists = new Set([...(this.#byTable.get(table)?.lists ?? []), list]);
    this.#byTable.set(table, this.#countedTable(table, lists));
    return list;
  }

  /** Counts a list from one walk of its index; null if its keys cannot be counted, undefined if its table is gone. */
  #build(key: string, table: string, filter: ReadonlyArray<readonly [string, SqlValue]>, sort: ReadonlyArray<readonly [string, SortDirection]>): SortedList | null | undefined {
    const list = new SortedList(key, table, filter, sort);
    const statement = this.sql.statement(`SELECT ${this.#keyColumns(list)} FROM "${table}" d${this.#whereSql(list, undefined, false)} ORDER BY ${this.sql.orderBy(sort)}`);
    if (!statement) return undefined;
    for (const row of statement.raw(true).iterate(...this.#whereParams(list, undefined, undefined)) as Iterable<unknown[]>) {
      const sortKey = rowKey(row, sort.length);
      if (!countable(sortKey)) return null;
      list.partOf(sortKey).append(sortKey, BLOCK_SIZE);
    }
    return list;
  }

  /** Up to `limit` rows of one part of the list, from `skip` keys after `after`; null if the table is gone. */
  #walk(list: SortedList, part: CountedBlocks, after: SortKey | undefined, skip: number, limit: number, columns: PageColumns): unknown[] | null {
    let made = list.walkSql.get(columns.select);
    if (made === undefined) list.walkSql.set(columns.select, (made = []));
    const variant = (part === list.nulls ? 2 : 0) + (after === undefined ? 0 : 1);
    const sql = (made[variant] ??= `SELECT ${columns.select} FROM "${list.table}" d${this.#whereSql(list, part, after !== undefined)} ORDER BY ${this.sql.orderBy(list.sort)} LIMIT +? OFFSET +?`);
    const statement = this.sql.statement(sql);
    return statement ? columns.read(statement, [...this.#whereParams(list, part, after), limit, skip]) : null;
  }

  /** The key of the document `skip` keys after `after` in one part of the list. */
  #keyAt(list: SortedList, part: CountedBlocks, after: SortKey | undefined, skip: number): SortKey | undefined {
    const where = this.#whereSql(list, part, after !== undefined);
    const row = this.sql.statement(`SELECT ${this.#keyColumns(list)} FROM "${list.table}" d${where} ORDER BY ${this.sql.orderBy(list.sort)} LIMIT 1 OFFSET +?`)?.raw(true).get(...this.#whereParams(list, part, after), skip) as unknown[] | undefined;
    return row ? rowKey(row, list.sort.length) : undefined;
  }

  #keyColumns(list: SortedList): string {
    return [...list.sort.map(([field]) => this.sql.field(field)), 'd.id'].join(', ');
  }

  /**
   * The WHERE of the list (its filter), of one part of it (first sort value NULL or not), and of the keys after
   * a key in that part (`afterKey`): one condition SQLite walks as an index range, because it bounds the first
   * sort key that is not NULL in the part (the later keys are never NULL in a counted list). Its parameters
   * are #whereParams'.
   */
  #whereSql(list: SortedList, part: CountedBlocks | undefined, afterKey: boolean): string {
    const clauses = list.filter.map(([field]) => `${this.sql.field(field)} = ?`);
    const keys = list.sort.map(([field]) => this.sql.field(field));
    const descending = list.sort.map(([, direction]) => direction === 'desc');
    if (part !== undefined) clauses.push(`${keys[0]} ${part === list.nulls ? 'IS NULL' : 'IS NOT NULL'}`);
    if (afterKey) {
      const from = part === list.nulls ? 1 : 0;
      if (from < keys.length) clauses.push(`${keys[from]} ${descending[from] ? '<=' : '>='} ?`);
      const alternatives: string[] = [];
      for (let i = from; i <= keys.length; i++) {
        const parts: string[] = [];
        for (let j = from; j < i; j++) parts.push(`${keys[j]} = ?`);
        parts.push(i < keys.length ? `${keys[i]} ${descending[i] ? '<' : '>'} ?` : `d.id ${descending.at(-1) ? '<' : '>'} ?`);
        alternatives.push(`(${parts.join(' AND ')})`);
      }
      clauses.push(`(${alternatives.join(' OR ')})`);
    }
    return clauses.length ? ` WHERE ${clauses.join(' AND ')}` : '';
  }

  /** The parameters of #whereSql's condition, in its order. */
  #whereParams(list: SortedList, part: CountedBlocks | undefined, after: SortKey | undefined): unknown[] {
    const params: unknown[] = list.filter.map(([, value]) => value);
    if (after !== undefined) {
      const from = part === list.nulls ? 1 : 0;
      const keys = list.sort.length;
      if (from < keys) params.push(after.values[from]);
      for (let i = from; i <= keys; i++) {
        for (let j = from; j < i; j++) params.push(after.values[j]);
        params.push(i < keys ? after.values[i] : after.id);
      }
    }
    return params;
  }

  /** Cuts blocks grown beyond twice BLOCK_SIZE (not `exact`: marks the list uncut instead), drops emptied ones. */
  #rebalance(list: SortedList, exact: () => boolean): void {
    let uncut = false;
    for (const part of [list.nulls, list.values]) {
      for (let block = 0; block < part.blockCount; block++) {
        while (!uncut && part.count(block) > 2 * BLOCK_SIZE) {
          // The key to cut at is read from the file: with a later commit in it, it might not be the one counted.
          // The block then stays whole (its count is right; a page in it walks further) until a commit or a
          // deep read that sees the file as counted. Dropping the list instead meant walking all of it again:
          // under 20 publishes a second, each moving an entry to the top of its list, that was most cuts.
          if (!exact()) {
            uncut = true;
            break;
          }
          const at = this.#keyAt(list, part, part.start(block), BLOCK_SIZE - 1);
          if (!at) return this.#drop(list);
          part.split(block, at, BLOCK_SIZE);
          block++;
        }
        if (part.dropIfEmpty(block)) block--;
      }
    }
    list.uncut = uncut;
  }

  #drop(list: SortedList): void {
    this.#lists.delete(list.key);
    const byTable = this.#byTable.get(list.table);
    if (!byTable) return;
    byTable.lists.delete(list);
    if (byTable.lists.size === 0) this.#byTable.delete(list.table);
    else this.#byTable.set(list.table, this.#countedTable(list.table, byTable.lists));
  }

  /** A table's lists and what a commit reads of each document it writes there: every field of their filters and sorts, once. */
  #countedTable(table: string, lists: Set<SortedList>): CountedTable {
    const fields = [...new Set([...lists].flatMap((list) => [...list.filter.map(([field]) => field), ...list.sort.map(([field]) => field)]))];
    return { lists, fields, selectFields: `SELECT ${fields.map((field) => this.sql.field(field)).join(', ')} FROM "${table}" WHERE id = ?` };
  }
}

/** A document's key in the list, undefined if the filter does not take it, false if it cannot be counted. */
function keyIn(list: SortedList, fields: readonly string[], values: readonly SqlValue[], id: string): SortKey | undefined | false {
  for (const [field, value] of list.filter) if (values[fields.indexOf(field)] !== value) return undefined;
  const key = { values: list.sort.map(([field]) => values[fields.indexOf(field)]!), id };
  return countable(key) ? key : false;
}

/** Whether the keys after the first are all present: the part's range condition relies on it. */
function countable(key: SortKey): boolean {
  for (let i = 1; i < key.values.length; i++) if (key.values[i] === null) return false;
  return true;
}

function rowKey(row: readonly unknown[], sortLength: number): SortKey {
  return { values: row.slice(0, sortLength) as SqlValue[], id: row[sortLength] as string };
}

/** What json_extract returns for a value of the stored JSON (JSON.stringify of the document). */
function sqlValueOf(value: unknown): SqlValue {
  if (value === undefined || value === null) return null;
  if (typeof value === 'boolean') return value ? 1 : 0;
  if (typeof value === 'number') return Number.isFinite(value) ? value : null;
  if (typeof value === 'string') return value;
  return JSON.stringify(value);
}
