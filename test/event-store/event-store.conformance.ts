/**
 * The event store port's contract. Every adapter runs this suite (see the *.test.ts files beside it).
 * Tests use their own stream names and assert only relative facts about the global log, so that the
 * suite also runs against one shared EventStoreDB server.
 */
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import type { EventMetadata, EventStore, NewEvent, RecordedEvent, Subscription, SubscriptionFilter, SubscriptionMessage } from '../../src/event-store/event-store.ts';
import { filterMatches } from '../../src/projection-engine/handled-events.ts';
import { collect, MAX_APPEND_BYTES, SUBSCRIPTION_PROGRESS_BOUND_MS } from '../../src/event-store/event-store.ts';
import { EventTooLargeError, InvalidEventError, StreamNotFoundError, WrongExpectedVersionError } from '../../src/event-store/errors.ts';
import { conformanceSuite, type HarnessOrPending } from '../support/conformance.ts';

export function eventStoreConformance(title: string, harness: HarnessOrPending<EventStore>): void {
  conformanceSuite(title, harness, ({ test, harness }) => {
    let store: EventStore;
    let run: string;
    beforeEach(async () => {
      store = await harness().create();
      run = randomUUID().slice(0, 8);
    });
    afterEach(async () => {
      await store.close();
    });
    const stream = (name: string) => `${name}-${run}`;

    test('appends to a new stream with "no stream": first revision 0, a global position, events read back intact', async () => {
      const events = [event('thing.created', { n: 1, text: 'héllo 漢字' }), event('thing.renamed', { n: 2, nested: { list: [1, 2] } })];
      const result = await store.append(stream('a'), events, 'no_stream');
      expect(result.nextExpectedRevision).to.equal(1n);
      expect(typeof result.position).to.equal('bigint');
      const read = await collect(store.readStream(stream('a')));
      expect(read.map((e) => e.revision)).to.deep.equal([0n, 1n]);
      expect(read.map((e) => e.id)).to.deep.equal(events.map((e) => e.id));
      expect(read.map((e) => e.type)).to.deep.equal(['thing.created', 'thing.renamed']);
      expect(read[1]!.data).to.deep.equal({ n: 2, nested: { list: [1, 2] } });
      expect(read[0]!.data).to.deep.equal({ n: 1, text: 'héllo 漢字' });
      expect(read[0]!.metadata).to.deep.equal(events[0]!.metadata);
      expect(read[0]!.streamId).to.equal(stream('a'));
      expect(read[1]!.position).to.equal(result.position);
      expect(read[0]!.position < read[1]!.position).to.equal(true);
    });

    test('enforces every expectation: exact revision, no stream, stream exists, any', async () => {
      const s = stream('expect');
      await expectConflict(store.append(s, [event('x')], 'stream_exists'));
      await expectConflict(store.append(s, [event('x')], 0n));
      expect((await store.append(s, [event('x')], 'no_stream')).nextExpectedRevision).to.equal(0n);
      await expectConflict(store.append(s, [event('x')], 'no_stream'));
      await expectConflict(store.append(s, [event('x')], 1n));
      expect((await store.append(s, [event('x')], 0n)).nextExpectedRevision).to.equal(1n);
      expect((await store.append(s, [event('x')], 'stream_exists')).nextExpectedRevision).to.equal(2n);
      expect((await store.append(s, [event('x')], 'any')).nextExpectedRevision).to.equal(3n);
      expect((await store.append(stream('any-new'), [event('x')], 'any')).nextExpectedRevision).to.equal(0n);
      expect(await count(store.readStream(s))).to.equal(4);
    });

    test('a conflict names the stream, the expectation and the actual revision, and writes nothing', async () => {
      const s = stream('conflict');
      await store.append(s, [event('x'), event('x')], 'no_stream');
      const error = await store.append(s, [event('y'), event('y')], 0n).then(() => null, (e: unknown) => e);
      expect(error).to.be.instanceOf(WrongExpectedVersionError);
      const conflict = error as WrongExpectedVersionError;
      expect(conflict.streamId).to.equal(s);
      expect(conflict.expected).to.equal(0n);
      expect(conflict.actual === 1n || conflict.actual === 'unknown').to.equal(true);
      expect((await collect(store.readStream(s))).map((e) => e.type)).to.deep.equal(['x', 'x']);
    });

    test('concurrent appends with the same expectation: exactly one wins, the others conflict, nothing is torn', async () => {
      const s = stream('race');
      await store.append(s, [event('start')], 'no_stream');
      const attempts = Array.from({ length: 12 }, (_, i) => store.append(s, [event('racer', { i }), event('racer', { i })], 0n));
      const results = await Promise.allSettled(attempts);
      const won = results.filter((r) => r.status === 'fulfilled');
      const lost = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
      expect(won).to.have.length(1);
      expect(lost).to.have.length(11);
      for (const r of lost) expect(r.reason).to.be.instanceOf(WrongExpectedVersionError);
      const read = await collect(store.readStream(s));
      expect(read).to.have.length(3);
      expect((read[1]!.data as { i: number }).i).to.equal((read[2]!.data as { i: number }).i);
    });

    test('reads a stream forwards and backwards from a revision, with a maximum count', async () => {
      const s = stream('read');
      await store.append(s, Array.from({ length: 10 }, (_, i) => event('n', { i })), 'no_stream');
      const nums = (events: RecordedEvent[]) => events.map((e) => (e.data as { i: number }).i);
      expect(nums(await collect(store.readStream(s)))).to.deep.equal([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
      expect(nums(await collect(store.readStream(s, { fromRevision: 7n })))).to.deep.equal([7, 8, 9]);
      expect(nums(await collect(store.readStream(s, { fromRevision: 2n, maxCount: 3 })))).to.deep.equal([2, 3, 4]);
      expect(nums(await collect(store.readStream(s, { direction: 'backwards' })))).to.deep.equal([9, 8, 7, 6, 5, 4, 3, 2, 1, 0]);
      expect(nums(await collect(store.readStream(s, { direction: 'backwards', maxCount: 1 })))).to.deep.equal([9]);
      expect(nums(await collect(store.readStream(s, { direction: 'backwards', fromRevision: 3n })))).to.deep.equal([3, 2, 1, 0]);
      expect(nums(await collect(store.readStream(s, { fromRevision: 42n })))).to.deep.equal([]);
    });

    test('reading a stream that was never written raises StreamNotFoundError', async () => {
      await expectError(collect(store.readStream(stream('missing'))), StreamNotFoundError);
      await expectError(collect(store.readStream(stream('missing'), { direction: 'backwards' })), StreamNotFoundError);
    });

    test('reads all events after a position, exclusive, in global order', async () => {
      const head = await store.headPosition();
      const first = await store.append(stream('all-1'), [event('a1'), event('a2')], 'no_stream');
      await store.append(stream('all-2'), [event('b1')], 'no_stream');
      await store.append(stream('all-1'), [event('a3')], first.nextExpectedRevision);
      const mine = (await collect(store.readAll({ after: head ?? 'start' }))).filter((e) => e.streamId.endsWith(run));
      expect(mine.map((e) => e.type)).to.deep.equal(['a1', 'a2', 'b1', 'a3']);
      for (let i = 1; i < mine.length; i++) expect(mine[i]!.position > mine[i - 1]!.position).to.equal(true);
      const afterA1 = (await collect(store.readAll({ after: mine[0]!.position, maxCount: 1 })))[0];
      expect(afterA1?.type).to.equal('a2');
      expect(await store.headPosition()).to.equal(mine[3]!.position);
    });

    test('reads the events at given positions, in the order asked, null where the log has none, deleted streams included', async () => {
      const head = await store.headPosition();
      await store.append(stream('at-1'), [event('p1', { n: 1 }), event('p2', { n: 2 })], 'no_stream');
      await store.append(stream('at-2'), [event('q1', { n: 3 })], 'no_stream');
      const mine = (await collect(store.readAll({ after: head ?? 'start' }))).filter((e) => e.streamId.endsWith(run));
      await store.deleteStream(stream('at-2'));
      const last = (await store.headPosition())!;
      const read = await store.readAt([mine[2]!.position, mine[0]!.position, last + 1_000_000n, mine[1]!.position, mine[0]!.position]);
      expect(read.map((e) => e?.type ?? null)).to.deep.equal(['q1', 'p1', null, 'p2', 'p1']);
      expect(read[0]).to.deep.include({ id: mine[2]!.id, streamId: stream('at-2'), revision: 0n, position: mine[2]!.position });
      expect(read[0]!.data).to.deep.equal({ n: 3 });
      expect(read[1]!.metadata).to.deep.equal(mine[0]!.metadata);
      expect(await store.readAt([])).to.deep.equal([]);
    });

    test('subscribes to all: catches up, reports caught up, then delivers live events in order', async () => {
      const head = await store.headPosition();
      await store.append(stream('sub'), [event('before-1'), event('before-2')], 'no_stream');
      const subscription = store.subscribeToAll({ after: head ?? 'start' });
      try {
        const seen: string[] = [];
        let caughtUp = false;
        const iterator = subscription[Symbol.asyncIterator]();
        await pump(iterator, (m) => {
          if (m.kind === 'event' && m.event.streamId.endsWith(run)) seen.push(m.event.type);
          if (m.kind === 'caught-up' && seen.length === 2) caughtUp = true;
          return caughtUp;
        });
        expect(seen).to.deep.equal(['before-1', 'before-2']);
        await store.append(stream('sub'), [event('live-1')], 1n);
        await store.append(stream('sub-other'), [event('live-2'), event('live-3')], 'no_stream');
        await pump(iterator, (m) => {
          if (m.kind === 'event' && m.event.streamId.endsWith(run)) seen.push(m.event.type);
          return seen.length === 5;
        });
        expect(seen).to.deep.equal(['before-1', 'before-2', 'live-1', 'live-2', 'live-3']);
      } finally {
        await subscription.stop();
      }
    });

    test('a subscription starts after its position (exclusive) and yields bigint revisions and positions', async () => {
      const { position } = await store.append(stream('excl'), [event('one'), event('two')], 'no_stream');
      await store.append(stream('excl'), [event('three')], 1n);
      const subscription = store.subscribeToAll({ after: position });
      try {
        const got: RecordedEvent[] = [];
        await pump(subscription[Symbol.asyncIterator](), (m) => {
          if (m.kind === 'event' && m.event.streamId === stream('excl')) got.push(m.event);
          return got.length === 1;
        });
        expect(got[0]!.type).to.equal('three');
        expect(got[0]!.revision).to.equal(2n);
        expect(typeof got[0]!.position).to.equal('bigint');
      } finally {
        await subscription.stop();
      }
    });

    test('filters a subscription by event type and by stream prefix', async () => {
      const head = await store.headPosition();
      await store.append(`alpha-${run}`, [event(`keep-${run}`), event('drop')], 'no_stream');
      await store.append(`beta-${run}`, [event(`keep-${run}`), event('drop')], 'no_stream');
      const byType = store.subscribeToAll({ after: head ?? 'start', filter: { eventTypes: [`keep-${run}`] } });
      const byPrefix = store.subscribeToAll({ after: head ?? 'start', filter: { streamPrefixes: [`beta-${run}`] } });
      try {
        const types: string[] = [];
        await pump(byType[Symbol.asyncIterator](), (m) => {
          if (m.kind === 'event') types.push(`${m.event.streamId.split('-')[0]}:${m.event.type}`);
          return types.length === 2;
        });
        expect(types).to.deep.equal([`alpha:keep-${run}`, `beta:keep-${run}`]);
        const streams: string[] = [];
        await pump(byPrefix[Symbol.asyncIterator](), (m) => {
          if (m.kind === 'event') streams.push(`${m.event.streamId}:${m.event.type}`);
          return streams.length === 2;
        });
        expect(streams).to.deep.equal([`beta-${run}:keep-${run}`, `beta-${run}:drop`]);
      } finally {
        await byType.stop();
        await byPrefix.stop();
      }
    });

    test('a filtered subscription delivers exactly the events filterMatches accepts (read your writes waits by it)', async () => {
      const head = await store.headPosition();
      const [a, b, c] = ['a', 'b', 'c'].map((t) => `kind-${t}-${run}`) as [string, string, string];
      // Prefixes that differ late, one with a character outside the BMP (two UTF-16 units, one code point).
      const appends: Array<[string, string[]]> = [
        [`p1-${run}-x`, [a, c]],
        [`p2-${run}`, [a, b]],
        [`😀${run}-z`, [b, c]],
        [`x😀${run}`, [a]],
        [`p1-${run}`, [b]],
      ];
      const written: Array<{ id: string; type: string; streamId: string }> = [];
      for (const [streamId, types] of appends) {
        const events = types.map((type) => event(type));
        await store.append(streamId, events, 'no_stream');
        for (const e of events) written.push({ id: e.id, type: e.type, streamId });
      }
      const last = await store.headPosition();
      const filters: SubscriptionFilter[] = [
        { eventTypes: [a] },
        { eventTypes: [b, c] },
        { streamPrefixes: [`p1-${run}`] },
        { streamPrefixes: [`😀${run}`, `p2-`] },
        { eventTypes: [a, b], streamPrefixes: [`p1-${run}`, `😀${run}`] },
      ];
      for (const filter of filters) {
        const subscription = store.subscribeToAll({ after: head ?? 'start', filter });
        const delivered: string[] = [];
        try {
          await pump(subscription[Symbol.asyncIterator](), (m) => {
            if (m.kind === 'event' && written.some((w) => w.id === m.event.id)) delivered.push(m.event.id);
            return (m.kind === 'caught-up' || m.kind === 'checkpoint') && m.position !== null && m.position >= last!;
          });
        } finally {
          await subscription.stop();
        }
        expect(delivered, JSON.stringify(filter)).to.deep.equal(written.filter((w) => filterMatches(filter, w)).map((w) => w.id));
      }
    });

    test('stop() ends a live subscription that is waiting for events', async () => {
      const subscription = store.subscribeToAll({ after: (await store.headPosition()) ?? 'start' });
      const iterator = subscription[Symbol.asyncIterator]();
      await pump(iterator, (m) => m.kind === 'caught-up');
      const pending = iterator.next();
      await subscription.stop();
      const result = await withTimeout(pending, 5000, 'iteration did not end after stop()');
      expect(result.done).to.equal(true);
    });

    test('deletes a stream: it reads as not found, stays in the global log, and can be recreated', async () => {
      const s = stream('del');
      const head = await store.headPosition();
      const written = [event('x'), event('y')];
      await store.append(s, written, 'no_stream');
      await expectConflict(store.deleteStream(s, 0n));
      await store.deleteStream(s, 1n);
      await expectError(collect(store.readStream(s)), StreamNotFoundError);
      const inLog = (await collect(store.readAll({ after: head ?? 'start' }))).filter((e) => e.streamId === s);
      expect(inLog.map((e) => e.id)).to.deep.equal(written.map((e) => e.id));
      // Which expectation recreates a deleted stream differs between servers; 'any' always does.
      const recreated = await store.append(s, [event('z')], 'any');
      expect(recreated.nextExpectedRevision).to.equal(2n);
      expect((await collect(store.readStream(s))).map((e) => e.type)).to.deep.equal(['z']);
    });

    test('rejects an event whose id is not a UUID, writing nothing', async () => {
      const s = stream('bad');
      const bad = { ...event('x'), id: 'not-a-uuid' };
      await expectError(store.append(s, [event('ok'), bad], 'any'), InvalidEventError);
      await expectError(collect(store.readStream(s)), StreamNotFoundError);
    });

    test('a live subscription with an event-type filter reports its position past an unmatched append within the bound', async () => {
      const subscription = store.subscribeToAll({ after: (await store.headPosition()) ?? 'start', filter: { eventTypes: [`wanted-${run}`] } });
      try {
        const iterator = subscription[Symbol.asyncIterator]();
        await pump(iterator, (m) => m.kind === 'caught-up');
        const { position } = await store.append(stream('unmatched'), [event(`unwanted-${run}`)], 'no_stream');
        const started = Date.now();
        await pump(
          iterator,
          (m) => {
            if (m.kind === 'event') throw new Error(`delivered ${m.event.type}, which the filter does not match`);
            return m.position !== null && m.position >= position;
          },
          SUBSCRIPTION_PROGRESS_BOUND_MS,
        );
        expect(Date.now() - started).to.be.at.most(SUBSCRIPTION_PROGRESS_BOUND_MS);
        // and a matching event after it is still delivered
        await store.append(stream('matched'), [event(`wanted-${run}`)], 'no_stream');
        await pump(iterator, (m) => m.kind === 'event' && m.event.type === `wanted-${run}`);
      } finally {
        await subscription.stop();
      }
    });

    test('refuses an append over MAX_APPEND_BYTES with EventTooLargeError naming the limit, writing nothing', async () => {
      const s = stream('size');
      const text = (bytes: number) => 'x'.repeat(bytes);
      const error = await store.append(s, [event('small'), event('big', { text: text(MAX_APPEND_BYTES) })], 'no_stream').then(() => null, (e: unknown) => e);
      expect(error).to.be.instanceOf(EventTooLargeError);
      expect((error as EventTooLargeError).limitBytes).to.equal(MAX_APPEND_BYTES);
      expect((error as EventTooLargeError).message).to.include(String(MAX_APPEND_BYTES));
      await expectError(collect(store.readStream(s)), StreamNotFoundError);
      // Two events that together are over the limit are refused too; just under it is accepted.
      await expectError(store.append(s, [event('half', { text: text(MAX_APPEND_BYTES / 2) }), event('half', { text: text(MAX_APPEND_BYTES / 2) })], 'any'), EventTooLargeError);
      const accepted = await store.append(s, [event('fits', { text: text(MAX_APPEND_BYTES - 2000) })], 'no_stream');
      expect(accepted.nextExpectedRevision).to.equal(0n);
    });

    test('ping answers while open', async () => {
      await store.ping();
    });
  });
}

export function event(type: string, data: Record<string, unknown> = {}, metadata: Partial<EventMetadata> = {}): NewEvent {
  return {
    id: randomUUID(),
    type,
    data,
    metadata: {
      actor: { type: 'user', id: 'u-1' },
      correlationId: randomUUID(),
      causationId: null,
      occurredAt: '2026-11-22T10:15:30.123Z',
      schemaVersion: 1,
      ...metadata,
    },
  };
}

async function expectConflict(promise: Promise<unknown>): Promise<void> {
  await expectError(promise, WrongExpectedVersionError);
}

async function expectError(promise: Promise<unknown>, type: new (...args: never[]) => Error): Promise<void> {
  const error = await promise.then(() => null, (e: unknown) => e);
  expect(error, `expected ${type.name}`).to.be.instanceOf(type);
}

async function count(iterable: AsyncIterable<unknown>): Promise<number> {
  return (await collect(iterable)).length;
}

/** Reads messages until `done` says so, failing after a bound. */
async function pump(iterator: AsyncIterator<SubscriptionMessage>, done: (m: SubscriptionMessage) => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const next = await withTimeout(iterator.next(), Math.max(1, deadline - Date.now()), 'subscription did not deliver in time');
    if (next.done) throw new Error('subscription ended unexpectedly');
    if (done(next.value)) return;
  }
}

function withTimeout<T>(promise: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout;
  return Promise.race([
    promise.finally(() => clearTimeout(timer)),
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(message)), ms);
    }),
  ]);
}

export type { Subscription };
