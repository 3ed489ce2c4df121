import { createHash } from 'node:crypto';
import { expect } from 'chai';
import {
  EMPTY_ROOT,
  TreeAppender,
  assembleRanges,
  consistencyRanges,
  inclusionRanges,
  leafHash,
  nodeHash,
  rangeIndexes,
  rootIndexes,
  storedHashCount,
  storedHashIndex,
  verifyConsistency,
  verifyInclusion,
} from '../../src/audit/merkle-tree.ts';

/** RFC 9162 MTH, straight from its definition (recursive over the leaves). */
function mth(leaves: Uint8Array[]): Uint8Array {
  if (leaves.length === 0) return new Uint8Array(createHash('sha256').digest());
  if (leaves.length === 1) return leaves[0]!;
  let k = 1;
  while (k * 2 < leaves.length) k *= 2;
  return nodeHash(mth(leaves.slice(0, k)), mth(leaves.slice(k)));
}

const hex = (h: Uint8Array) => Buffer.from(h).toString('hex');

/** A tree kept as the stored-hash layout would keep it: index -> hash. */
function storedTree(count: number) {
  const leaves = Array.from({ length: count }, (_, i) => leafHash(`leaf ${i}`));
  const stored: Uint8Array[] = [];
  const tree = new TreeAppender(0, []);
  for (const [n, leaf] of leaves.entries()) {
    const added = tree.append(leaf);
    expect(stored.length, `leaf ${n}'s hashes start at its stored index`).to.equal(storedHashIndex(0, n));
    stored.push(...added);
    expect(stored.length).to.equal(storedHashCount(n + 1));
  }
  const read = (indexes: number[]) => indexes.map((i) => stored[i]!);
  return { leaves, tree, read };
}

describe('audit: the Merkle tree (RFC 9162 hashing and proofs over the stored-hash layout)', () => {
  it('hashes leaves and nodes with the RFC\'s prefixes; the empty tree is SHA-256 of nothing', () => {
    expect(hex(leafHash(''))).to.equal('6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d');
    expect(hex(EMPTY_ROOT)).to.equal('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
    const a = leafHash('a');
    const b = leafHash('b');
    expect(hex(nodeHash(a, b))).to.equal(createHash('sha256').update(Buffer.concat([Buffer.from([1]), a, b])).digest('hex'));
  });

  it('roots from the stored hashes equal the RFC\'s MTH at every size, and the appender\'s right edge agrees', () => {
    const { leaves, read } = storedTree(70);
    for (let size = 0; size <= 70; size++) {
      const expected = hex(mth(leaves.slice(0, size)));
      const ranges = size === 0 ? [] : [{ lo: 0, hi: size }];
      const root = size === 0 ? EMPTY_ROOT : assembleRanges(ranges, read(rootIndexes(size)))[0]!;
      expect(hex(root), `size ${size}`).to.equal(expected);
      const partial = new TreeAppender(size, size === 0 ? [] : read(rootIndexes(size)));
      expect(hex(partial.root())).to.equal(expected);
    }
  });

  it('every inclusion proof verifies for its leaf, and fails for another leaf, index or root', () => {
    const { leaves, read } = storedTree(37);
    for (let size = 1; size <= 37; size++) {
      const root = mth(leaves.slice(0, size));
      for (let leaf = 0; leaf < size; leaf++) {
        const ranges = inclusionRanges(size, leaf);
        const proof = assembleRanges(ranges, read(rangeIndexes(ranges)));
        expect(verifyInclusion(leaves[leaf]!, leaf, size, proof, root), `leaf ${leaf} of ${size}`).to.equal(true);
        if (size > 1) {
          expect(verifyInclusion(leaves[(leaf + 1) % size]!, leaf, size, proof, root)).to.equal(false);
          expect(verifyInclusion(leaves[leaf]!, (leaf + 1) % size, size, proof, root)).to.equal(false);
        }
        expect(verifyInclusion(leaves[leaf]!, leaf, size, proof, leafHash('another root'))).to.equal(false);
      }
    }
  });

  it('every consistency proof verifies between a tree and a later one, and fails for a forked tree', () => {
    const { leaves, read } = storedTree(33);
    const forked = leaves.map((leaf, i) => (i === 5 ? leafHash('forged') : leaf));
    for (let newSize = 1; newSize <= 33; newSize++) {
      const newRoot = mth(leaves.slice(0, newSize));
      for (let oldSize = 1; oldSize <= newSize; oldSize++) {
        const oldRoot = mth(leaves.slice(0, oldSize));
        const ranges = consistencyRanges(oldSize, newSize);
        const proof = assembleRanges(ranges, read(rangeIndexes(ranges)));
        expect(verifyConsistency(oldSize, newSize, proof, oldRoot, newRoot), `${oldSize} -> ${newSize}`).to.equal(true);
        if (oldSize > 5) expect(verifyConsistency(oldSize, newSize, proof, mth(forked.slice(0, oldSize)), newRoot), `forked ${oldSize} -> ${newSize}`).to.equal(false);
        if (oldSize < newSize) expect(verifyConsistency(oldSize, newSize, proof, oldRoot, leafHash('x'))).to.equal(false);
      }
    }
  });

  it('a proof reads at most 2·log2(n) stored hashes, at a million leaves as at a thousand', () => {
    for (const size of [1_000, 1_000_000, 1_048_577]) {
      const bound = 2 * Math.ceil(Math.log2(size)) + 2;
      expect(rootIndexes(size).length).to.be.at.most(bound);
      expect(rangeIndexes(inclusionRanges(size, Math.floor(size / 3))).length).to.be.at.most(bound);
      expect(rangeIndexes(consistencyRanges(Math.floor(size / 3), size)).length).to.be.at.most(bound);
    }
  });
});
