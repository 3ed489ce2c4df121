import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { AnnalsApiError, createAdminClient, createPublicClient, type AdminClient, type AdminSchema } from '@annals/client';
import { ManualClock } from '../../../src/clock.ts';
import { articleFormSet, startAdminFixture, type AdminFixture } from '../../../test/admin/support.ts';
import { PASSWORD } from '../../../test/public/support.ts';

/** A fetch that records what the client sends, then sends it. */
function recordingFetch() {
  const sent: Array<{ method: string; url: string; headers: Headers }> = [];
  return {
    sent,
    fetch: (request: Request) => {
      sent.push({ method: request.method, url: request.url, headers: new Headers(request.headers) });
      return globalThis.fetch(request);
    },
  };
}

describe('@annals/client against a started service', function () {
  this.timeout(60_000);
  let f: AdminFixture;
  let admin: AdminClient;
  let formSetId: string;

  before(async () => {
    f = await startAdminFixture();
    admin = createAdminClient({ serviceUrl: f.service.url, agentKey: f.project.agentKey.key });
    const created = await admin.POST('/form-sets', { body: articleFormSet });
    formSetId = created.id;
  });
  after(() => f.stop());

  it('calls the admin API with an agent key: typed answers, unwrapped', async () => {
    const { items } = await admin.GET('/form-sets');
    expect(items.map((s) => s.slug)).to.deep.equal(['articles']);
    const schema = await admin.GET('/form-sets/{formSetId}/schema', { params: { path: { formSetId } } });
    expect(schema.fields.map((field) => field.key)).to.deep.equal(['title', 'body', 'rating']);
    const entry: AdminSchema<'CreatedEntry'> = await admin.POST('/form-sets/{formSetId}/entries', { params: { path: { formSetId } }, body: { slug: 'hello', fields: { title: 'Hello' } } });
    expect(entry.revision?.status).to.equal('draft');
    // @ts-expect-error: a path the API does not have is a type error.
    await admin.GET('/no-such-path').catch(() => undefined);
  });

  it('carries a whole admin workflow: create a form set, create an entry, save a revision, submit, approve (published)', async () => {
    const formSet = await admin.POST('/form-sets', {
      body: { slug: 'news', name: 'News', fields: [{ key: 'title', type: 'text', label: 'Title', required: true }, { key: 'body', type: 'textarea', label: 'Body' }] },
    });
    expect(formSet).to.include({ slug: 'news', version: 1 });
    const created = await admin.POST('/form-sets/{formSetId}/entries', { params: { path: { formSetId: formSet.id } }, body: { slug: 'launch', fields: { title: 'We launch' } } });
    expect(created.entry.slug).to.equal('launch');
    const saved: AdminSchema<'SavedRevision'> = await admin.POST('/entries/{entryId}/revisions', {
      params: { path: { entryId: created.entry.id } },
      body: { fields: { title: 'We launch today', body: 'At noon.' }, expectedRevision: created.revision!.revision },
    });
    expect(saved).to.include({ revision: 2, status: 'draft' });
    const submitted = await admin.POST('/revisions/{revisionId}/submit', { params: { path: { revisionId: saved.id } }, body: { revision: saved.revision } });
    expect(submitted.status).to.equal('pending_review');
    const approved = await admin.POST('/revisions/{revisionId}/approve', { params: { path: { revisionId: saved.id } }, body: { revision: saved.revision } });
    expect(approved.status).to.equal('published');
    const entry = await admin.GET('/entries/{entryId}', { params: { path: { entryId: created.entry.id } } });
    expect(entry.links.revisions).to.be.a('string');
    const revision = await admin.GET('/revisions/{revisionId}', { params: { path: { revisionId: saved.id } } });
    expect(revision.snapshot).to.deep.equal({ title: { en: 'We launch today' }, body: { en: 'At noon.' } });
    // A stale revision number is a typed 409 REVISION_CONFLICT.
    const stale = await admin.POST('/entries/{entryId}/revisions', { params: { path: { entryId: created.entry.id } }, body: { fields: { title: 'Late' }, expectedRevision: 1 } }).catch((error: unknown) => error);
    expect(stale).to.be.instanceOf(AnnalsApiError);
    expect(stale).to.include({ status: 409, code: 'REVISION_CONFLICT' });
  });

  it('sends an Idempotency-Key with each create that takes one, unless the caller gives one (header or body)', async () => {
    const recorder = recordingFetch();
    const client = createAdminClient({ serviceUrl: f.service.url, agentKey: f.project.agentKey.key, fetch: recorder.fetch });
    await client.POST('/form-sets/{formSetId}/entries', { params: { path: { formSetId } }, body: { slug: 'keyed-1', fields: { title: 'One' } } });
    await client.POST('/form-sets/{formSetId}/entries', { params: { path: { formSetId } }, body: { slug: 'keyed-2', fields: { title: 'Two' }, idempotencyKey: 'from-the-body' } });
    await client.GET('/form-sets');
    const [create, withBodyKey, read] = recorder.sent;
    expect(create!.headers.get('idempotency-key')).to.match(/^[0-9a-f-]{36}$/);
    expect(withBodyKey!.headers.get('idempotency-key')).to.equal(null);
    expect(read!.headers.get('idempotency-key')).to.equal(null);

    // The same key twice: the service answers the first result, one entry.
    const keyed = createAdminClient({ serviceUrl: f.service.url, agentKey: f.project.agentKey.key, idempotencyKey: () => 'one-key-for-both' });
    const first = await keyed.POST('/form-sets/{formSetId}/entries', { params: { path: { formSetId } }, body: { slug: 'once', fields: { title: 'Once' } } });
    const again = await keyed.POST('/form-sets/{formSetId}/entries', { params: { path: { formSetId } }, body: { slug: 'once', fields: { title: 'Once' } } });
    expect(again.entry.id).to.equal(first.entry.id);
  });

  it('throws the error envelope as AnnalsApiError with status, code, message, hint and retryable', async () => {
    const clash = await admin.POST('/form-sets', { body: articleFormSet }).then(
      () => expect.fail('a second form set with the same slug was accepted'),
      (error: unknown) => error,
    );
    expect(clash).to.be.instanceOf(AnnalsApiError);
    expect(clash).to.include({ status: 409, code: 'CONFLICT', retryable: false });
    expect((clash as AnnalsApiError).message).to.match(/articles/);
    const stale = await admin.GET('/entries/{entryId}', { params: { path: { entryId: '00000000-0000-4000-8000-000000000000' } } }).catch((error: unknown) => error);
    expect(stale).to.include({ status: 404, code: 'NOT_FOUND' });
    const keyless = createAdminClient({ serviceUrl: f.service.url });
    const refused = await keyless.GET('/form-sets').catch((error: unknown) => error);
    expect(refused).to.include({ status: 401, code: 'UNAUTHORIZED', retryable: false });
    expect((refused as AnnalsApiError).hint === undefined || typeof (refused as AnnalsApiError).hint === 'string').to.equal(true);
  });

  it('signs in for a session and acts in a project with it (X-Project-Id)', async () => {
    const open = createAdminClient({ serviceUrl: f.service.url });
    const session = await open.POST('/auth/login', { body: { email: f.project.adminEmail, password: PASSWORD } });
    // Someone with a second factor is answered a challenge instead (POST /auth/login/second-factor): narrowed here.
    if ('secondFactor' in session) throw new Error('no second factor was set up');
    expect(session.user.role).to.equal('tenant_admin');
    const console = createAdminClient({ serviceUrl: `${f.service.url}/`, sessionToken: session.token, projectId: f.project.projectId });
    const project = await console.GET('/project');
    expect(project.id).to.equal(f.project.projectId);
    const keys = await console.GET('/keys');
    expect(keys.items.some((k) => k.type === 'agent')).to.equal(true);
    // Without the project, a project route is a 400 naming the header.
    const withoutProject = createAdminClient({ serviceUrl: f.service.url, sessionToken: session.token });
    const missing = await withoutProject.GET('/project').catch((error: unknown) => error);
    expect(missing).to.include({ status: 400, code: 'VALIDATION_ERROR' });
    expect((missing as AnnalsApiError).message).to.match(/X-Project-Id/);
  });

  it('walks a cursor-paged list with pages() and items(), every entry once', async () => {
    for (const n of [1, 2, 3, 4, 5]) await admin.POST('/form-sets/{formSetId}/entries', { params: { path: { formSetId } }, body: { slug: `paged-${n}`, fields: { title: `Paged ${n}` } } });
    const total = (await admin.GET('/form-sets/{formSetId}/entries', { params: { path: { formSetId }, query: { limit: 100 } } })).items.length;
    const pages = [];
    for await (const page of admin.pages('/form-sets/{formSetId}/entries', { params: { path: { formSetId }, query: { limit: 2 } } })) pages.push(page);
    expect(pages.length).to.equal(Math.ceil(total / 2));
    expect(pages.at(-1)!.nextCursor).to.equal(null);
    const slugs: string[] = [];
    for await (const entry of admin.items('/form-sets/{formSetId}/entries', { params: { path: { formSetId }, query: { limit: 2 } } })) slugs.push(entry.slug);
    expect(slugs.length).to.equal(total);
    expect(new Set(slugs).size).to.equal(total);
    expect(slugs).to.include.members(['paged-1', 'paged-5']);
  });

  it('reads published content through the public API on both bases: the project-pinned one and /public/v1 with a public key', async () => {
    const created = await admin.POST('/form-sets/{formSetId}/entries', { params: { path: { formSetId } }, body: { slug: 'public-one', fields: { title: 'In public' } } });
    const revision = created.revision!;
    await admin.POST('/revisions/{revisionId}/submit', { params: { path: { revisionId: revision.id } }, body: {} });
    const published = await admin.POST('/revisions/{revisionId}/publish', { params: { path: { revisionId: revision.id } }, body: { revision: revision.revision } });
    expect(published.status).to.equal('published');
    await f.service.supervisor!.waitFor((await f.service.stores.events.headPosition())!, 10_000);

    const pinned = createPublicClient({ serviceUrl: f.service.url, projectId: f.project.projectId });
    expect(pinned.baseUrl).to.equal(`${f.service.url}/public/p/${f.project.projectId}/v1`);
    const entry = await pinned.GET('/form-sets/{formSetSlug}/entries/{entrySlug}', { params: { path: { formSetSlug: 'articles', entrySlug: 'public-one' } } });
    expect(entry.data['title']).to.equal('In public');

    const session = await createAdminClient({ serviceUrl: f.service.url }).POST('/auth/login', { body: { email: f.project.adminEmail, password: PASSWORD } });
    if ('secondFactor' in session) throw new Error('no second factor was set up');
    const issued = await createAdminClient({ serviceUrl: f.service.url, sessionToken: session.token, projectId: f.project.projectId }).POST('/keys', { body: { type: 'public' } });
    const keyed = createPublicClient({ serviceUrl: f.service.url, publicKey: issued.key });
    expect(keyed.baseUrl).to.equal(`${f.service.url}/public/v1`);
    const list = await keyed.GET('/form-sets/{formSetSlug}/entries', { params: { path: { formSetSlug: 'articles' } } });
    expect(list.items.map((item) => item.entry.slug)).to.deep.equal(['public-one']);
    const missing = await keyed.GET('/form-sets/{formSetSlug}/entries/{entrySlug}', { params: { path: { formSetSlug: 'articles', entrySlug: 'nope' } } }).catch((error: unknown) => error);
    expect(missing).to.include({ status: 404, code: 'NOT_FOUND' });
  });

  it('syncs a site: every change page after page, then only what changed since the stored cursor', async () => {
    const site = createPublicClient({ serviceUrl: f.service.url, projectId: f.project.projectId });
    const publish = async (slug: string, title: string) => {
      const created = await admin.POST('/form-sets/{formSetId}/entries', { params: { path: { formSetId } }, body: { slug, fields: { title } } });
      await admin.POST('/revisions/{revisionId}/submit', { params: { path: { revisionId: created.revision!.id } }, body: {} });
      await admin.POST('/revisions/{revisionId}/publish', { params: { path: { revisionId: created.revision!.id } }, body: {} });
      await f.service.supervisor!.waitFor((await f.service.stores.events.headPosition())!, 10_000);
    };
    await publish('sync-one', 'One');
    await publish('sync-two', 'Two');
    const slugs: string[] = [];
    let stored: string | null = null;
    let pages = 0;
    for await (const page of site.sync({ limit: 1 })) {
      pages++;
      for (const item of page.items) if (item.type === 'entry') slugs.push(item.slug);
      stored = page.cursor;
    }
    expect(slugs).to.include.members(['sync-one', 'sync-two']);
    expect(pages).to.be.greaterThan(2);
    await publish('sync-three', 'Three');
    const since: string[] = [];
    for await (const page of site.sync({ cursor: stored })) for (const item of page.items) if (item.type === 'entry') since.push(item.entry.data['title'] as string);
    expect(since).to.deep.equal(['Three']);
  });
});

describe('@annals/client: 429 and Retry-After, against a service on the Free plan (60 requests a minute per agent key)', function () {
  this.timeout(60_000);
  let f: AdminFixture;
  // 200 ms into a 60 s rate-limit window: a window filled there frees a request only after the next one
  // begins, so Retry-After is 61 s, beyond one window (a client that refused waits over 60 s failed here).
  const clock = new ManualClock(new Date(Math.ceil(Date.now() / 60_000) * 60_000 + 200));

  before(async () => {
    f = await startAdminFixture({ plan: 'free', clock });
  });
  after(() => f.stop());

  /** Spends the key's whole window with plain requests. */
  async function exhaust(): Promise<void> {
    for (;;) {
      const response = await fetch(`${f.service.url}/admin/v1/form-sets`, { headers: { authorization: `Bearer ${f.project.agentKey.key}` } });
      await response.body?.cancel();
      if (response.status === 429) return;
    }
  }

  it('waits Retry-After (with the sleep it is given) and sends the request again', async () => {
    await exhaust();
    const waits: number[] = [];
    const client = createAdminClient({
      serviceUrl: f.service.url,
      agentKey: f.project.agentKey.key,
      // The service's clock moves as the client waits: no real sleeping.
      retry: { sleep: async (ms) => { waits.push(ms); clock.advance(ms); } },
    });
    const { items } = await client.GET('/form-sets');
    expect(items).to.deep.equal([]);
    expect(waits).to.deep.equal([61_000]);
  });

  it('gives up after its bounded retries, or at once when Retry-After is longer than it accepts: AnnalsApiError 429 RATE_LIMITED, retryable', async () => {
    await exhaust();
    const waits: number[] = [];
    const sleep = async (ms: number) => {
      waits.push(ms);
    };
    const bounded = createAdminClient({ serviceUrl: f.service.url, agentKey: f.project.agentKey.key, retry: { maxRetries: 2, sleep } });
    const error = await bounded.GET('/form-sets').catch((e: unknown) => e);
    expect(error).to.be.instanceOf(AnnalsApiError);
    expect(error).to.include({ status: 429, code: 'RATE_LIMITED', retryable: true });
    expect((error as AnnalsApiError).retryAfterSeconds).to.be.greaterThan(0);
    expect(waits).to.have.length(2);

    waits.length = 0;
    const impatient = createAdminClient({ serviceUrl: f.service.url, agentKey: f.project.agentKey.key, retry: { maxDelayMs: 500, sleep } });
    expect(await impatient.GET('/form-sets').catch((e: unknown) => e)).to.include({ status: 429 });
    expect(waits).to.deep.equal([]);
    clock.advance(61_000);
  });
});

describe('@annals/client: the package as built', () => {
  it('imports nothing but openapi-fetch and its own modules, and no Node API: it runs in a browser as it does in Node', () => {
    const dist = path.join(import.meta.dirname, '..', 'dist');
    for (const file of readdirSync(dist).filter((name) => name.endsWith('.js'))) {
      const text = readFileSync(path.join(dist, file), 'utf8');
      const imports = [...text.matchAll(/\bfrom\s+['"]([^'"]+)['"]|\bimport\s*\(\s*['"]([^'"]+)['"]/g)].map((m) => m[1] ?? m[2]!);
      for (const specifier of imports) expect(specifier, `${file} imports ${specifier}`).to.match(/^(\.\/.+\.js|openapi-fetch)$/);
      expect(text, file).to.not.match(/\b(process|Buffer|require)\b[.(]/);
    }
  });
});
