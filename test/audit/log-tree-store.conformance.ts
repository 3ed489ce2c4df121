import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { conformanceSuite, type HarnessOrPending } from '../support/conformance.ts';
import { TreeConflictError, type LogTreeStore, type StoredCheckpoint } from '../../src/audit/log-tree-store.ts';
import { TreeAppender, leafHash, rootIndexes, assembleRanges, rootOfLeaves, storedHashIndex } from '../../src/audit/merkle-tree.ts';

const hex = (h: Uint8Array) => Buffer.from(h).toString('hex');

/** Appends `count` leaves from `from` on, as the follower does (the right edge read from the store). */
async function grow(store: LogTreeStore, from: number, count: number): Promise<Array<{ id: string; hash: Uint8Array }>> {
  const appender = new TreeAppender(from, from === 0 ? [] : await store.readHashes(rootIndexes(from)));
  const leaves = Array.from({ length: count }, (_, i) => ({ id: randomUUID(), hash: leafHash(`leaf ${from + i}`) }));
  const hashes = leaves.flatMap((leaf) => appender.append(leaf.hash));
  await store.append(from, leaves.map((leaf, i) => ({ position: BigInt(10 * (from + i) + 7), eventId: leaf.id })), hashes);
  return leaves;
}

const checkpoint = (size: number, cosignatures: Record<string, string> = {}): StoredCheckpoint => ({ size, rootHash: new Uint8Array(32).fill(size % 256), note: `note ${size}\n`, signedAt: new Date(Date.UTC(2026, 11, 1, 0, 0, size)).toISOString(), cosignatures, timestampToken: null });

/** The log tree store port's contract (src/audit/log-tree-store.ts), run against every adapter. */
export function logTreeStoreConformance(title: string, harness: HarnessOrPending<LogTreeStore>): void {
  conformanceSuite(title, harness, ({ test, harness: h }) => {
    test('appends leaves with their stored hashes; roots and leaves read back; the state follows', async () => {
      const store = await h().create();
      try {
        expect(await store.state()).to.deep.equal({ size: 0, lastPosition: null });
        const first = await grow(store, 0, 5);
        const second = await grow(store, 5, 8);
        expect(await store.state()).to.deep.equal({ size: 13, lastPosition: BigInt(10 * 12 + 7) });
        const root = assembleRanges([{ lo: 0, hi: 13 }], await store.readHashes(rootIndexes(13)))[0]!;
        expect(hex(root)).to.equal(hex(rootOfLeaves([...first, ...second].map((l) => l.hash))));
        expect(hex((await store.readHashes([storedHashIndex(0, 6)]))[0]!)).to.equal(hex(second[1]!.hash));
        expect(await store.leafOfEvent(second[2]!.id)).to.deep.equal({ leaf: 7, position: BigInt(77) });
        expect(await store.leafOfEvent(randomUUID())).to.equal(null);
        const many = await store.leavesOfEvents([first[0]!.id, second[7]!.id, randomUUID()]);
        expect(many.get(first[0]!.id)).to.deep.equal({ leaf: 0, position: 7n });
        expect(many.get(second[7]!.id)).to.deep.equal({ leaf: 12, position: 127n });
        expect(many.size).to.equal(2);
        expect((await store.leaves(4, 3)).map((l) => l.eventId)).to.deep.equal([first[4]!.id, second[0]!.id, second[1]!.id]);
      } finally {
        await store.close();
      }
    });

    test('refuses an append that does not continue the tree, writing nothing; a hash not stored is an error', async () => {
      const store = await h().create();
      try {
        await grow(store, 0, 3);
        let refused: unknown;
        try {
          await store.append(2, [{ position: 1n, eventId: randomUUID() }], [leafHash('x')]);
        } catch (error) {
          refused = error;
        }
        expect(refused).to.be.instanceOf(TreeConflictError);
        expect((await store.state()).size).to.equal(3);
        let missing: unknown;
        try {
          await store.readHashes([storedHashIndex(0, 50)]);
        } catch (error) {
          missing = error;
        }
        expect(missing).to.be.instanceOf(Error);
      } finally {
        await store.close();
      }
    });

    test('keeps checkpoints by size (the first of a size), their cosignatures and tokens; prunes the uncosigned old ones', async () => {
      const store = await h().create();
      try {
        for (const size of [1, 2, 3, 4, 5]) await store.putCheckpoint(checkpoint(size));
        await store.putCheckpoint({ ...checkpoint(5), note: 'another note of size 5\n' });
        expect((await store.checkpointOfSize(5))?.note).to.equal('note 5\n');
        await store.addCosignature(2, 'witness.example', '\u2014 witness.example AAAA');
        await store.setTimestampToken(3, 'dG9rZW4=');
        expect((await store.latestCheckpoint())?.size).to.equal(5);
        expect((await store.checkpointOfSize(2))?.cosignatures).to.deep.equal({ 'witness.example': '\u2014 witness.example AAAA' });
        expect((await store.checkpointOfSize(3))?.timestampToken).to.equal('dG9rZW4=');
        await store.pruneCheckpoints(2);
        expect(await store.checkpointOfSize(1)).to.equal(null);
        expect(await store.checkpointOfSize(2), 'cosigned: kept').to.not.equal(null);
        expect(await store.checkpointOfSize(4)).to.not.equal(null);
      } finally {
        await store.close();
      }
    });

    test('keeps the integrity record; reset empties the tree and its checkpoints', async () => {
      const store = await h().create();
      try {
        expect(await store.integrity()).to.equal(null);
        const record = { state: 'mismatch' as const, detail: 'changed between positions 3 and 9', firstLeaf: 3, checkedAt: '2026-12-01T00:00:00.000Z' };
        await store.setIntegrity(record);
        expect(await store.integrity()).to.deep.equal(record);
        await grow(store, 0, 4);
        await store.putCheckpoint(checkpoint(4));
        await store.reset();
        expect(await store.state()).to.deep.equal({ size: 0, lastPosition: null });
        expect(await store.latestCheckpoint()).to.equal(null);
      } finally {
        await store.close();
      }
    });
  });
}
