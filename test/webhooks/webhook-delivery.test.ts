import { expect } from 'chai';
import { pino } from 'pino';
import { ManualClock } from '../../src/clock.ts';
import { ScheduledPublisher } from '../../src/application/scheduled-publisher.ts';
import { ReadModelReader } from '../../src/read-models/read-model-reader.ts';
import { startRebuild } from '../../src/projection-engine/rebuild.ts';
import { webhooks as webhooksProjection } from '../../projections/webhooks.ts';
import { startAdminFixture, articleFormSet, type AdminFixture } from '../admin/support.ts';
import { adminSession, closedPort, ISO_MS, Receiver, until, UUID } from './support.ts';
import { documentedResponses } from '../support/openapi-responses.ts';

const silent = pino({ level: 'silent' });
const TIMEOUT_MS = 1000;

/**
 * Deliveries end to end: content changed through the admin API, webhooks dispatched by the service to a
 * real HTTPS receiver (certificate made now, trusted through WEBHOOK_CA_FILE, 127.0.0.1 allowed through
 * OUTBOUND_ALLOWLIST) that verifies every signature with @octokit/webhooks-methods.
 */
describe('webhooks: deliveries to a real HTTPS receiver', function () {
  this.timeout(60_000);
  let receiver: Receiver;
  let f: AdminFixture;
  let session: { token: string; headers: Record<string, string> };
  let formSetId: string;
  const clock = new ManualClock('2026-11-22T09:00:00.000Z');
  const hooks: Record<string, { id: string; secret: string; path: string }> = {};

  const call = (method: string, route: string, body?: unknown) => f.call(method, route, { token: session.token, headers: session.headers, ...(body === undefined ? {} : { body }) });

  async function createHook(name: string, path: string, events: string[], extra: Record<string, unknown> = {}, url = receiver.url(path)) {
    const created = await call('POST', '/webhooks', { name, url, events, ...extra });
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
    receiver.secrets.set(path, created.body.secret);
    hooks[name] = { id: created.body.id, secret: created.body.secret, path };
    return created.body;
  }

  async function history(name: string) {
    const response = await call('GET', `/webhooks/${hooks[name]!.id}/deliveries?limit=100`);
    expect(response.status, JSON.stringify(response.body)).to.equal(200);
    return response.body as { items: any[]; nextCursor: string | null };
  }

  /** Waits until every delivery of the webhook has finished (no pending or in-progress one). */
  const settled = (name: string, count: number) =>
    until(() => history(name), (h) => h.items.length === count && h.items.every((d) => d.status !== 'pending' && d.status !== 'in_progress'), 15_000, `${count} settled deliveries of ${name}`);

  async function createEntry(slug: string) {
    const created = await call('POST', `/form-sets/${formSetId}/entries`, { slug, fields: { title: { en: `Title ${slug}` } } });
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
    return created.body as { entry: { id: string; slug: string }; revision: { id: string } };
  }

  async function publish(revisionId: string) {
    expect((await call('POST', `/revisions/${revisionId}/submit`, {})).status).to.equal(200);
    const published = await call('POST', `/revisions/${revisionId}/publish`, {});
    expect(published.status, JSON.stringify(published.body)).to.equal(200);
  }

  before(async () => {
    receiver = await Receiver.start();
    f = await startAdminFixture({
      plan: 'standard',
      clock,
      env: { OUTBOUND_ALLOWLIST: '127.0.0.1', WEBHOOK_CA_FILE: receiver.caFile, WEBHOOK_TIMEOUT_MS: String(TIMEOUT_MS), SCHEDULED_PUBLISH_INTERVAL_MS: '86400000' },
    });
    session = await adminSession(f);
    await createHook('all', '/all', ['entry.published', 'entry.updated', 'entry.deleted', 'master.published']);
    await createHook('masters-only', '/masters', ['master.published']);
    await createHook('disabled', '/disabled', ['entry.published', 'entry.updated', 'entry.deleted', 'master.published'], { enabled: false });
    const formSet = await call('POST', '/form-sets', articleFormSet);
    expect(formSet.status, JSON.stringify(formSet.body)).to.equal(201);
    formSetId = formSet.body.id;
  });
  after(async () => {
    await f?.stop();
    await receiver?.close();
  });

  describe('content events', () => {
    let first: { entry: { id: string; slug: string }; revision: { id: string } };
    let secondRevisionId: string;

    it('entry.published: the exact payload of spec section 6, signed over the raw bytes, with event and delivery headers', async () => {
      first = await createEntry('hello-world');
      await publish(first.revision.id);
      const [got] = await receiver.waitFor('/all', (r) => r.length === 1);
      const expected = {
        event: 'entry.published',
        project_id: f.project.projectId,
        form_set_slug: 'articles',
        entry_slug: 'hello-world',
        entry_id: first.entry.id,
        revision_id: first.revision.id,
        timestamp: '2026-11-22T09:00:00.000Z',
      };
      // Field order and bytes as sent: no field values, nothing else.
      expect(got!.raw.toString('utf8')).to.equal(JSON.stringify(expected));
      expect(got!.method).to.equal('POST');
      expect(got!.verified).to.equal(true);
      expect(got!.headers['content-type']).to.equal('application/json');
      expect(got!.headers['x-service-signature']).to.match(/^sha256=[0-9a-f]{64}$/);
      expect(got!.headers['x-service-event']).to.equal('entry.published');
      expect(got!.headers['x-service-delivery']).to.match(UUID);
      expect(got!.headers['x-service-test']).to.equal(undefined);

      const h = await settled('all', 1);
      const delivery = h.items[0];
      expect(delivery).to.include({ id: got!.headers['x-service-delivery'], event: 'entry.published', trigger: 'event', status: 'succeeded', attemptCount: 1 });
      expect(delivery.payload).to.equal(got!.raw.toString('utf8'));
      expect(delivery.attempts).to.have.length(1);
      expect(delivery.attempts[0]).to.include({ number: 1, trigger: 'event', state: 'succeeded', httpStatus: 200, responseBody: 'ok', responseTruncated: false, error: null, url: receiver.url('/all') });
      expect(delivery.attempts[0].timestamp).to.match(ISO_MS);
      expect(delivery.attempts[0].payload).to.equal(delivery.payload);
      expect(delivery.attempts[0].durationMs).to.be.a('number').and.at.least(0);
    });

    it('entry.updated when a newly published revision replaces live content', async () => {
      clock.advance(60_000);
      const saved = await call('POST', `/entries/${first.entry.id}/revisions`, { fields: { title: { en: 'Changed' } } });
      expect(saved.status, JSON.stringify(saved.body)).to.equal(201);
      secondRevisionId = saved.body.id ?? saved.body.revision?.id;
      await publish(secondRevisionId);
      const got = await receiver.waitFor('/all', (r) => r.length === 2);
      expect(got[1]!.raw.toString('utf8')).to.equal(
        JSON.stringify({
          event: 'entry.updated',
          project_id: f.project.projectId,
          form_set_slug: 'articles',
          entry_slug: 'hello-world',
          entry_id: first.entry.id,
          revision_id: secondRevisionId,
          timestamp: '2026-11-22T09:01:00.000Z',
        }),
      );
      expect(got[1]!.headers['x-service-event']).to.equal('entry.updated');
      expect(got[1]!.verified).to.equal(true);
    });

    it('entry.published when a scheduled publish fires (scheduled publisher, injected clock)', async () => {
      const later = await createEntry('later');
      expect((await call('POST', `/revisions/${later.revision.id}/submit`, {})).status).to.equal(200);
      const approved = await call('POST', `/revisions/${later.revision.id}/approve`, { publishAt: '2026-11-22T09:10:00.000Z' });
      expect(approved.body, JSON.stringify(approved.body)).to.include({ status: 'scheduled' });
      const publisher = new ScheduledPublisher({ log: f.service.log, reader: new ReadModelReader(f.service.stores.readModels, { cacheMs: 0 }), clock, logger: silent, intervalMs: 1000 });
      expect(await publisher.runOnce()).to.equal(0);
      clock.set('2026-11-22T09:10:30.000Z');
      expect(await publisher.runOnce()).to.equal(1);
      const got = await receiver.waitFor('/all', (r) => r.length === 3);
      expect(got[2]!.json).to.deep.equal({
        event: 'entry.published',
        project_id: f.project.projectId,
        form_set_slug: 'articles',
        entry_slug: 'later',
        entry_id: later.entry.id,
        revision_id: later.revision.id,
        timestamp: '2026-11-22T09:10:30.000Z',
      });
    });

    it('entry.deleted, naming the revision that was live', async () => {
      clock.advance(1000);
      expect((await call('DELETE', `/entries/${first.entry.id}`)).status).to.equal(204);
      const got = await receiver.waitFor('/all', (r) => r.length === 4);
      expect(got[3]!.raw.toString('utf8')).to.equal(
        JSON.stringify({
          event: 'entry.deleted',
          project_id: f.project.projectId,
          form_set_slug: 'articles',
          entry_slug: 'hello-world',
          entry_id: first.entry.id,
          revision_id: secondRevisionId,
          timestamp: '2026-11-22T09:10:31.000Z',
        }),
      );
      // An entry deleted before it was ever published: no revision_id.
      const draft = await createEntry('never-published');
      expect((await call('DELETE', `/entries/${draft.entry.id}`)).status).to.equal(204);
      const more = await receiver.waitFor('/all', (r) => r.length === 5);
      expect(more[4]!.json).to.deep.equal({
        event: 'entry.deleted',
        project_id: f.project.projectId,
        form_set_slug: 'articles',
        entry_slug: 'never-published',
        entry_id: draft.entry.id,
        timestamp: '2026-11-22T09:10:31.000Z',
      });
    });

    it('master.published to every webhook subscribed to it', async () => {
      const master = await call('POST', '/master-entities', { key: 'colours', name: 'Colours', records: [{ value: 'red', labels: { en: 'Red' } }, { value: 'blue', labels: { en: 'Blue' } }] });
      expect(master.status, JSON.stringify(master.body)).to.equal(201);
      const masterId = master.body.id;
      expect((await call('POST', `/master-entities/${masterId}/publish`)).status).to.equal(200);
      const expected = JSON.stringify({ event: 'master.published', project_id: f.project.projectId, master_entity_id: masterId, master_entity_key: 'colours', record_count: 2, timestamp: '2026-11-22T09:10:31.000Z' });
      const all = await receiver.waitFor('/all', (r) => r.length === 6);
      expect(all[5]!.raw.toString('utf8')).to.equal(expected);
      const masters = await receiver.waitFor('/masters', (r) => r.length === 1);
      expect(masters[0]!.raw.toString('utf8')).to.equal(expected);
      expect(masters[0]!.verified).to.equal(true);
    });

    it('a disabled webhook and an unsubscribed event get nothing', async () => {
      await settled('all', 6);
      await settled('masters-only', 1);
      expect(receiver.received('/masters').map((r) => r.json.event)).to.deep.equal(['master.published']);
      expect(receiver.received('/disabled')).to.have.length(0);
      expect((await history('disabled')).items).to.have.length(0);
      // Enabled again, it gets what happens from then on only.
      expect((await call('PATCH', `/webhooks/${hooks['disabled']!.id}`, { enabled: true })).body.enabled).to.equal(true);
      const entry = await createEntry('after-enabling');
      await publish(entry.revision.id);
      const got = await receiver.waitFor('/disabled', (r) => r.length === 1);
      expect(got[0]!.json).to.include({ event: 'entry.published', entry_slug: 'after-enabling' });
      await receiver.waitFor('/all', (r) => r.length === 7);
      expect((await call('PATCH', `/webhooks/${hooks['disabled']!.id}`, { enabled: false })).body.enabled).to.equal(false);
    });

  });

  describe('failures', () => {
    let refusedUrl: string;
    before(async () => {
      receiver.behaviours.set('/fail', { status: 500, body: 'boom' });
      receiver.behaviours.set('/slow', 'hang');
      receiver.behaviours.set('/moved', { status: 302, headers: { location: 'https://example.com/elsewhere' } });
      receiver.behaviours.set('/big', { status: 200, body: 'x'.repeat(10_000) });
      refusedUrl = `https://127.0.0.1:${await closedPort()}/nobody`;
      await createHook('fail', '/fail', ['entry.published']);
      await createHook('slow', '/slow', ['entry.published']);
      await createHook('refused', '/nobody', ['entry.published'], {}, refusedUrl);
      await createHook('moved', '/moved', ['entry.published']);
      await createHook('big', '/big', ['entry.published']);
      const entry = await createEntry('failures');
      await publish(entry.revision.id);
    });
    after(() => receiver.releaseHanging());

    it('a slow receiver does not hold up the others', async () => {
      // /slow holds its request open past the timeout; the others are answered meanwhile.
      const started = Date.now();
      await receiver.waitFor('/all', (r) => r.some((x) => x.json?.entry_slug === 'failures'));
      await receiver.waitFor('/slow', (r) => r.length === 1);
      expect(Date.now() - started).to.be.below(TIMEOUT_MS * 5);
    });

    it('a 500 answer is recorded with status, response body and error', async () => {
      const h = await settled('fail', 1);
      expect(h.items[0].status).to.equal('failed');
      expect(h.items[0].attempts[0]).to.include({ state: 'failed', httpStatus: 500, responseBody: 'boom', responseTruncated: false });
      expect(h.items[0].attempts[0].error).to.match(/^HTTP 500/);
    });

    it('a receiver hanging past the timeout is recorded as a timeout', async () => {
      const h = await settled('slow', 1);
      expect(h.items[0].status).to.equal('failed');
      expect(h.items[0].attempts[0]).to.include({ state: 'failed', httpStatus: null, responseBody: null });
      expect(h.items[0].attempts[0].error).to.equal(`timeout: no response within ${TIMEOUT_MS} ms`);
      expect(h.items[0].attempts[0].durationMs).to.be.at.least(TIMEOUT_MS - 5);
    });

    it('a refused connection is recorded with the error', async () => {
      const h = await settled('refused', 1);
      expect(h.items[0].status).to.equal('failed');
      expect(h.items[0].attempts[0]).to.include({ state: 'failed', httpStatus: null, url: refusedUrl });
      expect(h.items[0].attempts[0].error).to.match(/^connection refused by 127\.0\.0\.1:\d+ \(ECONNREFUSED\)$/);
    });

    it('a redirect is not followed and counts as a failure', async () => {
      const h = await settled('moved', 1);
      expect(h.items[0].attempts[0]).to.include({ state: 'failed', httpStatus: 302 });
      expect(h.items[0].attempts[0].error).to.equal('HTTP 302: redirects are not followed (Location: https://example.com/elsewhere)');
    });

    it('keeps 4 KiB of a long response body, marked truncated', async () => {
      const h = await settled('big', 1);
      expect(h.items[0].status).to.equal('succeeded');
      expect(h.items[0].attempts[0].responseBody).to.equal('x'.repeat(4096));
      expect(h.items[0].attempts[0].responseTruncated).to.equal(true);
    });

    it('redelivery sends the same bytes again, as a new attempt in the history', async () => {
      const before = (await settled('fail', 1)).items[0];
      const [original] = receiver.received('/fail');
      receiver.behaviours.set('/fail', { status: 204 });
      clock.advance(3_600_000);
      const asked = await call('POST', `/webhooks/${hooks['fail']!.id}/deliveries/${before.id}/redeliver`);
      expect(asked.status, JSON.stringify(asked.body)).to.equal(202);
      expect(asked.body.id).to.equal(before.id);
      const got = await receiver.waitFor('/fail', (r) => r.length === 2);
      expect(got[1]!.raw.equals(original!.raw)).to.equal(true);
      expect(got[1]!.headers['x-service-delivery']).to.equal(before.id);
      expect(got[1]!.headers['x-service-signature']).to.equal(original!.headers['x-service-signature']);
      expect(got[1]!.verified).to.equal(true);
      const after = await until(() => call('GET', `/webhooks/${hooks['fail']!.id}/deliveries/${before.id}`), (r) => r.body.status === 'succeeded');
      expect(after.body.attempts.map((a: any) => [a.number, a.trigger, a.state, a.httpStatus])).to.deep.equal([
        [1, 'event', 'failed', 500],
        [2, 'redelivery', 'succeeded', 204],
      ]);
      expect(after.body.attempts[1].payload).to.equal(after.body.attempts[0].payload);
      expect(after.body.attempts[1].timestamp).to.not.equal(after.body.attempts[0].timestamp);
    });
  });

  describe('Send Test, history and rebuild', () => {
    it('Send Test posts a dummy payload of the right shape, signed, recorded as a test delivery', async () => {
      const asked = await call('POST', `/webhooks/${hooks['masters-only']!.id}/test`, {});
      expect(asked.status, JSON.stringify(asked.body)).to.equal(202);
      expect(asked.body).to.include({ trigger: 'test', event: 'master.published' });
      const got = await receiver.waitFor('/masters', (r) => r.length === 2);
      expect(got[1]!.headers['x-service-test']).to.equal('true');
      expect(got[1]!.headers['x-service-delivery']).to.equal(asked.body.id);
      expect(got[1]!.verified).to.equal(true);
      expect(Object.keys(got[1]!.json)).to.deep.equal(['event', 'project_id', 'master_entity_id', 'master_entity_key', 'record_count', 'timestamp']);
      expect(got[1]!.json).to.include({ event: 'master.published', project_id: f.project.projectId });

      const entryTest = await call('POST', `/webhooks/${hooks['all']!.id}/test`, { event: 'entry.updated' });
      const entryGot = await receiver.waitFor('/all', (r) => r.some((x) => x.headers['x-service-delivery'] === entryTest.body.id));
      const dummy = entryGot.find((x) => x.headers['x-service-delivery'] === entryTest.body.id)!;
      expect(Object.keys(dummy.json)).to.deep.equal(['event', 'project_id', 'form_set_slug', 'entry_slug', 'entry_id', 'revision_id', 'timestamp']);
      expect(dummy.json.event).to.equal('entry.updated');
      const recorded = await until(() => call('GET', `/webhooks/${hooks['all']!.id}/deliveries/${entryTest.body.id}`), (r) => r.body.status === 'succeeded');
      expect(recorded.body.attempts[0]).to.include({ trigger: 'test', httpStatus: 200 });
      expect((await call('POST', `/webhooks/${hooks['all']!.id}/test`, { event: 'entry.nope' })).status).to.equal(400);
    });

    it('lists the history newest first with pagination', async () => {
      const all = await history('all');
      const page1 = await call('GET', `/webhooks/${hooks['all']!.id}/deliveries?limit=3`);
      const page2 = await call('GET', `/webhooks/${hooks['all']!.id}/deliveries?limit=3&cursor=${page1.body.nextCursor}`);
      expect(page1.body.nextCursor).to.be.a('string');
      expect(page1.body.items.map((d: any) => d.id)).to.deep.equal(all.items.slice(0, 3).map((d) => d.id));
      expect(page2.body.items.map((d: any) => d.id)).to.deep.equal(all.items.slice(3, 6).map((d) => d.id));
      const documented = await documentedResponses(f.service.url);
      for (const page of [page1, page2]) documented('listWebhookDeliveries', 200, page.body);
      const created = all.items.map((d) => d.createdAt);
      expect([...created].sort().reverse()).to.deep.equal(created);
      const failed = await call('GET', `/webhooks/${hooks['slow']!.id}/deliveries?status=failed`);
      expect(failed.body.items).to.have.length(1);
      expect((await call('GET', `/webhooks/${hooks['all']!.id}/deliveries?limit=101`)).status).to.equal(400);
    });

    it('a full rebuild of the webhooks projection sends nothing again and keeps the history', async () => {
      const names = Object.keys(hooks);
      const before = new Map<string, unknown>();
      for (const name of names) before.set(name, (await history(name)).items.map((d) => [d.id, d.status, d.attempts.length]));
      const receivedBefore = receiver.received().length;
      const { log, stores, supervisor } = f.service;
      const generation = supervisor!.liveGeneration('webhooks')!;
      await startRebuild({ projection: webhooksProjection, log, store: stores.readModels, clock, logger: silent, dropGraceMs: 0 }).result;
      await until(async () => supervisor!.liveGeneration('webhooks'), (g) => g === generation + 1, 10_000, 'the rebuilt generation to be live');
      for (const name of names) expect((await history(name)).items.map((d) => [d.id, d.status, d.attempts.length]), name).to.deep.equal(before.get(name));
      // Deliveries asked for after the rebuild still go out, once. By the time the dispatcher (poked by the projection's commits)
      // has sent and recorded one, and then sent a later one, a wrongly pending delivery would have been sent too.
      const afterRebuild = (x: { json?: any }) => String(x.json?.entry_slug ?? '').startsWith('after-rebuild');
      const entry = await createEntry('after-rebuild');
      await publish(entry.revision.id);
      const [sent] = (await receiver.waitFor('/all', (r) => r.some((x) => x.json?.entry_slug === 'after-rebuild'))).filter((x) => x.json?.entry_slug === 'after-rebuild');
      await until(() => call('GET', `/webhooks/${hooks['all']!.id}/deliveries/${sent!.headers['x-service-delivery']}`), (r) => r.body.status === 'succeeded');
      const later = await createEntry('after-rebuild-later');
      await publish(later.revision.id);
      await receiver.waitFor('/all', (r) => r.some((x) => x.json?.entry_slug === 'after-rebuild-later'));
      expect(receiver.received().filter((x) => !afterRebuild(x))).to.have.length(receivedBefore);
      expect(receiver.received('/all').filter((x) => x.json?.entry_slug === 'after-rebuild')).to.have.length(1);
    });
  });

  describe('promptness', () => {
    it('a delivery starts as soon as the webhooks projection lists it, not at the next look at the outbox (every second)', async () => {
      // The dispatcher is poked by the projection's commits; its own look at the outbox comes once a second. Three
      // publishes each delivered within 400 ms: by the once-a-second look alone, that would happen 6% of the time.
      for (const slug of ['prompt-1', 'prompt-2', 'prompt-3']) {
        const entry = await createEntry(slug);
        const before = receiver.received('/all').length;
        await publish(entry.revision.id);
        const answered = Date.now();
        const got = await receiver.waitFor('/all', (r) => r.length === before + 1);
        expect(got.at(-1)!.at - answered, `${slug}: from the publish's answer to the delivery`).to.be.below(400);
      }
    });
  });
});
