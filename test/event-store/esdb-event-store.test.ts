/**
 * The KurrentDB / EventStoreDB adapter.
 *
 * 1. The shared conformance suite against a real server: EVENTSTORE_CONNECTION_STRING when set, otherwise a
 *    container started with testcontainers, otherwise reported pending with the reason in its title.
 * 2. The same suite over the stand-in server (test/support/esdb-stand-in.ts), under a title that says so.
 * 3. Unit tests of the adapter's plumbing over the stand-in. The stand-in is a model of the server, not the
 *    server: it proves the adapter against the rules it models, never KurrentDB compatibility, which only
 *    suite 1 shows.
 */
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import type * as esdb from '@kurrent/kurrentdb-client';
import type { StartedTestContainer } from 'testcontainers';
import { EventStoreDbEventStore } from '../../src/event-store/esdb-event-store.ts';
import { OrderedSubscriptionReader, planSubscriptionFilter } from '../../src/event-store/esdb-subscription.ts';
import { EventStoreDbStandIn, grpcError } from '../support/esdb-stand-in.ts';
import { EventStoreError, InvalidEventError, UnavailableError } from '../../src/event-store/errors.ts';
import { collect, SUBSCRIPTION_PROGRESS_BOUND_MS, type EventStore, type SubscriptionMessage } from '../../src/event-store/event-store.ts';
import { clientConnectionString } from '../../src/event-store/esdb-mapping.ts';
import { resolveServerTarget, type ServerTarget } from '../support/container-runtime.ts';
import type { HarnessOrPending } from '../support/conformance.ts';
import { startEventStoreDbContainer } from '../support/esdb-server.ts';
import { event, eventStoreConformance } from './event-store.conformance.ts';


// ---------------------------------------------------------------------------------------------------------------
// 1. Conformance against a real server

const target = await resolveServerTarget('EVENTSTORE_CONNECTION_STRING');

function serverHarness(serverTarget: ServerTarget): HarnessOrPending<EventStore> {
  if (serverTarget.kind === 'pending') return { pending: serverTarget.reason };
  let connectionString = serverTarget.kind === 'existing' ? serverTarget.url : '';
  let container: StartedTestContainer | undefined;
  const opened = new Set<EventStoreDbEventStore>();
  return {
    async setup() {
      if (serverTarget.kind === 'container') ({ connectionString, container } = await startEventStoreDbContainer());
      // "Live" comes before the single node has elected itself leader: wait until it takes a write.
      const probe = EventStoreDbEventStore.connect(connectionString);
      try {
        const deadline = Date.now() + 60_000;
        for (;;) {
          try {
            await probe.ping();
            await probe.append(`conformance-probe-${randomUUID()}`, [event('probe')], 'no_stream');
            break;
          } catch (error) {
            if (Date.now() > deadline) throw error;
            await new Promise((resolve) => setTimeout(resolve, 500));
          }
        }
      } finally {
        await probe.close();
      }
    },
    async create() {
      const store = EventStoreDbEventStore.connect(connectionString);
      opened.add(store);
      return store;
    },
    async teardown() {
      await Promise.all([...opened].map((store) => store.close()));
      await container?.stop();
    },
  };
}

eventStoreConformance('event store: EventStoreDB adapter', serverHarness(target));

// ---------------------------------------------------------------------------------------------------------------
// 2. The conformance suite over the stand-in (test/support/esdb-stand-in.ts): the adapter's logic against the
//    server rules the stand-in follows, never a claim of compatibility with a real server (that is suite 1).

eventStoreConformance('event store: EventStoreDB adapter over the stand-in server (not a real server)', {
  create: async () => new EventStoreDbEventStore(new EventStoreDbStandIn().asClient(), { resubscribe: { delay: async () => undefined } }),
});

// ---------------------------------------------------------------------------------------------------------------
// 3. The adapter's plumbing over the stand-in

/** Collects messages until `done` says so (or fails after a bound). */
async function read(
  iterator: AsyncIterator<SubscriptionMessage>,
  done: (seen: SubscriptionMessage[]) => boolean,
  timeoutMs = 5000,
): Promise<SubscriptionMessage[]> {
  const seen: SubscriptionMessage[] = [];
  const deadline = Date.now() + timeoutMs;
  while (!done(seen)) {
    let timer: NodeJS.Timeout | undefined;
    const next = await Promise.race([
      iterator.next(),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no message in time; got ${summarise(seen).join(' ')}`)), Math.max(1, deadline - Date.now()));
      }),
    ]).finally(() => clearTimeout(timer));
    if (next.done) throw new Error('subscription ended');
    seen.push(next.value);
    // a slow consumer: let the client run ahead and buffer
    if (seen.length % 97 === 0) await new Promise((resolve) => setTimeout(resolve, 2));
  }
  return seen;
}

function summarise(messages: SubscriptionMessage[]): string[] {
  return messages.map((m) => (m.kind === 'event' ? `${m.event.type}@${m.event.position}` : m.kind === 'checkpoint' ? `checkpoint@${m.position}` : `caught-up@${m.position}`));
}

const noWait = { resubscribe: { delay: async () => undefined } };

describe('event store: EventStoreDB adapter, without a server', () => {
  let fake: EventStoreDbStandIn;
  let store: EventStoreDbEventStore;
  beforeEach(() => {
    fake = new EventStoreDbStandIn();
    store = new EventStoreDbEventStore(fake.asClient(), { ...noWait, checkpointEvery: 3 });
  });
  afterEach(async () => {
    await store.close();
  });

  it('puts caught-up and checkpoints in sequence with the events the client still buffers', async () => {
    // More than the reader's high-water mark, so that it pauses the client stream and markers arrive while
    // events still sit in the stream's buffer.
    const total = 3 * OrderedSubscriptionReader.HIGH_WATER;
    const events = Array.from({ length: total }, (_, i) => event(`t${i % 3}`, { i }));
    for (let i = 0; i < events.length; i += 50) await store.append(`s-${i}`, events.slice(i, i + 50), 'no_stream');
    const subscription = store.subscribeToAll();
    const seen = await read(subscription[Symbol.asyncIterator](), (s) => s.some((m) => m.kind === 'caught-up'));
    const delivered = seen.filter((m) => m.kind === 'event');
    expect(delivered).to.have.length(total);
    expect(seen.at(-1)!.kind).to.equal('caught-up');
    expect((seen.at(-1) as { position: bigint }).position).to.equal(await store.headPosition());
    // every position handed out grows: events and checkpoints interleave in log order
    const positions = seen.filter((m) => m.kind !== 'caught-up').map((m) => (m.kind === 'event' ? m.event.position : (m as { position: bigint }).position));
    for (let i = 1; i < positions.length; i++) expect(positions[i]! > positions[i - 1]!, summarise(seen).join(' ')).to.equal(true);
    await subscription.stop();
  });

  it('resubscribes after a dropped connection from the last delivered position: no gap, no duplicate', async () => {
    for (let i = 0; i < 5; i++) await store.append('drop-1', [event('before', { i })], i === 0 ? 'no_stream' : BigInt(i - 1));
    const drops: unknown[] = [];
    store = new EventStoreDbEventStore(fake.asClient(), { resubscribe: { delay: async () => undefined, onDrop: (info) => drops.push(info.error) } });
    const subscription = store.subscribeToAll();
    const iterator = subscription[Symbol.asyncIterator]();
    const first = await read(iterator, (s) => s.some((m) => m.kind === 'caught-up'));
    expect(first.filter((m) => m.kind === 'event')).to.have.length(5);
    const lastDelivered = (first.filter((m) => m.kind === 'event').at(-1) as { event: { position: bigint } }).event.position;

    fake.dropConnections();
    await store.append('drop-1', [event('after-1')], 4n);
    await store.append('drop-2', [event('after-2')], 'no_stream');
    const second = await read(iterator, (s) => s.filter((m) => m.kind === 'event').length === 2);
    expect(second.filter((m) => m.kind === 'event').map((m) => (m as { event: { type: string } }).event.type)).to.deep.equal(['after-1', 'after-2']);
    expect(drops).to.have.length(1);
    expect(drops[0]).to.be.instanceOf(UnavailableError);
    expect(fake.subscribeStarts).to.have.length(2);
    expect(fake.subscribeStarts[1]).to.deep.equal({ commit: lastDelivered, prepare: lastDelivered });
    await subscription.stop();
  });

  it('detects caught-up from the head position when the server does not report it (before 23.10)', async () => {
    fake.reportsCaughtUp = false;
    await store.append('old-1', [event('a'), event('b')], 'no_stream');
    const head = await store.headPosition();
    const subscription = store.subscribeToAll();
    const seen = await read(subscription[Symbol.asyncIterator](), (s) => s.some((m) => m.kind === 'caught-up'));
    expect(summarise(seen).filter((d) => !d.startsWith('checkpoint'))).to.deep.equal([`a@${head! - 137n}`, `b@${head}`, `caught-up@${head}`]);
    await subscription.stop();

    const empty = new EventStoreDbEventStore(new EventStoreDbStandIn().asClient());
    const onEmpty = empty.subscribeToAll();
    expect(await read(onEmpty[Symbol.asyncIterator](), (s) => s.length === 1)).to.deep.equal([{ kind: 'caught-up', position: null }]);
    await empty.close();
  });

  it('filters by event type on the server and by stream prefix here, advancing with checkpoints past dropped events', async () => {
    await store.append('entry-1', [event('entry.created'), event('entry.saved')], 'no_stream');
    for (let i = 0; i < 4; i++) await store.append(`other-${i}`, [event('entry.created')], 'no_stream');
    await store.append('entry-2', [event('entry.created'), event('entry.renamed')], 'no_stream');
    const head = await store.headPosition();
    const subscription = store.subscribeToAll({ filter: { eventTypes: ['entry.created'], streamPrefixes: ['entry-'] } });
    const seen = await read(subscription[Symbol.asyncIterator](), (s) => s.some((m) => m.kind === 'caught-up'));
    const events = seen.filter((m) => m.kind === 'event').map((m) => (m as { event: { streamId: string; type: string } }).event);
    expect(events.map((e) => `${e.streamId}:${e.type}`)).to.deep.equal(['entry-1:entry.created', 'entry-2:entry.created']);
    expect(seen.some((m) => m.kind === 'checkpoint')).to.equal(true);
    expect(seen.at(-1)).to.deep.equal({ kind: 'caught-up', position: head });
    await subscription.stop();
  });

  it('stores the correlation and causation ids under the server\'s $correlationId and $causationId, and reads them back', async () => {
    const caused = event('x', {}, { correlationId: 'corr-1', causationId: 'cause-1' });
    const uncaused = event('y', {}, { correlationId: 'corr-2', causationId: null });
    await store.append('meta-1', [caused, uncaused], 'no_stream');
    const stored = fake.records.filter((r) => r.streamId === 'meta-1').map((r) => r.metadata as Record<string, unknown>);
    expect(stored[0]).to.include({ $correlationId: 'corr-1', $causationId: 'cause-1' });
    expect(stored[0]).to.not.have.any.keys('correlationId', 'causationId');
    expect(stored[1]).to.include({ $correlationId: 'corr-2' }).and.not.have.any.keys('$causationId', 'causationId');
    const read = await collect(store.readStream('meta-1'));
    expect(read.map((e) => e.metadata)).to.deep.equal([caused.metadata, uncaused.metadata]);
    // events written before, under the old names, read back as they were written
    await fake.asClient().appendToStream('meta-old', [{ id: randomUUID(), type: 'z', contentType: 'application/json', data: {}, metadata: { ...caused.metadata } } as never]);
    expect((await collect(store.readStream('meta-old')))[0]!.metadata).to.deep.equal(caused.metadata);
  });

  it('passes an unmatched append of another process (no server checkpoint for 32 events) after a quiet spell, within the bound', async () => {
    const other = new EventStoreDbEventStore(fake.asClient(), { ownsClient: false });
    const subscription = store.subscribeToAll({ filter: { eventTypes: ['wanted'] } });
    const iterator = subscription[Symbol.asyncIterator]();
    await read(iterator, (s) => s.some((m) => m.kind === 'caught-up'));
    const { position } = await other.append('elsewhere-1', [event('unwanted'), event('unwanted')], 'no_stream');
    const started = Date.now();
    const seen = await read(iterator, (s) => s.some((m) => m.kind !== 'event' && m.position !== null && m.position >= position), SUBSCRIPTION_PROGRESS_BOUND_MS);
    expect(Date.now() - started).to.be.at.most(SUBSCRIPTION_PROGRESS_BOUND_MS);
    expect(seen.filter((m) => m.kind === 'event')).to.have.length(0);
    await subscription.stop();
    await other.close();
  });

  it('never reports progress past a matching event before delivering it', async () => {
    const subscription = store.subscribeToAll({ filter: { eventTypes: ['wanted'], streamPrefixes: ['keep-'] } });
    const iterator = subscription[Symbol.asyncIterator]();
    await read(iterator, (s) => s.some((m) => m.kind === 'caught-up'));
    for (let round = 0; round < 5; round++) {
      await store.append(`skip-${round}`, [event('unwanted'), event('wanted')], 'no_stream'); // wanted, but not by prefix
      const { position } = await store.append(`keep-${round}`, [event('unwanted'), event('wanted')], 'no_stream');
      const seen = await read(iterator, (s) => s.some((m) => m.kind === 'event'));
      const delivered = seen.find((m) => m.kind === 'event') as { event: { position: bigint; streamId: string } };
      expect(delivered.event.streamId).to.equal(`keep-${round}`);
      expect(delivered.event.position).to.equal(position);
      for (const m of seen) if (m.kind !== 'event' && m.position !== null) expect(m.position < position, summarise(seen).join(' ')).to.equal(true);
    }
    await subscription.stop();
  });

  it('takes the position a newer server names with caught-up', async () => {
    fake.caughtUpPosition = true;
    await store.append('cu-1', [event('a')], 'no_stream');
    await store.deleteStream('cu-1'); // a system event last: beyond the head the adapter reads
    const last = fake.records.at(-1)!.position;
    const subscription = store.subscribeToAll({ filter: { eventTypes: ['nothing-matches'] } });
    const seen = await read(subscription[Symbol.asyncIterator](), (s) => s.some((m) => m.kind === 'caught-up'));
    expect(seen.at(-1)).to.deep.equal({ kind: 'caught-up', position: last });
    await subscription.stop();
  });

  it('hands kurrentdb:// strings to the client as they are and esdb:// ones as kurrentdb://, keeping the rest', () => {
    expect(clientConnectionString('esdb://admin:changeit@db.local:2113?tls=false')).to.equal('kurrentdb://admin:changeit@db.local:2113?tls=false');
    expect(clientConnectionString('esdb+discover://a,b:2113?tls=true')).to.equal('kurrentdb+discover://a,b:2113?tls=true');
    expect(clientConnectionString('kurrentdb://localhost:2113?tls=false')).to.equal('kurrentdb://localhost:2113?tls=false');
    for (const accepted of ['kurrentdb://localhost:2113?tls=false', 'kurrentdb+discover://localhost:2113?tls=false', 'esdb://localhost:2113?tls=false']) {
      const connected = EventStoreDbEventStore.connect(accepted);
      void connected.close();
    }
  });

  it('plans the server-side filter: an exact, anchored, escaped type regex; prefixes; or just no system events', () => {
    const checkpointReached = () => undefined;
    const byType = planSubscriptionFilter({ eventTypes: ['entry.created', 'a+b'], streamPrefixes: ['x-'] }).serverFilter(checkpointReached);
    expect(byType.filterOn).to.equal('eventType');
    expect((byType as esdb.RegexFilter).regex).to.equal('^(?:entry\\.created|a\\+b)$');
    expect(new RegExp((byType as esdb.RegexFilter).regex).test('entry.createdX')).to.equal(false);
    const byPrefix = planSubscriptionFilter({ streamPrefixes: ['entry-'] }).serverFilter(checkpointReached);
    expect(byPrefix).to.include({ filterOn: 'streamName' });
    expect((byPrefix as esdb.PrefixesFilter).prefixes).to.deep.equal(['entry-']);
    const none = planSubscriptionFilter(undefined);
    expect(none.serverFilter(checkpointReached)).to.include({ filterOn: 'eventType', regex: '^[^$].*' });
    expect(none.accepts({ type: '$metadata', streamId: '$$x' })).to.equal(false);
    expect(planSubscriptionFilter({ eventTypes: ['$metadata'] }).accepts({ type: '$metadata', streamId: '$$x' })).to.equal(false);
  });

  it('keeps system events out of readAll, headPosition and subscriptions', async () => {
    const { position } = await store.append('sys-1', [event('x')], 'no_stream');
    await store.deleteStream('sys-1'); // writes a $metadata event after it
    expect(fake.records.at(-1)!.type).to.equal('$metadata');
    expect(await store.headPosition()).to.equal(position);
    expect((await collect(store.readAll())).map((e) => e.type)).to.deep.equal(['x']);
    const subscription = store.subscribeToAll();
    const seen = await read(subscription[Symbol.asyncIterator](), (s) => s.some((m) => m.kind === 'caught-up'));
    expect(seen.filter((m) => m.kind === 'event')).to.have.length(1);
    await subscription.stop();
  });

  it('accepts a start position that is not a record boundary, for reads and for subscriptions', async () => {
    await store.append('odd-1', [event('a'), event('b'), event('c')], 'no_stream');
    const all = await collect(store.readAll());
    const between = all[1]!.position - 1n; // after a, before b
    expect((await collect(store.readAll({ after: between }))).map((e) => e.type)).to.deep.equal(['b', 'c']);
    const subscription = store.subscribeToAll({ after: between });
    const seen = await read(subscription[Symbol.asyncIterator](), (s) => s.some((m) => m.kind === 'caught-up'), 5000);
    expect(seen.filter((m) => m.kind === 'event').map((m) => (m as { event: { type: string } }).event.type)).to.deep.equal(['b', 'c']);
    expect(fake.subscribeStarts.at(-1)).to.equal('start');
    await subscription.stop();
  });

  it('reports an unreachable server as UnavailableError from ping() and from reads', async () => {
    fake.readAllFailure = grpcError(14, 'No connection established');
    const error = await store.ping().then(() => null, (e: unknown) => e);
    expect(error).to.be.instanceOf(UnavailableError);
    const readError = await collect(store.readAll()).then(() => null, (e: unknown) => e);
    expect(readError).to.be.instanceOf(UnavailableError);
  });

  it('validates events before calling the server: UUID ids, JSON data, object metadata, no "$" types', async () => {
    const bad = [
      { ...event('x'), id: 'nope' },
      { ...event('x'), data: { n: 1n } },
      { ...event('$system') },
      { ...event('x'), metadata: 'text' as never },
    ];
    for (const e of bad) {
      const error = await store.append('v-1', [e], 'any').then(() => null, (x: unknown) => x);
      expect(error, JSON.stringify(e.type)).to.be.instanceOf(InvalidEventError);
    }
    expect(await store.append('v-1', [], 'any').then(() => null, (x: unknown) => x)).to.be.instanceOf(InvalidEventError);
    expect(fake.records.filter((r) => r.streamId === 'v-1')).to.have.length(0);
  });

  it('deletes with "stream exists" by deleting at the current revision, and conflicts when there is no stream', async () => {
    await store.append('se-1', [event('a'), event('b')], 'no_stream');
    await store.deleteStream('se-1', 'stream_exists');
    expect((await store.deleteStream('se-1', 'stream_exists').then(() => null, (e: unknown) => e))?.constructor.name).to.equal('WrongExpectedVersionError');
    expect((await store.deleteStream('never-1', 'stream_exists').then(() => null, (e: unknown) => e))?.constructor.name).to.equal('WrongExpectedVersionError');
  });

  it('close() stops open subscriptions, disposes an owned client and refuses further use', async () => {
    const subscription = store.subscribeToAll();
    const iterator = subscription[Symbol.asyncIterator]();
    await read(iterator, (s) => s.some((m) => m.kind === 'caught-up'));
    const pending = iterator.next();
    await store.close();
    expect((await pending).done).to.equal(true);
    expect(fake.disposed).to.equal(1);
    expect(() => store.subscribeToAll()).to.throw(EventStoreError);
    await store.close(); // idempotent
  });

  it('does not dispose a client it does not own', async () => {
    const other = new EventStoreDbStandIn();
    const shared = new EventStoreDbEventStore(other.asClient(), { ownsClient: false });
    await shared.close();
    expect(other.disposed).to.equal(0);
  });

  it('connect() rejects a malformed connection string without echoing credentials', () => {
    const error = (() => {
      try {
        EventStoreDbEventStore.connect('esdb://admin:s3cret@localhost:2113?tls=maybe');
        return null;
      } catch (e) {
        return e as Error;
      }
    })();
    expect(error).to.be.instanceOf(EventStoreError);
    expect(error!.message).to.not.include('s3cret');
  });
});
