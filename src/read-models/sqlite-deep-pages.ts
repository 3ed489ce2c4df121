/**
 * Deep pages of the SQLite read-model store in bounded time. `LIMIT 20 OFFSET 4980` makes SQLite step over
 * 4,980 index entries (~28 ns each: 140 µs at page 250, 2.8 ms at offset 100,000); the cost grows with the
 * page number, and a crawler asking for the deepest pages makes every request the most expensive one.
 *
 * For a sorted list that is read deep (one filter's values and one sort, e.g. a form set's entries in one
 * locale by publishedAt), this keeps its keys counted in blocks of 16–31 (counted-blocks.ts): the page at
 * offset k starts at most one block's walk after a known key, whatever k is. The blocks are built from the
 * index on the first deep read of the list (one walk of it).
 *
 * They are kept exact from the file itself, whichever connection or process writes it. Every commit of
 * documents adds one to the file's count (document_commits). A process that counts a table asks the file to
 * record, in every commit that writes it, each changed document's values of the counted fields before and
 * after the write (counted_changes, written by triggers on the table in the commit's transaction, numbered
 * with the commit: see recordingTriggers). A deep read reads the count in its own read transaction, and
 * brings the counts to it from the changes of the commits after theirs, in that transaction too: what it
 * reads is what the counts hold. The changes of the last KEPT_COMMITS commits are kept; counts further
 * behind are dropped, and built again by a deep read a second later. Lists whose later sort keys
 * hold NULL, or whose keys are not scalars, are left to OFFSET.
 */
import type Database from 'better-sqlite3';
import { sqlParameter } from './document-values.ts';
import { CountedBlocks, sortKeyOrder, type SortDirection, type SortKey, type SqlValue } from './counted-blocks.ts';

/**
 * Keys per block when built (more, up to twice this less one, to end on the first key of a value); a block is
 * cut in two above twice this. A page starts with a walk of up to a block's keys (~60 ns each): page 250 of
 * 10,000 (skip 116 with blocks of 128) cost 63.5 / 57.4 µs a request over HTTP when each key walked was also
 * checked against the block's whole start key, 50.9 / 50.0 with blocks of 32 (64: 53.7). Walking from the
 * ties of the start (see CountedBlocks), page 250's query alone in one process took 12.7–13.1 µs with blocks
 * of 32, 11.6–11.7 with 16, 12.9 with 8 (whose blocks, ~21 keys a day in the bench's list, end within ties
 * more often, and walk from the whole key); page 1 8.8–9.0 (minimums of interleaved rounds, 10,000 entries,
 * 2-core Xeon at 2.1 GHz; docs/benchmark-log.md, 2026-11-29). Smaller blocks mean more of them (~4,000 for a
 * list of 100,000 in memory) and more cuts as a list grows.
 */
export const BLOCK_SIZE = 16;
/**
 * Offsets from which a page is found through the blocks; below, SQLite steps over the entries itself (~28 ns
 * each: under 2 µs), and a list read no deeper than its first pages is not counted (a walk of it, and memory).
 */
export const DEEP_OFFSET = 64;
/** Lists counted at once (least recently read dropped first). */
export const MAX_LISTS = 64;
/** Time that building lists may take per second; beyond it, deep pages use OFFSET until the next second. */
const BUILD_BUDGET_MS_PER_SECOND = 200;
/** How long after counts that fell behind were dropped lists are built again (deep pages use OFFSET meanwhile). */
const REBUILD_AFTER_DROP_MS = 1_000;
/** How long a list found not countable (NULL in a later sort key) is left to OFFSET before it is tried again. */
const UNCOUNTABLE_RETRY_MS = 60_000;
/**
 * Commits whose recorded changes the file keeps (each commit deletes the changes of the one this many before
 * it). A process whose counts are further behind when it next reads deep counts again. Under 20 publishes a
 * second the projections commit ~100 times a second: this is over a minute and a half of them.
 */
export const KEPT_COMMITS = 10_000;

/**
 * The largest lead (see CountedBlocks) from which a page walks the ties of its block's start rather than from
 * its whole key. Walking a key costs ~0.05–0.07 µs; the walk from the whole key cost 3–5 µs a page more than
 * the walk from the ties with a lead of 21 (10,000 entries, 2-core Xeon at 2.1 GHz): they cost the same at a
 * lead of ~70–100. Blocks inside a long run of one value are cut every 31 keys, so their leads are 32, 63,
 * 94...: the first two of them walk from the ties.
 */
export const MAX_LEAD = 4 * BLOCK_SIZE;
/** Where a page's walk begins in its part of the list (see #whereSql). */
const WALK_FROM = ['start', 'key', 'ties'] as const;
type WalkFrom = (typeof WALK_FROM)[number];

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
  /**
   * Has the file record, from the next commit on, the values of `fields` of each document written to `table`
   * (see recordingTriggers); resolves once that is committed. Fields asked for earlier stay recorded.
   */
  record(table: string, fields: readonly string[]): Promise<void>;
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
  /** When it was last read, in the deep reads counted so far. */
  lastRead = 0;

  constructor(
    readonly key: string,
    readonly table: string,
    readonly filter: ReadonlyArray<readonly [string, SqlValue]>,
    readonly sort: ReadonlyArray<readonly [string, SortDirection]>,
  ) {
    this.order = sortKeyOrder(sort.map(([, direction]) => direction));
    // Each part's pages walk from the ties of its first sort value that is not NULL (see #whereSql).
    this.nulls = new CountedBlocks(this.order, sort.length > 1 ? 1 : undefined);
    this.values = new CountedBlocks(this.order, 0);
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
  /** Lists by table. */
  readonly #byTable = new Map<string, Set<SortedList>>();
  /** Fields the file is known to record for each table (seen in counted_fields), and tables asked for now. */
  readonly #recorded = new Map<string, Set<string>>();
  readonly #recording = new Map<string, Promise<void>>();
  /** The count of document commits the counts hold (see the module's comment); undefined before the first deep read. */
  #countsAt: number | undefined;
  /** Deep reads of counted lists so far: each list's lastRead is its place in them (least recently read dropped first). */
  #reads = 0;
  #droppedAt = -Infinity;
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
    const seen = this.#commitsSeen();
    if (seen === undefined) return undefined;
    this.#catchUp(seen);
    const list = this.#list(table, filter, sort);
    if (!list) return undefined;
    const [first, second] = list.parts;
    let part = first;
    let at = offset;
    if (at >= first.total) {
      part = second;
      at -= first.total;
    }
    const position = part.locate(at);
    if (!position) return [];
    const rows = this.#walk(list, part, position.after, part.lead(position.block, MAX_LEAD), position.skip, limit, columns);
    if (rows === null) return undefined;
    if (rows.length < limit && part === first && second.total > 0) {
      const rest = this.#walk(list, second, undefined, undefined, 0, limit - rows.length, columns);
      if (rest === null) return undefined;
      rows.push(...rest);
    }
    return rows;
  }

  /** Registrations of fields on their way to the file (for tests: a deep read counts its list once they have landed). */
  async settled(): Promise<void> {
    while (this.#recording.size > 0) await Promise.allSettled([...this.#recording.values()]);
  }

  /** Forgets the lists of tables that are gone (a dropped generation). */
  forgetTables(tables: Iterable<string>): void {
    for (const table of tables) {
      for (const list of this.#byTable.get(table) ?? []) this.#drop(list);
      this.#recorded.delete(table);
    }
  }

  clear(): void {
    for (const list of [...this.#lists.values()]) this.#drop(list);
    this.#uncountable.clear();
    this.#recorded.clear();
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

  /**
   * Brings the counts to what a read that sees `seen` commits sees: the changes the commits after theirs
   * recorded, in order. Counts too far behind (their changes no longer kept) are dropped.
   */
  #catchUp(seen: number): void {
    const countsAt = this.#countsAt;
    this.#countsAt = seen;
    if (countsAt === undefined || countsAt === seen || this.#lists.size === 0) return;
    if (seen < countsAt || seen - countsAt > KEPT_COMMITS) {
      this.#fellBehind();
      return;
    }
    const rows = this.sql.statement('SELECT name, id, before, after FROM counted_changes WHERE n > ? AND n <= ? ORDER BY rowid')?.raw(true).all(countsAt, seen) as ChangeRow[] | undefined;
    if (rows === undefined) {
      this.#fellBehind();
      return;
    }
    this.#apply(rows);
  }

  /** Applies recorded changes (in commit order) to the counts; a list that cannot follow them is dropped. */
  #apply(rows: readonly ChangeRow[]): void {
    // The blocks each list's changes fell in, by part: only those can need a cut or be empty.
    const touched = new Map<SortedList, Map<CountedBlocks, Set<number>>>();
    const count = (list: SortedList, key: SortKey, change: 'add' | 'remove') => {
      const part = list.partOf(key);
      const block = part[change](key);
      let parts = touched.get(list);
      if (!parts) touched.set(list, (parts = new Map()));
      let blocks = parts.get(part);
      if (!blocks) parts.set(part, (blocks = new Set()));
      blocks.add(block);
    };
    for (const [table, id, before, after] of rows) {
      const lists = this.#byTable.get(table);
      // A write that changed none of the recorded values moves no key.
      if (!lists || before === after) continue;
      const was = before === null ? undefined : (JSON.parse(before) as Record<string, unknown>);
      const is = after === null ? undefined : (JSON.parse(after) as Record<string, unknown>);
      for (const list of [...lists]) {
        try {
          const from = was ? keyIn(list, was, id) : undefined;
          const to = is ? keyIn(list, is, id) : undefined;
          if (from === false || to === false) throw new Error('not countable');
          if (from) count(list, from, 'remove');
          if (to) count(list, to, 'add');
        } catch {
          this.#drop(list);
        }
      }
    }
    for (const [list, parts] of touched) if (this.#lists.has(list.key)) this.#rebalance(list, parts);
  }

  #fellBehind(): void {
    for (const list of [...this.#lists.values()]) this.#drop(list);
    this.#droppedAt = this.now();
  }

  /**
   * Whether the file records `fields` of `table`'s writes, as this read sees it; if not, asks for them (the
   * list is counted by a later read, once that has landed).
   */
  #records(table: string, fields: readonly string[]): boolean {
    let known = this.#recorded.get(table);
    if (known && fields.every((field) => known!.has(field))) return true;
    const row = this.sql.statement('SELECT fields FROM counted_fields WHERE name = ?')?.pluck().get(table) as string | undefined;
    if (row !== undefined) this.#recorded.set(table, (known = new Set(JSON.parse(row) as string[])));
    if (known && fields.every((field) => known!.has(field))) return true;
    if (!this.#recording.has(table)) {
      const asked = this.sql
        .record(table, fields)
        .catch(() => {
          // The table is gone, or the file cannot be written now: a later deep read asks again.
        })
        .finally(() => this.#recording.delete(table));
      this.#recording.set(table, asked);
    }
    return false;
  }

  #list(table: string, filter: Readonly<Record<string, Scalar>>, sort: ReadonlyArray<readonly [string, SortDirection]>): SortedList | undefined {
    const key = listKey(table, filter, sort);
    const known = this.#lists.get(key);
    if (known) {
      known.lastRead = ++this.#reads;
      return known;
    }
    const filterEntries = Object.entries(filter).map(([field, value]) => [field, sqlParameter(value)] as const);
    const started = this.now();
    if (started - this.#droppedAt < REBUILD_AFTER_DROP_MS) return undefined;
    const foundUncountable = this.#uncountable.get(key);
    if (foundUncountable !== undefined && started - foundUncountable < UNCOUNTABLE_RETRY_MS) return undefined;
    const second = Math.floor(started / 1000);
    if (second !== this.#budgetSecond) {
      this.#budgetSecond = second;
      this.#budgetUsedMs = 0;
    }
    if (this.#budgetUsedMs >= BUILD_BUDGET_MS_PER_SECOND) return undefined;
    // Counts built from this read are kept by the changes of later commits: the file must record them.
    if (!this.#records(table, [...new Set([...filterEntries.map(([field]) => field), ...sort.map(([field]) => field)])])) return undefined;
    const list = this.#build(key, table, filterEntries, sort);
    this.#budgetUsedMs += this.now() - started;
    if (list === null) {
      if (this.#uncountable.size >= MAX_LISTS * 4) this.#uncountable.clear();
      this.#uncountable.set(key, started);
    }
    if (!list) return undefined;
    if (this.#lists.size >= MAX_LISTS) this.#drop(this.#leastRecentlyRead());
    list.lastRead = ++this.#reads;
    this.#lists.set(key, list);
    let lists = this.#byTable.get(table);
    if (!lists) this.#byTable.set(table, (lists = new Set()));
    lists.add(list);
    return list;
  }

  /** Counts a list from one walk of its index; null if its keys cannot be counted, undefined if its table is gone. */
  #build(key: string, table: string, filter: ReadonlyArray<readonly [string, SqlValue]>, sort: ReadonlyArray<readonly [string, SortDirection]>): SortedList | null | undefined {
    const list = new SortedList(key, table, filter, sort);
    const statement = this.sql.statement(`SELECT ${this.#keyColumns(list)} FROM "${table}" d${this.#whereSql(list, undefined, 'start')} ORDER BY ${this.sql.orderBy(sort)}`);
    if (!statement) return undefined;
    for (const row of statement.raw(true).iterate(...this.#whereParams(list, undefined, 'start', undefined)) as Iterable<unknown[]>) {
      const sortKey = rowKey(row, sort.length);
      if (!countable(sortKey)) return null;
      list.partOf(sortKey).append(sortKey, BLOCK_SIZE);
    }
    return list;
  }

  /**
   * Up to `limit` rows of one part of the list, from `skip` keys after `after`, whose lead is `lead` (see
   * CountedBlocks); null if the table is gone.
   */
  #walk(list: SortedList, part: CountedBlocks, after: SortKey | undefined, lead: number | undefined, skip: number, limit: number, columns: PageColumns): unknown[] | null {
    let made = list.walkSql.get(columns.select);
    if (made === undefined) list.walkSql.set(columns.select, (made = []));
    const from: WalkFrom = after === undefined ? 'start' : lead !== undefined && lead <= MAX_LEAD ? 'ties' : 'key';
    const variant = (part === list.nulls ? 3 : 0) + WALK_FROM.indexOf(from);
    const sql = (made[variant] ??= `SELECT ${columns.select} FROM "${list.table}" d${this.#whereSql(list, part, from)} ORDER BY ${this.sql.orderBy(list.sort)} LIMIT +? OFFSET +?`);
    const statement = this.sql.statement(sql);
    return statement ? columns.read(statement, [...this.#whereParams(list, part, from, after), limit, from === 'ties' ? lead! + skip : skip]) : null;
  }

  /**
   * The keys of up to `limit` documents after `after` in one part of the list, walked from its whole key (no
   * lead needed): the keys of a block to cut, from which its new start's lead is made.
   */
  #keysAfter(list: SortedList, part: CountedBlocks, after: SortKey | undefined, limit: number): SortKey[] | undefined {
    const from: WalkFrom = after === undefined ? 'start' : 'key';
    const rows = this.sql.statement(`SELECT ${this.#keyColumns(list)} FROM "${list.table}" d${this.#whereSql(list, part, from)} ORDER BY ${this.sql.orderBy(list.sort)} LIMIT +?`)?.raw(true).all(...this.#whereParams(list, part, from, after), limit) as unknown[][] | undefined;
    return rows?.map((row) => rowKey(row, list.sort.length));
  }

  #keyColumns(list: SortedList): string {
    return [...list.sort.map(([field]) => this.sql.field(field)), 'd.id'].join(', ');
  }

  /**
   * The WHERE of the list (its filter), of one part of it (first sort value NULL or not), and from where in
   * that part a walk begins: its start, a key's value at the part's first sort value that is not NULL
   * ('ties': the walk then steps over the key's lead), or just after a key ('key': the `OR` of its values,
   * checked on each key walked, ~6 µs more a page than 'ties' on 10,000 entries). Either way one condition
   * SQLite walks as an index range, because it bounds the first sort key that is not NULL in the part (the
   * later keys are never NULL in a counted list). Its parameters are #whereParams'.
   */
  #whereSql(list: SortedList, part: CountedBlocks | undefined, walkFrom: WalkFrom): string {
    const clauses = list.filter.map(([field]) => `${this.sql.field(field)} = ?`);
    const keys = list.sort.map(([field]) => this.sql.field(field));
    const descending = list.sort.map(([, direction]) => direction === 'desc');
    if (part !== undefined) clauses.push(`${keys[0]} ${part === list.nulls ? 'IS NULL' : 'IS NOT NULL'}`);
    const from = part === list.nulls ? 1 : 0;
    if (walkFrom !== 'start' && from < keys.length) clauses.push(`${keys[from]} ${descending[from] ? '<=' : '>='} ?`);
    if (walkFrom === 'key') {
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
  #whereParams(list: SortedList, part: CountedBlocks | undefined, walkFrom: WalkFrom, after: SortKey | undefined): unknown[] {
    const params: unknown[] = list.filter.map(([, value]) => value);
    if (walkFrom !== 'start' && after !== undefined) {
      const from = part === list.nulls ? 1 : 0;
      const keys = list.sort.length;
      if (from < keys) params.push(after.values[from]);
      if (walkFrom === 'ties') return params;
      for (let i = from; i <= keys; i++) {
        for (let j = from; j < i; j++) params.push(after.values[j]);
        params.push(i < keys ? after.values[i] : after.id);
      }
    }
    return params;
  }

  /**
   * Cuts the given blocks of a list that grew beyond twice BLOCK_SIZE, and drops those left empty. The counts
   * hold what this read sees, so the keys to cut at are read right.
   */
  #rebalance(list: SortedList, blocksByPart: ReadonlyMap<CountedBlocks, ReadonlySet<number>>): void {
    for (const [part, blocks] of blocksByPart) {
      // Last first: cutting or dropping a block moves the numbers of the blocks after it only.
      for (const block of [...blocks].sort((a, b) => b - a)) {
        let at = block;
        while (part.count(at) > 2 * BLOCK_SIZE) {
          const keys = this.#keysAfter(list, part, part.start(at), part.count(at));
          if (keys?.length !== part.count(at)) {
            this.#drop(list);
            return;
          }
          part.cut(at, keys, BLOCK_SIZE);
          at++;
        }
        if (at === block) part.dropIfEmpty(block);
      }
    }
  }

  #leastRecentlyRead(): SortedList {
    let least: SortedList | undefined;
    for (const list of this.#lists.values()) if (!least || list.lastRead < least.lastRead) least = list;
    return least!;
  }

  #drop(list: SortedList): void {
    this.#lists.delete(list.key);
    const lists = this.#byTable.get(list.table);
    lists?.delete(list);
    if (lists?.size === 0) this.#byTable.delete(list.table);
  }
}

/**
 * A list's key: its table, filter and sort. Field names are checked names (no control characters) and values
 * are written as JSON, so two different lists never share one; built by concatenation on every deep read
 * (JSON.stringify of the whole took ~1 µs of a ~10 µs read).
 */
function listKey(table: string, filter: Readonly<Record<string, Scalar>>, sort: ReadonlyArray<readonly [string, SortDirection]>): string {
  let key = table;
  for (const field in filter) key += `\u0000${field}\u0000${JSON.stringify(sqlParameter(filter[field]!))}`;
  for (const [field, direction] of sort) key += `\u0001${field}\u0001${direction}`;
  return key;
}

/** A row of counted_changes: the table, the document, its recorded values before and after the write (JSON objects by field; null where there was or is no document). */
type ChangeRow = [table: string, id: string, before: string | null, after: string | null];

/** A document's key in the list from its recorded values, undefined if the filter does not take it, false if it cannot be counted. */
function keyIn(list: SortedList, values: Readonly<Record<string, unknown>>, id: string): SortKey | undefined | false {
  for (const [field, value] of list.filter) {
    const recorded = recordedValue(values, field);
    if (recorded === false) return false;
    if (recorded !== value) return undefined;
  }
  const keyValues: SqlValue[] = [];
  for (const [field] of list.sort) {
    const recorded = recordedValue(values, field);
    if (recorded === false) return false;
    keyValues.push(recorded);
  }
  const key = { values: keyValues, id };
  return countable(key) ? key : false;
}

/** A recorded value as json_extract gave it; false when it was not recorded or is not a scalar (an object or array: not countable). */
function recordedValue(values: Readonly<Record<string, unknown>>, field: string): SqlValue | false {
  if (!Object.hasOwn(values, field)) return false;
  const value = values[field];
  return value === null || typeof value === 'number' || typeof value === 'string' ? value : false;
}

/** Whether the keys after the first are all present: the part's range condition relies on it. */
function countable(key: SortKey): boolean {
  for (let i = 1; i < key.values.length; i++) if (key.values[i] === null) return false;
  return true;
}

function rowKey(row: readonly unknown[], sortLength: number): SortKey {
  return { values: row.slice(0, sortLength) as SqlValue[], id: row[sortLength] as string };
}
