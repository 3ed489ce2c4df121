import { expect } from 'chai';
import { startAdminFixture, OPERATOR, type AdminFixture } from './support.ts';

const PASSWORD = 'correct horse battery staple';

describe('admin API: masters, blueprints and built-in templates over HTTP', function () {
  this.timeout(60_000);
  let f: AdminFixture;
  let contentKey: string;
  let session: string;
  before(async () => {
    f = await startAdminFixture();
    const issued = await f.access.issueAgentKey(OPERATOR, f.project.projectId, 'content', 'c');
    await f.service.supervisor!.waitFor(issued.position, 5000);
    contentKey = issued.key;
    const login = await f.call('POST', '/auth/login', { body: { email: f.project.adminEmail, password: PASSWORD }, token: '' });
    expect(login.status, JSON.stringify(login.body)).to.equal(200);
    session = login.body.token;
  });
  after(async () => {
    await f.stop();
  });

  const asSession = { headers: {} as Record<string, string> };
  const sessionCall = (method: string, route: string, body?: unknown) =>
    f.call(method, route, { token: session, headers: { 'X-Project-Id': f.project.projectId, ...asSession.headers }, ...(body === undefined ? {} : { body }) });
  const formSetSlugs = async () => ((await f.call('GET', '/form-sets')).body.items as Array<{ slug: string }>).map((i) => i.slug);

  describe('built-in templates', () => {
    it('lists the built-in templates, blog among them', async () => {
      const listed = await f.call('GET', '/form-set-templates');
      expect(listed.status).to.equal(200);
      const blog = listed.body.items.find((t: { id: string }) => t.id === 'blog');
      expect(blog).to.deep.include({ formSetSlugs: ['blog'], masterKeys: ['blog_category'] });
    });

    it('dryRun answers 200 with the full preview and writes nothing', async () => {
      const before = await formSetSlugs();
      const preview = await f.call('POST', '/form-set-templates/blog/apply', { body: { dryRun: true } });
      expect(preview.status, JSON.stringify(preview.body)).to.equal(200);
      expect(preview.body).to.include({ dryRun: true, ok: true });
      expect(preview.body.problems).to.deep.equal([]);
      expect(preview.body.formSets[0]).to.include({ slug: 'blog', fieldCount: 6 });
      expect(preview.body.formSets[0].definition.fields).to.have.length(6);
      expect(preview.body.masters[0]).to.include({ key: 'blog_category', action: 'create', recordCount: 4 });
      expect(await formSetSlugs()).to.deep.equal(before);
      expect((await f.call('GET', '/master-entities')).body.items).to.deep.equal([]);
    });

    it('a content-scope agent key gets 403 FORBIDDEN, for a dry run too', async () => {
      for (const body of [{}, { dryRun: true }]) {
        const refused = await f.call('POST', '/form-set-templates/blog/apply', { body, token: contentKey });
        expect(refused.status).to.equal(403);
        expect(refused.body.error.code).to.equal('FORBIDDEN');
      }
      const blueprint = await f.call('POST', '/form-blueprints/apply', { body: { blueprint: { formSets: [{ slug: 'x', name: 'X', fields: [] }] } }, token: contentKey });
      expect(blueprint.status).to.equal(403);
      expect(blueprint.body.error.code).to.equal('FORBIDDEN');
    });

    let applied: { formSets: Array<{ id: string; slug: string }>; masters: Array<{ id: string; key: string }> };
    it('applies the blog template: 201 with the form set and master created; a resent key gives the same body', async () => {
      const first = await f.call('POST', '/form-set-templates/blog/apply', { body: { idempotencyKey: 'blog-1' } });
      expect(first.status, JSON.stringify(first.body)).to.equal(201);
      applied = first.body;
      expect(applied.formSets.map((s) => s.slug)).to.deep.equal(['blog']);
      expect(applied.masters.map((m) => m.key)).to.deep.equal(['blog_category']);
      // Read your writes: both are there at once.
      expect(await formSetSlugs()).to.include('blog');
      const formSet = await f.call('GET', `/form-sets/${applied.formSets[0]!.id}`);
      expect(formSet.status).to.equal(200);
      expect(formSet.body.definition.fields.find((x: { key: string }) => x.key === 'category')).to.include({ masterEntityKey: 'blog_category' });
      const master = await f.call('GET', `/master-entities/${applied.masters[0]!.id}`);
      expect(master.body).to.include({ key: 'blog_category', recordCount: 4, published: false });

      const again = await f.call('POST', '/form-set-templates/blog/apply', { body: {}, headers: { 'Idempotency-Key': 'blog-1' } });
      expect(again.status).to.equal(201);
      expect(again.body).to.deep.equal(first.body);
    });

    it('applying it again without a key is 409 on the slug clash', async () => {
      const clash = await f.call('POST', '/form-set-templates/blog/apply', { body: {} });
      expect(clash.status, JSON.stringify(clash.body)).to.equal(409);
      expect(clash.body.error.code).to.equal('CONFLICT');
      expect(clash.body.error.message).to.match(/blog/);
    });

    it('an unknown template id is 404 naming the ids there are', async () => {
      const missing = await f.call('POST', '/form-set-templates/nope/apply', { body: {} });
      expect(missing.status).to.equal(404);
      expect(missing.body.error.message).to.match(/blog/);
    });
  });

  describe('form blueprints', () => {
    const blueprint = {
      formSets: [
        {
          slug: 'recipes',
          name: 'Recipes',
          fields: [
            { key: 'title', type: 'text', label: 'Title', required: true },
            { key: 'cuisine', type: 'select', label: 'Cuisine', masterEntityKey: 'cuisine' },
          ],
        },
      ],
      masters: [{ key: 'cuisine', name: 'Cuisine', records: [{ value: 'thai', labels: { en: 'Thai', ja: 'タイ料理' } }] }],
    };

    it('serves the published JSON Schema', async () => {
      const schema = await f.call('GET', '/form-blueprints/schema');
      expect(schema.status).to.equal(200);
      expect(schema.body).to.include({ $schema: 'https://json-schema.org/draft/2020-12/schema', type: 'object' });
    });

    it('validate reports every problem and writes nothing', async () => {
      const bad = { formSets: [{ slug: 'Bad Slug', name: 'B', fields: [{ key: 'c', type: 'select', label: 'C', masterEntityKey: 'missing' }] }, { slug: 'blog', name: 'Again', fields: [] }] };
      const validated = await f.call('POST', '/form-blueprints/validate', { body: { blueprint: bad } });
      expect(validated.status, JSON.stringify(validated.body)).to.equal(200);
      expect(validated.body.ok).to.equal(false);
      const messages = validated.body.problems.map((p: { path: string; message: string }) => `${p.path}: ${p.message}`).join('\n');
      expect(messages).to.match(/slug/);
      expect(messages).to.match(/missing/);
      expect(messages).to.match(/already exists/);
      const good = await f.call('POST', '/form-blueprints/validate', { body: { blueprint } });
      expect(good.body).to.include({ ok: true });
    });

    it('an invalid blueprint is 400 naming the problems; a valid one is 201 and idempotent', async () => {
      const invalid = await f.call('POST', '/form-blueprints/apply', { body: { blueprint: { formSets: [{ slug: 'ok-slug', name: 'X', fields: [{ key: 'c', type: 'select', label: 'C', masterEntityKey: 'nowhere' }] }] } } });
      expect(invalid.status).to.equal(400);
      expect(invalid.body.error.message).to.match(/nowhere/);
      expect(await formSetSlugs()).not.to.include('ok-slug');

      const dry = await f.call('POST', '/form-blueprints/apply', { body: { blueprint, dryRun: true, idempotencyKey: 'r-1' } });
      expect(dry.status).to.equal(200);
      expect(await formSetSlugs()).not.to.include('recipes');

      const created = await f.call('POST', '/form-blueprints/apply', { body: { blueprint, idempotencyKey: 'r-1' } });
      expect(created.status, JSON.stringify(created.body)).to.equal(201);
      expect(created.body.formSets.map((s: { slug: string }) => s.slug)).to.deep.equal(['recipes']);
      expect(created.body.masters.map((m: { key: string }) => m.key)).to.deep.equal(['cuisine']);
      const resent = await f.call('POST', '/form-blueprints/apply', { body: { blueprint, idempotencyKey: 'r-1' } });
      expect(resent.status).to.equal(201);
      expect(resent.body).to.deep.equal(created.body);
      const clash = await f.call('POST', '/form-blueprints/apply', { body: { blueprint } });
      expect(clash.status).to.equal(409);
    });
  });

  describe('master blueprints', () => {
    const blueprint = { masters: [{ key: 'region', name: 'Region', records: [{ value: 'asia', labels: { en: 'Asia' } }, { value: 'japan', labels: { en: 'Japan' }, parent: 'asia' }] }] };
    it('validates, previews, applies once (resent key: same body) and answers 409 for an existing key', async () => {
      const validated = await f.call('POST', '/master-blueprints/validate', { body: { blueprint } });
      expect(validated.body).to.include({ ok: true });
      const dry = await f.call('POST', '/master-blueprints/apply', { body: { blueprint, dryRun: true } });
      expect(dry.status).to.equal(200);
      expect(dry.body.masters[0]).to.include({ key: 'region', recordCount: 2 });
      const keys = () => f.call('GET', '/master-entities').then((r) => r.body.items.map((m: { key: string }) => m.key));
      expect(await keys()).not.to.include('region');
      const applied = await f.call('POST', '/master-blueprints/apply', { body: { blueprint, idempotencyKey: 'm-1' } });
      expect(applied.status, JSON.stringify(applied.body)).to.equal(201);
      expect(applied.body.masters.map((m: { key: string }) => m.key)).to.deep.equal(['region']);
      const resent = await f.call('POST', '/master-blueprints/apply', { body: { blueprint, idempotencyKey: 'm-1' } });
      expect(resent.body).to.deep.equal(applied.body);
      expect(await keys()).to.include('region');
      const clash = await f.call('POST', '/master-blueprints/apply', { body: { blueprint } });
      expect(clash.status).to.equal(409);
      expect(clash.body.error.code).to.equal('CONFLICT');
    });
  });

  describe('masters', () => {
    let masterId: string;
    it('creates a master with records, and a second with the same key is 409', async () => {
      const created = await f.call('POST', '/master-entities', { body: { key: 'colour', name: 'Colour', records: [{ value: 'red', labels: { en: 'Red', ja: '赤' } }] } });
      expect(created.status, JSON.stringify(created.body)).to.equal(201);
      masterId = created.body.id;
      expect(created.body).to.include({ key: 'colour', recordCount: 1, sitePublishedAt: null });
      const clash = await f.call('POST', '/master-entities', { body: { key: 'colour', name: 'Other' } });
      expect(clash.status).to.equal(409);
      expect(clash.body.error.code).to.equal('CONFLICT');
      const invalid = await f.call('POST', '/master-entities', { body: { key: 'Not A Key', name: 'x' } });
      expect(invalid.status).to.equal(400);
      expect(invalid.body.error.message).to.match(/key/);
    });

    it('adds a record with an agent key and lists records with labels in the asked locale', async () => {
      const added = await f.call('POST', `/master-entities/${masterId}/records`, { body: { value: 'blue', labels: { en: 'Blue', ja: '青' } } });
      expect(added.status, JSON.stringify(added.body)).to.equal(201);
      expect(added.body.record).to.include({ value: 'blue', order: 1, parent: null });
      const duplicate = await f.call('POST', `/master-entities/${masterId}/records`, { body: { value: 'blue', labels: { en: 'Blue' } } });
      expect(duplicate.status).to.equal(409);
      const refused = await f.call('POST', `/master-entities/${masterId}/records`, { body: { value: 'green', labels: { en: 'Green' } }, token: contentKey });
      expect(refused.status).to.equal(403);

      const ja = await f.call('GET', `/master-entities/${masterId}/records?locale=ja`);
      expect(ja.status).to.equal(200);
      expect(ja.body.locale).to.equal('ja');
      expect(ja.body.items.map((r: { value: string; label: string }) => [r.value, r.label])).to.deep.equal([['red', '赤'], ['blue', '青']]);
      const byDefault = await f.call('GET', `/master-entities/${masterId}/records`);
      expect(byDefault.body.items.map((r: { label: string }) => r.label)).to.deep.equal(['Red', 'Blue']);
      const unknown = await f.call('GET', `/master-entities/${masterId}/records?locale=fr`);
      expect(unknown.status).to.equal(400);
    });

    it('update_master_record and update_master_tree: agent keys 403, a user session 200', async () => {
      const byAgent = await f.call('PATCH', `/master-entities/${masterId}/records/red`, { body: { labels: { en: 'Crimson' } } });
      expect(byAgent.status).to.equal(403);
      expect(byAgent.body.error.code).to.equal('FORBIDDEN');
      expect(byAgent.body.error.message).to.match(/user session/);
      const treeByAgent = await f.call('PUT', `/master-entities/${masterId}/tree`, { body: { nodes: [{ value: 'blue' }, { value: 'red' }] } });
      expect(treeByAgent.status).to.equal(403);

      const bySession = await sessionCall('PATCH', `/master-entities/${masterId}/records/red`, { labels: { en: 'Crimson', ja: '深紅' } });
      expect(bySession.status, JSON.stringify(bySession.body)).to.equal(200);
      expect(bySession.body.records.find((r: { value: string }) => r.value === 'red').labels).to.deep.equal({ en: 'Crimson', ja: '深紅' });
      const missing = await sessionCall('PATCH', `/master-entities/${masterId}/records/purple`, { labels: { en: 'Purple' } });
      expect(missing.status).to.equal(404);

      const tree = await sessionCall('PUT', `/master-entities/${masterId}/tree`, { nodes: [{ value: 'blue' }, { value: 'red', parent: 'blue' }] });
      expect(tree.status, JSON.stringify(tree.body)).to.equal(200);
      expect(tree.body.records.map((r: { value: string; parent: string | null }) => [r.value, r.parent])).to.deep.equal([['blue', null], ['red', 'blue']]);
    });

    it('publishes a master: sitePublishedAt set, master.published appended', async () => {
      const published = await f.call('POST', `/master-entities/${masterId}/publish`);
      expect(published.status, JSON.stringify(published.body)).to.equal(200);
      expect(published.body.published).to.equal(true);
      expect(Date.parse(published.body.sitePublishedAt)).to.be.a('number').and.not.NaN;
      const listed = await f.call('GET', '/master-entities');
      expect(listed.body.items.find((m: { id: string }) => m.id === masterId)).to.include({ published: true });
      const events: string[] = [];
      for await (const event of f.service.log.readStream(`master-${masterId}`)) events.push(event.type);
      expect(events).to.include('master.published');
      const refused = await f.call('POST', `/master-entities/${masterId}/publish`, { token: contentKey });
      expect(refused.status).to.equal(403);
    });

    it('an unknown or foreign master id is 404', async () => {
      const unknown = await f.call('GET', '/master-entities/00000000-0000-4000-8000-000000000000');
      expect(unknown.status).to.equal(404);
      const notUuid = await f.call('GET', '/master-entities/colour');
      expect(notUuid.status).to.equal(404);
    });
  });
});
