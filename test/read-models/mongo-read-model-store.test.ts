/**
 * The MongoDB read-model adapter: the port's conformance suite and MongoDB-specific behaviour against a real
 * server (test/support/mongo-server.ts: MONGODB_URL, a `mongo:7` container or FerretDB; pending with the reason when none can run), plus the
 * connection-failure and URL handling that need no server.
 */
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { MongoClient } from 'mongodb';
import {
  databaseFromUrl,
  MongoReadModelStore,
  redactUrlSecrets,
} from '../../src/read-models/mongo-read-model-store.ts';
import {
  GenerationConflictError,
  LeaseLostError,
  ReadModelError,
  ReadModelUnavailableError,
  type ReadModelStore,
} from '../../src/read-models/read-model-store.ts';
import { conformanceSuite, type HarnessOrPending } from '../support/conformance.ts';
import { lacksOn, mongoServer, mongoServerPending, pendingOn, type FerretDbGap, type MongoServer } from '../support/mongo-server.ts';
import { indexText, queryTokens } from '../../src/search/search-tokens.ts';
import { toMongoFilter, toMongoSort, toMongoText } from '../../src/read-models/mongo-query.ts';
import { articlesSchema, readModelStoreConformance, searchSchema } from './read-model-store.conformance.ts';
import { freePort as closedPort } from '../support/ports.ts';

const NOW = '2026-11-22T10:00:00.000Z';
const LATER = '2026-11-22T11:00:00.000Z';
const pending = await mongoServerPending();

let serverUrl: string | undefined;
let server: MongoServer | undefined;
const createdDatabases = new Set<string>();

/** The shared server of mongoServer() (MONGODB_URL, a container, or FerretDB), started on first use. */
async function startServer(): Promise<void> {
  server = await mongoServer();
  serverUrl = server.url;
}

/** Marks the running test pending when the server lacks `gap` (FerretDB), naming it. */
function needs(context: Mocha.Context, gap: FerretDbGap): void {
  const reason = pendingOn(server!, gap);
  if (reason) {
    context.test!.title += ` [pending: ${reason}]`;
    context.skip();
  }
}

/** Drops the databases the tests created (on an existing server, nothing else is touched). */
async function dropCreatedDatabases(): Promise<void> {
  if (!serverUrl || createdDatabases.size === 0) return;
  const client = new MongoClient(serverUrl, { serverSelectionTimeoutMS: 5_000 });
  try {
    for (const database of createdDatabases) await client.db(database).dropDatabase();
    createdDatabases.clear();
  } finally {
    await client.close();
  }
}

function mongoHarness(): HarnessOrPending<MongoReadModelStore> {
  if (pending) return { pending };
  return {
    setup: startServer,
    /** A store on a fresh database of the shared server, so that tests never see each other's data. */
    async create() {
      if (!serverUrl) throw new Error('MongoDB harness used before setup');
      const database = `annals_test_${randomUUID().replaceAll('-', '').slice(0, 20)}`;
      createdDatabases.add(database);
      return MongoReadModelStore.connect(serverUrl, { database });
    },
    teardown: dropCreatedDatabases,
    lacks: (feature) => lacksOn(server!, feature),
  };
}

readModelStoreConformance('read models: MongoDB adapter', mongoHarness() as HarnessOrPending<ReadModelStore>);

conformanceSuite('read models: MongoDB adapter, storage details', mongoHarness(), ({ test, harness }) => {
  const gen1 = { projection: 'test-articles', generation: 1 };
  let store: MongoReadModelStore;
  let client: MongoClient;

  beforeEach(async () => {
    store = await harness().create();
    await store.createGeneration(articlesSchema, 1, 1, NOW);
    client = new MongoClient(serverUrl!);
  });
  afterEach(async () => {
    await client.close();
    await store.close();
  });

  const raw = () => client.db(store.databaseName);

  test('stores {_id, _pos, doc, _unique}, so document keys named _id or _pos do not clash', async () => {
    const doc = { _id: 'user id', _pos: 'user pos', slug: 's', nested: { list: [1, 'two', null], flag: false } };
    await store.commit(gen1, [{ collection: 'articles', id: 'a1', doc, position: 7n }], 7n, NOW);
    const stored = await raw().collection('rm.test-articles.articles.g1').findOne({ _id: 'a1' as never });
    // _unique: the document's key in the unique index by_slug (see mongo-unique-keys.ts).
    expect(stored).to.deep.equal({ _id: 'a1', _pos: '00000000000000000007', doc, _unique: { by_slug: '["s"]' } });
    expect(await store.get(gen1, 'articles', 'a1')).to.deep.equal(doc);
    expect(await store.find(gen1, 'articles', { filter: { _id: 'user id' } })).to.deep.equal([doc]);
  });

  test('creates the schema\'s indexes on doc.<field>, idempotently, and no partial index; unique ones ignore documents without the field or with null', async () => {
    await store.createGeneration(articlesSchema, 1, 1, NOW);
    const indexes = await raw().collection('rm.test-articles.articles.g1').indexes();
    const byName = Object.fromEntries(indexes.map((i) => [i.name, i]));
    expect(byName['by_slug']?.key).to.deep.equal({ 'doc.slug': 1, _id: 1 });
    expect(byName['by_slug__unique']).to.deep.include({ key: { '_unique.by_slug': 1 }, unique: true });
    expect(indexes.filter((i) => 'partialFilterExpression' in i)).to.deep.equal([]);
    expect(byName['by_status_date']?.key).to.deep.equal({ 'doc.status': 1, 'doc.meta.publishedAt': -1, _id: -1 });
    await store.commit(
      gen1,
      [
        { collection: 'articles', id: 'n1', doc: { title: 'no slug' }, position: 1n },
        { collection: 'articles', id: 'n2', doc: { title: 'no slug either' }, position: 2n },
      ],
      2n,
      NOW,
    );
    expect(await store.count(gen1, 'articles')).to.equal(2);
  });

  test('creates a text index with no language, which a document field named language does not override', async function () {
    needs(this, 'text indexes ($text)');
    const target = { projection: 'test-search', generation: 1 };
    await store.createGeneration(searchSchema, 1, 1, NOW);
    const indexes = await raw().collection('rm.test-search.pages.g1').indexes();
    const text = indexes.find((i) => i.name === 'search-text');
    expect(text).to.deep.include({ default_language: 'none', weights: { 'doc.search': 1 } });
    await store.commit(target, [
      { collection: 'pages', id: 'p1', position: 1n, doc: { language: 'ja', search: indexText('running 東京タワー') } },
      { collection: 'pages', id: 'p2', position: 1n, doc: { language: 'english', search: indexText('runs') } },
    ], 1n, NOW);
    expect((await store.findWithIds(target, 'pages', { text: queryTokens('running') })).map((e) => e.id)).to.deep.equal(['p1']);
    expect((await store.findWithIds(target, 'pages', { text: queryTokens('run') })).map((e) => e.id)).to.deep.equal([]);
    expect((await store.findWithIds(target, 'pages', { text: queryTokens('東京') })).map((e) => e.id)).to.deep.equal(['p1']);
    // A reader that never saw the schema (a public-API replica) finds the textField through the index.
    const replica = new MongoReadModelStore(client.db(store.databaseName));
    expect(await replica.count(target, 'pages', undefined, ['タワ'])).to.equal(1);
    expect(await replica.count(target, 'pages', undefined, ['ワタ'])).to.equal(0);
    expect((await replica.find(target, 'pages', { text: queryTokens('タワー') })).length).to.equal(1);
  });

  test('search and deep pages stay within one form set: the query plans (explain) read only its index entries', async function () {
    needs(this, 'text indexes ($text)');
    const schema = {
      projection: 'test-plans',
      collections: {
        views: {
          indexes: [{ name: 'by_rank', fields: [['formSetId', 1], ['locale', 1], ['rank', 1]] as Array<[string, 1]> }],
          textField: 'search',
          textPrefix: ['formSetId', 'locale'],
        },
      },
    };
    const target = { projection: 'test-plans', generation: 1 };
    await store.createGeneration(schema, 1, 1, NOW);
    const writes = [];
    for (const formSetId of ['fs-a', 'fs-b', 'fs-c', 'fs-d']) {
      for (let i = 0; i < 300; i++) {
        writes.push({ collection: 'views', id: `${formSetId}-${i}`, position: 1n, doc: { formSetId, locale: 'en', rank: i, search: indexText(`common words entry ${i % 10 === 0 ? 'rare' : 'plain'}`) } });
      }
    }
    await store.commit(target, writes, 1n, NOW);
    const collection = raw().collection('rm.test-plans.views.g1');
    const filter = toMongoFilter({ formSetId: 'fs-a', locale: 'en' });

    // Search: the compound text index narrows to fs-a's entries before the text match.
    const search = await collection.find({ ...filter, ...toMongoText('doc.search', queryTokens('rare')) }).explain('executionStats');
    expect(JSON.stringify(search.queryPlanner.winningPlan)).to.include('"stage":"TEXT');
    expect(JSON.stringify(search.queryPlanner.winningPlan)).to.include('fs-a');
    expect(search.executionStats.totalDocsExamined).to.be.at.most(300);
    expect((await store.findWithIds(target, 'views', { filter: { formSetId: 'fs-a', locale: 'en' }, text: queryTokens('rare') })).length).to.equal(30);
    const unscoped = await store.find(target, 'views', { text: queryTokens('rare') }).then(() => null, (e: unknown) => e);
    expect(unscoped).to.be.instanceOf(ReadModelError);

    // A deep page: the index of the sort, within fs-a; skipped entries cost index keys, not other tenants' documents.
    const page = await collection.find(filter).sort(toMongoSort([['rank', 'asc']])).skip(250).limit(20).explain('executionStats');
    expect(JSON.stringify(page.queryPlanner.winningPlan)).to.include('by_rank');
    expect(page.executionStats.totalKeysExamined).to.be.at.most(271);
    expect(page.executionStats.nReturned).to.equal(20);
  });

  describe('deep pages by key ranges (mongo-deep-pages.ts)', () => {
    const target = { projection: 'test-deep', generation: 1 };
    const schema = {
      projection: 'test-deep',
      collections: { items: { indexes: [{ name: 'by_list_rank', fields: [['list', 1], ['rank', -1]] as Array<[string, 1 | -1]> }] } },
    };
    const item = (i: number, extra: Record<string, unknown> = {}) => ({ list: i % 5 === 0 ? 'b' : 'a', rank: i % 37, ...(i % 9 === 0 ? {} : { title: `t${i % 13}` }), ...extra });
    const id = (i: number) => `i${String(i).padStart(4, '0')}`;
    let deep: MongoReadModelStore;
    let monitored: MongoClient;
    let finds: Array<Record<string, unknown>>;
    beforeEach(async () => {
      monitored = new MongoClient(serverUrl!, { monitorCommands: true });
      finds = [];
      monitored.on('commandStarted', (event) => {
        if (event.commandName === 'find' && String(event.command['find']).startsWith('rm.')) finds.push(event.command);
      });
      deep = new MongoReadModelStore(monitored.db(store.databaseName), { deepPageBlockSize: 8 });
      await deep.createGeneration(schema, 1, 1, NOW);
      await deep.commit(target, Array.from({ length: 300 }, (_, i) => ({ collection: 'items', id: id(i), position: 1n, doc: item(i) })), 1n, NOW);
    });
    afterEach(async () => {
      await monitored.close();
    });

    const sorts: Array<Array<[string, 'asc' | 'desc']>> = [[['rank', 'desc']], [['rank', 'asc'], ['title', 'desc']], [['title', 'asc']]];
    async function expectSlices(label: string): Promise<void> {
      for (const sort of sorts) {
        for (const filter of [{ list: 'a' }, undefined]) {
          const whole = (await deep.findWithIds(target, 'items', { sort, ...(filter ? { filter } : {}) })).map((e) => e.id);
          for (const offset of [7, 8, 9, 63, 64, 100, 171, whole.length - 3, whole.length, whole.length + 5]) {
            const page = (await deep.findWithIds(target, 'items', { sort, ...(filter ? { filter } : {}), offset, limit: 11 })).map((e) => e.id);
            expect(page, `${label}: ${JSON.stringify(sort)} ${JSON.stringify(filter)} at ${offset}`).to.deep.equal(whole.slice(offset, offset + 11));
          }
        }
      }
    }

    test('are the slices of the whole list, through inserts, moves and deletes (each commit builds the index again)', async function () {
      // 540 pages compared with their whole lists: on FerretDB, which scans for each, beside other suites, 20 s is short.
      this.timeout(90_000);
      await expectSlices('as loaded');
      await deep.commit(target, Array.from({ length: 40 }, (_, k) => ({ collection: 'items', id: id(300 + k), position: 2n, doc: item(300 + k, { rank: 5 }) })), 2n, NOW);
      await expectSlices('after inserts');
      await deep.commit(target, Array.from({ length: 60 }, (_, k) => ({ collection: 'items', id: id(k * 4), position: 3n, doc: k % 2 ? null : item(k * 4, { list: 'a', rank: 36 }) })), 3n, NOW);
      await expectSlices('after moves and deletes');
      expect(deep.deepPageReads().counted).to.be.greaterThan(100);
    });

    test('a deep page is a range from its block, skipping fewer than a block: it does not walk the list from its start', async () => {
      const sort: Array<[string, 'desc']> = [['rank', 'desc']];
      await deep.findWithIds(target, 'items', { filter: { list: 'a' }, sort, offset: 200, limit: 10 });
      finds.length = 0;
      const page = await deep.findWithIds(target, 'items', { filter: { list: 'a' }, sort, offset: 201, limit: 10 });
      expect(page).to.have.length(10);
      expect(finds).to.have.length(1);
      expect(finds[0]!['skip'] ?? 0).to.be.below(8);
      expect(JSON.stringify(finds[0]!['filter'])).to.include('$or');
      // A list whose sort field holds strings and numbers cannot be keyed: read with skip(), as before.
      await deep.commit(target, [{ collection: 'items', id: 'mixed', position: 4n, doc: { list: 'a', rank: 'high' } }], 4n, NOW);
      const before = deep.deepPageReads().offset;
      expect((await deep.findWithIds(target, 'items', { filter: { list: 'a' }, sort, offset: 201, limit: 10 })).map((e) => e.id)).to.deep.equal(
        (await deep.findWithIds(target, 'items', { filter: { list: 'a' }, sort })).slice(201, 211).map((e) => e.id),
      );
      expect(deep.deepPageReads().offset).to.equal(before + 1);
    });

    test('the server examines a block and a page of index keys for a deep page, not the keys before it (explain)', async function () {
      needs(this, 'explain executionStats');
      const sort: Array<[string, 'desc']> = [['rank', 'desc']];
      await deep.findWithIds(target, 'items', { filter: { list: 'a' }, sort, offset: 200, limit: 10 });
      const sent = finds.at(-1)!;
      const plan = await raw().collection(String(sent['find'])).find(sent['filter'] as never).sort(sent['sort'] as never).skip(Number(sent['skip'] ?? 0)).limit(10).explain('executionStats');
      // Each branch of the range's $or may walk up to a block and a page of keys (merged in sort order); skip(200) walks 210.
      expect(plan.executionStats.totalKeysExamined).to.be.at.most(2 * (8 + 10) + 2);
      expect(plan.executionStats.nReturned).to.equal(10);
    });
  });

  test('a projector commit checks its lease in its commit point, against the holder stamped on the record: no read of the lease', async () => {
    const monitored = new MongoClient(serverUrl!, { monitorCommands: true });
    const commands: string[] = [];
    monitored.on('commandStarted', (event) => commands.push(`${event.commandName} ${String(event.command[event.commandName])}`));
    const projector = new MongoReadModelStore(monitored.db(store.databaseName));
    const put = (id: string, position: bigint) => ({ collection: 'articles', id, doc: { slug: `s-${id}-${position}` }, position });
    try {
      expect(await projector.acquireLease(gen1, 'p-1', NOW, 30_000)).to.equal(true);
      const record = await raw().collection('projection_generations').findOne({ _id: 'test-articles:1' as never });
      expect(record?.['lease']).to.deep.equal({ holder: 'p-1', expiresAt: '2026-11-22T10:00:30.000Z' });
      // A renewal by the holder writes the lease only.
      commands.length = 0;
      expect(await projector.acquireLease(gen1, 'p-1', LATER, 30_000)).to.equal(true);
      expect(commands).to.deep.equal(['findAndModify projection_leases']);
      await projector.commit(gen1, [put('a1', 1n)], 1n, NOW, { leaseHolder: 'p-1', expectedCheckpoint: null });
      commands.length = 0;
      await projector.commit(gen1, [put('a1', 2n), put('a2', 2n)], 2n, NOW, { leaseHolder: 'p-1', expectedCheckpoint: 1n });
      await projector.commit(gen1, [], 3n, NOW, { leaseHolder: 'p-1', expectedCheckpoint: 2n });
      expect(commands.filter((c) => c.includes('projection_leases'))).to.deep.equal([]);
      if ((await projector.commitMode()) === 'journal') {
        expect(commands).to.deep.equal([
          // the unique index's check: the stored documents, then who holds the new slugs
          'find rm.test-articles.articles.g1',
          'find rm.test-articles.articles.g1',
          'update projection_generations', // the commit point: the journal, if the checkpoint, the holder and no journal are as read
          'update rm.test-articles.articles.g1',
          'update projection_generations', // the checkpoint, the journal removed
          'update projection_generations', // a commit of progress only: one conditional write
        ]);
      }
      expect(await store.get(gen1, 'articles', 'a2')).to.deep.equal({ slug: 's-a2-2' });
      expect((await store.getGeneration('test-articles', 1))?.checkpoint).to.equal(3n);
    } finally {
      await monitored.close();
    }
  });

  test('a lease taken before its generation was recorded, or stamped by an older version, still lets its holder commit; a released one does not', async () => {
    const early = { projection: 'test-articles', generation: 2 };
    expect(await store.acquireLease(early, 'p-1', NOW, 30_000)).to.equal(true);
    await store.createGeneration(articlesSchema, 2, 1, NOW);
    await store.commit(early, [{ collection: 'articles', id: 'a1', doc: { slug: 'one' }, position: 1n }], 1n, NOW, { leaseHolder: 'p-1', expectedCheckpoint: null });
    expect(await store.get(early, 'articles', 'a1')).to.deep.equal({ slug: 'one' });
    // A record without a stamp (written before stamps): settled from the lease on the next commit.
    await raw().collection('projection_generations').updateOne({ _id: 'test-articles:2' as never }, { $unset: { lease: '' } });
    await store.commit(early, [], 2n, NOW, { leaseHolder: 'p-1', expectedCheckpoint: 1n });
    expect((await raw().collection('projection_generations').findOne({ _id: 'test-articles:2' as never }))?.['lease']?.holder).to.equal('p-1');
    await store.releaseLease(early, 'p-1');
    expect((await raw().collection('projection_generations').findOne({ _id: 'test-articles:2' as never }))?.['lease']).to.equal(undefined);
    const error = await store.commit(early, [], 3n, NOW, { leaseHolder: 'p-1', expectedCheckpoint: 2n }).then(() => null, (e: unknown) => e);
    expect(error).to.be.instanceOf(LeaseLostError);
    expect((await store.getGeneration('test-articles', 2))?.checkpoint).to.equal(2n);
  });

  test('records generations and skips with encoded positions, never raw numbers', async () => {
    await store.commit(gen1, [], (1n << 63n) + 1n, NOW);
    const record = await raw().collection('projection_generations').findOne({ projection: 'test-articles', generation: 1 });
    expect(record?.['checkpoint']).to.equal('09223372036854775809');
    expect((await store.getGeneration('test-articles', 1))?.checkpoint).to.equal((1n << 63n) + 1n);
  });

  test('a commit into a generation that does not exist fails', async () => {
    const error = await store.commit({ projection: 'test-articles', generation: 9 }, [], 1n, NOW).then(() => null, (e: unknown) => e);
    expect(error).to.be.instanceOf(ReadModelError);
  });

  test('the active generation is one pointer document, swapped in one write: readers never see none active', async () => {
    await store.activateGeneration('test-articles', 1, null, NOW);
    await store.createGeneration(articlesSchema, 2, 1, NOW);
    const writes: string[] = [];
    const monitored = new MongoClient(serverUrl!, { monitorCommands: true });
    monitored.on('commandStarted', (event) => {
      if (['insert', 'update', 'delete', 'findAndModify'].includes(event.commandName)) writes.push(`${event.commandName} ${String(event.command[event.commandName])}`);
    });
    try {
      await new MongoReadModelStore(monitored.db(store.databaseName)).activateGeneration('test-articles', 2, 1, LATER);
    } finally {
      await monitored.close();
    }
    expect(writes).to.deep.equal(['update projection_active']);
    expect(await raw().collection('projection_active').findOne({ _id: 'test-articles' as never })).to.deep.equal({ _id: 'test-articles', generation: 2, retired: [1], updatedAt: LATER });
    expect((await store.listGenerations('test-articles')).map((g) => [g.generation, g.state])).to.deep.equal([[1, 'retired'], [2, 'active']]);
    // Dropping the active generation leaves none active, and a retired one is forgotten with its record.
    await store.dropGeneration(articlesSchema, 1);
    expect((await raw().collection('projection_active').findOne({ _id: 'test-articles' as never }))?.['retired']).to.deep.equal([]);
    await store.dropGeneration(articlesSchema, 2);
    expect(await store.activeGeneration('test-articles')).to.equal(null);
  });

  test('generations recorded by a version before the pointer keep their states: the pointer is made from them once', async () => {
    await store.createGeneration(articlesSchema, 2, 1, NOW);
    await store.createGeneration(articlesSchema, 3, 1, NOW);
    const records = raw().collection('projection_generations');
    await records.updateOne({ _id: 'test-articles:1' as never }, { $set: { state: 'retired' } });
    await records.updateOne({ _id: 'test-articles:2' as never }, { $set: { state: 'active' } });
    await records.updateOne({ _id: 'test-articles:3' as never }, { $set: { state: 'building' } });
    const upgraded = new MongoReadModelStore(client.db(store.databaseName));
    expect(await upgraded.activeGeneration('test-articles')).to.equal(2);
    expect((await upgraded.listGenerations('test-articles')).map((g) => g.state)).to.deep.equal(['retired', 'active', 'building']);
    await upgraded.activateGeneration('test-articles', 3, 2, LATER);
    expect((await upgraded.listGenerations('test-articles')).map((g) => g.state)).to.deep.equal(['retired', 'retired', 'active']);
  });

  test('concurrent activations with the same expectation: exactly one wins', async function () {
    needs(this, 'atomic conditional updates (compare-and-set of one document)');
    await store.activateGeneration('test-articles', 1, null, NOW);
    await store.createGeneration(articlesSchema, 2, 1, NOW);
    await store.createGeneration(articlesSchema, 3, 1, NOW);
    const results = await Promise.allSettled([
      store.activateGeneration('test-articles', 2, 1, NOW),
      store.activateGeneration('test-articles', 3, 1, NOW),
    ]);
    expect(results.filter((r) => r.status === 'fulfilled')).to.have.length(1);
    const rejected = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    expect(rejected?.reason).to.be.instanceOf(GenerationConflictError);
    const active = await store.activeGeneration('test-articles');
    expect(active === 2 || active === 3).to.equal(true);
  });

  test('the database name comes from the URL, else annals', async () => {
    for (const [database, expected] of [
      ['annals_test_named', 'annals_test_named'],
      ['', 'annals'],
    ] as const) {
      // Only pinged, never written: no database is created.
      const other = await MongoReadModelStore.connect(withDatabase(serverUrl!, database));
      try {
        expect(other.databaseName).to.equal(expected);
      } finally {
        await other.close();
      }
    }
  });
});

/** `url` with its path naming `database`, keeping what the login authenticated against. */
function withDatabase(url: string, database: string): string {
  const queryStart = url.indexOf('?');
  const base = queryStart < 0 ? url : url.slice(0, queryStart);
  const query = new URLSearchParams(queryStart < 0 ? '' : url.slice(queryStart + 1));
  const match = /^(mongodb(?:\+srv)?:\/\/[^/]*)(?:\/(.*))?$/.exec(base);
  if (!match) throw new Error('not a MongoDB URL');
  if (match[1]!.includes('@') && !query.has('authSource')) query.set('authSource', match[2] || 'admin');
  const search = query.toString();
  return `${match[1]}/${database}${search ? `?${search}` : ''}`;
}


describe('read models: MongoDB adapter without a server', () => {
  it('fails to connect with ReadModelUnavailableError naming the host, never the credentials', async () => {
    const port = await closedPort();
    const url = `mongodb://annals-user:s3cr%40t-pw@127.0.0.1:${port}/cms?authSource=admin&tlsCertificateKeyFilePassword=k3y-pass`;
    const error = await MongoReadModelStore.connect(url, { serverSelectionTimeoutMS: 300 }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).to.be.instanceOf(ReadModelUnavailableError);
    const message = (error as Error).message;
    expect(message).to.include(`127.0.0.1:${port}/cms`);
    for (const secret of ['annals-user', 's3cr', 's3cr@t-pw', 'k3y-pass']) expect(message).not.to.include(secret);
  });

  it('reports an unreachable server from ping and from reads as ReadModelUnavailableError', async () => {
    const port = await closedPort();
    const client = new MongoClient(`mongodb://127.0.0.1:${port}`, { serverSelectionTimeoutMS: 300 });
    const store = new MongoReadModelStore(client.db('annals_test'));
    try {
      for (const attempt of [() => store.ping(), () => store.get({ projection: 'p', generation: 1 }, 'c', 'x')]) {
        const error = await attempt().then(() => null, (e: unknown) => e);
        expect(error).to.be.instanceOf(ReadModelUnavailableError);
        expect((error as Error).message).to.include(`127.0.0.1:${port}/annals_test`);
      }
    } finally {
      await store.close();
      await client.close();
    }
  });

  it('refuses a malformed URL with ReadModelError, without echoing the password', async () => {
    const error = await MongoReadModelStore.connect('mongodb://user:hunter22@').then(() => null, (e: unknown) => e);
    expect(error).to.be.instanceOf(ReadModelError).and.not.be.instanceOf(ReadModelUnavailableError);
    expect((error as Error).message).to.match(/^invalid MongoDB URL/).and.not.include('hunter22');
  });

  it('refuses an invalid database name with ReadModelError', async () => {
    const error = await MongoReadModelStore.connect('mongodb://127.0.0.1:1', { database: 'a/b' }).then(() => null, (e: unknown) => e);
    expect(error).to.be.instanceOf(ReadModelError).with.property('message').that.matches(/invalid MongoDB database name "a\/b"/);
  });

  it('validates names and queries before touching the server', async () => {
    const client = new MongoClient('mongodb://127.0.0.1:1', { serverSelectionTimeoutMS: 100 });
    const store = new MongoReadModelStore(client.db('annals_test'));
    try {
      const target = { projection: 'p', generation: 1 };
      for (const attempt of [
        () => store.find(target, 'c', { filter: { $where: 'x' } }),
        () => store.find(target, 'c', { limit: -1 }),
        () => store.get({ projection: 'Bad', generation: 1 }, 'c', 'x'),
        () => store.get({ projection: 'p', generation: -1 }, 'c', 'x'),
        () => store.commit(target, [{ collection: 'c', id: '', doc: {}, position: 1n }], 1n, NOW),
        () => store.find(target, 'c', { text: ['two words'] }),
        () => store.findWithIds(target, 'c', { text: ['"'] }),
        () => store.count(target, 'c', undefined, ['']),
        () => store.createGeneration({ projection: 'p', collections: { c: { textField: '$where' } } }, 1, 1, NOW),
      ]) {
        const error = await attempt().then(() => null, (e: unknown) => e);
        expect(error).to.be.instanceOf(ReadModelError).and.not.be.instanceOf(ReadModelUnavailableError);
      }
      expect(await store.find(target, 'c', { limit: 0 })).to.deep.equal([]);
    } finally {
      await client.close();
    }
  });

  describe('databaseFromUrl', () => {
    const cases: Array<[string, string | null]> = [
      ['mongodb://localhost:27017', null],
      ['mongodb://localhost:27017/', null],
      ['mongodb://localhost:27017/?replicaSet=rs0', null],
      ['mongodb://localhost:27017/cms', 'cms'],
      ['mongodb://u:p@h1:1,h2:2/cms?authSource=admin', 'cms'],
      ['mongodb+srv://u:p@cluster.example.net/my%2Ddb?retryWrites=true', 'my-db'],
      ['mongodb://u:p%2F@host/db', 'db'],
      ['postgres://host/db', null],
    ];
    for (const [url, expected] of cases) {
      it(`${url} → ${String(expected)}`, () => {
        expect(databaseFromUrl(url)).to.equal(expected);
      });
    }
  });

  describe('redactUrlSecrets', () => {
    it('removes the user information, encoded and decoded, and secret-bearing options', () => {
      const url = 'mongodb://editor:p%40ss-word@db.example:27017/cms?authSource=admin&tlsCertificateKeyFilePassword=topsecret';
      const text = 'failed for editor with p@ss-word and p%40ss-word, key topsecret; see mongodb://editor:p%40ss-word@db.example:27017/cms';
      const redacted = redactUrlSecrets(text, url);
      for (const secret of ['editor', 'p@ss-word', 'p%40ss-word', 'topsecret']) expect(redacted).not.to.include(secret);
      expect(redacted).to.include('db.example:27017/cms');
    });

    it('leaves harmless options and messages alone', () => {
      expect(redactUrlSecrets('Server selection timed out after 300 ms (authSource admin)', 'mongodb://h/cms?authSource=admin')).to.equal(
        'Server selection timed out after 300 ms (authSource admin)',
      );
    });
  });
});
