/**
 * The KurrentDB / EventStoreDB adapter, with the real client (@kurrent/kurrentdb-client: its batch append or
 * plain Append, its native read bridge, its subscriptions and its error conversion) talking gRPC to a server.
 *
 * 1. The shared conformance suite against a server (test/support/esdb-server.ts): EVENTSTORE_CONNECTION_STRING
 *    when set, otherwise a container started with testcontainers, otherwise the gRPC stand-in
 *    (test/support/esdb-stand-in/). The title names which.
 * 2. The same suite on the stand-in playing a server before 21.10 (no ServerFeatures, so the client appends
 *    with the plain Append call, and no caught-up message in subscriptions).
 * 3. The adapter's plumbing against the stand-in, where a test needs to set the server's behaviour (no
 *    caught-up, dropped connections, a quiet node) or to look at what reached it. The stand-in is not
 *    KurrentDB: where it differs, test/support/esdb-stand-in/ says so, and only suite 1 against a real server
 *    shows compatibility.
 */
import { expect } from 'chai';
import { eventTypeFilter, jsonEvent, type KurrentDBClient, type Position } from '@kurrent/kurrentdb-client';
import type * as esdb from '@kurrent/kurrentdb-client';
import { EventStoreDbEventStore } from '../../src/event-store/esdb-event-store.ts';
import { OrderedSubscriptionReader, planSubscriptionFilter } from '../../src/event-store/esdb-subscription.ts';
import { EsdbStandIn } from '../support/esdb-stand-in/server.ts';
import { EventStoreError, InvalidEventError, UnavailableError } from '../../src/event-store/errors.ts';
import { collect, SUBSCRIPTION_PROGRESS_BOUND_MS, type EventStore, type ReadStreamOptions, type SubscriptionMessage } from '../../src/event-store/event-store.ts';
import { clientConnectionString } from '../../src/event-store/esdb-mapping.ts';
import type { AdapterHarness } from '../support/conformance.ts';
import { describeEsdbTarget, resolveEsdbTarget, startEsdbServer, untilUp, type EsdbTarget } from '../support/esdb-server.ts';
import { event, eventStoreConformance } from './event-store.conformance.ts';
import { eventually as poll } from '../support/eventually.ts';

/** Stores over one client (the client's first read waits for its read bridge to connect: once per suite). */
function sharedClientHarness(start: () => Promise<{ connectionString: string; stop(): Promise<void> }>): AdapterHarness<EventStore> {
  let server: { connectionString: string; stop(): Promise<void> } | undefined;
  let client: EventStoreDbEventStore | undefined;
  return {
    async setup() {
      server = await start();
      client = EventStoreDbEventStore.connect(server.connectionString);
    },
    async create() {
      return new EventStoreDbEventStore(client!.client, { ownsClient: false });
    },
    async teardown() {
      await client?.close();
      await server?.stop();
    },
  };
}

// ---------------------------------------------------------------------------------------------------------------
// 1. Conformance against a server

const target: EsdbTarget = await resolveEsdbTarget();
eventStoreConformance(`event store: EventStoreDB adapter on ${describeEsdbTarget(target)}`, sharedClientHarness(() => startEsdbServer(target)));

// ---------------------------------------------------------------------------------------------------------------
// 2. Conformance on the stand-in as a server before 21.10: the client's plain Append path

eventStoreConformance(
  'event store: EventStoreDB adapter on the gRPC stand-in as a server before 21.10 (plain Append, no caught-up message; not a real server)',
  sharedClientHarness(async () => {
    const standIn = await EsdbStandIn.start({ version: null, caughtUp: 'none' });
    return { connectionString: standIn.connectionString(), stop: () => standIn.stop() };
  }),
);

// ---------------------------------------------------------------------------------------------------------------
// 3. The adapter's plumbing against the stand-in

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

/** Polls `check` until it holds (the kit's eventually), failing after a bound. */
const eventually = (check: () => boolean, what: string, timeoutMs = 5000) => poll(check, Boolean, timeoutMs, what, 10);

const noWait = { resubscribe: { delay: async () => undefined } };

describe('event store: EventStoreDB adapter against the gRPC stand-in (not a real server)', function () {
  this.timeout(20_000);
  let standIn: EsdbStandIn;
  /** One client for the suite, as a service has one: stores made from it do not own it. */
  let owner: EventStoreDbEventStore;
  let client: KurrentDBClient;
  let store: EventStoreDbEventStore;
  before(async () => {
    standIn = await EsdbStandIn.start();
    owner = EventStoreDbEventStore.connect(standIn.connectionString());
    client = owner.client;
  });
  after(async () => {
    await owner.close();
    await standIn.stop();
  });
  beforeEach(() => {
    standIn.reset();
    store = new EventStoreDbEventStore(client, { ...noWait, ownsClient: false, checkpointEvery: 3 });
  });
  afterEach(async () => {
    await store.close();
  });

  it('the stand-in, as KurrentDB, checkpoints a filtered subscription every window x multiplier records it considers, catching up and live', async () => {
    // The peer's own behaviour, through the raw client: what the adapter's progress reporting is built on.
    for (let i = 0; i < 5; i++) await store.append(`cadence-${i}`, Array.from({ length: 20 }, () => event('unwanted')), 'no_stream');
    const cadence = async (options: { checkpointInterval: number; maxSearchWindow?: number }, every: number) => {
      const checkpoints: bigint[] = [];
      const subscription = client.subscribeToAll({
        filter: eventTypeFilter({ regex: '^never$', ...options, checkpointReached: (_: unknown, position: Position) => void checkpoints.push(position.commit) }),
      });
      subscription.on('data', () => undefined);
      try {
        const considered = () => standIn.log.records.length;
        const expected = () => standIn.log.records.filter((_, i) => (i + 1) % every === 0).map((r) => r.position);
        await eventually(() => checkpoints.length === expected().length, `checkpoints every ${every} while catching up`);
        // live: appends the filter does not match, checkpointed at the same cadence
        const before = considered();
        await store.append(`cadence-live-${every}`, Array.from({ length: every }, () => event('unwanted')), 'no_stream');
        expect(considered()).to.equal(before + every);
        await eventually(() => checkpoints.length === expected().length, `checkpoints every ${every} live`);
        expect(checkpoints).to.deep.equal(expected());
      } finally {
        await subscription.unsubscribe();
      }
    };
    await cadence({ checkpointInterval: 1 }, 32);
    await cadence({ checkpointInterval: 2 }, 64);
    await cadence({ checkpointInterval: 3, maxSearchWindow: 10 }, 30);
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

  it('resubscribes after the server restarts, from the last delivered position: no gap, no duplicate', async () => {
    for (let i = 0; i < 5; i++) await store.append('drop-1', [event('before', { i })], i === 0 ? 'no_stream' : BigInt(i - 1));
    const drops: unknown[] = [];
    const resubscribing = new EventStoreDbEventStore(client, { ownsClient: false, resubscribe: { delay: async () => undefined, onDrop: (info) => drops.push(info.error) } });
    const subscription = resubscribing.subscribeToAll();
    try {
      const iterator = subscription[Symbol.asyncIterator]();
      const first = await read(iterator, (s) => s.some((m) => m.kind === 'caught-up'));
      expect(first.filter((m) => m.kind === 'event')).to.have.length(5);
      const lastDelivered = (first.filter((m) => m.kind === 'event').at(-1) as { event: { position: bigint } }).event.position;

      await standIn.restart();
      // The client learns of the cut connection from its next call: an append on the old connection fails
      // with UnavailableError (it may or may not have been written), and is retried as a caller would.
      const after1 = event('after-1');
      await untilUp(() => store.append('drop-1', [after1], 4n));
      await store.append('drop-2', [event('after-2')], 'no_stream');
      const second = await read(iterator, (s) => s.filter((m) => m.kind === 'event').length === 2);
      expect(second.filter((m) => m.kind === 'event').map((m) => (m as { event: { type: string } }).event.type)).to.deep.equal(['after-1', 'after-2']);
      expect(drops.length).to.be.at.least(1);
      for (const drop of drops) expect(drop).to.be.instanceOf(UnavailableError);
      expect(standIn.calls.subscriptionStarts[0]).to.equal('start');
      expect(standIn.calls.subscriptionStarts.at(-1)).to.equal(lastDelivered);
    } finally {
      await subscription.stop();
      await resubscribing.close();
    }
  });

  it('detects caught-up from the head position when the server does not report it (before 23.10)', async () => {
    const old = await EsdbStandIn.start({ caughtUp: 'none' });
    const onOld = EventStoreDbEventStore.connect(old.connectionString());
    try {
      const onEmpty = onOld.subscribeToAll();
      expect(await read(onEmpty[Symbol.asyncIterator](), (s) => s.length === 1)).to.deep.equal([{ kind: 'caught-up', position: null }]);
      await onEmpty.stop();

      await onOld.append('old-1', [event('a'), event('b')], 'no_stream');
      const [a, b] = await collect(onOld.readAll());
      const subscription = onOld.subscribeToAll();
      const seen = await read(subscription[Symbol.asyncIterator](), (s) => s.some((m) => m.kind === 'caught-up'));
      expect(summarise(seen).filter((d) => !d.startsWith('checkpoint'))).to.deep.equal([`a@${a!.position}`, `b@${b!.position}`, `caught-up@${b!.position}`]);
      await subscription.stop();
    } finally {
      await onOld.close();
      await old.stop();
    }
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
    const stored = standIn.log.records.filter((r) => r.streamId === 'meta-1').map((r) => JSON.parse(Buffer.from(r.metadata).toString()) as Record<string, unknown>);
    expect(stored[0]).to.include({ $correlationId: 'corr-1', $causationId: 'cause-1' });
    expect(stored[0]).to.not.have.any.keys('correlationId', 'causationId');
    expect(stored[1]).to.include({ $correlationId: 'corr-2' }).and.not.have.any.keys('$causationId', 'causationId');
    const read = await collect(store.readStream('meta-1'));
    expect(read.map((e) => e.metadata)).to.deep.equal([caused.metadata, uncaused.metadata]);
    // events written before, under the old names, read back as they were written
    await client.appendToStream('meta-old', jsonEvent({ type: 'z', data: {}, metadata: { ...caused.metadata } as never }));
    expect((await collect(store.readStream('meta-old')))[0]!.metadata).to.deep.equal(caused.metadata);
  });

  it('passes an unmatched append of another process (no server checkpoint for 32 events) after a quiet spell, within the bound', async () => {
    // Another process: its own client and connection.
    const other = EventStoreDbEventStore.connect(standIn.connectionString());
    await other.ping();
    const subscription = store.subscribeToAll({ filter: { eventTypes: ['wanted'] } });
    try {
      const iterator = subscription[Symbol.asyncIterator]();
      await read(iterator, (s) => s.some((m) => m.kind === 'caught-up'));
      const { position } = await other.append('elsewhere-1', [event('unwanted'), event('unwanted')], 'no_stream');
      const started = Date.now();
      const seen = await read(iterator, (s) => s.some((m) => m.kind !== 'event' && m.position !== null && m.position >= position), SUBSCRIPTION_PROGRESS_BOUND_MS);
      expect(Date.now() - started).to.be.at.most(SUBSCRIPTION_PROGRESS_BOUND_MS);
      expect(seen.filter((m) => m.kind === 'event')).to.have.length(0);
    } finally {
      await subscription.stop();
      await other.close();
    }
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
    await store.append('cu-1', [event('a')], 'no_stream');
    await store.deleteStream('cu-1'); // a system event last: beyond the head the adapter reads
    const last = standIn.log.records.at(-1)!;
    expect(last.type).to.equal('$metadata');
    const subscription = store.subscribeToAll({ filter: { eventTypes: ['nothing-matches'] } });
    const seen = await read(subscription[Symbol.asyncIterator](), (s) => s.some((m) => m.kind === 'caught-up'));
    expect(seen.at(-1)).to.deep.equal({ kind: 'caught-up', position: last.position });
    await subscription.stop();
  });

  it('hands kurrentdb:// strings to the client as they are and esdb:// ones as kurrentdb://, keeping the rest', async () => {
    expect(clientConnectionString('esdb://admin:changeit@db.local:2113?tls=false')).to.equal('kurrentdb://admin:changeit@db.local:2113?tls=false');
    expect(clientConnectionString('esdb+discover://a,b:2113?tls=true')).to.equal('kurrentdb+discover://a,b:2113?tls=true');
    expect(clientConnectionString('kurrentdb://localhost:2113?tls=false')).to.equal('kurrentdb://localhost:2113?tls=false');
    // Each scheme reaches the server: single node directly, +discover through the node's gossip.
    await store.append('scheme-1', [event('x')], 'no_stream');
    for (const scheme of ['kurrentdb', 'kurrentdb+discover', 'esdb', 'esdb+discover']) {
      const connected = EventStoreDbEventStore.connect(`${scheme}://127.0.0.1:${standIn.port}?tls=false`);
      try {
        expect((await connected.append('scheme-1', [event(scheme)], 'stream_exists')).nextExpectedRevision, scheme).to.be.a('bigint');
        expect((await collect(connected.readStream('scheme-1', { direction: 'backwards', maxCount: 1 })))[0]!.type, scheme).to.equal(scheme);
      } finally {
        await connected.close();
      }
    }
    expect(standIn.calls.made('gossip')).to.be.at.least(2);
  });

  it('asks the server for bounded pages, so that a reader stopping early leaves no read open on the server', async () => {
    // 600 events of 1 KB. A read asking the server for everything, that its reader stops early, stays open on
    // the server (waiting on flow control) until the client object happens to be garbage collected: the
    // client's read bridge cannot cancel a read.
    for (let i = 0; i < 12; i++) await store.append(`big-${i}`, Array.from({ length: 50 }, (_, n) => event('big', { n, text: 'x'.repeat(1000) })), 'no_stream');
    const all = await collect(store.readAll());
    expect(all).to.have.length(600);
    expect((await collect(store.readAll({ maxCount: 3 }))).map((e) => e.position)).to.deep.equal(all.slice(0, 3).map((e) => e.position));
    expect((await collect(store.readAll({ after: all[299]!.position, maxCount: 300 }))).map((e) => e.position)).to.deep.equal(all.slice(300).map((e) => e.position));
    // a stream longer than a page, read across page boundaries both ways
    await store.append('long-1', Array.from({ length: 300 }, (_, n) => event('n', { n })), 'no_stream');
    const revisions = (from: number, to: number) => Array.from({ length: Math.abs(to - from) + 1 }, (_, n) => BigInt(from <= to ? from + n : from - n));
    const read = async (options: ReadStreamOptions) => (await collect(store.readStream('long-1', options))).map((e) => e.revision);
    expect(await read({})).to.deep.equal(revisions(0, 299));
    expect(await read({ direction: 'backwards' })).to.deep.equal(revisions(299, 0));
    expect(await read({ fromRevision: 10n, maxCount: 270 })).to.deep.equal(revisions(10, 279));
    expect(await read({ direction: 'backwards', fromRevision: 280n, maxCount: 270 })).to.deep.equal(revisions(280, 11));
    for await (const _ of store.readAll()) break;
    for await (const _ of store.readStream('big-3')) break;
    const unbounded = standIn.calls.reads.filter((r) => r.count > 1000n);
    expect(unbounded, JSON.stringify(unbounded, (_, v: unknown) => (typeof v === 'bigint' ? String(v) : v))).to.deep.equal([]);
    await eventually(() => standIn.calls.open('read') === 0, 'no read left open on the server', 1000);
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
    expect(standIn.log.records.at(-1)!.type).to.equal('$metadata');
    expect(standIn.log.records[0]!.type).to.equal('$epoch-information');
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
    expect(standIn.log.isRecordBoundary(between)).to.equal(false);
    expect((await collect(store.readAll({ after: between }))).map((e) => e.type)).to.deep.equal(['b', 'c']);
    const subscription = store.subscribeToAll({ after: between });
    const seen = await read(subscription[Symbol.asyncIterator](), (s) => s.some((m) => m.kind === 'caught-up'), 5000);
    expect(seen.filter((m) => m.kind === 'event').map((m) => (m as { event: { type: string } }).event.type)).to.deep.equal(['b', 'c']);
    expect(standIn.calls.subscriptionStarts.at(-1)).to.equal('start');
    await subscription.stop();
  });

  it('reports a node that is not ready as UnavailableError from ping() and from reads', async () => {
    standIn.faults.next('read-all', { kind: 'not-ready' }, 2);
    expect(await store.ping().then(() => null, (e: unknown) => e)).to.be.instanceOf(UnavailableError);
    expect(await collect(store.readAll()).then(() => null, (e: unknown) => e)).to.be.instanceOf(UnavailableError);
    // and once it is, everything works again on the same client
    await store.append('ready-1', [event('x')], 'no_stream');
    expect((await collect(store.readAll())).map((e) => e.type)).to.deep.equal(['x']);
  });

  it('a store whose server was not up at its first read recovers once the server is (the client\'s read bridge gives up for good)', async () => {
    const late = await EsdbStandIn.start();
    await late.stop();
    const early = EventStoreDbEventStore.connect(late.connectionString(), { pingTimeoutMs: 3000 });
    try {
      expect(await early.ping().then(() => null, (e: unknown) => e)).to.be.instanceOf(UnavailableError);
      await late.resume();
      await untilUp(() => early.ping(), 10_000);
      await early.append('late-1', [event('x')], 'no_stream');
      expect((await collect(early.readStream('late-1'))).map((e) => e.type)).to.deep.equal(['x']);
      // the same holds when the first read is a subscription's
      await late.stop();
      const subscribing = EventStoreDbEventStore.connect(late.connectionString(), noWait);
      const given = subscribing.client;
      const subscription = subscribing.subscribeToAll();
      try {
        const iterator = subscription[Symbol.asyncIterator]();
        const first = iterator.next();
        // its first read met a closed port: the store has replaced the client whose bridge gave up
        await eventually(() => subscribing.client !== given, 'the client replaced');
        await late.resume();
        const seen = [(await first).value as SubscriptionMessage];
        seen.push(...(await read(iterator, (s) => [...seen, ...s].some((m) => m.kind === 'caught-up'), 10_000)));
        expect(seen.filter((m) => m.kind === 'event').map((m) => (m as { event: { streamId: string } }).event.streamId)).to.deep.equal(['late-1']);
      } finally {
        await subscription.stop();
        await subscribing.close();
      }
    } finally {
      await early.close();
      await late.stop();
    }
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
    expect(standIn.log.records.filter((r) => r.streamId === 'v-1')).to.have.length(0);
    expect(standIn.calls.made('batch-append') + standIn.calls.made('append')).to.equal(0);
  });

  it('deletes with "stream exists" by deleting at the current revision, and conflicts when there is no stream', async () => {
    await store.append('se-1', [event('a'), event('b')], 'no_stream');
    await store.deleteStream('se-1', 'stream_exists');
    expect((await store.deleteStream('se-1', 'stream_exists').then(() => null, (e: unknown) => e))?.constructor.name).to.equal('WrongExpectedVersionError');
    expect((await store.deleteStream('never-1', 'stream_exists').then(() => null, (e: unknown) => e))?.constructor.name).to.equal('WrongExpectedVersionError');
  });

  it('close() stops open subscriptions, disposes an owned client and refuses further use', async () => {
    const openBefore = { subscriptions: standIn.calls.open('subscription'), batchAppends: standIn.calls.open('batch-append') };
    const owning = EventStoreDbEventStore.connect(standIn.connectionString());
    const subscription = owning.subscribeToAll();
    const iterator = subscription[Symbol.asyncIterator]();
    await read(iterator, (s) => s.some((m) => m.kind === 'caught-up'));
    await owning.append('closing-1', [event('x')], 'no_stream'); // opens the client's batch append call
    expect(standIn.calls.open('subscription')).to.equal(openBefore.subscriptions + 1);
    expect(standIn.calls.open('batch-append')).to.equal(openBefore.batchAppends + 1);
    const pending = iterator.next();
    await owning.close();
    expect((await pending).done).to.equal(true);
    // the server sees the client go: no call of it left open
    await eventually(
      () => standIn.calls.open('subscription') === openBefore.subscriptions && standIn.calls.open('batch-append') === openBefore.batchAppends,
      'the owned client\'s calls closed',
    );
    expect(() => owning.subscribeToAll()).to.throw(EventStoreError);
    await owning.close(); // idempotent
  });

  it('does not dispose a client it does not own', async () => {
    const shared = new EventStoreDbEventStore(client, { ownsClient: false });
    await shared.append('shared-1', [event('x')], 'no_stream');
    await shared.close();
    // the client still works
    expect((await client.appendToStream('shared-1', jsonEvent({ type: 'y', data: {} }))).success).to.equal(true);
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
