import { expect } from 'chai';
import { MAX_APPEND_BYTES } from '../../src/event-store/event-store.ts';
import { DEFAULT_JSON_LIMIT_BYTES } from '../../src/http/middleware/json-body.ts';
import { articleFormSet, startAdminFixture, type AdminFixture } from './support.ts';

/**
 * One size limit for what a write appends (MAX_APPEND_BYTES), the same on every event store adapter: a body
 * the API accepts can still make events over it, and that is a 413 naming the limit, never a 500, and
 * nothing of it stays (the slug claimed for it is released).
 */
describe('admin API: a write whose events are over the event size limit', () => {
  let f: AdminFixture;
  before(async () => {
    f = await startAdminFixture();
  });
  after(async () => {
    await f.stop();
  });

  it('answers 413 PAYLOAD_TOO_LARGE in the error envelope, naming the limit, and leaves no entry and no claimed slug behind', async () => {
    const formSet = await f.call('POST', '/form-sets', { body: { ...articleFormSet, slug: 'big-articles' } });
    expect(formSet.status).to.equal(201);
    const formSetId = formSet.body.id ?? formSet.body.formSetId;
    const body = 'x'.repeat(MAX_APPEND_BYTES + 1000);
    const request = { slug: 'too-big', fields: { title: { en: 'Big' }, body: { en: body } } };
    expect(Buffer.byteLength(JSON.stringify(request))).to.be.below(DEFAULT_JSON_LIMIT_BYTES); // the body itself is accepted
    const response = await f.call('POST', `/form-sets/${formSetId}/entries`, { body: request });
    expect(response.status).to.equal(413);
    expect(response.body.error.code).to.equal('PAYLOAD_TOO_LARGE');
    expect(response.body.error.message).to.include(String(MAX_APPEND_BYTES));
    expect(response.body.error.retryable).to.equal(false);
    expect(response.body.error.message).to.not.include('xxxx');
    const list = await f.call('GET', `/form-sets/${formSetId}/entries`);
    expect(list.status).to.equal(200);
    expect(JSON.stringify(list.body)).to.not.include('too-big');
    // The slug the refused write had claimed was released: the same entry, smaller, is created.
    const retried = await f.call('POST', `/form-sets/${formSetId}/entries`, { body: { ...request, fields: { title: { en: 'Big' }, body: { en: 'small' } } } });
    expect(retried.status).to.equal(201);
  });
});
