/**
 * The EventStoreDB adapter.
 *
 * 1. The shared conformance suite against a real server: EVENTSTORE_CONNECTION_STRING when set, otherwise a
 *    container started with testcontainers, otherwise reported pending with the reason in its title.
 * 2. Unit tests that need no server: the adapter over a scripted stand-in of the gRPC client. The stand-in
 *    feeds protobuf ReadResp messages through the client's own Subscription and ReadStream transforms, so the
 *    adapter meets the client's real event ordering (checkpoints and caught-up reported out of band), and it
 *    mimics the server rules the adapter depends on (exclusive subscription starts, inclusive readAll starts,
 *    positions that are byte offsets, soft deletes). It is a model of the server, not the server: it proves
 *    the adapter's plumbing, never EventStoreDB compatibility: the conformance suite runs only against a real
 *    server, so that a pass there always means the real thing.
 */
import { randomUUID } from 'node:crypto';
import { PassThrough } from 'node:stream';
import { expect } from 'chai';
import * as esdb from '@eventstore/db-client';
import type { EventStoreDBClient } from '@eventstore/db-client';
import streamsPb from '@eventstore/db-client/generated/streams_pb.js';
import sharedPb from '@eventstore/db-client/generated/shared_pb.js';
import { Subscription as ClientSubscription } from '@eventstore/db-client/dist/streams/utils/Subscription.js';
import { ReadStream as ClientReadStream } from '@eventstore/db-client/dist/streams/utils/ReadStream.js';
import { convertGrpcEvent } from '@eventstore/db-client/dist/utils/convertGrpcEvent.js';
import type { StartedTestContainer } from 'testcontainers';
import { EventStoreDbEventStore, OrderedSubscriptionReader, planSubscriptionFilter } from '../../src/event-store/esdb-event-store.ts';
import { EventStoreError, InvalidEventError, UnavailableError } from '../../src/event-store/errors.ts';
import { collect, type EventStore, type SubscriptionMessage } from '../../src/event-store/event-store.ts';
import { resolveServerTarget, type ServerTarget } from '../support/container-runtime.ts';
import type { HarnessOrPending } from '../support/conformance.ts';
import { event, eventStoreConformance } from './event-store.conformance.ts';

const { ReadResp } = streamsPb;
type ReadRespMessage = InstanceType<typeof ReadResp>;

// ---------------------------------------------------------------------------------------------------------------
// 1. Conformance against a real server

const IMAGE = process.env.EVENTSTORE_IMAGE ?? 'eventstore/eventstore:24.10';
const target = await resolveServerTarget('EVENTSTORE_CONNECTION_STRING');

function serverHarness(serverTarget: ServerTarget): HarnessOrPending<EventStore> {
  if (serverTarget.kind === 'pending') return { pending: serverTarget.reason };
  let connectionString = serverTarget.kind === 'existing' ? serverTarget.url : '';
  let container: StartedTestContainer | undefined;
  const opened = new Set<EventStoreDbEventStore>();
  return {
    async setup() {
      if (serverTarget.kind === 'container') {
        const { GenericContainer, Wait } = await import('testcontainers');
        container = await new GenericContainer(IMAGE)
          .withEnvironment({
            EVENTSTORE_INSECURE: 'true',
            EVENTSTORE_RUN_PROJECTIONS: 'None',
            EVENTSTORE_MEM_DB: 'true',
            EVENTSTORE_CLUSTER_SIZE: '1',
          })
          .withExposedPorts(2113)
          .withWaitStrategy(Wait.forHttp('/health/live', 2113).forStatusCode(204))
          .withStartupTimeout(150_000)
          .start();
        connectionString = `esdb://${container.getHost()}:${container.getMappedPort(2113)}?tls=false`;
      }
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
// 2. A scripted stand-in of the client

type Grpc = PassThrough & { cancel(): void };

function grpcStream(): Grpc {
  const stream = new PassThrough({ objectMode: true }) as Grpc;
  stream.cancel = () => {
    const cancelled = Object.assign(new Error('1 CANCELLED: Cancelled on client'), { code: 1, details: 'Cancelled on client' });
    stream.destroy(cancelled);
  };
  return stream;
}

function grpcError(code: number, details: string): Error {
  return Object.assign(new Error(`${code} ${details}`), { code, details });
}

interface FakeRecord {
  id: string;
  streamId: string;
  revision: bigint;
  type: string;
  data: unknown;
  metadata: unknown;
  position: bigint;
}

interface FakeStream {
  last: bigint; // -1n: none
  truncateBefore: bigint; // events below are hidden (soft delete)
  softDeleted: boolean;
}

interface LiveSubscription {
  grpc: Grpc;
  matches(record: FakeRecord): boolean;
  considered: number;
  checkpointEvery: number;
}

/**
 * Mimics the EventStoreDB rules the adapter relies on. Positions are byte offsets: every record takes 137
 * bytes, the log opens with a non-event record at 0 and an `$epoch-information` event, so positions are sparse
 * and `p - 1` is never a valid start.
 */
class FakeEventStoreDb {
  readonly records: FakeRecord[] = [];
  readonly streams = new Map<string, FakeStream>();
  readonly live = new Set<LiveSubscription>();
  readonly subscribeStarts: Array<esdb.ReadPosition> = [];
  nextPosition = 137n;
  /** Servers before 23.10 do not report caught-up. */
  reportsCaughtUp = true;
  /** When set, readAll fails with this gRPC error. */
  readAllFailure: Error | undefined;
  disposed = false;
  checkpointWindow = 4;

  constructor() {
    this.#write('$epochs', '$epoch-information', {}, undefined);
  }

  asClient(): EventStoreDBClient {
    return this as unknown as EventStoreDBClient;
  }

  #write(streamId: string, type: string, data: unknown, metadata: unknown, id: string = randomUUID()): FakeRecord {
    const stream = this.streams.get(streamId) ?? { last: -1n, truncateBefore: 0n, softDeleted: false };
    this.streams.set(streamId, stream);
    stream.last += 1n;
    const record: FakeRecord = { id, streamId, revision: stream.last, type, data, metadata, position: this.nextPosition };
    this.nextPosition += 137n;
    this.records.push(record);
    return record;
  }

  #isBoundary(position: esdb.Position): boolean {
    return position.commit === 0n || position.commit === this.nextPosition || this.records.some((r) => r.position === position.commit);
  }

  #publish(record: FakeRecord): void {
    for (const subscription of this.live) {
      subscription.considered += 1;
      if (subscription.matches(record)) subscription.grpc.write(eventResp(record));
      if (subscription.considered % subscription.checkpointEvery === 0) subscription.grpc.write(checkpointResp(record.position));
    }
  }

  /** Every live subscription loses its connection. */
  dropConnections(): void {
    for (const subscription of this.live) subscription.grpc.destroy(grpcError(14, 'Connection dropped'));
    this.live.clear();
  }

  async appendToStream(streamName: string, events: esdb.EventData[], options: { expectedRevision?: esdb.AppendExpectedRevision } = {}) {
    const expected = options.expectedRevision ?? 'any';
    const stream = this.streams.get(streamName);
    const last = stream?.last ?? -1n;
    const wrong = () =>
      new esdb.WrongExpectedVersionError(undefined, { streamName, expected, current: last < 0n ? 'no_stream' : last });
    if (expected === 'stream_exists') {
      if (stream?.softDeleted) throw esdb.StreamDeletedError.fromStreamName(streamName);
      if (last < 0n) throw wrong();
    } else if (expected === 'no_stream') {
      if (last >= 0n && !stream?.softDeleted) throw wrong();
    } else if (typeof expected === 'bigint' && expected !== last) {
      throw wrong();
    }
    if (stream?.softDeleted) {
      stream.softDeleted = false;
      stream.truncateBefore = stream.last + 1n;
    }
    let record: FakeRecord | undefined;
    for (const e of events) {
      record = this.#write(streamName, e.type, JSON.parse(JSON.stringify(e.data)), JSON.parse(JSON.stringify(e.metadata)), e.id);
      this.#publish(record);
    }
    return { success: true, nextExpectedRevision: record!.revision, position: { commit: record!.position, prepare: record!.position } };
  }

  async deleteStream(streamName: string, options: { expectedRevision?: esdb.ExpectedRevision } = {}) {
    const expected = options.expectedRevision ?? 'any';
    const stream = this.streams.get(streamName);
    const last = stream?.last ?? -1n;
    if ((expected === 'no_stream' && last >= 0n) || (typeof expected === 'bigint' && expected !== last)) {
      throw new esdb.WrongExpectedVersionError(undefined, { streamName, expected, current: last < 0n ? 'no_stream' : last });
    }
    if (stream) stream.softDeleted = true;
    this.#publish(this.#write(`$$${streamName}`, '$metadata', { $tb: 'deleted' }, undefined));
    return {};
  }

  readStream(streamName: string, options: { direction?: string; fromRevision?: esdb.ReadRevision; maxCount?: number | bigint } = {}) {
    const grpc = grpcStream();
    const direction = options.direction ?? 'forwards';
    const from = options.fromRevision ?? 'start';
    const maxCount = Number(options.maxCount ?? Number.MAX_SAFE_INTEGER);
    setImmediate(() => {
      const stream = this.streams.get(streamName);
      if (!stream || stream.softDeleted || stream.last < stream.truncateBefore) {
        const notFound = new ReadResp.StreamNotFound();
        const identifier = new sharedPb.StreamIdentifier();
        identifier.setStreamName(Buffer.from(streamName));
        notFound.setStreamIdentifier(identifier);
        const resp = new ReadResp();
        resp.setStreamNotFound(notFound);
        grpc.write(resp);
        return;
      }
      let visible = this.records.filter((r) => r.streamId === streamName && r.revision >= stream.truncateBefore);
      if (direction === 'forwards') {
        if (from === 'end') visible = [];
        else if (from !== 'start') visible = visible.filter((r) => r.revision >= from);
      } else {
        visible.reverse();
        if (from === 'start') visible = visible.filter((r) => r.revision === 0n);
        else if (from !== 'end') visible = visible.filter((r) => r.revision <= from);
      }
      for (const record of visible.slice(0, maxCount)) grpc.write(eventResp(record));
      grpc.end();
    });
    return new ClientReadStream(async () => grpc as never, convertGrpcEvent, {});
  }

  readAll(options: { direction?: string; fromPosition?: esdb.ReadPosition; maxCount?: number | bigint } = {}) {
    const grpc = grpcStream();
    const direction = options.direction ?? 'forwards';
    const from = options.fromPosition ?? 'start';
    const maxCount = Number(options.maxCount ?? Number.MAX_SAFE_INTEGER);
    setImmediate(() => {
      if (this.readAllFailure) return grpc.destroy(this.readAllFailure);
      if (typeof from === 'object' && !this.#isBoundary(from)) {
        return grpc.destroy(grpcError(3, 'Trying to read from an invalid position.'));
      }
      let selected: FakeRecord[];
      if (direction === 'forwards') {
        selected = from === 'start' ? [...this.records] : from === 'end' ? [] : this.records.filter((r) => r.position >= from.commit);
      } else {
        selected = (from === 'end' ? [...this.records] : from === 'start' ? [] : this.records.filter((r) => r.position < from.commit)).reverse();
      }
      for (const record of selected.slice(0, maxCount)) grpc.write(eventResp(record));
      grpc.end();
    });
    return new ClientReadStream(async () => grpc as never, convertGrpcEvent, {});
  }

  subscribeToAll(options: { fromPosition?: esdb.ReadPosition; filter?: esdb.Filter } = {}) {
    const from = options.fromPosition ?? 'start';
    this.subscribeStarts.push(from);
    const filter = options.filter;
    const matches = (record: FakeRecord): boolean => {
      if (!filter) return true;
      const subject = filter.filterOn === 'eventType' ? record.type : record.streamId;
      if ('regex' in filter) return new RegExp(filter.regex).test(subject);
      return filter.prefixes.some((prefix) => subject.startsWith(prefix));
    };
    const grpc = grpcStream();
    const subscription: LiveSubscription = { grpc, matches, considered: 0, checkpointEvery: this.checkpointWindow };
    setImmediate(() => {
      if (typeof from === 'object' && !this.#isBoundary(from)) {
        return grpc.destroy(grpcError(3, 'Trying to read from an invalid position.'));
      }
      // The server starts strictly after the first event at or after the given position.
      let backlog: FakeRecord[] = [];
      if (from === 'start') backlog = [...this.records];
      else if (typeof from === 'object') {
        const first = this.records.findIndex((r) => r.position >= from.commit);
        backlog = first < 0 ? [] : this.records.slice(first + 1);
      }
      // Everything is written at once, as a fast network would: the client buffers while the adapter reads.
      for (const record of backlog) {
        subscription.considered += 1;
        if (matches(record)) grpc.write(eventResp(record));
        if (subscription.considered % subscription.checkpointEvery === 0) grpc.write(checkpointResp(record.position));
      }
      if (this.reportsCaughtUp) {
        const resp = new ReadResp();
        resp.setCaughtUp(new ReadResp.CaughtUp());
        grpc.write(resp);
      }
      this.live.add(subscription);
      grpc.on('close', () => this.live.delete(subscription));
    });
    return new ClientSubscription(async () => grpc as never, convertGrpcEvent, {}, filter?.checkpointReached);
  }

  async dispose() {
    this.disposed = true;
  }
}

function eventResp(record: FakeRecord): ReadRespMessage {
  const recorded = new ReadResp.ReadEvent.RecordedEvent();
  const id = new sharedPb.UUID();
  id.setString(record.id);
  recorded.setId(id);
  const identifier = new sharedPb.StreamIdentifier();
  identifier.setStreamName(Buffer.from(record.streamId));
  recorded.setStreamIdentifier(identifier);
  recorded.setStreamRevision(record.revision.toString());
  recorded.setCommitPosition(record.position.toString());
  recorded.setPreparePosition(record.position.toString());
  const metadata = recorded.getMetadataMap();
  metadata.set('type', record.type);
  metadata.set('content-type', 'application/json');
  metadata.set('created', (BigInt(Date.UTC(2026, 0, 1)) * 10_000n + 621_355_968_000_000_000n).toString());
  recorded.setData(Buffer.from(JSON.stringify(record.data)));
  if (record.metadata !== undefined) recorded.setCustomMetadata(Buffer.from(JSON.stringify(record.metadata)));
  const readEvent = new ReadResp.ReadEvent();
  readEvent.setEvent(recorded);
  readEvent.setCommitPosition(record.position.toString());
  const resp = new ReadResp();
  resp.setEvent(readEvent);
  return resp;
}

function checkpointResp(position: bigint): ReadRespMessage {
  const checkpoint = new ReadResp.Checkpoint();
  checkpoint.setCommitPosition(position.toString());
  checkpoint.setPreparePosition(position.toString());
  const resp = new ReadResp();
  resp.setCheckpoint(checkpoint);
  return resp;
}

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
  let fake: FakeEventStoreDb;
  let store: EventStoreDbEventStore;
  beforeEach(() => {
    fake = new FakeEventStoreDb();
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

    const empty = new EventStoreDbEventStore(new FakeEventStoreDb().asClient());
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
    expect(fake.disposed).to.equal(true);
    expect(() => store.subscribeToAll()).to.throw(EventStoreError);
    await store.close(); // idempotent
  });

  it('does not dispose a client it does not own', async () => {
    const other = new FakeEventStoreDb();
    const shared = new EventStoreDbEventStore(other.asClient(), { ownsClient: false });
    await shared.close();
    expect(other.disposed).to.equal(false);
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
