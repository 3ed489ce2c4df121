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
 * Given a `tie` (the index of the sort value that leads the list's order), a start's lead is how many keys
 * counted have its value there and come at or before it. The keys after a start are then the keys from its
 * value on (a plain range of the index), less the first `lead` of them: a walk SQLite runs without checking
 * each key against the start's whole key. Blocks are cut, where that costs little, just after the first key
 * of a value, so that most leads are 1. Each start keeps its tail, the keys of the block before it that have
 * its value; its lead is that tail plus, when the start before it has the same value, that start's lead. So
 * a change moves one tail (a key added or removed in a block counts in the tail of the start after it when
 * it has that start's value), whatever the number of starts that share a value.
 */
export class CountedBlocks {
  readonly #starts: Array<SortKey | undefined> = [undefined];
  readonly #counts: number[] = [0];
  /** Each start's tail (see above; 0 for block 0, which starts at the list's beginning, and without a tie). */
  readonly #tails: number[] = [0];
  #total = 0;
  /**
   * The last key appended (while building), how many keys of its value end its block with it, and whether the
   * next key starts a block after it.
   */
  #last: SortKey | undefined;
  #lastRun = 0;
  #cutAfterLast = false;
  /**
   * The counts as a Fenwick tree (node i holds the sum of the counts of the blocks from i - (i & -i) to i - 1):
   * `locate` finds a page's block in ~12 steps for a list of 100,000, and a key added or removed updates as
   * many nodes. Made by `locate` after blocks were cut, joined or appended (a walk of the counts, ~4,000 of
   * them for 100,000 keys); before, the running sums of the counts were made again after every change.
   */
  #tree: Int32Array | undefined;

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
      this.#tails.push(this.tie === undefined ? 0 : this.#lastRun);
      this.#counts.push(0);
    }
    const firstOfValue = this.tie === undefined || this.#last === undefined || !this.#tied(this.#last, key);
    const count = (this.#counts[this.#counts.length - 1]! += 1);
    this.#total++;
    this.#last = key;
    this.#lastRun = count === 1 || firstOfValue ? 1 : this.#lastRun + 1;
    this.#cutAfterLast = count >= size && (this.tie === undefined || firstOfValue || count >= 2 * size - 1);
    this.#tree = undefined;
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

  /**
   * The lead of a block's start (see the class); undefined without a tie, for block 0, and when over `max`
   * (found from the tails of the starts of its value before it, up to `max` keys' worth).
   */
  lead(block: number, max = Infinity): number | undefined {
    if (this.tie === undefined || block <= 0 || block >= this.#starts.length) return undefined;
    let lead = 0;
    for (let i = block; ; i--) {
      lead += this.#tails[i]!;
      if (lead > max) return undefined;
      if (i === 1 || !this.#tied(this.#starts[i - 1]!, this.#starts[i]!)) return lead;
    }
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
    this.#moveTail(block, key, 1);
    this.#addToTree(block, 1);
    return block;
  }

  /** Counts a key removed from the list (it was in it); returns the block it was in. */
  remove(key: SortKey): number {
    const block = this.blockOf(key);
    if (this.#counts[block]! === 0) throw new Error('counted blocks: removing from an empty block (the list changed without being told)');
    this.#counts[block]! -= 1;
    this.#total--;
    this.#moveTail(block, key, -1);
    this.#addToTree(block, -1);
    return block;
  }

  /** The block of the key at `offset` and how far into it; undefined at or beyond the end. */
  locate(offset: number): BlockPosition | undefined {
    if (offset < 0 || offset >= this.#total) return undefined;
    const tree = (this.#tree ??= fenwickTree(this.#counts));
    // The first block that ends after the offset: the most blocks whose keys add up to the offset or less
    // (empty ones included) are passed, from the largest node down.
    let passed = 0;
    let left = offset;
    for (let step = 1 << (31 - Math.clz32(tree.length - 1)); step > 0; step >>= 1) {
      const next = passed + step;
      if (next < tree.length && tree[next]! <= left) {
        passed = next;
        left -= tree[next]!;
      }
    }
    return { block: passed, after: this.#starts[passed], skip: left };
  }

  /**
   * Cuts a block in two after `at`, the key at position `firstCount` of the block (counted from 1). With a
   * tie, `tail` is the number of the first part's keys that have at's value (at included; see the class).
   */
  split(block: number, at: SortKey, firstCount: number, tail?: number): void {
    const count = this.#counts[block]!;
    if (firstCount <= 0 || firstCount >= count) throw new Error(`counted blocks: cannot split a block of ${count} after ${firstCount}`);
    if (this.tie !== undefined && (tail === undefined || tail < 1 || tail > firstCount)) throw new Error(`counted blocks: a split needs the tail of its new start (1 to ${firstCount}), not ${tail}`);
    this.#starts.splice(block + 1, 0, at);
    this.#tails.splice(block + 1, 0, this.tie === undefined ? 0 : tail!);
    // The start after the block had the first part's keys of its value in its tail: they are now the new start's.
    const next = this.#starts[block + 2];
    if (next !== undefined && this.tie !== undefined && this.#tied(at, next)) this.#tails[block + 2]! -= tail!;
    this.#counts.splice(block + 1, 0, count - firstCount);
    this.#counts[block] = firstCount;
    this.#tree = undefined;
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
    let first = at;
    while (first > 0 && this.tie !== undefined && this.#tied(keys[first - 1]!, keys[at]!)) first--;
    this.split(block, keys[at]!, at + 1, this.tie === undefined ? undefined : at - first + 1);
  }

  /** Joins an empty block (not the first) into the one before it. */
  dropIfEmpty(block: number): boolean {
    if (block === 0 || this.#counts[block] !== 0) return false;
    // The start after it now follows the block before: that block's keys of its value join its tail.
    const next = this.#starts[block + 1];
    if (next !== undefined && this.tie !== undefined && this.#tied(this.#starts[block]!, next)) this.#tails[block + 1]! += this.#tails[block]!;
    this.#starts.splice(block, 1);
    this.#tails.splice(block, 1);
    this.#counts.splice(block, 1);
    this.#tree = undefined;
    return true;
  }

  /** A key more or fewer in `block`, in the tree if made. */
  #addToTree(block: number, by: 1 | -1): void {
    const tree = this.#tree;
    if (tree === undefined) return;
    for (let i = block + 1; i < tree.length; i += i & -i) tree[i]! += by;
  }

  /** Whether two keys have the same value at `tie` (as SQLite's `=` compares them). */
  #tied(a: SortKey, b: SortKey): boolean {
    return compareSqlValues(a.values[this.tie!] ?? null, b.values[this.tie!] ?? null) === 0;
  }

  /** A key added (1) or removed (-1) in `block`: the start after the block counts it in its tail if it has its value. */
  #moveTail(block: number, key: SortKey, by: 1 | -1): void {
    const next = this.#starts[block + 1];
    if (next !== undefined && this.tie !== undefined && this.#tied(next, key)) this.#tails[block + 1]! += by;
  }
}

/** The Fenwick tree of the counts (node 0 unused), made in one walk of them. */
function fenwickTree(counts: readonly number[]): Int32Array {
  const tree = new Int32Array(counts.length + 1);
  for (let i = 1; i < tree.length; i++) {
    tree[i]! += counts[i - 1]!;
    const parent = i + (i & -i);
    if (parent < tree.length) tree[parent]! += tree[i]!;
  }
  return tree;
}
