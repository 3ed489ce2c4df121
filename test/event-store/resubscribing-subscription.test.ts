import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { EventStoreDbEventStore } from '../../src/event-store/esdb-event-store.ts';
import { UnavailableError } from '../../src/event-store/errors.ts';
import type { NewEvent, RecordedEvent, SubscriptionMessage } from '../../src/event-store/event-store.ts';
import {
  ResubscribingSubscription,
  SubscriptionEndedError,
  backoffDelay,
  type DropInfo,
  type SubscriptionSource,
} from '../../src/event-store/resubscribing-subscription.ts';
import { untilUp } from '../support/esdb-server.ts';
import { EsdbStandIn } from '../support/esdb-stand-in/server.ts';
import { eventually } from '../support/eventually.ts';

/** A log of events at positions 10, 20, 30, ... */
function recorded(position: bigint): RecordedEvent {
  return {
    id: `00000000-0000-4000-8000-${position.toString().padStart(12, '0')}`,
    type: 'thing.happened',
    streamId: 'things-1',
    revision: position / 10n - 1n,
    position,
    data: { position: position.toString() },
    metadata: {
      actor: { type: 'system', id: 'test' },
      correlationId: 'c',
      causationId: null,
      occurredAt: '2026-01-01T00:00:00.000Z',
      schemaVersion: 1,
    },
  };
}

const eventAt = (position: bigint): SubscriptionMessage => ({ kind: 'event', event: recorded(position) });

class ConnectionDropped extends Error {
  override name = 'ConnectionDropped';
}

/** Resolves when `signal` aborts (never otherwise): a source waiting for live events. */
function untilAborted(signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) resolve();
    else signal.addEventListener('abort', () => resolve(), { once: true });
  });
}

/** A recording delay: resolves at once (or when aborted, if `hang`). */
function recordingDelay(hang = false) {
  const calls: number[] = [];
  const delay = async (ms: number, signal: AbortSignal) => {
    calls.push(ms);
    if (hang) await untilAborted(signal);
  };
  return { calls, delay };
}

async function take(iterator: AsyncIterator<SubscriptionMessage>, n: number): Promise<SubscriptionMessage[]> {
  const out: SubscriptionMessage[] = [];
  while (out.length < n) {
    const next = await iterator.next();
    if (next.done) break;
    out.push(next.value);
  }
  return out;
}

const positions = (messages: SubscriptionMessage[]) =>
  messages.map((m) => (m.kind === 'event' ? `e${m.event.position}` : m.kind === 'checkpoint' ? `c${m.position}` : `u${m.position}`));

describe('ResubscribingSubscription', () => {
  it('resumes exactly once after the last delivered position when the source throws mid-stream: no gap, no duplicate', async () => {
    const opens: Array<bigint | 'start'> = [];
    const closed: number[] = [];
    const source: SubscriptionSource = async function* (after, signal) {
      const attempt = opens.push(after);
      try {
        if (attempt === 1) {
          yield eventAt(10n);
          yield eventAt(20n);
          yield eventAt(30n);
          throw new ConnectionDropped('socket closed');
        }
        // the second connection starts after 30: 40, 50, then live (nothing more)
        yield eventAt(40n);
        yield eventAt(50n);
        await untilAborted(signal);
      } finally {
        closed.push(attempt);
      }
    };
    const { calls, delay } = recordingDelay();
    const drops: DropInfo[] = [];
    const subscription = new ResubscribingSubscription(source, { delay, onDrop: (info) => drops.push(info) });
    const iterator = subscription[Symbol.asyncIterator]();

    expect(positions(await take(iterator, 5))).to.deep.equal(['e10', 'e20', 'e30', 'e40', 'e50']);
    expect(opens).to.deep.equal(['start', 30n]);
    expect(calls).to.deep.equal([100]);
    expect(drops).to.have.length(1);
    expect(drops[0]!.error).to.be.instanceOf(ConnectionDropped);
    expect(drops[0]!.resumeAfter).to.equal(30n);
    expect(subscription.resumeAfter).to.equal(50n);

    const pending = iterator.next();
    await subscription.stop();
    expect(await pending).to.deep.equal({ done: true, value: undefined });
    expect(closed).to.deep.equal([1, 2]);
  });

  it('drops anything a reopened source delivers again at or before the resume position', async () => {
    let attempt = 0;
    const source: SubscriptionSource = async function* (_after, signal) {
      attempt++;
      if (attempt === 1) {
        yield eventAt(10n);
        yield eventAt(20n);
        throw new ConnectionDropped();
      }
      // a sloppy source that replays from the start, including an old checkpoint
      yield eventAt(10n);
      yield { kind: 'checkpoint', position: 15n };
      yield eventAt(20n);
      yield eventAt(30n);
      yield { kind: 'checkpoint', position: 35n };
      await untilAborted(signal);
    };
    const subscription = new ResubscribingSubscription(source, { delay: recordingDelay().delay });
    const iterator = subscription[Symbol.asyncIterator]();
    expect(positions(await take(iterator, 4))).to.deep.equal(['e10', 'e20', 'e30', 'c35']);
    await subscription.stop();
  });

  it('starts after the given position and moves the resume position with checkpoints and caught-up', async () => {
    const opens: Array<bigint | 'start'> = [];
    const source: SubscriptionSource = async function* (after, signal) {
      opens.push(after);
      if (opens.length === 1) {
        yield eventAt(110n);
        yield { kind: 'checkpoint', position: 150n };
        yield { kind: 'caught-up', position: 170n };
        throw new ConnectionDropped();
      }
      yield { kind: 'caught-up', position: 170n };
      await untilAborted(signal);
    };
    const subscription = new ResubscribingSubscription(source, { after: 100n, delay: recordingDelay().delay });
    const iterator = subscription[Symbol.asyncIterator]();
    expect(positions(await take(iterator, 4))).to.deep.equal(['e110', 'c150', 'u170', 'u170']);
    expect(opens).to.deep.equal([100n, 170n]);
    await subscription.stop();
  });

  it('backs off exponentially while the source keeps failing, capped, and starts over after a healthy message', async () => {
    let attempt = 0;
    const source: SubscriptionSource = async function* (_after, signal) {
      attempt++;
      if (attempt <= 6) throw new ConnectionDropped(`attempt ${attempt}`);
      if (attempt === 7) {
        yield eventAt(10n);
        throw new ConnectionDropped('after one event');
      }
      if (attempt === 8) throw new ConnectionDropped('again');
      yield eventAt(20n);
      await untilAborted(signal);
    };
    const { calls, delay } = recordingDelay();
    const attempts: number[] = [];
    const subscription = new ResubscribingSubscription(source, {
      delay,
      initialDelayMs: 50,
      maxDelayMs: 1000,
      onDrop: (info) => attempts.push(info.attempt),
    });
    const iterator = subscription[Symbol.asyncIterator]();
    expect(positions(await take(iterator, 2))).to.deep.equal(['e10', 'e20']);
    expect(calls).to.deep.equal([50, 100, 200, 400, 800, 1000, 50, 100]);
    expect(attempts).to.deep.equal([1, 2, 3, 4, 5, 6, 1, 2]);
    await subscription.stop();
  });

  it('computes the capped exponential backoff', () => {
    expect([0, 1, 2, 3, 10, 2000].map((n) => backoffDelay(n, 100, 5000, 2))).to.deep.equal([100, 200, 400, 800, 5000, 5000]);
    expect(backoffDelay(3, 10, 10_000, 3)).to.equal(270);
  });

  it('treats a source that ends on its own as a drop and reopens it', async () => {
    const opens: Array<bigint | 'start'> = [];
    const source: SubscriptionSource = async function* (after, signal) {
      opens.push(after);
      if (opens.length === 1) {
        yield eventAt(10n);
        return;
      }
      yield eventAt(20n);
      await untilAborted(signal);
    };
    const drops: unknown[] = [];
    const subscription = new ResubscribingSubscription(source, {
      delay: recordingDelay().delay,
      onDrop: (info) => drops.push(info.error),
    });
    const iterator = subscription[Symbol.asyncIterator]();
    expect(positions(await take(iterator, 2))).to.deep.equal(['e10', 'e20']);
    expect(opens).to.deep.equal(['start', 10n]);
    expect(drops[0]).to.be.instanceOf(SubscriptionEndedError);
    await subscription.stop();
  });

  it('ends the iteration with the error when shouldResubscribe refuses it', async () => {
    const fatal = new Error('access denied');
    let opens = 0;
    const source: SubscriptionSource = async function* () {
      opens++;
      yield eventAt(10n);
      throw fatal;
    };
    const subscription = new ResubscribingSubscription(source, {
      delay: recordingDelay().delay,
      shouldResubscribe: (error) => error !== fatal,
    });
    const seen: SubscriptionMessage[] = [];
    const error = await (async () => {
      for await (const message of subscription) seen.push(message);
    })().then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).to.equal(fatal);
    expect(positions(seen)).to.deep.equal(['e10']);
    expect(opens).to.equal(1);
    expect(subscription.stopped).to.equal(true);
  });

  it('stop() ends a pending iteration and aborts the source through its signal', async () => {
    let sawAbort = false;
    let finished = false;
    const source: SubscriptionSource = async function* (_after, signal) {
      try {
        yield eventAt(10n);
        await untilAborted(signal);
        sawAbort = signal.aborted;
      } finally {
        finished = true;
      }
    };
    const subscription = new ResubscribingSubscription(source, { delay: recordingDelay().delay });
    const iterator = subscription[Symbol.asyncIterator]();
    expect(positions(await take(iterator, 1))).to.deep.equal(['e10']);
    const pending = iterator.next();
    await subscription.stop();
    expect(await pending).to.deep.equal({ done: true, value: undefined });
    await new Promise((resolve) => setImmediate(resolve));
    expect(sawAbort).to.equal(true);
    expect(finished).to.equal(true);
    // idempotent, and later iteration steps stay done
    await subscription.stop();
    expect((await iterator.next()).done).to.equal(true);
  });

  it('stop() during the backoff wait ends the iteration without reopening', async () => {
    let opens = 0;
    const source: SubscriptionSource = async function* () {
      opens++;
      yield eventAt(10n);
      throw new ConnectionDropped();
    };
    const { calls, delay } = recordingDelay(true); // the wait only ends when aborted
    const subscription = new ResubscribingSubscription(source, { delay });
    const iterator = subscription[Symbol.asyncIterator]();
    expect(positions(await take(iterator, 1))).to.deep.equal(['e10']);
    const pending = iterator.next();
    while (calls.length === 0) await new Promise((resolve) => setImmediate(resolve));
    await subscription.stop();
    expect((await pending).done).to.equal(true);
    expect(opens).to.equal(1);
  });

  it('stop() called from inside the loop body ends the loop', async () => {
    const source: SubscriptionSource = async function* (_after, signal) {
      yield eventAt(10n);
      yield eventAt(20n);
      await untilAborted(signal);
    };
    const subscription = new ResubscribingSubscription(source, { delay: recordingDelay().delay });
    const seen: SubscriptionMessage[] = [];
    for await (const message of subscription) {
      seen.push(message);
      if (seen.length === 1) await subscription.stop();
    }
    expect(positions(seen)).to.deep.equal(['e10']);
  });

  it('never opens the source when stopped before iterating, and can be iterated only once', async () => {
    let opens = 0;
    const source: SubscriptionSource = async function* () {
      opens++;
      yield eventAt(10n);
    };
    const subscription = new ResubscribingSubscription(source);
    await subscription.stop();
    const seen: SubscriptionMessage[] = [];
    for await (const message of subscription) seen.push(message);
    expect(seen).to.deep.equal([]);
    expect(opens).to.equal(0);
    expect(() => subscription[Symbol.asyncIterator]()).to.throw(/only once/);
  });

  it('breaking out of the loop releases the source', async () => {
    let aborted = false;
    const source: SubscriptionSource = async function* (_after, signal) {
      signal.addEventListener('abort', () => (aborted = true));
      yield eventAt(10n);
      yield eventAt(20n);
      await untilAborted(signal);
    };
    const subscription = new ResubscribingSubscription(source);
    for await (const message of subscription) {
      expect(message.kind).to.equal('event');
      break;
    }
    expect(aborted).to.equal(true);
    expect(subscription.stopped).to.equal(true);
  });
});

describe('ResubscribingSubscription around the EventStoreDB adapter, over the gRPC stand-in (not a real server)', function () {
  this.timeout(30_000);

  it('survives the server going away mid catch-up and coming back: backs off while it is down, then resumes after the last delivered event, no gap, no duplicate', async () => {
    const standIn = await EsdbStandIn.start();
    const drops: DropInfo[] = [];
    const store = EventStoreDbEventStore.connect(standIn.connectionString(), {
      // Backoff as configured, each wait cut to a few milliseconds so that the test does not sit through it.
      resubscribe: { initialDelayMs: 100, maxDelayMs: 1000, delay: (_ms, signal) => new Promise((resolve) => (signal.aborted ? resolve() : setTimeout(resolve, 5))), onDrop: (info) => drops.push(info) },
    });
    const subscription = store.subscribeToAll({ filter: { streamPrefixes: ['backlog-', 'later-'] } });
    try {
      for (let i = 0; i < 12; i++) await store.append(`backlog-${i}`, Array.from({ length: 50 }, (_, n) => eventData('backlog', { i, n })), 'no_stream');
      const iterator = subscription[Symbol.asyncIterator]();
      const delivered: RecordedEvent[] = [];
      let stopped: Promise<void> | undefined;
      // The consumer reads on throughout; after 100 events of the backlog the server goes away.
      const consumed = (async () => {
        while (delivered.length < 610) {
          const next = await iterator.next();
          if (next.done) throw new Error('the subscription ended');
          if (next.value.kind !== 'event') continue;
          delivered.push(next.value.event);
          if (delivered.length === 100) stopped = standIn.stop();
        }
      })();

      // While it is down, reopening fails and backs off, longer each time.
      await until(() => drops.length >= 4);
      await stopped;
      expect(drops.slice(1, 4).map((d) => d.delayMs)).to.deep.equal([200, 400, 800]);
      // it went away mid catch-up: the first reopening resumes before the backlog's end
      const backlogEnd = standIn.log.records.filter((r) => r.streamId.startsWith('backlog-')).at(-1)!.position;
      expect(drops[0]!.resumeAfter).to.be.a('bigint').and.to.be.below(Number(backlogEnd));
      await standIn.resume();
      const later = Array.from({ length: 10 }, (_, n) => eventData('later', { n }));
      await untilUp(() => store.append('later-1', later, 'no_stream'));
      await consumed;

      const expected = standIn.log.records.filter((r) => r.streamId.startsWith('backlog-') || r.streamId.startsWith('later-'));
      expect(delivered.map((e) => e.id)).to.deep.equal(expected.map((r) => r.id));
      for (const drop of drops) expect(drop.error).to.be.instanceOf(UnavailableError);
      expect(standIn.calls.subscriptionStarts.at(-1)).to.be.a('bigint');
    } finally {
      await subscription.stop();
      await store.close();
      await standIn.stop();
    }
  });
});

function eventData(type: string, data: Record<string, unknown>): NewEvent {
  return { id: randomUUID(), type, data, metadata: { actor: { type: 'system', id: 'test' }, correlationId: randomUUID(), causationId: null, occurredAt: '2026-01-01T00:00:00.000Z', schemaVersion: 1 } };
}

const until = (condition: () => boolean, timeoutMs = 10_000) => eventually(condition, Boolean, timeoutMs, 'condition', 10);
