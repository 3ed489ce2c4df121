import { expect } from 'chai';
import { OPERATOR, startAdminFixture, type AdminFixture } from '../admin/support.ts';
import { startFakeDeepL, type FakeDeepL } from './fake-deepl.ts';

const KEY = 'deepl-key-7c1e:fx';

const formSet = {
  slug: 'guides',
  name: 'Guides',
  fields: [
    { key: 'title', type: 'text', label: 'Title', required: true },
    { key: 'summary', type: 'textarea', label: 'Summary' },
    { key: 'body', type: 'tiptap', label: 'Body' },
    { key: 'sku', type: 'text', label: 'SKU', locale_shared: true },
  ],
};

const body = {
  type: 'doc',
  content: [{ type: 'paragraph', content: [{ type: 'text', text: 'Read ' }, { type: 'text', text: 'this', marks: [{ type: 'italic' }] }] }],
};

describe('POST /admin/v1/entries/:entryId/translate (translate_entry_locales)', function () {
  this.timeout(60_000);
  let fake: FakeDeepL;
  let f: AdminFixture;
  let formSetId: string;

  before(async () => {
    fake = await startFakeDeepL({ key: KEY });
    // The fixture's project has content locales en (default) and ja, on the Business plan.
    f = await startAdminFixture({ env: { TRANSLATION_API_URL: fake.url, TRANSLATION_API_KEY: KEY, OUTBOUND_ALLOWLIST: '127.0.0.1' } });
    const created = await f.call('POST', '/form-sets', { body: formSet });
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
    formSetId = created.body.id;
  });
  after(async () => {
    await f?.stop();
    await fake?.close();
  });
  beforeEach(() => {
    fake.mode = 'ok';
    fake.requests.length = 0;
  });

  async function entryWith(slug: string, fields: Record<string, unknown>): Promise<{ entryId: string; revisionId: string }> {
    const created = await f.call('POST', `/form-sets/${formSetId}/entries`, { body: { slug, fields } });
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
    return { entryId: created.body.entry.id, revisionId: created.body.revision.id };
  }

  it('fills the missing locale values as a new draft revision, keeping present values and the rich-text structure', async () => {
    const { entryId } = await entryWith('first', { title: 'Hello', summary: { en: 'Short', ja: '短い' }, body: { en: body }, sku: 'A-1' });
    const answer = await f.call('POST', `/entries/${entryId}/translate`, { body: {} });
    expect(answer.status, JSON.stringify(answer.body)).to.equal(200);
    expect(answer.body.revision).to.include({ revision: 2, status: 'draft', entryId });
    expect(answer.body.sourceLocale).to.equal('en');
    expect(answer.body.targetLocales).to.deep.equal(['ja']);
    expect(answer.body.translated).to.deep.equal([
      { field: 'title', locale: 'ja' },
      { field: 'body', locale: 'ja' },
    ]);
    expect(answer.body.skipped).to.deep.equal([{ field: 'summary', locale: 'ja', reason: 'has-value' }]);
    // One provider call for the target locale, with the key and DeepL's language codes.
    expect(fake.requests).to.have.length(1);
    expect(fake.requests[0]).to.deep.include({ authorization: `DeepL-Auth-Key ${KEY}` });
    expect(fake.requests[0]!.body).to.deep.equal({ text: ['Hello', 'Read', 'this'], source_lang: 'EN', target_lang: 'JA' });

    const revision = await f.call('GET', `/revisions/${answer.body.revision.id}`);
    expect(revision.body.snapshot).to.deep.equal({
      title: { en: 'Hello', ja: '[JA] Hello' },
      summary: { en: 'Short', ja: '短い' },
      body: {
        en: body,
        ja: { type: 'doc', content: [{ type: 'paragraph', content: [{ type: 'text', text: '[JA] Read ' }, { type: 'text', text: '[JA] this', marks: [{ type: 'italic' }] }] }] },
      },
      sku: 'A-1',
    });

    // Nothing missing any more: no provider call, no new revision.
    const again = await f.call('POST', `/entries/${entryId}/translate`, { body: { targetLocales: ['ja'] } });
    expect(again.status).to.equal(200);
    expect(again.body.revision).to.equal(null);
    expect(again.body.translated).to.deep.equal([]);
    expect(fake.requests).to.have.length(1);
  });

  it('answers 503 naming the provider problem when the provider fails, and saves nothing', async () => {
    const { entryId } = await entryWith('provider-down', { title: 'Hi' });
    for (const [mode, pattern, hint] of [
      ['status-500', /answered HTTP 500/, /Nothing was saved/],
      ['status-403', /API key was refused/, /TRANSLATION_API_KEY/],
    ] as const) {
      fake.mode = mode;
      const failed = await f.call('POST', `/entries/${entryId}/translate`, { body: {} });
      expect(failed.status, JSON.stringify(failed.body)).to.equal(503);
      expect(failed.body.error.code).to.equal('SERVICE_UNAVAILABLE');
      expect(failed.body.error.message).to.match(pattern);
      expect(failed.body.error.hint).to.match(hint);
      expect(JSON.stringify(failed.body)).not.to.include(KEY);
    }
    const revisions = await f.call('GET', `/entries/${entryId}/revisions`);
    expect(revisions.body.items).to.have.length(1);
  });

  it('refuses while the latest revision is in review, and checks the locales', async () => {
    const { entryId, revisionId } = await entryWith('in-review', { title: 'Hi' });
    expect((await f.call('POST', `/entries/${entryId}/translate`, { body: { targetLocales: ['fr'] } })).body.error).to.include({ code: 'VALIDATION_ERROR' });
    const submitted = await f.call('POST', `/revisions/${revisionId}/submit`, { body: {} });
    expect(submitted.body.status).to.equal('pending_review');
    const refused = await f.call('POST', `/entries/${entryId}/translate`, { body: {} });
    expect(refused.status).to.equal(409);
    expect(refused.body.error.message).to.match(/pending_review/);
    expect(refused.body.error.hint).to.match(/Withdraw/);
    expect(fake.requests).to.have.length(0);
    expect((await f.call('POST', '/entries/00000000-0000-4000-8000-000000000000/translate', { body: {} })).status).to.equal(404);
  });

  it('needs the Standard plan: a Free project gets 403 PLAN_REQUIRED naming the plan', async () => {
    const free = await f.access.bootstrap(OPERATOR, {
      projectName: 'Free project',
      plan: 'free',
      adminEmail: 'free-admin@example.com',
      adminPassword: 'correct horse battery staple',
      contentLocales: { locales: ['en', 'ja'], defaultLocale: 'en' },
    });
    await f.service.supervisor!.waitFor(free.position, 5000);
    const refused = await f.call('POST', '/entries/00000000-0000-4000-8000-000000000000/translate', { body: {}, token: free.agentKey.key });
    expect(refused.status).to.equal(403);
    expect(refused.body.error.code).to.equal('PLAN_REQUIRED');
    expect(refused.body.error.message).to.match(/Standard plan or above; this project is on Free/);
    // The overview says so, so that the console offers no Translate there.
    expect((await f.call('GET', '/project', { token: free.agentKey.key })).body.machineTranslation).to.equal(false);
    expect((await f.call('GET', '/project')).body.machineTranslation).to.equal(true);
  });

  it('without a configured provider, answers 409 saying what to configure', async () => {
    const bare = await startAdminFixture();
    try {
      const created = await bare.call('POST', '/form-sets', { body: formSet });
      const entry = await bare.call('POST', `/form-sets/${created.body.id}/entries`, { body: { slug: 'x', fields: { title: 'Hi' } } });
      const refused = await bare.call('POST', `/entries/${entry.body.entry.id}/translate`, { body: {} });
      expect(refused.status).to.equal(409);
      expect(refused.body.error.code).to.equal('CONFLICT');
      expect(refused.body.error.message).to.match(/No translation provider is configured/);
      expect(refused.body.error.hint).to.match(/TRANSLATION_API_URL/);
      expect((await bare.call('GET', '/project')).body.machineTranslation).to.equal(false);
    } finally {
      await bare.stop();
    }
  });
});
