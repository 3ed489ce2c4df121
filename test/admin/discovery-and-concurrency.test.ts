import { expect } from 'chai';
import { articleFormSet, startAdminFixture, type AdminFixture } from './support.ts';

describe('admin API: schema discovery for agents, and concurrent saves', function () {
  this.timeout(60_000);
  let f: AdminFixture;
  before(async () => {
    f = await startAdminFixture();
  });
  after(async () => {
    await f.stop();
  });

  it('describes a form set\'s fields with masterEntityKey and sampleValues, and the whole project\'s schema', async () => {
    const applied = await f.call('POST', '/form-set-templates/blog/apply', { body: {} });
    expect(applied.status, JSON.stringify(applied.body)).to.equal(201);
    const blogId = applied.body.formSets[0].id;
    const schema = await f.call('GET', `/form-sets/${blogId}/schema`);
    expect(schema.status).to.equal(200);
    const category = schema.body.fields.find((x: { key: string }) => x.key === 'category');
    expect(category).to.include({ type: 'select', masterEntityKey: 'blog_category' });
    expect(category.sampleValues).to.include('news');
    expect(schema.body.jsonSchema.properties).to.have.property('title');
    const tenant = await f.call('GET', '/tenant-schema');
    expect(tenant.body.formSets.map((x: { slug: string }) => x.slug)).to.deep.equal(['blog']);
    expect(tenant.body.masters.map((m: { key: string }) => m.key)).to.deep.equal(['blog_category']);
    expect(tenant.body.contentLocales).to.deep.equal({ locales: ['en', 'ja'], defaultLocale: 'en' });
    // Select values are checked against the master behind the field.
    const body = (category: string) => ({ slug: `post-${category}`, fields: { title: 'A post', body: { type: 'doc', content: [] }, category } });
    const unknown = await f.call('POST', `/form-sets/${blogId}/entries`, { body: body('no-such-category') });
    expect(unknown.status).to.equal(400);
    expect(unknown.body.error.message).to.match(/category/);
    expect((await f.call('POST', `/form-sets/${blogId}/entries`, { body: body('news') })).status).to.equal(201);
  });

  it('many parallel saves with one expected revision: exactly one wins, the others get REVISION_CONFLICT', async () => {
    const formSet = (await f.call('POST', '/form-sets', { body: { ...articleFormSet, slug: 'race' } })).body;
    const created = (await f.call('POST', `/form-sets/${formSet.id}/entries`, { body: { slug: 'contested', fields: { title: 'v1' } } })).body;
    const saves = await Promise.all(
      Array.from({ length: 8 }, (_, i) => f.call('POST', `/entries/${created.entry.id}/revisions`, { body: { fields: { title: `writer ${i}` }, expectedRevision: 1 } })),
    );
    expect(saves.filter((r) => r.status === 201)).to.have.length(1);
    for (const r of saves.filter((x) => x.status !== 201)) {
      expect(r.status).to.equal(409);
      expect(r.body.error.code).to.equal('REVISION_CONFLICT');
    }
    const revisions = await f.call('GET', `/entries/${created.entry.id}/revisions`);
    expect(revisions.body.items.map((r: { revision: number }) => r.revision)).to.deep.equal([1, 2]);
  });
});
