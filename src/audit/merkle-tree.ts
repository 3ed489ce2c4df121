/**
 * The log's Merkle tree: RFC 9162 (section 2.1) hashing, inclusion and consistency proofs, and their
 * verification. Pure functions, no I/O.
 *
 *   leaf hash  = SHA-256(0x00 || leaf bytes)
 *   node hash  = SHA-256(0x01 || left || right)
 *   empty tree = SHA-256("")
 *
 * Storage. A tree store keeps the hash of every *perfect* subtree (2^level leaves, starting at a multiple of
 * 2^level), addressed by one integer in the dense order of Crosby and Wallach's tamper-evident logging paper
 * as golang.org/x/mod/sumdb/tlog lays it out (storedHashIndex): leaf n's hash comes right after the hashes
 * leaf n-1 completed, so appending a leaf writes 1 + (trailing ones of n) hashes at the end of the order,
 * about two per leaf. Any subtree hash, root, inclusion or consistency proof is then read from at most
 * 2·log2(n) stored hashes: costs do not grow with the history's length.
 *
 * A proof is computed in two steps so that a store reads what it needs in one batch: the `...Indexes`
 * function names the stored hashes to read, the matching assembly function combines them.
 */
import { createHash } from 'node:crypto';

export const HASH_SIZE = 32;

/** SHA-256 of the empty string: the root of the tree of no leaves. */
export const EMPTY_ROOT: Uint8Array = new Uint8Array(createHash('sha256').digest());

const LEAF_PREFIX = new Uint8Array([0x00]);
const NODE_PREFIX = new Uint8Array([0x01]);

export function leafHash(leafBytes: Uint8Array | string): Uint8Array {
  return new Uint8Array(createHash('sha256').update(LEAF_PREFIX).update(leafBytes).digest());
}

export function nodeHash(left: Uint8Array, right: Uint8Array): Uint8Array {
  return new Uint8Array(createHash('sha256').update(NODE_PREFIX).update(left).update(right).digest());
}

/** Where the hash of the perfect subtree (level, n) (leaves [n·2^level, (n+1)·2^level)) is stored. */
export function storedHashIndex(level: number, n: number): number {
  // The subtree's hash is stored right after that of its last leaf's completed subtrees below it: walk to the
  // rightmost leaf under it, then count every hash stored before that leaf's own.
  let leaf = n;
  for (let l = level; l > 0; l--) leaf = 2 * leaf + 1;
  let index = 0;
  for (let m = leaf; m > 0; m = Math.floor(m / 2)) index += m;
  return index + level;
}

/** How many hashes a tree of `size` leaves stores. */
export function storedHashCount(size: number): number {
  if (size === 0) return 0;
  let count = storedHashIndex(0, size - 1) + 1;
  for (let n = size - 1; n % 2 === 1; n = Math.floor(n / 2)) count++;
  return count;
}

/** The largest power of two strictly below n (n > 1), as RFC 9162 splits a tree. */
function splitPoint(n: number): number {
  let k = 1;
  while (k * 2 < n) k *= 2;
  return k;
}

/** A subtree of the tree: leaves [lo, hi). */
export interface LeafRange {
  lo: number;
  hi: number;
}

/** The perfect subtrees a range splits into, left to right (largest first), as (level, n). */
export function perfectParts(lo: number, hi: number): Array<{ level: number; n: number }> {
  const parts: Array<{ level: number; n: number }> = [];
  while (lo < hi) {
    // The largest power of two that fits in what is left and that `lo` is aligned to.
    let size = 1;
    let level = 0;
    while (size * 2 <= hi - lo && lo % (size * 2) === 0) {
      size *= 2;
      level++;
    }
    parts.push({ level, n: lo / size });
    lo += size;
  }
  return parts;
}

/** The RFC 9162 hash of a range, from the hashes of its perfect parts (perfectParts order). */
export function rangeHash(parts: readonly Uint8Array[]): Uint8Array {
  if (parts.length === 0) return EMPTY_ROOT;
  let hash = parts[parts.length - 1]!;
  for (let i = parts.length - 2; i >= 0; i--) hash = nodeHash(parts[i]!, hash);
  return hash;
}

/** RFC 9162 PATH(leaf, D[0:size]): the sibling subtrees from the leaf up to the root. */
export function inclusionRanges(size: number, leaf: number): LeafRange[] {
  if (!(leaf >= 0 && leaf < size)) throw new RangeError(`leaf ${leaf} is not in a tree of ${size} leaves`);
  const path: LeafRange[] = [];
  const walk = (lo: number, hi: number, m: number) => {
    if (hi - lo <= 1) return;
    const k = splitPoint(hi - lo);
    if (m < k) {
      walk(lo, lo + k, m);
      path.push({ lo: lo + k, hi });
    } else {
      walk(lo + k, hi, m - k);
      path.push({ lo, hi: lo + k });
    }
  };
  walk(0, size, leaf);
  return path;
}

/** RFC 9162 PROOF(oldSize, D[0:newSize]): the subtrees that show the tree of oldSize leaves is a prefix of newSize's. */
export function consistencyRanges(oldSize: number, newSize: number): LeafRange[] {
  if (!(oldSize >= 0 && oldSize <= newSize)) throw new RangeError(`no consistency proof from ${oldSize} to ${newSize} leaves`);
  if (oldSize === 0 || oldSize === newSize) return [];
  const proof: LeafRange[] = [];
  const sub = (lo: number, hi: number, m: number, whole: boolean) => {
    const n = hi - lo;
    if (m === n) {
      if (!whole) proof.push({ lo, hi });
      return;
    }
    const k = splitPoint(n);
    if (m <= k) {
      sub(lo, lo + k, m, whole);
      proof.push({ lo: lo + k, hi });
    } else {
      sub(lo + k, hi, m - k, false);
      proof.push({ lo, hi: lo + k });
    }
  };
  sub(0, newSize, oldSize, true);
  return proof;
}

/** Every stored hash the ranges need, in order (a range's parts one after another). */
export function rangeIndexes(ranges: readonly LeafRange[]): number[] {
  return ranges.flatMap(({ lo, hi }) => perfectParts(lo, hi).map(({ level, n }) => storedHashIndex(level, n)));
}

/** The ranges' hashes from the stored hashes rangeIndexes named (read in that order). */
export function assembleRanges(ranges: readonly LeafRange[], stored: readonly Uint8Array[]): Uint8Array[] {
  let at = 0;
  const hashes = ranges.map(({ lo, hi }) => {
    const count = perfectParts(lo, hi).length;
    const hash = rangeHash(stored.slice(at, at + count));
    at += count;
    return hash;
  });
  if (at !== stored.length) throw new Error(`assembled ${at} of ${stored.length} stored hashes`);
  return hashes;
}

/** The stored hashes the root of the tree of `size` leaves needs. */
export function rootIndexes(size: number): number[] {
  return rangeIndexes(size === 0 ? [] : [{ lo: 0, hi: size }]);
}

/**
 * Appends leaves to a tree, keeping its right edge (the hashes of the perfect subtrees the next leaves
 * complete) in memory: each leaf answers the stored hashes it adds, at storedHashIndex(0, leaf) onwards.
 */
export class TreeAppender {
  #size: number;
  /** The perfect subtrees of the tree's right edge, largest (leftmost) first. */
  readonly #edge: Uint8Array[];

  /** `edge`: the hashes of perfectParts(0, size), read from the store (rootIndexes(size)). */
  constructor(size: number, edge: readonly Uint8Array[]) {
    if (edge.length !== perfectParts(0, size).length) throw new Error(`a tree of ${size} leaves has ${perfectParts(0, size).length} right-edge hashes, not ${edge.length}`);
    this.#size = size;
    this.#edge = [...edge];
  }

  get size(): number {
    return this.#size;
  }

  /** The new leaf's stored hashes: its own, then those of the subtrees it completes (lowest first). */
  append(hash: Uint8Array): Uint8Array[] {
    const added = [hash];
    let h = hash;
    for (let n = this.#size; n % 2 === 1; n = Math.floor(n / 2)) {
      h = nodeHash(this.#edge.pop()!, h);
      added.push(h);
    }
    this.#edge.push(h);
    this.#size++;
    return added;
  }

  root(): Uint8Array {
    return rangeHash(this.#edge);
  }

  /** The right edge's hashes (perfectParts(0, size) order). */
  edge(): Uint8Array[] {
    return [...this.#edge];
  }
}

function equal(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a[i]! ^ b[i]!;
  return diff === 0;
}

/** RFC 9162 2.1.3.2: whether `proof` shows the leaf of hash `leaf` at `index` in the tree of `size` leaves with `root`. */
export function verifyInclusion(leaf: Uint8Array, index: number, size: number, proof: readonly Uint8Array[], root: Uint8Array): boolean {
  if (!(index >= 0 && index < size)) return false;
  let fn = index;
  let sn = size - 1;
  let r = leaf;
  for (const p of proof) {
    if (sn === 0) return false;
    if (fn % 2 === 1 || fn === sn) {
      r = nodeHash(p, r);
      if (fn % 2 === 0) {
        while (fn % 2 === 0 && fn !== 0) {
          fn = Math.floor(fn / 2);
          sn = Math.floor(sn / 2);
        }
      }
    } else {
      r = nodeHash(r, p);
    }
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  return sn === 0 && equal(r, root);
}

/** RFC 9162 2.1.4.2: whether `proof` shows the tree (oldSize, oldRoot) is a prefix of (newSize, newRoot). */
export function verifyConsistency(oldSize: number, newSize: number, proof: readonly Uint8Array[], oldRoot: Uint8Array, newRoot: Uint8Array): boolean {
  if (oldSize > newSize || oldSize < 0) return false;
  if (oldSize === newSize) return proof.length === 0 && equal(oldRoot, newRoot);
  if (oldSize === 0) return proof.length === 0;
  if (proof.length === 0) return false;
  let path = [...proof];
  // When the old tree is a perfect subtree on the left edge, its root is the proof's implicit first node.
  if ((oldSize & (oldSize - 1)) === 0) path = [oldRoot, ...path];
  let fn = oldSize - 1;
  let sn = newSize - 1;
  while (fn % 2 === 1) {
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  let fr = path[0]!;
  let sr = path[0]!;
  for (const c of path.slice(1)) {
    if (sn === 0) return false;
    if (fn % 2 === 1 || fn === sn) {
      fr = nodeHash(c, fr);
      sr = nodeHash(c, sr);
      if (fn % 2 === 0) {
        while (fn % 2 === 0 && fn !== 0) {
          fn = Math.floor(fn / 2);
          sn = Math.floor(sn / 2);
        }
      }
    } else {
      sr = nodeHash(sr, c);
    }
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  return sn === 0 && equal(fr, oldRoot) && equal(sr, newRoot);
}

/** The root of a tree given all its leaf hashes (in memory; for tests and small trees). */
export function rootOfLeaves(leaves: readonly Uint8Array[]): Uint8Array {
  const tree = new TreeAppender(0, []);
  for (const leaf of leaves) tree.append(leaf);
  return tree.root();
}
