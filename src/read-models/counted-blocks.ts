/**
 * Positions in a sorted list without walking it: the list cut into blocks of consecutive keys, each with the
 * number of keys it holds. The document at offset k is then found by adding block counts (a few hundred
 * numbers at 100,000 documents) and walking at most one block from the key its block starts after, instead of
 * stepping over k index entries. Pure data structure: the SQLite read-model store keeps it in step with its
 * writes (sqlite-deep-pages.ts).
 */
import { compareCodePoints } from './document-values.ts';

/** A value as SQLite returns json_extract of a document field: NULL, a number, or text. */
export type SqlValue = null | number | string;

/** A document's place in a sorted list: its sort values, then its id (the last tie-breaker). */
export interface SortKey {
  readonly values: readonly SqlValue[];
  readonly id: string;
}

export type SortDirection = 'asc' | 'desc';

/** Two values as SQLite's ORDER BY ranks them ascending: NULL first, then numbers, then text (BINARY: UTF-8 bytes, i.e. code points). */
export function compareSqlValues(a: SqlValue, b: SqlValue): number {
  if (a === b) return 0;
  if (a === null) return -1;
  if (b === null) return 1;
  const aText = typeof a === 'string';
  if (aText !== (typeof b === 'string')) return aText ? 1 : -1;
  if (aText) return compareCodePoints(a, b as string);
  return (a as number) < (b as number) ? -1 : (a as number) > (b as number) ? 1 : 0;
}

/**
 * The order of a query's sort: each key in its direction, then the id in the last key's direction (as the
 * store's ORDER BY appends it).
 */
export function sortKeyOrder(directions: readonly SortDirection[]): (a: SortKey, b: SortKey) => number {
  const idDescending = directions.at(-1) === 'desc';
  return (a, b) => {
    for (let i = 0; i < directions.length; i++) {
      const c = compareSqlValues(a.values[i] ?? null, b.values[i] ?? null);
      if (c !== 0) return directions[i] === 'desc' ? -c : c;
    }
    const c = compareCodePoints(a.id, b.id);
    return idDescending ? -c : c;
  };
}

/** Where an offset falls: walk `skip` keys from just after `after` (from the list's start when undefined). */
export interface BlockPosition {
  block: number;
  after: SortKey | undefined;
  skip: number;
}

/**
 * One sorted list as blocks. Block b holds the keys after starts[b] (exclusive) up to and including
 * starts[b + 1]; block 0 starts at the list's beginning. A block's start is a boundary, not a document: it
 * stays valid when the document that had that key is removed.
 *
 * Given a `tie` (the index of the sort value that leads the list's order), each start also keeps its lead:
 * how many keys counted have its value there and come at or before it. The keys after a start are then the
 * keys from its value on (a plain range of the index), less the first `lead` of them: a walk SQLite runs
 * without checking each key against the start's whole key. Blocks are cut, where that costs little, just
 * after the first key of a value, so that most leads are 1.
 */
export class CountedBlocks {
  readonly #starts: Array<SortKey | undefined> = [undefined];
  readonly #counts: number[] = [0];
  /** Each start's lead (see above; undefined: not known, and for block 0, which starts at the list's beginning). */
  readonly #leads: Array<number | undefined> = [undefined];
  #total = 0;
  /** The last key appended (while building), its lead, and whether the next key starts a block after it. */
  #last: SortKey | undefined;
  #lastLead = 0;
  #cutAfterLast = false;
  /**
   * Keys up to the end of each block (running sums of the counts), made by `locate` when a change left none:
   * a page of a list of 100,000 (3,125 blocks) is then found by bisection instead of a walk of the counts.
   */
  #ends: number[] | undefined;

  /**
   * @param tie the index of the sort value whose ties the starts' leads count (see above); without it, no
   *   leads are kept and blocks are cut every `size` keys.
   */
  constructor(
    private readonly compare: (a: SortKey, b: SortKey) => number,
    private readonly tie?: number,
  ) {}

  /** Blocks made from keys given in the list's order (see append). */
  static fromSorted(compare: (a: SortKey, b: SortKey) => number, keys: Iterable<SortKey>, size: number, tie?: number): CountedBlocks {
    const blocks = new CountedBlocks(compare, tie);
    for (const key of keys) blocks.append(key, size);
    return blocks;
  }

  /**
   * Counts a key that comes after every key counted so far (while building). A block holds `size` keys, or
   * with a `tie` as many more as it takes to end on the first key of a value (at most 2 × size - 1).
   */
  append(key: SortKey, size: number): void {
    if (this.#cutAfterLast) {
      this.#starts.push(this.#last);
      this.#leads.push(this.tie === undefined ? undefined : this.#lastLead);
      this.#counts.push(0);
    }
    const lead = this.tie !== undefined && this.#last !== undefined && this.#tied(this.#last, key) ? this.#lastLead + 1 : 1;
    const count = (this.#counts[this.#counts.length - 1]! += 1);
    this.#total++;
    this.#last = key;
    this.#lastLead = lead;
    this.#cutAfterLast = count >= size && (this.tie === undefined || lead === 1 || count >= 2 * size - 1);
    this.#ends = undefined;
  }

  get total(): number {
    return this.#total;
  }

  get blockCount(): number {
    return this.#counts.length;
  }

  count(block: number): number {
    return this.#counts[block] ?? 0;
  }

  start(block: number): SortKey | undefined {
    return this.#starts[block];
  }

  /** The lead of a block's start (see the class): undefined when not known, and for block 0. */
  lead(block: number): number | undefined {
    return this.#leads[block];
  }

  /** The block a key belongs in: the last one whose start comes before it. */
  blockOf(key: SortKey): number {
    let low = 0;
    let high = this.#starts.length - 1;
    while (low < high) {
      const middle = (low + high + 1) >> 1;
      if (this.compare(this.#starts[middle]!, key) < 0) low = middle;
      else high = middle - 1;
    }
    return low;
  }

  /** Counts a key added to the list; returns its block. */
  add(key: SortKey): number {
    const block = this.blockOf(key);
    this.#counts[block]! += 1;
    this.#total++;
    this.#ends = undefined;
    this.#moveLeads(block, key, 1);
    return block;
  }

  /** Counts a key removed from the list (it was in it); returns the block it was in. */
  remove(key: SortKey): number {
    const block = this.blockOf(key);
    if (this.#counts[block]! === 0) throw new Error('counted blocks: removing from an empty block (the list changed without being told)');
    this.#counts[block]! -= 1;
    this.#total--;
    this.#moveLeads(block, key, -1);
    this.#ends = undefined;
    return block;
  }

  /** The block of the key at `offset` and how far into it; undefined at or beyond the end. */
  locate(offset: number): BlockPosition | undefined {
    if (offset < 0 || offset >= this.#total) return undefined;
    const ends = (this.#ends ??= runningSums(this.#counts));
    // The first block that ends after the offset.
    let low = 0;
    let high = ends.length - 1;
    while (low < high) {
      const middle = (low + high) >> 1;
      if (ends[middle]! > offset) high = middle;
      else low = middle + 1;
    }
    return { block: low, after: this.#starts[low], skip: offset - (ends[low]! - this.#counts[low]!) };
  }

  /**
   * Cuts a block in two after `at`, the key at position `firstCount` of the block (counted from 1), whose
   * lead is `lead` (undefined: not known; the block's pages then walk from its whole key).
   */
  split(block: number, at: SortKey, firstCount: number, lead?: number): void {
    const count = this.#counts[block]!;
    if (firstCount <= 0 || firstCount >= count) throw new Error(`counted blocks: cannot split a block of ${count} after ${firstCount}`);
    this.#starts.splice(block + 1, 0, at);
    this.#leads.splice(block + 1, 0, this.tie === undefined ? undefined : lead);
    this.#counts.splice(block + 1, 0, count - firstCount);
    this.#counts[block] = firstCount;
    this.#ends = undefined;
  }

  /**
   * Cuts a block in two, given all its keys in order: after the first key of a value from its `size`th key on
   * (the new start's lead is then 1), or after the `size`th key when no value begins before the 2 × size-th.
   */
  cut(block: number, keys: readonly SortKey[], size: number): void {
    if (keys.length !== this.#counts[block]) throw new Error(`counted blocks: a block of ${this.#counts[block]} keys cut from ${keys.length}`);
    let at = size - 1;
    if (this.tie !== undefined) {
      for (let i = size - 1; i < Math.min(keys.length - 1, 2 * size - 1); i++) {
        const before = i === 0 ? this.#starts[block] : keys[i - 1];
        if (before === undefined || !this.#tied(before, keys[i]!)) {
          at = i;
          break;
        }
      }
    }
    this.split(block, keys[at]!, at + 1, this.#leadInBlock(block, keys, at));
  }

  /** Joins an empty block (not the first) into the one before it. */
  dropIfEmpty(block: number): boolean {
    if (block === 0 || this.#counts[block] !== 0) return false;
    this.#starts.splice(block, 1);
    this.#leads.splice(block, 1);
    this.#counts.splice(block, 1);
    this.#ends = undefined;
    return true;
  }

  /** Whether two keys have the same value at `tie` (as SQLite's `=` compares them). */
  #tied(a: SortKey, b: SortKey): boolean {
    return compareSqlValues(a.values[this.tie!] ?? null, b.values[this.tie!] ?? null) === 0;
  }

  /** The lead of the block's `at`th key (from 0), given all the block's keys in order. */
  #leadInBlock(block: number, keys: readonly SortKey[], at: number): number | undefined {
    if (this.tie === undefined) return undefined;
    let first = at;
    while (first > 0 && this.#tied(keys[first - 1]!, keys[at]!)) first--;
    const run = at - first + 1;
    if (first > 0) return run;
    // The block's keys up to it all have its value: so may the keys up to the block's start.
    const start = this.#starts[block];
    if (start === undefined || !this.#tied(start, keys[at]!)) return run;
    const lead = this.#leads[block];
    return lead === undefined ? undefined : lead + run;
  }

  /**
   * A key added (1) or removed (-1) in `block`: the starts after it with its value have one key more or less
   * at or before them. Those are the starts right after the block (the keys of a value are consecutive).
   */
  #moveLeads(block: number, key: SortKey, by: 1 | -1): void {
    if (this.tie === undefined) return;
    for (let i = block + 1; i < this.#starts.length && this.#tied(this.#starts[i]!, key); i++) {
      const lead = this.#leads[i];
      if (lead !== undefined) this.#leads[i] = lead + by;
    }
  }
}

function runningSums(counts: readonly number[]): number[] {
  const sums = new Array<number>(counts.length);
  let sum = 0;
  for (let i = 0; i < counts.length; i++) sums[i] = sum += counts[i]!;
  return sums;
}
