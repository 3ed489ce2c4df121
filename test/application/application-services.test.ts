import path from 'node:path';
import { expect } from 'chai';
import { ManualClock } from '../../src/clock.ts';
import { EventCatalog } from '../../src/event-store/event-catalog.ts';
import { EventLog } from '../../src/event-store/event-log.ts';
import { SqliteEventStore } from '../../src/event-store/sqlite-event-store.ts';
import { applicationEvents } from '../../src/application/application-events.ts';
import { Reservations } from '../../src/application/reservations.ts';
import { Idempotency } from '../../src/application/idempotency.ts';
import { DomainError } from '../../src/domain/domain-error.ts';
import { IdempotencyInProgressError } from '../../src/application/application-errors.ts';
import { tempDir } from '../support/temp-dir.ts';

const actor = { type: 'user' as const, id: 'u-1' };

describe('application services on the event log', () => {
  let dir: string;
  let store: SqliteEventStore;
  let log: EventLog;
  let clock: ManualClock;
  const open = () => {
    store = SqliteEventStore.open(path.join(dir, 'events.sqlite'));
    clock = new ManualClock();
    log = new EventLog(store, new EventCatalog(applicationEvents), clock);
  };
  beforeEach(() => {
    dir = tempDir();
    open();
  });
  afterEach(() => store.close());

  describe('reservations', () => {
    it('gives a name to exactly one of many concurrent claimants, and again only after a release', async () => {
      const reservations = new Reservations(log);
      const results = await Promise.allSettled(Array.from({ length: 8 }, (_, i) => reservations.claim('entry-slug:fs-1', 'hello-world', `entry-${i}`, actor, 'slug')));
      const winners = results.filter((r) => r.status === 'fulfilled');
      expect(winners).to.have.length(1);
      for (const r of results) if (r.status === 'rejected') expect((r.reason as DomainError).code).to.equal('CONFLICT');
      const owner = await reservations.ownerOf('entry-slug:fs-1', 'hello-world');
      expect(owner).to.match(/^entry-\d$/);
      await reservations.claim('entry-slug:fs-1', 'hello-world', owner!, actor); // own name again: fine
      const clash = await reservations.claim('entry-slug:fs-1', 'hello-world', 'someone-else', actor, 'slug').then(() => null, (e: unknown) => e);
      expect((clash as DomainError).message).to.equal('The slug "hello-world" is already in use.');
      await reservations.release('entry-slug:fs-1', 'hello-world', owner!, actor);
      await reservations.claim('entry-slug:fs-1', 'hello-world', 'someone-else', actor);
      expect(await reservations.ownerOf('entry-slug:fs-1', 'hello-world')).to.equal('someone-else');
      // Scopes are separate name spaces.
      await reservations.claim('entry-slug:fs-2', 'hello-world', 'entry-x', actor);
    });
  });

  describe('idempotency', () => {
    it('runs once per key and returns the same result when the key is resent, also after a restart', async () => {
      let runs = 0;
      const request = { scope: 'p-1', operation: 'create_entry', key: 'k-1', request: { slug: 'a', fields: { title: 'x' } }, ids: ['entryId'], actor };
      const first = await new Idempotency(log).run(request, async ({ entryId }) => {
        runs++;
        return { status: 201, body: { id: entryId } };
      });
      expect(first.replayed).to.equal(false);
      await store.close();
      open();
      const again = await new Idempotency(log).run({ ...request, request: { fields: { title: 'x' }, slug: 'a' } }, async () => {
        runs++;
        return { status: 500, body: null };
      });
      expect(again).to.deep.equal({ status: 201, body: first.body, replayed: true });
      expect(runs).to.equal(1);
    });

    it('re-runs an operation interrupted before its result was recorded, with the same reserved ids', async () => {
      const seen: string[] = [];
      const request = { scope: 'p-1', operation: 'create_entry', key: 'k-2', request: {}, ids: ['entryId'], actor };
      const crashed = await new Idempotency(log).run(request, async ({ entryId }) => {
        seen.push(entryId!);
        throw new Error('process died');
      }).then(() => null, (e: unknown) => e);
      expect((crashed as Error).message).to.equal('process died');
      const retried = await new Idempotency(log).run(request, async ({ entryId }) => {
        seen.push(entryId!);
        return { status: 201, body: { id: entryId } };
      });
      expect(seen).to.have.length(2);
      expect(seen[0]).to.equal(seen[1]);
      expect(retried.body).to.deep.equal({ id: seen[0] });
    });

    it('concurrent requests with one key in one process: the operation runs once and every request gets its result (issue 12 item 4)', async () => {
      let runs = 0;
      const idem = new Idempotency(log, { clock });
      const request = { scope: 'p-1', operation: 'create_entry', key: 'k-par', request: { slug: 'a' }, ids: ['entryId'], actor };
      const results = await Promise.all(Array.from({ length: 20 }, () => idem.run(request, async ({ entryId }) => {
        runs++;
        await new Promise((resolve) => setTimeout(resolve, 20));
        return { status: 201, body: { id: entryId } };
      })));
      expect(runs).to.equal(1);
      expect(new Set(results.map((r) => JSON.stringify(r.body))).size).to.equal(1);
      expect(results.filter((r) => !r.replayed)).to.have.length(1);
      // Another request while one is in flight, but a different body: refused, not joined.
      const slow = idem.run({ ...request, key: 'k-par-2' }, () => new Promise((resolve) => setTimeout(() => resolve({ status: 201, body: {} }), 30)));
      const other = await idem.run({ ...request, key: 'k-par-2', request: { slug: 'b' } }, async () => ({ status: 201, body: {} })).then(() => null, (e: unknown) => e);
      expect((other as DomainError).code).to.equal('CONFLICT');
      await slow;
    });

    it('an attempt running in another process answers IDEMPOTENCY_IN_PROGRESS until its lease runs out, then is taken over with the same ids', async () => {
      // Another process: its own EventLog over the same store; its operation never finishes (it hangs, or died).
      const elsewhere = new Idempotency(new EventLog(store, new EventCatalog(applicationEvents), clock), { clock, attemptLeaseMs: 60_000 });
      const here = new Idempotency(log, { clock, attemptLeaseMs: 60_000 });
      const request = { scope: 'p-1', operation: 'create_entry', key: 'k-lease', request: {}, ids: ['entryId'], actor };
      const seen: string[] = [];
      void elsewhere.run(request, ({ entryId }) => {
        seen.push(entryId!);
        return new Promise(() => undefined);
      });
      await new Promise((resolve) => setTimeout(resolve, 20));
      const busy = await here.run(request, async () => ({ status: 201, body: {} })).then(() => null, (e: unknown) => e);
      expect(busy).to.be.instanceOf(IdempotencyInProgressError);
      expect((busy as IdempotencyInProgressError).code).to.equal('IDEMPOTENCY_IN_PROGRESS');
      expect((busy as IdempotencyInProgressError).retryAfterSeconds).to.equal(1);
      clock.advance(60_001);
      const taken = await here.run(request, async ({ entryId }) => {
        seen.push(entryId!);
        return { status: 201, body: { id: entryId } };
      });
      expect(taken.replayed).to.equal(false);
      expect(seen).to.have.length(2);
      expect(seen[1]).to.equal(seen[0]);
    });

    it('a failed attempt is recorded, so the key may be tried again at once from any process', async () => {
      const request = { scope: 'p-1', operation: 'create_entry', key: 'k-failed', request: {}, ids: ['entryId'], actor };
      const failed = await new Idempotency(log, { clock }).run(request, async () => {
        throw new DomainError('CONFLICT', 'slug taken');
      }).then(() => null, (e: unknown) => e);
      expect((failed as DomainError).code).to.equal('CONFLICT');
      const elsewhere = new Idempotency(new EventLog(store, new EventCatalog(applicationEvents), clock), { clock });
      const retried = await elsewhere.run(request, async () => ({ status: 201, body: { ok: true } }));
      expect(retried).to.deep.equal({ status: 201, body: { ok: true }, replayed: false });
    });

    it('refuses a key resent with a different request, and an over-long key', async () => {
      const idem = new Idempotency(log);
      await idem.run({ scope: 'p-1', operation: 'op', key: 'k-3', request: { a: 1 }, ids: [], actor }, async () => ({ status: 200, body: {} }));
      const reused = await idem.run({ scope: 'p-1', operation: 'op', key: 'k-3', request: { a: 2 }, ids: [], actor }, async () => ({ status: 200, body: {} })).then(() => null, (e: unknown) => e);
      expect((reused as DomainError).code).to.equal('CONFLICT');
      const long = await idem.run({ scope: 'p-1', operation: 'op', key: 'x'.repeat(256), request: {}, ids: [], actor }, async () => ({ status: 200, body: {} })).then(() => null, (e: unknown) => e);
      expect((long as DomainError).code).to.equal('VALIDATION_ERROR');
      // The same key in another project or operation is another key.
      const other = await idem.run({ scope: 'p-2', operation: 'op', key: 'k-3', request: { a: 2 }, ids: [], actor }, async () => ({ status: 200, body: { other: true } }));
      expect(other.replayed).to.equal(false);
    });
  });
});
