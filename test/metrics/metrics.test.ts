import { expect } from 'chai';
import { startAdminFixture, articleFormSet, type AdminFixture } from '../admin/support.ts';
import { adminSession, Receiver, until } from '../webhooks/support.ts';
import { contactForm, pinnedBase } from '../contact-forms/support.ts';
import { parseExposition, series, total, type Exposition } from '../support/prometheus-text.ts';

/** /metrics, checked line by line against the Prometheus text format. */
async function scrape(f: AdminFixture, headers: Record<string, string> = {}): Promise<Exposition> {
  const response = await fetch(`${f.service.url}/metrics`, { headers });
  expect(response.status).to.equal(200);
  expect(response.headers.get('content-type')).to.match(/^text\/plain; version=0\.0\.4/);
  expect(response.headers.get('cache-control')).to.equal('no-store');
  return parseExposition(await response.text());
}

describe('GET /metrics: Prometheus metrics of the service', function () {
  this.timeout(60_000);
  let receiver: Receiver;
  let f: AdminFixture;

  before(async () => {
    receiver = await Receiver.start();
    receiver.behaviours.set('/fail', { status: 500, body: 'no' });
    f = await startAdminFixture({ plan: 'standard', env: { OUTBOUND_ALLOWLIST: '127.0.0.1', WEBHOOK_CA_FILE: receiver.caFile, CONTACT_SUBMIT_RATE_LIMIT: '1' } });
  });
  after(async () => {
    await f?.stop();
    await receiver?.close();
  });

  it('counts requests by route pattern and status with latencies (response-cache hits too), appends, outbox and webhook outcomes, mail, rate-limit refusals, and reports every projection', async () => {
    const session = await adminSession(f);
    const asAdmin = { token: session.token, headers: session.headers };
    for (const path of ['/ok', '/fail']) {
      const hook = await f.call('POST', '/webhooks', { ...asAdmin, body: { name: path, url: receiver.url(path), events: ['entry.published'] } });
      expect(hook.status, JSON.stringify(hook.body)).to.equal(201);
      receiver.secrets.set(path, hook.body.secret);
    }
    const formSet = await f.call('POST', '/form-sets', { body: articleFormSet });
    const entry = await f.call('POST', `/form-sets/${formSet.body.id}/entries`, { body: { slug: 'hello', fields: { title: { en: 'Hello' } } } });
    const revisionId = entry.body.revision.id as string;
    expect((await f.call('POST', `/revisions/${revisionId}/submit`, { body: {} })).status).to.equal(200);
    expect((await f.call('POST', `/revisions/${revisionId}/publish`, { body: {} })).status).to.equal(200);
    const form = await f.call('POST', '/contact-forms', { body: contactForm() });
    expect(form.status, JSON.stringify(form.body)).to.equal(201);

    const base = pinnedBase(f);
    const submit = () => fetch(`${base}/contact-forms/contact/submit`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name: 'Ada', email: 'ada@example.com', message: 'Hi' }) });
    expect((await submit()).status).to.equal(200);
    expect((await submit()).status).to.equal(429);
    await receiver.waitFor('/ok', (got) => got.length === 1);
    await receiver.waitFor('/fail', (got) => got.length === 1);

    // Outcomes are counted once performed; wait until the two webhook deliveries, the two notices and the review notice of the submission (sent to the tenant_admin; the publication's is not even queued: its author is an agent key) are.
    await until(
      () => scrape(f),
      (m) =>
        total(m, 'annals_outbox_items_total', { outbox: 'webhooks' }) === 2 &&
        total(m, 'annals_outbox_items_total', { outbox: 'contact-notices' }) === 2 &&
        total(m, 'annals_outbox_items_total', { outbox: 'review-notices' }) === 1,
      15_000,
      'outbox outcomes counted',
    );
    const settled = await until(() => scrape(f), (m) => series(m, 'annals_projection_lag_positions').every((s) => s.value === 0), 10_000, 'projections caught up');
    for (const sample of series(settled, 'annals_projection_state', { state: 'live' })) expect(sample.value, sample.labels['projection']).to.equal(1);
    const head = total(settled, 'annals_event_log_head_position');
    expect(head).to.be.greaterThan(0);
    for (const sample of series(settled, 'annals_projection_checkpoint_position')) expect(sample.value, sample.labels['projection']).to.equal(head);
    for (const sample of series(settled, 'annals_projection_ready')) expect(sample.value, sample.labels['projection']).to.equal(1);

    // With the read models quiet, the first two reads of the entry are answered from its serialised document
    // before Koa (answered_by read-model), the second filling the response cache; the next two are its hits.
    for (let i = 0; i < 4; i++) expect((await fetch(`${base}/form-sets/articles/entries/hello`)).status).to.equal(200);
    expect((await fetch(`${base}/no/such/route`)).status).to.equal(404);
    const metrics = await scrape(f);
    const entryRoute = '/public/p/:projectId/v1/form-sets/:formSetSlug/entries/:entrySlug';
    expect(metrics.types.get('annals_http_request_duration_seconds')).to.equal('histogram');
    expect(total(metrics, 'annals_http_request_duration_seconds_count', { route: entryRoute, status: '200', answered_by: 'read-model' })).to.equal(2);
    expect(total(metrics, 'annals_http_request_duration_seconds_count', { route: entryRoute, status: '200', answered_by: 'response-cache' })).to.equal(2);
    expect(total(metrics, 'annals_http_request_duration_seconds_sum', { route: entryRoute, answered_by: 'response-cache' })).to.be.greaterThan(0);
    expect(total(metrics, 'annals_http_request_duration_seconds_bucket', { route: entryRoute, answered_by: 'response-cache', le: '+Inf' })).to.equal(2);
    expect(total(metrics, 'annals_http_request_duration_seconds_count', { method: 'POST', route: '/admin/v1/revisions/:revisionId/publish', status: '200' })).to.equal(1);
    expect(total(metrics, 'annals_http_request_duration_seconds_count', { route: 'unmatched', status: '404' })).to.equal(1);
    expect(total(metrics, 'annals_rate_limit_refusals_total', { route: '/public/p/:projectId/v1/contact-forms/:slug/submit' })).to.equal(1);

    expect(total(metrics, 'annals_events_appended_total', { type: 'entry.revision-published' })).to.equal(1);
    expect(total(metrics, 'annals_events_appended_total', { type: 'contact-submission.received' })).to.equal(1);
    expect(total(metrics, 'annals_outbox_items_total', { outbox: 'webhooks', outcome: 'delivered' })).to.equal(1);
    expect(total(metrics, 'annals_outbox_items_total', { outbox: 'webhooks', outcome: 'failed' })).to.equal(1);
    expect(total(metrics, 'annals_outbox_items_total', { outbox: 'contact-notices', outcome: 'sent' })).to.equal(2);
    expect(total(metrics, 'annals_outbox_perform_seconds_count', { outbox: 'webhooks' })).to.equal(2);
    expect(total(metrics, 'annals_outbox_items_total', { outbox: 'review-notices', outcome: 'sent' })).to.equal(1);
    expect(total(metrics, 'annals_outbox_items_total', { outbox: 'review-notices', outcome: 'skipped' })).to.equal(0);
    expect(total(metrics, 'annals_mail_messages_total', { transport: 'eml-files', result: 'sent' })).to.equal(3);

    const projections = series(metrics, 'annals_projection_state', { state: 'live' }).map((s) => s.labels['projection']);
    expect(projections).to.include.members(['audit-trail', 'access', 'content', 'public-content', 'media', 'webhooks', 'contact-forms']);
    // Node's own process metrics.
    expect(total(settled, 'process_resident_memory_bytes')).to.be.greaterThan(0);
    expect(settled.types.has('nodejs_eventloop_lag_p99_seconds')).to.equal(true);
  });
});

describe('GET /metrics: off, or behind a token', function () {
  this.timeout(30_000);

  it('answers only the bearer of METRICS_TOKEN, with 401 in the error envelope otherwise', async () => {
    const f = await startAdminFixture({ env: { METRICS_TOKEN: 'a-metrics-token-0123456789' } });
    try {
      for (const authorization of [undefined, 'Bearer wrong-token-0123456789', 'a-metrics-token-0123456789']) {
        const response = await fetch(`${f.service.url}/metrics`, { headers: authorization ? { authorization } : {} });
        expect(response.status).to.equal(401);
        expect(((await response.json()) as { error: { code: string } }).error.code).to.equal('UNAUTHORIZED');
      }
      const metrics = await scrape(f, { authorization: 'Bearer a-metrics-token-0123456789' });
      expect(metrics.types.has('annals_http_request_duration_seconds')).to.equal(true);
    } finally {
      await f.stop();
    }
  });

  it('is not served with METRICS=off', async () => {
    const f = await startAdminFixture({ env: { METRICS: 'off' } });
    try {
      const response = await fetch(`${f.service.url}/metrics`);
      expect(response.status).to.equal(404);
      expect(((await response.json()) as { error: { code: string } }).error.code).to.equal('NOT_FOUND');
    } finally {
      await f.stop();
    }
  });
});
