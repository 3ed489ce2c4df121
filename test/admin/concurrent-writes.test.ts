import { expect } from 'chai';
import { createArticleFormSet, startAdminFixture, type AdminFixture } from './support.ts';

/** Issue 12 items 3 and 4: parallel writes to one entry, and parallel creates with one idempotency key. */
describe('admin API: concurrent writes', function () {
  this.timeout(60_000);
  let f: AdminFixture;
  let formSetId: string;

  before(async () => {
    f = await startAdminFixture();
    formSetId = await createArticleFormSet(f);
  });
  after(() => f.stop());

  it('20 parallel saves without expectedRevision all succeed, each as its own revision, and none answers 5xx (three rounds)', async () => {
    const entry = await f.call('POST', `/form-sets/${formSetId}/entries`, { body: { slug: 'contended', fields: { title: 'v0' } } });
    expect(entry.status).to.equal(201);
    const entryId = entry.body.entry.id as string;
    const revisionNumbers = new Set<number>();
    for (let round = 0; round < 3; round++) {
      const saves = await Promise.all(Array.from({ length: 20 }, (_, i) => f.call('POST', `/entries/${entryId}/revisions`, { body: { fields: { title: `r${round} v${i}` } } })));
      for (const save of saves) {
        // A save without an expected revision must land; if it ever cannot, the answer says to retry.
        if (save.status !== 201) {
          expect(save.status, JSON.stringify(save.body)).to.equal(409);
          expect(save.body.error.retryable).to.equal(true);
          expect(save.headers.get('retry-after')).to.match(/^\d+$/);
        }
      }
      expect(saves.map((s) => s.status), `round ${round}: every save lands under realistic contention`).to.deep.equal(Array(20).fill(201));
      for (const save of saves) revisionNumbers.add(save.body.revision);
    }
    expect(revisionNumbers.size).to.equal(60);
    const revisions = await f.call('GET', `/entries/${entryId}/revisions?limit=100`);
    expect(revisions.body.items).to.have.length(61);
  });

  it('20 parallel creates with one Idempotency-Key make one entry and answer all 20 with the same 201 body', async () => {
    const key = `parallel-${Date.now()}`;
    const creates = await Promise.all(
      Array.from({ length: 20 }, () => f.call('POST', `/form-sets/${formSetId}/entries`, { body: { slug: 'once-only', fields: { title: 'Once' } }, headers: { 'idempotency-key': key } })),
    );
    const statuses = creates.map((c) => c.status);
    for (const create of creates) {
      if (create.status === 201) continue;
      // The only other answer allowed: "in progress, retry", the way Stripe answers it.
      expect(create.status, JSON.stringify(create.body)).to.equal(409);
      expect(create.body.error.code).to.equal('IDEMPOTENCY_IN_PROGRESS');
      expect(create.body.error.retryable).to.equal(true);
      expect(create.headers.get('retry-after')).to.match(/^\d+$/);
    }
    // In one process the later requests wait for the first: every one gets the 201.
    expect(statuses).to.deep.equal(Array(20).fill(201));
    const bodies = new Set(creates.map((c) => JSON.stringify(c.body)));
    expect(bodies.size).to.equal(1);
    const list = await f.call('GET', `/form-sets/${formSetId}/entries?limit=100`);
    const matching = (list.body.items as Array<{ slug: string }>).filter((e) => e.slug === 'once-only');
    expect(matching).to.have.length(1);
  });
});
