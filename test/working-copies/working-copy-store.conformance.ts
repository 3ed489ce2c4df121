import { expect } from 'chai';
import type { WorkingCopy, WorkingCopyStore } from '../../src/working-copies/working-copy-store.ts';
import { conformanceSuite, type HarnessOrPending } from '../support/conformance.ts';

const ana = { type: 'user' as const, id: 'user-ana' };
const ben = { type: 'user' as const, id: 'user-ben' };
const copy = (extra: Partial<WorkingCopy> = {}): WorkingCopy => ({
  projectId: 'project-1',
  entryId: 'entry-1',
  owner: ana,
  baseRevision: 3,
  startedAt: '2026-12-06T10:00:00.000Z',
  savedAt: '2026-12-06T10:00:00.000Z',
  // Any JSON object: keys a document store treats specially, rich text, nested arrays, non-ASCII.
  fields: { title: { en: 'Draft', ja: '下書き' }, body: { type: 'doc', content: [{ type: 'paragraph', content: [{ type: 'text', text: 'x' }] }] }, $where: 'kept', 'a.b': [1, null, true] },
  ...extra,
});
const head = ({ fields: _fields, ...rest }: WorkingCopy) => rest;

/** The working-copy port's contract (src/working-copies/working-copy-store.ts): every adapter passes it. */
export function workingCopyStoreConformance(title: string, harness: HarnessOrPending<WorkingCopyStore>): void {
  conformanceSuite(title, harness, ({ test, harness: h }) => {
    test('keeps a copy per entry and owner and gives it back equal; none for another owner or entry', async () => {
      const store = await h().create();
      await store.put(copy());
      expect(await store.get('entry-1', ana)).to.deep.equal(copy());
      expect(await store.get('entry-1', ben)).to.equal(null);
      expect(await store.get('entry-1', { type: 'agent', id: 'user-ana' })).to.equal(null);
      expect(await store.get('entry-2', ana)).to.equal(null);
      await store.close();
    });

    test('a later put replaces fields, base revision and savedAt, and keeps when the typing started', async () => {
      const store = await h().create();
      await store.put(copy());
      const later = copy({ baseRevision: 4, startedAt: '2026-12-06T10:05:00.000Z', savedAt: '2026-12-06T10:05:00.000Z', fields: { title: { en: 'Second' } } });
      await store.put(later);
      expect(await store.get('entry-1', ana)).to.deep.equal({ ...later, startedAt: '2026-12-06T10:00:00.000Z' });
      await store.close();
    });

    test('lists every owner\'s copy of an entry without its fields, oldest first', async () => {
      const store = await h().create();
      await store.put(copy({ savedAt: '2026-12-06T10:02:00.000Z' }));
      await store.put(copy({ owner: ben, savedAt: '2026-12-06T10:01:00.000Z' }));
      await store.put(copy({ entryId: 'entry-2' }));
      const listed = await store.list('entry-1');
      expect(listed).to.deep.equal([head(copy({ owner: ben, savedAt: '2026-12-06T10:01:00.000Z' })), head(copy({ savedAt: '2026-12-06T10:02:00.000Z' }))]);
      expect(await store.list('entry-3')).to.deep.equal([]);
      await store.close();
    });

    test('deletes one owner\'s copy, an entry\'s, and those kept before a time, saying how many', async () => {
      const store = await h().create();
      await store.put(copy());
      await store.put(copy({ owner: ben }));
      await store.put(copy({ entryId: 'entry-2', savedAt: '2026-11-01T00:00:00.000Z' }));
      await store.put(copy({ entryId: 'entry-3', savedAt: '2026-12-01T00:00:00.000Z' }));
      expect(await store.delete('entry-1', ana)).to.equal(true);
      expect(await store.delete('entry-1', ana)).to.equal(false);
      expect(await store.get('entry-1', ben)).to.not.equal(null);
      expect(await store.deleteEntry('entry-1')).to.equal(1);
      expect(await store.list('entry-1')).to.deep.equal([]);
      expect(await store.deleteSavedBefore('2026-11-15T00:00:00.000Z')).to.equal(1);
      expect(await store.get('entry-2', ana)).to.equal(null);
      expect(await store.get('entry-3', ana)).to.not.equal(null);
      await store.close();
    });

    test('refuses what is not a working copy, storing nothing', async () => {
      const store = await h().create();
      for (const bad of [copy({ fields: [] as never }), copy({ baseRevision: -1 }), copy({ owner: { type: 'operator' as never, id: 'x' } }), copy({ entryId: '' })]) {
        let refused = false;
        try {
          await store.put(bad);
        } catch {
          refused = true;
        }
        expect(refused, JSON.stringify(bad.owner)).to.equal(true);
      }
      expect(await store.list('entry-1')).to.deep.equal([]);
      await store.close();
    });
  });
}
