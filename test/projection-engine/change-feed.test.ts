import { expect } from 'chai';
import { defineProjection, schemaOf } from '../../src/projection-engine/projection.ts';
import { Projector } from '../../src/projection-engine/projector.ts';
import {
  CHANGE_FEED_COLLECTION,
  CHANGE_FEED_PRUNE_EVERY,
  CHANGE_FEED_RETAIN,
  EVERYTHING,
  MAX_RECORD_SCOPES,
  changeRecordWrite,
  changesAfter,
  latestChange,
  type ChangeRecord,
} from '../../src/projection-engine/change-feed.ts';
import { ReadModelVersions, type ReadModelChange } from '../../src/projection-engine/read-model-versions.ts';
import { encodePosition } from '../../src/event-store/position.ts';
import path from 'node:path';
import { SqliteReadModelStore } from '../../src/read-models/sqlite-read-model-store.ts';
import { engineFixture, eventually, silentLogger } from '../support/engine-fixture.ts';

/** Totals per stream, which readers see; `by: 0` counts in a collection they do not (its commits change nothing of theirs). */
const fed = defineProjection({
  name: 'test-fed',
  version: 1,
  description: 'totals per stream, with a change feed',
  collections: { totals: {}, internal: {} },
  filter: { eventTypes: ['test.counted'] },
  async apply(event, view) {
    const by = (event.data as { by: number }).by;
    const collection = by === 0 ? 'internal' : 'totals';
    const before = await view.get<{ total: number }>(collection, event.streamId);
    view.put(collection, event.streamId, { total: (before?.total ?? 0) + by });
  },
  changes: (writes) => writes.filter((write) => write.collection === 'totals').map((write) => `stream:${write.id}`),
});

const unfed = defineProjection({ ...fed, name: 'test-unfed', changes: undefined });

describe('projection change feed', function () {
  this.timeout(60_000);
  let f: ReturnType<typeof engineFixture>;
  const target = { projection: fed.name, generation: 1 };

  beforeEach(async () => {
    f = engineFixture();
    for (const projection of [fed, unfed]) {
      await f.store.createGeneration(schemaOf(projection), 1, projection.version, f.clock.now().toISOString());
      await f.store.activateGeneration(projection.name, 1, null, f.clock.now().toISOString());
    }
  });
  afterEach(() => f.close());

  /** Folds what the log holds so far, one commit per event, with a projector started afresh. */
  async function fold(projection = fed): Promise<void> {
    const projector = new Projector({ projection, generation: 1, log: f.log, store: f.store, clock: f.clock, logger: silentLogger, stopWhenCaughtUp: true, batchSize: 1 });
    expect(await projector.run()).to.equal('live');
  }
  const records = async () => (await f.store.find(target, CHANGE_FEED_COLLECTION, { sort: [['at', 'asc']] })) as unknown as ChangeRecord[];

  it('records each commit that changes something with its scopes, each naming the one before, across restarts', async () => {
    const a = await f.count('a', 1);
    const internal = await f.count('b', 0);
    const c = await f.count('c', 2);
    await fold();
    const d = await f.count('d', 3);
    await fold();
    expect(await records()).to.deep.equal([
      { at: encodePosition(a.position), since: null, scopes: ['stream:a'] },
      { at: encodePosition(c.position), since: encodePosition(a.position), scopes: ['stream:c'] },
      // A new projector (a restart) goes on from the newest record.
      { at: encodePosition(d.position), since: encodePosition(c.position), scopes: ['stream:d'] },
    ]);
    expect(internal.position > a.position).to.equal(true);
    // A projection without a change feed has no such collection.
    expect(Object.keys(schemaOf(unfed).collections)).to.deep.equal(['totals', 'internal']);
  });

  it('keeps the newest CHANGE_FEED_RETAIN records (and at most CHANGE_FEED_PRUNE_EVERY more), deleting older ones as it goes', async () => {
    const total = CHANGE_FEED_RETAIN + 2 * CHANGE_FEED_PRUNE_EVERY + 17;
    for (let i = 0; i < total; i += 100) {
      await f.log.append(`bulk-${i}`, Array.from({ length: Math.min(100, total - i) }, () => ({ type: 'test.counted', data: { by: 1 } })), 'any', { actor: { type: 'user', id: 'u-1' } });
    }
    // One stream per 100 events: each event's commit changes its stream's total.
    await fold();
    const kept = await records();
    expect(kept.length).to.be.within(CHANGE_FEED_RETAIN, CHANGE_FEED_RETAIN + CHANGE_FEED_PRUNE_EVERY);
    const head = await f.events.headPosition();
    expect(kept.at(-1)!.at).to.equal(encodePosition(head!));
    for (let i = 1; i < kept.length; i++) expect(kept[i]!.since, `record ${i}`).to.equal(kept[i - 1]!.at);
  });

  it('reads the records after one seen as an unbroken run, or a gap when one is missing or there are more than asked for', async () => {
    for (const stream of ['a', 'b', 'c', 'd']) await f.count(stream, 1);
    await fold();
    const [first, second, third, fourth] = await records();
    const through = fourth!.at;
    expect(await changesAfter(f.store, target, null, through)).to.deep.equal([first, second, third, fourth]);
    expect(await changesAfter(f.store, target, second!.at, through)).to.deep.equal([third, fourth]);
    expect(await changesAfter(f.store, target, fourth!.at, through)).to.deep.equal([]);
    expect(await latestChange(f.store, target)).to.equal(fourth!.at);
    expect(await changesAfter(f.store, target, second!.at, through, 1)).to.equal('gap');
    // A record pruned between two reads: the next one names it, not the one the reader saw last.
    await f.store.commit(target, [{ collection: CHANGE_FEED_COLLECTION, id: third!.at, doc: null, position: BigInt(fourth!.at) + 1n }], BigInt(fourth!.at) + 1n, f.clock.now().toISOString());
    expect(await changesAfter(f.store, target, second!.at, through)).to.equal('gap');
  });

  it('reads no record beyond the checkpoint (a commit that failed half-way on a store without transactions), and one folded again after it is a gap', async () => {
    for (const stream of ['a', 'b']) await f.count(stream, 1);
    await fold();
    const [first, second] = await records();
    // MongoDB stores the checkpoint after the documents: a commit that failed before it leaves its record beyond the checkpoint.
    const orphan = changeRecordWrite(BigInt(second!.at) + 5n, second!.at, ['stream:c']);
    await f.store.commit(target, [orphan], BigInt(second!.at), f.clock.now().toISOString());
    expect(await changesAfter(f.store, target, first!.at, second!.at)).to.deep.equal([second]);
    expect(await latestChange(f.store, target, second!.at)).to.equal(second!.at);
    expect(await latestChange(f.store, target)).to.equal(orphan.id);
    // Folded again in a smaller batch: its record names the newest one stored, the half-done commit's.
    const redo = changeRecordWrite(BigInt(second!.at) + 3n, orphan.id, ['stream:c']);
    await f.store.commit(target, [redo], BigInt(second!.at) + 3n, f.clock.now().toISOString());
    expect(await changesAfter(f.store, target, second!.at, redo.id)).to.equal('gap');
  });

  it('records a commit that changes more than MAX_RECORD_SCOPES scopes as a change of everything', () => {
    const many = Array.from({ length: MAX_RECORD_SCOPES + 1 }, (_, i) => `stream:${i}`);
    expect(changeRecordWrite(7n, null, many).doc).to.deep.equal({ at: encodePosition(7n), since: null, scopes: [EVERYTHING] });
    expect(changeRecordWrite(7n, null, many.slice(1)).doc!['scopes']).to.have.length(MAX_RECORD_SCOPES);
  });

  describe('ReadModelVersions polling (an API-only process)', () => {
    it('polls at once when another connection commits (SQLite), not only at its interval', async () => {
      const replica = SqliteReadModelStore.open(path.join(f.dir, 'read-models.sqlite'));
      // An interval no test waits for: only the cue of the other connection's commit can make it poll.
      const versions = new ReadModelVersions(replica, [fed], { pollMs: 600_000 });
      await versions.start();
      const changes: Array<string[] | undefined> = [];
      versions.onChange(({ scopes }) => changes.push(scopes && [...scopes]));
      try {
        await f.count('a', 1);
        await fold();
        await eventually(async () => changes, (seen) => seen.length > 0, 3_000);
        expect(changes).to.deep.equal([['stream:a']]);
      } finally {
        versions.stop();
        await replica.close();
      }
    });


    it('tells the scopes committed since its last poll, nothing for a commit that changed nothing, and anything after a gap or without a feed', async () => {
      const versions = new ReadModelVersions(f.store, [fed, unfed], { pollMs: 10 });
      const changes: Array<{ projection: string; scopes: string[] | undefined }> = [];
      // Its first poll learns the versions (anything may have changed): heard from the second on.
      await versions.start();
      versions.onChange(({ projection, scopes }: ReadModelChange) => changes.push({ projection, scopes: scopes && [...scopes].sort() }));
      try {
        await f.count('a', 1);
        await f.count('b', 1);
        await fold();
        await eventually(async () => changes.filter((c) => c.projection === fed.name), (seen) => seen.flatMap((c) => c.scopes ?? ['?']).includes('stream:b'));
        expect(changes.filter((c) => c.projection === fed.name).flatMap((c) => c.scopes ?? ['?']).sort()).to.deep.equal(['stream:a', 'stream:b']);

        changes.length = 0;
        const versionBefore = versions.of(fed.name);
        await f.count('b', 0);
        await fold();
        await fold(unfed);
        await eventually(async () => changes, (seen) => seen.some((c) => c.projection === unfed.name));
        // Polls every 10 ms: a hundred milliseconds more lets them see both commits.
        await new Promise((resolve) => setTimeout(resolve, 100));
        // The commit wrote only what readers do not see: no change, and the version caches key by stays; the
        // projection without a feed changed, as far as anyone can tell, anything.
        expect(changes.filter((c) => c.projection === fed.name)).to.deep.equal([]);
        expect(versions.of(fed.name)).to.equal(versionBefore);
        // (Once per commit the poll saw: its commits take turns of the event loop, one event each here.)
        const unfedScopes = changes.filter((c) => c.projection === unfed.name).map((c) => c.scopes);
        expect(unfedScopes).to.not.be.empty;
        expect(unfedScopes.every((scopes) => scopes === undefined), JSON.stringify(unfedScopes)).to.equal(true);

        // Records pruned before the poll read them (as if it had slept through more than the feed keeps).
        versions.stop();
        changes.length = 0;
        await f.count('c', 1);
        await f.count('d', 1);
        await fold();
        const [, , c] = await records();
        const position = (await f.events.headPosition())! + 1n;
        await f.store.commit(target, [{ collection: CHANGE_FEED_COLLECTION, id: c!.at, doc: null, position }], position, f.clock.now().toISOString());
        await versions.start();
        await eventually(async () => changes, (seen) => seen.some((change) => change.projection === fed.name));
        expect(changes.filter((change) => change.projection === fed.name).map((change) => change.scopes)).to.deep.equal([undefined]);
      } finally {
        versions.stop();
      }
    });
  });
});
