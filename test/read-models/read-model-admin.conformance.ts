/**
 * The read-model port's admin half: generations (created, indexed, activated, dropped), commits (all or
 * nothing, checkpoints, unique indexes, replays), the projector lease, failures and skips. Every adapter runs
 * it (read-model-store.conformance.ts).
 */
import { expect } from 'chai';
import {
  GenerationConflictError,
  LeaseLostError,
  ReadModelError,
  UniqueConstraintError,
  type ModelTarget,
  type ReadModelSchema,
  type ReadModelStore,
} from '../../src/read-models/read-model-store.ts';
import { conformanceSuite, type HarnessOrPending } from '../support/conformance.ts';
import { articlesSchema, del, LATER, NOW, put } from './read-model-store.fixtures.ts';

export function readModelAdminConformance(title: string, harness: HarnessOrPending<ReadModelStore>): void {
  conformanceSuite(`${title}, generations, commits and leases`, harness, ({ test, harness }) => {
    let store: ReadModelStore;
    const gen1: ModelTarget = { projection: 'test-articles', generation: 1 };
    const gen2: ModelTarget = { projection: 'test-articles', generation: 2 };

    beforeEach(async () => {
      store = await harness().create();
      await store.createGeneration(articlesSchema, 1, 3, NOW);
    });
    afterEach(async () => {
      await store.close();
    });


    test('creates a generation as "building", with no checkpoint, idempotently', async () => {
      await store.createGeneration(articlesSchema, 1, 3, LATER);
      const record = await store.getGeneration('test-articles', 1);
      expect(record).to.include({ projection: 'test-articles', generation: 1, version: 3, state: 'building', checkpoint: null, failure: null });
      expect(await store.activeGeneration('test-articles')).to.equal(null);
      expect(await store.getGeneration('test-articles', 9)).to.equal(null);
    });

    test('createGeneration on an existing generation adds the collections and indexes it lacks, and keeps its record and documents', async () => {
      await store.commit(gen1, [put('articles', 'a1', 4n, { slug: 'kept', title: 'Kept', n: 1 })], 4n, NOW);
      await store.activateGeneration('test-articles', 1, null, NOW);
      // The same projection, as newer code declares it: one more collection, one more index.
      const grown = { ...articlesSchema, collections: { ...articlesSchema.collections, extra: { indexes: [{ name: 'by_kind', fields: [['kind', 1]] as Array<[string, 1 | -1]> }] } } };
      await store.createGeneration(grown, 1, 9, LATER);
      expect(await store.getGeneration('test-articles', 1)).to.include({ version: 3, state: 'active', checkpoint: 4n });
      expect(await store.get(gen1, 'articles', 'a1')).to.deep.equal({ slug: 'kept', title: 'Kept', n: 1 });
      await store.commit(gen1, [put('extra', 'x1', 5n, { kind: 'k' })], 5n, LATER);
      expect(await store.find(gen1, 'extra', { filter: { kind: 'k' } })).to.deep.equal([{ kind: 'k' }]);
    });

    test('refuses an index that includes a dotted or repeated field, or includes fields in a unique index', async () => {
      const withIndex = (index: Record<string, unknown>) => ({ projection: 'test-covered', collections: { items: { indexes: [{ name: 'by_list', fields: [['list', 1]], ...index }] } } }) as unknown as ReadModelSchema;
      for (const index of [{ include: ['meta.note'] }, { include: ['item', 'item'] }, { include: [] }, { include: ['item'], unique: true }]) {
        let refused: unknown;
        await store.createGeneration(withIndex(index), 1, 1, NOW).catch((error: unknown) => (refused = error));
        expect(refused, JSON.stringify(index)).to.be.instanceOf(ReadModelError);
      }
    });

    test('commits document writes together with the checkpoint', async () => {
      await store.commit(gen1, [put('articles', 'a1', 5n, { slug: 'hello', title: 'Hello', n: 1 }), put('tags', 't1', 5n, { name: 'news' })], 5n, NOW);
      expect(await store.get(gen1, 'articles', 'a1')).to.deep.equal({ slug: 'hello', title: 'Hello', n: 1 });
      expect(await store.get(gen1, 'tags', 't1')).to.deep.equal({ name: 'news' });
      expect((await store.getGeneration('test-articles', 1))?.checkpoint).to.equal(5n);
      await store.commit(gen1, [put('articles', 'a1', 9n, { slug: 'hello', title: 'Hello again', n: 2 }), del('tags', 't1', 9n)], 9n, LATER);
      expect(await store.get(gen1, 'articles', 'a1')).to.deep.equal({ slug: 'hello', title: 'Hello again', n: 2 });
      expect(await store.get(gen1, 'tags', 't1')).to.equal(null);
      const record = await store.getGeneration('test-articles', 1);
      expect(record?.checkpoint).to.equal(9n);
      expect(record?.updatedAt).to.equal(LATER);
    });

    test('replaying older writes changes nothing and never moves the checkpoint back', async () => {
      await store.commit(gen1, [put('articles', 'a1', 10n, { slug: 'a', v: 'new' })], 10n, NOW);
      await store.commit(gen1, [put('articles', 'a1', 7n, { slug: 'a', v: 'old' }), put('articles', 'a2', 8n, { slug: 'b', v: 'first' })], 8n, NOW);
      expect(await store.get(gen1, 'articles', 'a1')).to.deep.equal({ slug: 'a', v: 'new' });
      expect(await store.get(gen1, 'articles', 'a2')).to.deep.equal({ slug: 'b', v: 'first' });
      expect((await store.getGeneration('test-articles', 1))?.checkpoint).to.equal(10n);
      await store.commit(gen1, [del('articles', 'a1', 9n)], 10n, NOW);
      expect(await store.get(gen1, 'articles', 'a1')).to.deep.equal({ slug: 'a', v: 'new' });
    });

    test('keeps positions beyond 2^53 exact', async () => {
      const big = (1n << 62n) + 3n;
      await store.commit(gen1, [put('articles', 'a1', big, { slug: 'a' })], big, NOW);
      await store.commit(gen1, [put('articles', 'a1', big - 1n, { slug: 'stale' })], big - 1n, NOW);
      expect(await store.get(gen1, 'articles', 'a1')).to.deep.equal({ slug: 'a' });
      expect((await store.getGeneration('test-articles', 1))?.checkpoint).to.equal(big);
    });

    test('a write that breaks a unique index fails the commit with UniqueConstraintError naming the collection and index', async () => {
      await store.commit(gen1, [put('articles', 'a1', 1n, { slug: 'same' })], 1n, NOW);
      const error = await store.commit(gen1, [put('articles', 'a2', 2n, { slug: 'same' })], 2n, NOW).then(() => null, (e: unknown) => e);
      expect(error).to.be.instanceOf(UniqueConstraintError);
      expect((error as UniqueConstraintError).collection).to.equal('articles');
      expect((error as UniqueConstraintError).index).to.equal('by_slug');
      expect((await store.getGeneration('test-articles', 1))?.checkpoint).to.equal(1n);
    });

    test('applies a batch in its own order: deleting a document and giving its unique value to another commits', async () => {
      await store.commit(gen1, [put('articles', 'a1', 1n, { slug: 'taken' }), put('articles', 'b1', 1n, { slug: 'first' })], 1n, NOW);
      // a1 is deleted, then a2 takes its slug; b1 moves away from "first", then b2 takes it.
      await store.commit(
        gen1,
        [put('articles', 'a2', 3n, { slug: 'taken' }), del('articles', 'a1', 2n), put('articles', 'b2', 5n, { slug: 'first' }), put('articles', 'b1', 4n, { slug: 'second' })],
        5n,
        NOW,
      );
      expect(await store.get(gen1, 'articles', 'a1')).to.equal(null);
      expect(await store.find(gen1, 'articles', { filter: { slug: 'taken' } })).to.deep.equal([{ slug: 'taken' }]);
      expect((await store.findWithIds(gen1, 'articles', { filter: { slug: 'first' } })).map((e) => e.id)).to.deep.equal(['b2']);
      expect((await store.getGeneration('test-articles', 1))?.checkpoint).to.equal(5n);
    });

    test('a unique index ignores documents whose field is missing or null, as SQL does', async () => {
      await store.commit(gen1, [put('articles', 'n1', 1n, { slug: null }), put('articles', 'n2', 2n, { slug: null }), put('articles', 'm1', 3n, {}), put('articles', 'm2', 4n, {})], 4n, NOW);
      expect(await store.count(gen1, 'articles')).to.equal(4);
    });

    test('with deferred indexes, loads first and enforces unique indexes once they are created', async () => {
      const deferred = { ...articlesSchema, projection: 'test-deferred' };
      const target = { projection: 'test-deferred', generation: 1 };
      await store.createGeneration(deferred, 1, 1, NOW, { deferIndexes: true });
      await store.commit(target, [put('articles', 'a1', 1n, { slug: 'same' }), put('articles', 'a2', 2n, { slug: 'other' })], 2n, NOW);
      await store.createIndexes(deferred, 1);
      await store.createIndexes(deferred, 1);
      const error = await store.commit(target, [put('articles', 'a3', 3n, { slug: 'same' })], 3n, NOW).then(() => null, (e: unknown) => e);
      expect(error).to.be.instanceOf(Error);
      expect(await store.find(target, 'articles', { filter: { slug: 'other' } })).to.deep.equal([{ slug: 'other' }]);

      const broken = { ...articlesSchema, projection: 'test-broken' };
      await store.createGeneration(broken, 1, 1, NOW, { deferIndexes: true });
      await store.commit({ projection: 'test-broken', generation: 1 }, [put('articles', 'a1', 1n, { slug: 'dup' }), put('articles', 'a2', 2n, { slug: 'dup' })], 2n, NOW);
      const refused = await store.createIndexes(broken, 1).then(() => null, (e: unknown) => e);
      expect(refused).to.be.instanceOf(Error);
    });

    test('with deferred indexes, creates the indexes the projection reads while folding at once (a unique one is enforced)', async () => {
      const schema = {
        projection: 'test-folding',
        collections: { articles: { indexes: [{ name: 'by_slug', fields: [['slug', 1]] as const, unique: true, whileFolding: true }, { name: 'by_tag', fields: [['tag', 1]] as const, unique: true }] } },
      };
      const target = { projection: 'test-folding', generation: 1 };
      await store.createGeneration(schema, 1, 1, NOW, { deferIndexes: true });
      // by_tag is deferred: a duplicate tag is loaded; by_slug is not: a duplicate slug is refused.
      await store.commit(target, [put('articles', 'a1', 1n, { slug: 'one', tag: 't' }), put('articles', 'a2', 2n, { slug: 'two', tag: 't' })], 2n, NOW);
      const refused = await store.commit(target, [put('articles', 'a3', 3n, { slug: 'one', tag: 'u' })], 3n, NOW).then(() => null, (e: unknown) => e);
      expect(refused).to.be.instanceOf(UniqueConstraintError);
      expect(await store.find(target, 'articles', { filter: { slug: 'one' } })).to.deep.equal([{ slug: 'one', tag: 't' }]);
    });

    test('keeps generations apart; activating one retires the previous, checked against the expected active one', async () => {
      await store.commit(gen1, [put('articles', 'a1', 1n, { slug: 'one' })], 1n, NOW);
      await store.activateGeneration('test-articles', 1, null, NOW);
      expect(await store.activeGeneration('test-articles')).to.equal(1);
      await store.createGeneration(articlesSchema, 2, 4, NOW);
      expect(await store.get(gen2, 'articles', 'a1')).to.equal(null);
      await store.commit(gen2, [put('articles', 'a1', 1n, { slug: 'two' })], 1n, NOW);
      expect(await store.get(gen1, 'articles', 'a1')).to.deep.equal({ slug: 'one' });
      const conflict = await store.activateGeneration('test-articles', 2, null, LATER).then(() => null, (e: unknown) => e);
      expect(conflict).to.be.instanceOf(GenerationConflictError);
      expect(await store.activeGeneration('test-articles')).to.equal(1);
      await store.activateGeneration('test-articles', 2, 1, LATER);
      expect(await store.activeGeneration('test-articles')).to.equal(2);
      const states = (await store.listGenerations('test-articles')).map((g) => `${g.generation}:${g.state}:${g.version}`).sort();
      expect(states).to.deep.equal(['1:retired:3', '2:active:4']);
      await store.dropGeneration(articlesSchema, 1);
      expect(await store.getGeneration('test-articles', 1)).to.equal(null);
      expect(await store.get(gen1, 'articles', 'a1')).to.equal(null);
      expect(await store.get(gen2, 'articles', 'a1')).to.deep.equal({ slug: 'two' });
    });

    test('the projector lease: one holder at a time, renewed by its holder, taken over once expired, released', async () => {
      const at = (seconds: number) => new Date(Date.parse(NOW) + seconds * 1000).toISOString();
      expect(await store.getLease(gen1)).to.equal(null);
      expect(await store.acquireLease(gen1, 'p-1', at(0), 30_000)).to.equal(true);
      expect(await store.acquireLease(gen1, 'p-2', at(10), 30_000)).to.equal(false);
      expect(await store.acquireLease(gen1, 'p-1', at(20), 30_000)).to.equal(true); // renewed until 50 s
      expect(await store.acquireLease(gen1, 'p-2', at(40), 30_000)).to.equal(false);
      expect(await store.getLease(gen1)).to.deep.equal({ holder: 'p-1', expiresAt: at(50) });
      expect(await store.acquireLease(gen1, 'p-2', at(50), 30_000)).to.equal(true); // expired: taken over
      expect(await store.acquireLease(gen1, 'p-1', at(51), 30_000)).to.equal(false);
      // Another generation has its own lease.
      expect(await store.acquireLease({ projection: 'test-articles', generation: 2 }, 'p-1', at(51), 30_000)).to.equal(true);
      await store.releaseLease(gen1, 'p-1'); // not the holder: nothing
      expect((await store.getLease(gen1))?.holder).to.equal('p-2');
      await store.releaseLease(gen1, 'p-2');
      expect(await store.acquireLease(gen1, 'p-3', at(52), 30_000)).to.equal(true);
      // Two takers at once: exactly one gets it.
      const racers = await Promise.all(['r-1', 'r-2', 'r-3'].map((holder) => store.acquireLease({ projection: 'test-race', generation: 1 }, holder, at(0), 30_000)));
      expect(racers.filter(Boolean)).to.have.length(1);
    });

    test('a commit by a projector that lost its lease fails with LeaseLostError and writes nothing', async () => {
      expect(await store.acquireLease(gen1, 'p-1', NOW, 30_000)).to.equal(true);
      await store.commit(gen1, [put('articles', 'a1', 1n, { slug: 'one' })], 1n, NOW, { leaseHolder: 'p-1' });
      const later = new Date(Date.parse(NOW) + 60_000).toISOString();
      expect(await store.acquireLease(gen1, 'p-2', later, 30_000)).to.equal(true);
      await store.commit(gen1, [del('articles', 'a1', 2n)], 2n, later, { leaseHolder: 'p-2' });
      // p-1 stalled past its TTL and comes back with an older write: refused, the deleted document stays deleted.
      const error = await store.commit(gen1, [put('articles', 'a1', 1n, { slug: 'one' })], 1n, later, { leaseHolder: 'p-1' }).then(() => null, (e: unknown) => e);
      expect(error).to.be.instanceOf(LeaseLostError);
      expect(await store.get(gen1, 'articles', 'a1')).to.equal(null);
      expect((await store.getGeneration('test-articles', 1))?.checkpoint).to.equal(2n);
      // A holder that gave its lease up cannot commit with it either.
      await store.releaseLease(gen1, 'p-2');
      const released = await store.commit(gen1, [put('articles', 'a3', 3n, { slug: 'three' })], 3n, later, { leaseHolder: 'p-2', expectedCheckpoint: 2n }).then(() => null, (e: unknown) => e);
      expect(released).to.be.instanceOf(LeaseLostError);
      expect(await store.get(gen1, 'articles', 'a3')).to.equal(null);
    });

    test('records and clears the failure that paused a generation', async () => {
      const failure = { eventId: '6f1c2b7e-1d2a-4c3b-9e8f-0a1b2c3d4e5f', eventType: 'thing.broke', streamId: 's-1', position: 42n, message: 'cannot fold', failedAt: NOW };
      await store.setFailure(gen1, failure, NOW);
      expect((await store.getGeneration('test-articles', 1))?.failure).to.deep.equal(failure);
      await store.setFailure(gen1, null, LATER);
      expect((await store.getGeneration('test-articles', 1))?.failure).to.equal(null);
    });

    test('records skips once per event and lists them in position order', async () => {
      const skip = { projection: 'test-articles', eventId: '6f1c2b7e-1d2a-4c3b-9e8f-0a1b2c3d4e5f', position: 42n, reason: 'bad data', actor: 'operator:alice', skippedAt: NOW };
      await store.addSkip({ ...skip, position: 50n, eventId: '7f1c2b7e-1d2a-4c3b-9e8f-0a1b2c3d4e5f' });
      await store.addSkip(skip);
      await store.addSkip({ ...skip, reason: 'again' });
      const skips = await store.listSkips('test-articles');
      expect(skips.map((s) => [s.position, s.reason])).to.deep.equal([[42n, 'bad data'], [50n, 'bad data']]);
      expect(await store.listSkips('other')).to.deep.equal([]);
    });

    test('lists generations of every projection', async () => {
      await store.createGeneration({ projection: 'test-other', collections: { things: {} } }, 1, 1, NOW);
      const names = (await store.listGenerations()).map((g) => g.projection).sort();
      expect(names).to.deep.equal(['test-articles', 'test-other']);
    });
  });
}
