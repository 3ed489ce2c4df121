import { expect } from 'chai';
import type { AggregateSnapshot, SnapshotStore } from '../../src/snapshots/snapshot-store.ts';
import { conformanceSuite, type HarnessOrPending } from '../support/conformance.ts';

const snapshot = (revision: bigint, extra: Partial<AggregateSnapshot> = {}): AggregateSnapshot => ({
  streamId: 'entry-1',
  kind: 'entry',
  version: 1,
  revision,
  position: revision * 10n,
  state: { exists: true, revisionCount: Number(revision) + 1, latest: { snapshot: { title: { en: 'x', ja: 'ｘ' } } } },
  takenAt: '2026-11-23T00:00:00.000Z',
  ...extra,
});

/** The snapshot-store port's contract (src/snapshots/snapshot-store.ts): every adapter passes it. */
export function snapshotStoreConformance(title: string, harness: HarnessOrPending<SnapshotStore>): void {
  conformanceSuite(title, harness, ({ test, harness: h }) => {
    test('keeps a snapshot and gives it back equal; an unknown stream has none', async () => {
      const store = await h().create();
      await store.put(snapshot(5n));
      expect(await store.get('entry-1')).to.deep.equal(snapshot(5n));
      expect(await store.get('entry-2')).to.equal(null);
      await store.close();
    });

    test('never moves back to an older revision; another kind or version replaces', async () => {
      const store = await h().create();
      await store.put(snapshot(20n));
      await store.put(snapshot(7n));
      expect((await store.get('entry-1'))?.revision).to.equal(20n);
      await store.put(snapshot(21n));
      expect((await store.get('entry-1'))?.revision).to.equal(21n);
      await store.put(snapshot(3n, { version: 2 }));
      expect(await store.get('entry-1')).to.deep.include({ revision: 3n, version: 2 });
      await store.close();
    });

    test('delete and clear remove snapshots, idempotently', async () => {
      const store = await h().create();
      await store.put(snapshot(1n));
      await store.put(snapshot(1n, { streamId: 'entry-2' }));
      await store.delete('entry-1');
      await store.delete('entry-1');
      expect(await store.get('entry-1')).to.equal(null);
      expect(await store.get('entry-2')).to.not.equal(null);
      await store.clear();
      expect(await store.get('entry-2')).to.equal(null);
      await store.close();
    });
  });
}
