import { randomUUID } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { expect } from 'chai';
import { createArticleFormSet, startAdminFixture, type AdminFixture } from '../admin/support.ts';
import { isErrorEnvelope, rawRequest } from '../support/raw-http.ts';

/** Issue 12 items 5 and 8 through the started service: bad Content-Encoding and deeply nested JSON. */
describe('HTTP: hostile request bodies on the running service', function () {
  this.timeout(60_000);
  let f: AdminFixture;
  let formSetId: string;

  before(async () => {
    f = await startAdminFixture();
    formSetId = await createArticleFormSet(f);
  });
  after(() => f.stop());

  it('answers a malformed Content-Encoding with 400 on login, contact submission and admin creates, and 415 for an unknown one', async () => {
    const notGzip = Buffer.from(JSON.stringify({ email: 'a@example.com', password: 'x' }));
    const truncated = gzipSync(JSON.stringify({ slug: 'x', fields: { title: 'x' } })).subarray(0, 15);
    const routes: Array<[string, string, Record<string, string>]> = [
      ['POST', '/admin/v1/auth/login', {}],
      ['POST', `/public/p/${f.project.projectId}/v1/contact-forms/contact/submit`, {}],
      ['POST', `/admin/v1/form-sets/${formSetId}/entries`, { authorization: `Bearer ${f.project.agentKey.key}` }],
      ['POST', '/admin/v1/form-sets', { authorization: `Bearer ${f.project.agentKey.key}` }],
    ];
    for (const [method, path, headers] of routes) {
      for (const [coding, body, status] of [['gzip', notGzip, 400], ['deflate', notGzip, 400], ['br', notGzip, 400], ['gzip', truncated, 400], ['compress', notGzip, 415]] as const) {
        const response = await rawRequest(f.service.url, method, path, { headers: { ...headers, 'content-type': 'application/json', 'content-encoding': coding }, body });
        const where = `${method} ${path} (${coding}): ${response.text}`;
        expect(response.status, where).to.equal(status);
        expect(isErrorEnvelope(response.json), where).to.equal(true);
        expect((response.json as { error: { code: string } }).error.code, where).to.equal(status === 400 ? 'VALIDATION_ERROR' : 'UNSUPPORTED_MEDIA_TYPE');
      }
    }
  });

  it('refuses arrays nested 5,000 deep on create routes with an idempotency key with 400 naming the depth, and writes nothing', async () => {
    const deep = '['.repeat(5000) + ']'.repeat(5000);
    const head = await f.service.stores.events.headPosition();
    const creates: Array<[string, string]> = [
      [`/form-sets/${formSetId}/entries`, `{"slug":"deep","fields":{"title":"x","body":${deep}}}`],
      ['/form-sets', `{"slug":"deep","name":"Deep","fields":${deep}}`],
      ['/contact-forms', `{"name":"Deep","slug":"deep","fields":${deep}}`],
      ['/form-blueprints/apply', `{"blueprint":${deep}}`],
    ];
    for (const [route, body] of creates) {
      const response = await f.call('POST', route, { body, headers: { 'idempotency-key': randomUUID() } });
      expect(response.status, `${route}: ${JSON.stringify(response.body)}`).to.equal(400);
      expect(response.body.error.code).to.equal('VALIDATION_ERROR');
      expect(response.body.error.message).to.match(/nested more than 64 levels deep/);
    }
    expect(await f.service.stores.events.headPosition(), 'nothing appended').to.equal(head);
  });
});
