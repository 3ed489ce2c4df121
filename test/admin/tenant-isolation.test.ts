import { expect } from 'chai';
import { articleFormSet, OPERATOR, startAdminFixture, type AdminFixture } from './support.ts';

describe('admin API: tenant isolation', function () {
  this.timeout(60_000);
  let f: AdminFixture;
  before(async () => {
    f = await startAdminFixture();
  });
  after(async () => {
    await f.stop();
  });

  it('a key of project A gets 404 for every resource of project B, reading and writing', async () => {
    // Project B's resources, made with B's own key.
    const formSet = (await f.call('POST', '/form-sets', { body: articleFormSet })).body;
    const created = (await f.call('POST', `/form-sets/${formSet.id}/entries`, { body: { slug: 'private', fields: { title: 'B only' } } })).body;
    const entryId = created.entry.id;
    const revisionId = created.revision.id;
    const master = (await f.call('POST', '/master-entities', { body: { key: 'b_master', name: 'B master', records: [{ value: 'x', labels: { en: 'X' } }] } })).body;
    expect(master.id, JSON.stringify(master)).to.be.a('string');

    const a = await f.access.bootstrap(OPERATOR, { projectName: 'Project A', plan: 'business', adminEmail: 'a-admin@example.com', adminPassword: 'project a password' });
    await f.service.supervisor!.waitFor(a.position, 5000);
    const token = a.agentKey.key;
    const attempts: Array<[string, string, unknown?]> = [
      ['GET', `/form-sets/${formSet.id}`],
      ['GET', `/form-sets/${formSet.id}/schema`],
      ['GET', `/form-sets/${formSet.id}/entries`],
      ['PUT', `/form-sets/${formSet.id}`, articleFormSet],
      ['DELETE', `/form-sets/${formSet.id}`],
      ['POST', `/form-sets/${formSet.id}/entries`, { slug: 'intruder', fields: { title: 'x' } }],
      ['GET', `/entries/${entryId}`],
      ['GET', `/entries/${entryId}/revisions`],
      ['GET', `/entries/${entryId}/history`],
      ['POST', `/entries/${entryId}/revisions`, { fields: { title: 'hijack' } }],
      ['POST', `/entries/${entryId}/duplicate`, {}],
      ['PATCH', `/entries/${entryId}/slug`, { slug: 'taken-over' }],
      ['DELETE', `/entries/${entryId}`],
      ['GET', `/revisions/${revisionId}`],
      ['POST', `/revisions/${revisionId}/submit`, {}],
      ['POST', `/revisions/${revisionId}/publish`, { revision: 1 }],
      ['POST', `/revisions/${revisionId}/restore`, {}],
      ['GET', `/master-entities/${master.id}`],
      ['GET', `/master-entities/${master.id}/records`],
      ['POST', `/master-entities/${master.id}/records`, { value: 'y', labels: { en: 'Y' } }],
      ['POST', `/master-entities/${master.id}/publish`, {}],
    ];
    for (const [method, route, body] of attempts) {
      const response = await f.call(method, route, { token, ...(body === undefined ? {} : { body }) });
      expect(response.status, `${method} ${route}: ${JSON.stringify(response.body)}`).to.equal(404);
      expect(response.body.error.code).to.equal('NOT_FOUND');
    }
    // And nothing changed in B.
    const after = await f.call('GET', `/entries/${entryId}`);
    expect(after.body.slug).to.equal('private');
    expect(after.body.revisionCount).to.equal(1);
  });
});
