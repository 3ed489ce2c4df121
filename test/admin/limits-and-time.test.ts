import path from 'node:path';
import { expect } from 'chai';
import { pino } from 'pino';
import { ManualClock } from '../../src/clock.ts';
import { ReadModelReader } from '../../src/read-models/read-model-reader.ts';
import { ScheduledPublisher } from '../../src/application/scheduled-publisher.ts';
import { tempDir } from '../support/temp-dir.ts';
import { articleFormSet, startAdminFixture } from './support.ts';

describe('admin API: rate limits, scheduled publishing and idempotency across restarts', function () {
  this.timeout(60_000);

  it('limits a Free project\'s agent key to 60 requests per 60 s with 429 RATE_LIMITED and Retry-After', async () => {
    // Half-way through a minute: the 61st request waits out the rest of this window and 1 s of the next (the
    // 60 requests then weigh (60 - t) / 60 each). From the real time instead, a start in the first second of a
    // minute made that wait 61 s.
    const clock = new ManualClock('2026-11-22T09:00:30.000Z');
    const f = await startAdminFixture({ plan: 'free', clock });
    try {
      const statuses: number[] = [];
      for (let i = 0; i < 61; i++) statuses.push((await f.call('GET', '/form-sets')).status);
      expect(statuses.slice(0, 60).every((s) => s === 200)).to.equal(true);
      expect(statuses[60]).to.equal(429);
      const limited = await f.call('GET', '/form-sets');
      expect(limited.body.error).to.include({ code: 'RATE_LIMITED', retryable: true });
      const retryAfter = Number(limited.headers.get('retry-after'));
      expect(retryAfter).to.equal(31);
      clock.advance(retryAfter * 1000 - 1);
      expect((await f.call('GET', '/form-sets')).status).to.equal(429);
      clock.advance(1);
      expect((await f.call('GET', '/form-sets')).status).to.equal(200);
    } finally {
      await f.stop();
    }
  });

  it('publishes a revision approved with a date once its time has passed, not before (injected clock)', async () => {
    const clock = new ManualClock('2026-11-22T09:00:00.000Z');
    const f = await startAdminFixture({ clock, env: { SCHEDULED_PUBLISH_INTERVAL_MS: '86400000' } });
    try {
      const formSet = (await f.call('POST', '/form-sets', { body: articleFormSet })).body;
      const created = (await f.call('POST', `/form-sets/${formSet.id}/entries`, { body: { slug: 'later', fields: { title: 'Later' } } })).body;
      const revisionId = created.revision.id;
      await f.call('POST', `/revisions/${revisionId}/submit`, { body: {} });
      // Local time in Tokyo: 2026-11-22 19:30 JST is 10:30 UTC.
      const approved = await f.call('POST', `/revisions/${revisionId}/approve`, { body: { publishAt: { local: '2026-11-22T19:30', timeZone: 'Asia/Tokyo' } } });
      expect(approved.body, JSON.stringify(approved.body)).to.include({ status: 'scheduled', publishAt: '2026-11-22T10:30:00.000Z' });
      const publisher = new ScheduledPublisher({ log: f.service.log, reader: new ReadModelReader(f.service.stores.readModels, { cacheMs: 0 }), clock, logger: pino({ level: 'silent' }), intervalMs: 1000 });
      clock.set('2026-11-22T10:29:59.000Z');
      expect(await publisher.runOnce()).to.equal(0);
      clock.set('2026-11-22T10:31:00.000Z');
      expect(await publisher.runOnce()).to.equal(1);
      await f.service.supervisor!.waitFor((await f.service.log.headPosition())!, 5000);
      const after = await f.call('GET', `/revisions/${revisionId}`);
      expect(after.body).to.include({ status: 'published', publishedAt: '2026-11-22T10:31:00.000Z' });
      expect(await publisher.runOnce()).to.equal(0);
    } finally {
      await f.stop();
    }
  });

  it('an idempotency key resent after a restart returns the same entry', async () => {
    const dataDir = path.join(tempDir(), 'data');
    const first = await startAdminFixture({ dataDir });
    const formSet = (await first.call('POST', '/form-sets', { body: articleFormSet })).body;
    const body = { slug: 'survives', fields: { title: 'Once' }, idempotencyKey: 'restart-key' };
    const created = await first.call('POST', `/form-sets/${formSet.id}/entries`, { body, token: first.project.agentKey.key });
    const key = first.project.agentKey.key;
    await first.stop();
    const second = await startAdminFixture({ dataDir });
    try {
      const again = await second.call('POST', `/form-sets/${formSet.id}/entries`, { body, token: key });
      expect(again.status).to.equal(201);
      expect(again.body.entry.id).to.equal(created.body.entry.id);
    } finally {
      await second.stop();
    }
  });
});
