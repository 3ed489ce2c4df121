/**
 * The service end to end with its read models, key store and snapshots on MongoDB (MONGODB_URL: the server of
 * test/support/mongo-server.ts, FerretDB here) and the embedded SQLite event log, through the public and admin
 * APIs: content written, published, renamed, deleted and read back; a public-API replica (ROLES=api) reading
 * the projector's writes; a rebuild swapped in while the public API serves; search where the server has text
 * indexes, and a clear 503 where it has none.
 */
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { MongoClient } from 'mongodb';
import type { RunningService } from '../../src/service/service.ts';
import { adminSession, startApiReplica } from '../admin/support.ts';
import { blogFormSet, startPublicFixture, type PublicFixture } from '../public/support.ts';
import { mongoServer, mongoServerPending, pendingOn, type MongoServer } from '../support/mongo-server.ts';
import { tempDir } from '../support/temp-dir.ts';

const pending = await mongoServerPending();

describe(`service on MongoDB read models, through the public and admin APIs${pending ? ` [pending: ${pending}]` : ''}`, function () {
  this.timeout(180_000);
  if (pending) {
    it('serves what the admin API writes, to itself and to a public-API replica');
    it('swaps a rebuilt generation in while the public API serves');
    it('searches where the server has text indexes, and answers 503 where it has none');
    return;
  }
  let server: MongoServer;
  let f: PublicFixture;
  let replica: RunningService | undefined;
  let formSetId: string;
  const database = `annals_service_${randomUUID().replaceAll('-', '').slice(0, 12)}`;
  const dataDir = path.join(tempDir(), 'data');
  const url = () => server.url.replace(/\/(\?|$)/, `/${database}$1`);

  before(async () => {
    server = await mongoServer();
    f = await startPublicFixture({ env: { DATA_DIR: dataDir, MONGODB_URL: url(), PUBLIC_RESPONSE_CACHE_MB: '0' } });
    const created = await f.call('POST', '/form-sets', { body: blogFormSet() });
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
    formSetId = created.body.id;
  });
  after(async () => {
    await replica?.stop();
    await f?.stop();
    const client = await MongoClient.connect(server.url);
    try {
      await client.db(database).dropDatabase();
      await client.db(`${database}_keys`).dropDatabase();
    } finally {
      await client.close();
    }
  });

  it('serves what the admin API writes, to itself and to a public-API replica', async () => {
    const first = await f.publish(formSetId, 'first-post', { title: { en: 'First post', ja: '最初の投稿' }, published_date: '2026-03-01', rating: 4 });
    await f.publish(formSetId, 'second-post', { title: { en: 'Second post' }, published_date: '2026-01-15', rating: 2 });
    const gone = await f.publish(formSetId, 'third-post', { title: { en: 'Third post' }, published_date: '2026-06-30', rating: 5 });

    const list = await f.get('/form-sets/blog/entries');
    expect(list.status, list.text).to.equal(200);
    expect(list.body.items.map((i: { entry: { slug: string } }) => i.entry.slug)).to.have.members(['first-post', 'second-post', 'third-post']);
    expect(list.body.total).to.equal(3);
    const ja = await f.get('/form-sets/blog/entries/first-post?locale=ja');
    expect([ja.status, ja.body.data.title]).to.deep.equal([200, '最初の投稿']);

    // A slug changed redirects; a deleted entry is gone from the entry, the list and its total.
    expect((await f.call('PATCH', `/entries/${first.entryId}/slug`, { body: { slug: 'first-renamed' } })).status).to.equal(200);
    expect((await f.call('DELETE', `/entries/${gone.entryId}`)).status).to.equal(204);
    await f.settle();
    const moved = await f.get('/form-sets/blog/entries/first-post');
    expect(moved.status).to.equal(301);
    expect(moved.headers.get('location')).to.match(/\/form-sets\/blog\/entries\/first-renamed$/);
    expect((await f.get('/form-sets/blog/entries/third-post')).status).to.equal(404);
    const after = await f.get('/form-sets/blog/entries');
    expect(after.body.items.map((i: { entry: { slug: string } }) => i.entry.slug).sort()).to.deep.equal(['first-renamed', 'second-post']);
    expect(after.body.total).to.equal(2);
    const sitemap = await f.get('/form-sets/blog/sitemap.xml');
    expect(sitemap.status).to.equal(200);
    expect(sitemap.text).to.include('/blog/first-renamed').and.not.include('third-post');

    // The admin reads, after its own writes (read-your-writes on MongoDB).
    const saved = await f.call('POST', `/entries/${first.entryId}/revisions`, { body: { fields: { title: { en: 'First, revised' } } } });
    expect(saved.status, JSON.stringify(saved.body)).to.equal(201);
    const entry = await f.call('GET', `/entries/${first.entryId}`);
    expect(entry.body.latestRevision).to.include({ revisionId: saved.body.id, status: 'draft' });
    const history = await f.call('GET', `/entries/${first.entryId}/history`);
    expect(history.status).to.equal(200);

    // A public-API replica on the same MongoDB reads what the projector wrote.
    replica = await startApiReplica(dataDir, { MONGODB_URL: url(), PUBLIC_RESPONSE_CACHE_MB: '0' });
    const fromReplica = await fetch(`${replica.url}/public/p/${f.project.projectId}/v1/form-sets/blog/entries`);
    expect(fromReplica.status).to.equal(200);
    expect(((await fromReplica.json()) as { total: number }).total).to.equal(2);
  });

  it('swaps a rebuilt generation in while the public API serves', async () => {
    const session = await adminSession(f);
    const operations = (method: string, route: string) => f.call(method, route, { token: session.token, headers: session.headers });
    const publicContent = async () => (await operations('GET', '/operations')).body.projections.find((p: { name: string }) => p.name === 'public-content');
    const before = await publicContent();
    const started = await operations('POST', '/operations/projections/public-content/rebuild');
    expect(started.status, JSON.stringify(started.body)).to.equal(202);
    let reads = 0;
    for (const deadline = Date.now() + 60_000; ; ) {
      const list = await f.get('/form-sets/blog/entries');
      expect(list.status, 'the public API serves throughout the rebuild').to.equal(200);
      expect(list.body.total).to.equal(2);
      reads++;
      const now = await publicContent();
      // The overview reads the generations before the rebuild's state: the swap shows in the next one.
      if (now.rebuild?.state === 'done' && now.active.generation > before.active.generation) break;
      expect(Date.now(), 'rebuild done').to.be.below(deadline);
    }
    expect(reads).to.be.greaterThan(0);
    const list = await f.get('/form-sets/blog/entries');
    expect(list.body.items.map((i: { entry: { slug: string } }) => i.entry.slug).sort()).to.deep.equal(['first-renamed', 'second-post']);
  });

  it('searches where the server has text indexes, and answers 503 where it has none', async () => {
    const search = await f.get('/form-sets/blog/entries?q=second');
    if (pendingOn(server, 'text indexes ($text)')) {
      expect(search.status, search.text).to.equal(503);
      expect(search.body.error.message).to.match(/no text indexes/);
    } else {
      expect(search.status, search.text).to.equal(200);
      expect(search.body.items.map((i: { entry: { slug: string } }) => i.entry.slug)).to.deep.equal(['second-post']);
    }
  });
});
