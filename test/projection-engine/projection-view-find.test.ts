/**
 * ProjectionView.find: equality queries of a projection against its read model, overlaid with the batch's
 * uncommitted writes. On the real SQLite store, through WriteBatch and through a running Projector.
 */
import path from 'node:path';
import { expect } from 'chai';
import { defineProjection, schemaOf, type Projection } from '../../src/projection-engine/projection.ts';
import { Projector } from '../../src/projection-engine/projector.ts';
import { startRebuild } from '../../src/projection-engine/rebuild.ts';
import { ReadModelAccessError, WriteBatch } from '../../src/projection-engine/write-batch.ts';
import { MAX_QUERY_LIMIT, ReadModelError, type Document, type ModelTarget, type ReadModelSchema } from '../../src/read-models/read-model-store.ts';
import { SqliteReadModelStore } from '../../src/read-models/sqlite-read-model-store.ts';
import { engineFixture, silentLogger } from '../support/engine-fixture.ts';
import { tempDir } from '../support/temp-dir.ts';

const NOW = '2026-11-22T10:00:00.000Z';
const schema: ReadModelSchema = {
  projection: 'test-find',
  collections: {
    entries: { indexes: [{ name: 'by_project', fields: [['projectId', 1]] }] },
    other: {},
  },
};
const target: ModelTarget = { projection: 'test-find', generation: 1 };

describe('projection view: find', () => {
  let store: SqliteReadModelStore;
  beforeEach(async () => {
    store = SqliteReadModelStore.open(path.join(tempDir(), 'read-models.sqlite'));
    await store.createGeneration(schema, 1, 1, NOW);
    await store.commit(target, [
      { collection: 'entries', id: 'e1', position: 1n, doc: { id: 'e1', projectId: 'p1', meta: { locale: 'en' }, n: 1 } },
      { collection: 'entries', id: 'e2', position: 1n, doc: { id: 'e2', projectId: 'p1', meta: { locale: 'ja' }, n: 2 } },
      { collection: 'entries', id: 'e3', position: 1n, doc: { id: 'e3', projectId: 'p2', meta: { locale: 'en' }, n: 3 } },
      { collection: 'entries', id: 'e4', position: 1n, doc: { id: 'e4', projectId: 'p1', flag: 1, n: 4 } },
      { collection: 'other', id: 'e1', position: 1n, doc: { id: 'e1', projectId: 'p1' } },
    ], 1n, NOW);
  });
  afterEach(async () => {
    await store.close();
  });

  const ids = (docs: Document[]) => docs.map((d) => d['id']);
  const batchAt = (position: bigint) => {
    const batch = new WriteBatch(store, target, 1n);
    batch.begin(position);
    return batch;
  };

  it('finds committed documents by equality on fields and dotted paths, null matching a missing field, in id order', async () => {
    const { view } = batchAt(2n);
    expect(ids(await view.find('entries', { projectId: 'p1' }))).to.deep.equal(['e1', 'e2', 'e4']);
    expect(ids(await view.find('entries', { projectId: 'p1', 'meta.locale': 'en' }))).to.deep.equal(['e1']);
    expect(ids(await view.find('entries', { 'meta.locale': null }))).to.deep.equal(['e4']);
    expect(ids(await view.find('entries', { projectId: 'p9' }))).to.deep.equal([]);
    expect(ids(await view.find('entries', {}))).to.deep.equal(['e1', 'e2', 'e3', 'e4']);
    // Strict equality, whatever the store's own comparison (SQLite reads true as 1).
    expect(ids(await view.find('entries', { flag: true }))).to.deep.equal([]);
    expect(ids(await view.find('entries', { flag: 1 }))).to.deep.equal(['e4']);
  });

  it('sees the batch\'s uncommitted puts and deletes', async () => {
    const batch = batchAt(2n);
    const { view } = batch;
    view.put('entries', 'e0', { id: 'e0', projectId: 'p1', n: 0 });
    view.put('entries', 'e9', { id: 'e9', projectId: 'p2', n: 9 });
    view.delete('entries', 'e2');
    view.put('entries', 'e1', { id: 'e1', projectId: 'p1', n: 100 });
    const found = await view.find<{ id: string; n: number }>('entries', { projectId: 'p1' });
    expect(found.map((d) => [d.id, d.n])).to.deep.equal([['e0', 0], ['e1', 100], ['e4', 4]]);
    expect(ids(await view.find('entries', { projectId: 'p2' }))).to.deep.equal(['e3', 'e9']);
    // Other collections are apart.
    expect(ids(await view.find('other', { projectId: 'p1' }))).to.deep.equal(['e1']);
    // Nothing was written to the store.
    expect((await store.find(target, 'entries', { filter: { projectId: 'p1' } })).map((d) => d['id'])).to.deep.equal(['e1', 'e2', 'e4']);
    // Once committed, the store answers the same.
    batch.end();
    await store.commit(target, batch.writes(), batch.checkpoint!, NOW);
    const after = new WriteBatch(store, target, 2n);
    expect(ids(await after.view.find('entries', { projectId: 'p1' }))).to.deep.equal(['e0', 'e1', 'e4']);
  });

  it('moves a document in and out of the result when the batch changes the field', async () => {
    const { view } = batchAt(2n);
    view.put('entries', 'e3', { id: 'e3', projectId: 'p1', n: 3 });
    view.put('entries', 'e2', { id: 'e2', projectId: 'p2', n: 2 });
    expect(ids(await view.find('entries', { projectId: 'p1' }))).to.deep.equal(['e1', 'e3', 'e4']);
    expect(ids(await view.find('entries', { projectId: 'p2' }))).to.deep.equal(['e2']);
    view.put('entries', 'e2', { id: 'e2', projectId: 'p1', n: 2 });
    expect(ids(await view.find('entries', { projectId: 'p1' }))).to.deep.equal(['e1', 'e2', 'e3', 'e4']);
    view.put('entries', 'e2', { id: 'e2', n: 2 });
    expect(ids(await view.find('entries', { projectId: 'p1' }))).to.deep.equal(['e1', 'e3', 'e4']);
    expect(ids(await view.find('entries', { projectId: null }))).to.deep.equal(['e2']);
  });

  it('returns copies: changing them changes neither the batch nor what later reads see', async () => {
    const { view } = batchAt(2n);
    view.put('entries', 'e5', { id: 'e5', projectId: 'p1', tags: ['a'] });
    const first = await view.find<{ id: string; tags?: string[]; n?: number }>('entries', { projectId: 'p1' });
    for (const doc of first) {
      doc.n = -1;
      doc.tags?.push('changed');
    }
    const again = await view.find<{ id: string; tags?: string[]; n?: number }>('entries', { projectId: 'p1' });
    expect(again.map((d) => d.n)).to.deep.equal([1, 2, 4, undefined]);
    expect(again.find((d) => d.id === 'e5')?.tags).to.deep.equal(['a']);
    expect(await view.get('entries', 'e5')).to.deep.equal({ id: 'e5', projectId: 'p1', tags: ['a'] });
  });

  it('does not see the writes of an event that was undone', async () => {
    const batch = batchAt(2n);
    batch.view.put('entries', 'e6', { id: 'e6', projectId: 'p1' });
    batch.end();
    batch.begin(3n);
    batch.view.put('entries', 'e7', { id: 'e7', projectId: 'p1' });
    batch.view.delete('entries', 'e6');
    batch.view.delete('entries', 'e1');
    batch.view.put('entries', 'e4', { id: 'e4', projectId: 'p3' });
    expect(ids(await batch.view.find('entries', { projectId: 'p1' }))).to.deep.equal(['e2', 'e7']);
    batch.undo();
    expect(ids(await batch.view.find('entries', { projectId: 'p1' }))).to.deep.equal(['e1', 'e2', 'e4', 'e6']);
    expect(ids(await batch.view.find('entries', { projectId: 'p3' }))).to.deep.equal([]);
  });

  it('returns every match beyond one query page', async () => {
    const many = MAX_QUERY_LIMIT + 5;
    const writes = Array.from({ length: many }, (_, i) => ({
      collection: 'entries', id: `m${String(i).padStart(6, '0')}`, position: 2n, doc: { projectId: 'big', i },
    }));
    await store.commit(target, writes, 2n, NOW);
    const batch = new WriteBatch(store, target, 2n);
    batch.begin(3n);
    batch.view.delete('entries', 'm000000');
    batch.view.put('entries', 'zz', { projectId: 'big', i: -1 });
    const found = await batch.view.find<{ i: number }>('entries', { projectId: 'big' });
    expect(found).to.have.length(many);
    expect(found[0]!.i).to.equal(1);
    expect(found.at(-1)!.i).to.equal(-1);
  });

  it('refuses a bad field or value as the projection\'s fault, and reports a store failure as ReadModelAccessError', async () => {
    const { view } = batchAt(2n);
    const wheres: Array<Record<string, never>> = [{ 'bad path': 'x' }, { $where: 'x' }, { n: { $gt: 1 } }, { n: Number.NaN }] as never;
    for (const where of wheres) {
      const error = await view.find('entries', where).then(() => null, (e: unknown) => e);
      expect(error, JSON.stringify(where)).to.be.instanceOf(ReadModelError).and.not.be.instanceOf(ReadModelAccessError);
    }
    const badCollection = await view.find('Bad-Name', {}).then(() => null, (e: unknown) => e);
    expect(badCollection).to.be.instanceOf(ReadModelError);
    await store.close();
    const error = await view.find('entries', { projectId: 'p1' }).then(() => null, (e: unknown) => e);
    expect(error).to.be.instanceOf(ReadModelAccessError).with.property('message').that.matches(/finding in entries/);
  });
});

describe('projection view: find while a rebuild loads', () => {
  it('builds the whileFolding indexes of a collection before the first find in it, not before', async () => {
    const f = engineFixture();
    try {
      for (const [stream, by] of [['g1-a', 1], ['g1-b', 2], ['g1-x', -10], ['g1-c', 4]] as const) await f.count(stream, by);
      const folding = defineProjection({ ...members, name: 'test-folding', collections: { members: { indexes: [{ name: 'by_group', fields: [['group', 1]], whileFolding: true }] } } });
      const Database = (await import('better-sqlite3')).default;
      const indexed: boolean[] = [];
      const rebuilt = await startRebuild({
        projection: folding, log: f.log, store: f.store, clock: f.clock, logger: silentLogger, dropGraceMs: 0, batchSize: 1,
        onProgress: () => {
          const db = new Database(path.join(f.dir, 'read-models.sqlite'), { readonly: true });
          indexed.push(db.prepare(`SELECT 1 FROM sqlite_schema WHERE type = 'index' AND name = 'rm_test_folding__members__g1__by_group'`).get() !== undefined);
          db.close();
        },
      }).result;
      // One commit per event: the third (a negative count) is the first that finds.
      expect(indexed).to.deep.equal([false, false, true, true]);
      expect(await f.store.findWithIds({ projection: 'test-folding', generation: rebuilt.generation }, 'members')).to.deep.equal([
        { id: 'g1-a', doc: { id: 'g1-a', group: 'g1', total: 1, bonus: 10 } },
        { id: 'g1-b', doc: { id: 'g1-b', group: 'g1', total: 2, bonus: 10 } },
        { id: 'g1-c', doc: { id: 'g1-c', group: 'g1', total: 4, bonus: 0 } },
      ]);
    } finally {
      await f.close();
    }
  });
});

/**
 * Members of groups: a positive count adds to a member (stream "<group>-<member>"), a negative one gives
 * every member of the group a bonus (a fan-out through find), zero moves the member to the group "moved".
 */
const members: Projection = defineProjection({
  name: 'test-members',
  version: 1,
  description: 'fan-out through view.find',
  collections: { members: { indexes: [{ name: 'by_group', fields: [['group', 1]] }] } },
  filter: { eventTypes: ['test.counted'] },
  async apply(event, view) {
    const { by } = event.data as { by: number };
    const group = event.streamId.split('-')[0]!;
    type Member = { id: string; group: string; total: number; bonus: number };
    if (by < 0) {
      for (const member of await view.find<Member>('members', { group })) view.put('members', member.id, { ...member, bonus: member.bonus - by });
      return;
    }
    const previous = await view.get<Member>('members', event.streamId);
    const member: Member = previous ?? { id: event.streamId, group, total: 0, bonus: 0 };
    view.put('members', event.streamId, by === 0 ? { ...member, group: 'moved' } : { ...member, total: member.total + by });
  },
});

describe('projection view: find in a running projector', () => {
  it('fans out over uncommitted and committed documents alike, live and when rebuilt with deferred indexes', async () => {
    const f = engineFixture();
    try {
      for (const [stream, by] of [
        ['g1-a', 1], ['g1-b', 2], ['g2-a', 3], ['g1-x', -10], ['g1-b', 0], ['g1-c', 4], ['g1-y', -5], ['g2-y', -1], ['g1-a', 1],
      ] as const) {
        await f.count(stream, by);
      }
      const expected = {
        'g1-a': { id: 'g1-a', group: 'g1', total: 2, bonus: 15 },
        'g1-b': { id: 'g1-b', group: 'moved', total: 2, bonus: 10 },
        'g1-c': { id: 'g1-c', group: 'g1', total: 4, bonus: 5 },
        'g2-a': { id: 'g2-a', group: 'g2', total: 3, bonus: 1 },
      };
      const contents = async (generation: number) =>
        Object.fromEntries((await f.store.findWithIds({ projection: 'test-members', generation }, 'members')).map((e) => [e.id, e.doc]));

      // Batches of 4 events: some fan-outs see only uncommitted members, some committed and uncommitted ones.
      await f.store.createGeneration(schemaOf(members), 1, 1, NOW);
      await f.store.activateGeneration('test-members', 1, null, NOW);
      const projector = new Projector({ projection: members, generation: 1, log: f.log, store: f.store, clock: f.clock, logger: silentLogger, stopWhenCaughtUp: true, batchSize: 4 });
      expect(await projector.run()).to.equal('live');
      expect(await contents(1)).to.deep.equal(expected);

      const rebuilt = await startRebuild({ projection: members, log: f.log, store: f.store, clock: f.clock, logger: silentLogger, dropGraceMs: 0, batchSize: 3 }).result;
      expect(rebuilt.generation).to.equal(2);
      expect(await contents(2)).to.deep.equal(expected);
    } finally {
      await f.close();
    }
  });
});
