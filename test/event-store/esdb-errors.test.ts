import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import * as client from '@kurrent/kurrentdb-client';
import { EventStoreDbEventStore } from '../../src/event-store/esdb-event-store.ts';
import { collect } from '../../src/event-store/event-store.ts';
import { EsdbStandIn } from '../support/esdb-stand-in/server.ts';
import { event } from './event-store.conformance.ts';
import {
  EventStoreError,
  EventTooLargeError,
  NotLeaderError,
  StreamNotFoundError,
  UnavailableError,
  WrongExpectedVersionError,
} from '../../src/event-store/errors.ts';
import {
  ESDB_ERROR_FIELDS,
  GrpcStatus,
  isInvalidPositionError,
  isPermanentEsdbError,
  isTransientEsdbError,
  mapEsdbError,
} from '../../src/event-store/esdb-errors.ts';

/** An object shaped like @grpc/grpc-js's ServiceError, as the client's error constructors read it. */
function serviceError(code: number, details: string, metadata: Record<string, string> = {}) {
  return Object.assign(new Error(`${code} ${details}`), {
    code,
    details,
    metadata: { getMap: () => metadata, get: (key: string) => (key in metadata ? [metadata[key]] : []) },
  }) as never;
}

describe('EventStoreDB error mapping', () => {
  it('reads only fields that the installed client\'s errors have (a renamed field fails here, not as a quiet "unknown")', () => {
    const samples: Record<keyof typeof ESDB_ERROR_FIELDS, object> = {
      [client.ErrorType.WRONG_EXPECTED_VERSION]: new client.WrongExpectedVersionError(undefined, { streamName: 's', expected: 1n, current: 2n }),
      [client.ErrorType.NOT_LEADER]: new client.NotLeaderError(
        serviceError(GrpcStatus.NOT_FOUND, 'Leader info available', { exception: 'not-leader', 'leader-endpoint-host': 'h', 'leader-endpoint-port': '1' }),
      ),
      [client.ErrorType.MAXIMUM_APPEND_SIZE_EXCEEDED]: client.MaxAppendSizeExceededError.fromMaxAppendSize(1024),
      [client.ErrorType.APPEND_RECORD_SIZE_EXCEEDED]: new client.AppendRecordSizeExceededError(serviceError(GrpcStatus.INVALID_ARGUMENT, 'too big'), {
        stream: 's',
        recordId: 'r',
        size: 2048,
        maxSize: 1024,
      }),
      [client.ErrorType.STREAM_NOT_FOUND]: new client.StreamNotFoundError(undefined, 's'),
    };
    for (const [type, fields] of Object.entries(ESDB_ERROR_FIELDS)) {
      const sample = samples[type as keyof typeof ESDB_ERROR_FIELDS] as Record<string, unknown>;
      expect(sample.type, type).to.equal(type);
      for (const name of fields) expect(sample[name], `${type}.${name}`).to.not.equal(undefined);
    }
  });

  it('maps the client WrongExpectedVersionError with the actual revision it reports', () => {
    const error = new client.WrongExpectedVersionError(undefined, { streamName: 'entry-1', expected: 3n, current: 5n });
    const mapped = mapEsdbError(error, { operation: 'append', streamId: 'entry-1', expected: 3n });
    expect(mapped).to.be.instanceOf(WrongExpectedVersionError);
    const conflict = mapped as WrongExpectedVersionError;
    expect(conflict.streamId).to.equal('entry-1');
    expect(conflict.expected).to.equal(3n);
    expect(conflict.actual).to.equal(5n);
  });

  it('maps "no stream" as the actual revision, given as a string or a negative number, and keeps the port expectation', () => {
    const noStream = new client.WrongExpectedVersionError(undefined, { streamName: 's', expected: 'stream_exists', current: 'no_stream' });
    const mapped = mapEsdbError(noStream, { operation: 'append', expected: 'stream_exists' }) as WrongExpectedVersionError;
    expect(mapped.actual).to.equal('no_stream');
    expect(mapped.expected).to.equal('stream_exists');
    expect(mapped.streamId).to.equal('s');

    const negative = new client.WrongExpectedVersionError(undefined, { streamName: 's', expected: 0n, current: -1n });
    expect((mapEsdbError(negative) as WrongExpectedVersionError).actual).to.equal('no_stream');
  });

  it('reads a WrongExpectedVersionError built from gRPC metadata (deleteStream path)', () => {
    const raw = serviceError(GrpcStatus.FAILED_PRECONDITION, 'Wrong expected version.', {
      exception: 'wrong-expected-version',
      'stream-name': 'del-1',
      'expected-version': '0',
      'actual-version': '1',
    });
    const converted = client.convertToCommandError(raw as Error);
    const mapped = mapEsdbError(converted, { operation: 'delete', streamId: 'del-1', expected: 0n }) as WrongExpectedVersionError;
    expect(mapped).to.be.instanceOf(WrongExpectedVersionError);
    expect(mapped.actual).to.equal(1n);
    expect(mapped.expected).to.equal(0n);
  });

  it('maps stream not found (and a tombstoned stream, on reads) to StreamNotFoundError', () => {
    const notFound = mapEsdbError(new client.StreamNotFoundError(undefined, 'missing-1'), { operation: 'read' });
    expect(notFound).to.be.instanceOf(StreamNotFoundError);
    expect((notFound as StreamNotFoundError).streamId).to.equal('missing-1');
    const tombstoned = mapEsdbError(client.StreamDeletedError.fromStreamName('gone-1'), { operation: 'read', streamId: 'gone-1' });
    expect(tombstoned).to.be.instanceOf(StreamNotFoundError);
  });

  it('maps StreamDeleted on an append expecting "stream exists" (a soft-deleted stream) to a conflict with no stream', () => {
    const mapped = mapEsdbError(client.StreamDeletedError.fromStreamName('del-2'), {
      operation: 'append',
      streamId: 'del-2',
      expected: 'stream_exists',
    }) as WrongExpectedVersionError;
    expect(mapped).to.be.instanceOf(WrongExpectedVersionError);
    expect(mapped.actual).to.equal('no_stream');
    const other = mapEsdbError(client.StreamDeletedError.fromStreamName('del-2'), { operation: 'append', streamId: 'del-2', expected: 'any' });
    expect(other).to.be.instanceOf(EventStoreError);
    expect(other).to.not.be.instanceOf(WrongExpectedVersionError);
  });

  it('maps NotLeaderError with the leader it names', () => {
    const error = new client.NotLeaderError(
      serviceError(GrpcStatus.NOT_FOUND, 'Leader info available', {
        exception: 'not-leader',
        'leader-endpoint-host': 'node-2.local',
        'leader-endpoint-port': '2113',
      }),
    );
    const mapped = mapEsdbError(error);
    expect(mapped).to.be.instanceOf(NotLeaderError);
    expect((mapped as NotLeaderError).leader).to.deep.equal({ host: 'node-2.local', port: 2113 });
    expect(isTransientEsdbError(error)).to.equal(true);
  });

  it('maps unavailable, deadline exceeded, timeout and server cancellation to UnavailableError, keeping the cause', () => {
    const errors = [
      new client.UnavailableError(serviceError(GrpcStatus.UNAVAILABLE, 'No connection established')),
      new client.DeadlineExceededError(serviceError(GrpcStatus.DEADLINE_EXCEEDED, 'Deadline exceeded')),
      new client.TimeoutError(serviceError(GrpcStatus.ABORTED, 'Operation timed out')),
      new client.CancelledError(serviceError(GrpcStatus.CANCELLED, 'Cancelled by server')),
    ];
    for (const error of errors) {
      const mapped = mapEsdbError(error);
      expect(mapped, error.constructor.name).to.be.instanceOf(UnavailableError);
      expect(mapped.cause).to.equal(error);
    }
  });

  it('maps raw gRPC errors by status code and socket errors by their code', () => {
    expect(mapEsdbError(serviceError(GrpcStatus.UNAVAILABLE, 'connect ECONNREFUSED 127.0.0.1:2113'))).to.be.instanceOf(UnavailableError);
    expect(mapEsdbError(serviceError(GrpcStatus.DEADLINE_EXCEEDED, 'Deadline exceeded'))).to.be.instanceOf(UnavailableError);
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:2113'), { code: 'ECONNREFUSED' });
    expect(mapEsdbError(refused)).to.be.instanceOf(UnavailableError);
    expect(mapEsdbError(new Error('Failed to discover after 10 attempts.'))).to.be.instanceOf(UnavailableError);
    // the client's own conversion of an unavailable status
    expect(mapEsdbError(client.convertToCommandError(serviceError(GrpcStatus.UNAVAILABLE, 'down') as Error))).to.be.instanceOf(UnavailableError);
  });

  it('maps an append too large to EventTooLargeError naming the server\'s limit, and anything unknown to a plain EventStoreError with the cause', () => {
    const tooLarge = mapEsdbError(client.MaxAppendSizeExceededError.fromMaxAppendSize(1024), { operation: 'append', streamId: 'big-1' });
    expect(tooLarge).to.be.instanceOf(EventTooLargeError);
    expect((tooLarge as EventTooLargeError).limitBytes).to.equal(1024);
    expect((tooLarge as EventTooLargeError).streamId).to.equal('big-1');
    const odd = new Error('something odd');
    const mapped = mapEsdbError(odd);
    expect(mapped).to.be.instanceOf(EventStoreError);
    expect(mapped.constructor).to.equal(EventStoreError);
    expect(mapped.cause).to.equal(odd);
    expect(mapEsdbError('a string')).to.be.instanceOf(EventStoreError);
  });

  it('passes port errors through unchanged', () => {
    const error = new StreamNotFoundError('x');
    expect(mapEsdbError(error)).to.equal(error);
  });

  it('recognises the server refusing a start position that is not a record boundary', () => {
    const raw = serviceError(GrpcStatus.INVALID_ARGUMENT, 'Trying to read from an invalid position.');
    const converted = client.convertToCommandError(raw as Error);
    expect(isInvalidPositionError(converted)).to.equal(true);
    expect(isInvalidPositionError(mapEsdbError(converted))).to.equal(true); // through the cause
    expect(isInvalidPositionError(serviceError(GrpcStatus.INVALID_ARGUMENT, 'Something else'))).to.equal(false);
    expect(isInvalidPositionError(new UnavailableError('down'))).to.equal(false);
  });

  it('tells permanent failures (access denied) from ones worth retrying', () => {
    expect(isPermanentEsdbError(new client.AccessDeniedError(serviceError(GrpcStatus.PERMISSION_DENIED, 'Access denied')))).to.equal(true);
    expect(isPermanentEsdbError(mapEsdbError(new client.AccessDeniedError()))).to.equal(true);
    expect(isPermanentEsdbError(new client.UnavailableError(serviceError(GrpcStatus.UNAVAILABLE, 'down')))).to.equal(false);
    expect(isPermanentEsdbError(new Error('unknown'))).to.equal(false);
    expect(isTransientEsdbError(new client.UnavailableError())).to.equal(true);
    expect(isTransientEsdbError(new client.StreamNotFoundError(undefined, 's'))).to.equal(false);
  });
});

// ---------------------------------------------------------------------------------------------------------------
// The same errors as the client raises them from a server's answers: the gRPC stand-in (test/support/
// esdb-stand-in/: the server's protocol and error shapes, not a real server) answers, the installed client
// converts (its batch append, its plain Append, its read bridge, its subscriptions), the adapter maps.

/** What `promise` rejects with (fails when it resolves). */
async function rejection(promise: Promise<unknown>): Promise<Error> {
  const outcome = await promise.then(
    () => undefined,
    (error: unknown) => error as Error,
  );
  if (!outcome) throw new Error('expected a rejection');
  return outcome;
}

const paths: Array<{ name: string; options: { version?: null } }> = [
  { name: 'batch append (servers from 21.10)', options: {} },
  { name: 'plain Append (servers before 21.10)', options: { version: null } },
];

for (const path of paths) {
  describe(`EventStoreDB errors through the client's ${path.name}, from the gRPC stand-in (not a real server)`, function () {
    this.timeout(20_000);
    let standIn: EsdbStandIn;
    let store: EventStoreDbEventStore;
    before(async () => {
      standIn = await EsdbStandIn.start(path.options);
      // A short deadline for the calls the client bounds (Append, Delete): a stalled server exceeds it.
      store = EventStoreDbEventStore.connect(standIn.connectionString({ defaultDeadline: '400' }), { resubscribe: { delay: async () => undefined } });
    });
    after(async () => {
      await store.close();
      await standIn.stop();
    });
    beforeEach(() => standIn.reset());
    afterEach(() => {
      const made = standIn.calls.made(path.options.version === null ? 'batch-append' : 'append');
      expect(made, 'the other append path was taken').to.equal(0);
    });

    it('a wrong expectation: WrongExpectedVersionError with the actual revision, writing nothing', async () => {
      await store.append('wev-1', [event('a'), event('b')], 'no_stream');
      const exact = (await rejection(store.append('wev-1', [event('c')], 0n))) as WrongExpectedVersionError;
      expect(exact).to.be.instanceOf(WrongExpectedVersionError);
      expect([exact.streamId, exact.expected, exact.actual]).to.deep.equal(['wev-1', 0n, 1n]);
      const none = (await rejection(store.append('wev-1', [event('c')], 'no_stream'))) as WrongExpectedVersionError;
      expect([none.expected, none.actual]).to.deep.equal(['no_stream', 1n]);
      const missing = (await rejection(store.append('wev-2', [event('c')], 'stream_exists'))) as WrongExpectedVersionError;
      expect([missing.expected, missing.actual]).to.deep.equal(['stream_exists', 'no_stream']);
      const deleting = (await rejection(store.deleteStream('wev-1', 5n))) as WrongExpectedVersionError;
      expect(deleting).to.be.instanceOf(WrongExpectedVersionError);
      expect([deleting.streamId, deleting.expected, deleting.actual]).to.deep.equal(['wev-1', 5n, 1n]);
      expect(standIn.log.records.filter((r) => r.streamId.startsWith('wev-')).map((r) => r.type)).to.deep.equal(['a', 'b']);
    });

    it('a missing stream: StreamNotFoundError naming it, forwards and backwards', async () => {
      for (const direction of ['forwards', 'backwards'] as const) {
        const error = await rejection(collect(store.readStream('missing-1', { direction })));
        expect(error).to.be.instanceOf(StreamNotFoundError);
        expect((error as StreamNotFoundError).streamId).to.equal('missing-1');
      }
    });

    it('a deleted stream: soft-deleted reads as not found and refuses "stream exists"; tombstoned refuses writes for good', async () => {
      await store.append('soft-1', [event('a')], 'no_stream');
      await store.deleteStream('soft-1');
      expect(await rejection(collect(store.readStream('soft-1')))).to.be.instanceOf(StreamNotFoundError);
      const exists = (await rejection(store.append('soft-1', [event('b')], 'stream_exists'))) as WrongExpectedVersionError;
      expect([exists.constructor, exists.actual]).to.deep.equal([WrongExpectedVersionError, 'no_stream']);

      await store.append('hard-1', [event('a')], 'no_stream');
      await store.client.tombstoneStream('hard-1');
      expect(await rejection(collect(store.readStream('hard-1')))).to.be.instanceOf(StreamNotFoundError);
      const write = await rejection(store.append('hard-1', [event('b')], 'any'));
      expect(write.constructor).to.equal(EventStoreError);
      expect(write.message).to.match(/permanently deleted/);
      const removal = await rejection(store.deleteStream('hard-1'));
      expect(removal.message).to.match(/permanently deleted/);
    });

    it('access denied: a permanent EventStoreError from appends, reads, deletes and subscriptions (which do not resubscribe)', async () => {
      await store.append('acl-1', [event('a')], 'no_stream');
      for (const [operation, attempt] of [
        ['append', () => store.append('acl-1', [event('b')], 'any')],
        ['read-stream', () => collect(store.readStream('acl-1'))],
        ['read-all', () => collect(store.readAll())],
        ['delete', () => store.deleteStream('acl-1')],
      ] as const) {
        standIn.faults.next(operation, { kind: 'access-denied' });
        const error = await rejection(attempt());
        expect(error, operation).to.be.instanceOf(EventStoreError);
        expect(error.message, operation).to.match(/denied access/);
        expect(isPermanentEsdbError(error), operation).to.equal(true);
        expect(isTransientEsdbError(error), operation).to.equal(false);
      }
      standIn.faults.next('subscribe', { kind: 'access-denied' });
      const subscription = store.subscribeToAll();
      const ended = await rejection(subscription[Symbol.asyncIterator]().next());
      expect(ended.message).to.match(/denied access/);
      expect(standIn.calls.made('subscription')).to.equal(1);
      await subscription.stop();
      expect(standIn.log.records.filter((r) => r.streamId === 'acl-1')).to.have.length(1);
    });

    it('a server that cannot commit in time, or a stalled one past the deadline: UnavailableError', async () => {
      standIn.faults.next('append', { kind: 'timeout' });
      const timedOut = await rejection(store.append('slow-1', [event('a')], 'no_stream'));
      expect(timedOut).to.be.instanceOf(UnavailableError);
      expect(isTransientEsdbError(timedOut)).to.equal(true);

      // Stalled beyond the deadline (400 ms here).
      const stalled = event('b');
      standIn.faults.next('append', { kind: 'stall', ms: 700 });
      expect(await rejection(store.append('slow-1', [stalled], 'no_stream'))).to.be.instanceOf(UnavailableError);
      standIn.faults.next('delete', { kind: 'stall', ms: 700 });
      expect(await rejection(store.deleteStream('slow-2', 7n))).to.be.instanceOf(UnavailableError);
      // The stalled append may still be written (plain Append: the server commits after its stall, as a slow
      // one would; batch append: the server drops a request past its deadline). Either way, retrying the same
      // events with the same expectation is safe: the server recognises them as written.
      const retried = await store.append('slow-1', [stalled], 'no_stream');
      expect(retried.nextExpectedRevision).to.equal(0n);
      expect(standIn.log.records.filter((r) => r.streamId === 'slow-1').map((r) => r.type)).to.deep.equal(['b']);
    });

    it('a node that is not ready: a transient UnavailableError from appends, reads and deletes', async () => {
      for (const [operation, attempt] of [
        ['append', () => store.append('nr-1', [event('b')], 'any')],
        ['read-stream', () => collect(store.readStream('nr-1'))],
        ['read-all', () => collect(store.readAll())],
        ['delete', () => store.deleteStream('nr-1')],
      ] as const) {
        standIn.faults.next(operation, { kind: 'not-ready' });
        const error = await rejection(attempt());
        expect(error, operation).to.be.instanceOf(UnavailableError);
        expect(isTransientEsdbError(error), operation).to.equal(true);
      }
      // and then it is: the same client goes on
      await store.append('nr-1', [event('a')], 'no_stream');
      expect((await collect(store.readStream('nr-1'))).map((e) => e.type)).to.deep.equal(['a']);
    });

    it('an append over the server\'s MaxAppendSize (configured below the port\'s limit): EventTooLargeError naming the server\'s limit', async () => {
      standIn.log.maxAppendSize = 2000;
      const error = await rejection(store.append('size-1', [event('a', { text: 'x'.repeat(1500) }), event('b', { text: 'x'.repeat(1500) })], 'no_stream'));
      expect(error).to.be.instanceOf(EventTooLargeError);
      expect((error as EventTooLargeError).limitBytes).to.equal(2000);
      expect((error as EventTooLargeError).streamId).to.equal('size-1');
      expect(standIn.log.records.filter((r) => r.streamId === 'size-1')).to.have.length(0);
      expect((await store.append('size-1', [event('a', { text: 'x'.repeat(500) })], 'no_stream')).nextExpectedRevision).to.equal(0n);
    });

    it('a follower answering "not leader": NotLeaderError naming the leader, and the client\'s next calls go to the leader', async () => {
      const leader = await EsdbStandIn.start(path.options);
      const follower = EventStoreDbEventStore.connect(standIn.connectionString());
      try {
        await leader.log.append('on-leader', [{ id: randomUUID(), type: 'x', contentType: 'application/json', data: Buffer.from('{}'), metadata: Buffer.from('{}') }], { kind: 'any' });
        standIn.faults.next('append', { kind: 'not-leader', host: '127.0.0.1', port: leader.port });
        const error = await rejection(follower.append('nl-1', [event('a')], 'no_stream'));
        expect(error).to.be.instanceOf(NotLeaderError);
        expect((error as NotLeaderError).leader).to.deep.equal({ host: '127.0.0.1', port: leader.port });
        expect(isTransientEsdbError(error)).to.equal(true);
        await follower.append('nl-1', [event('a')], 'no_stream');
        expect(leader.log.records.filter((r) => r.streamId === 'nl-1')).to.have.length(1);
        expect(standIn.log.records.filter((r) => r.streamId === 'nl-1')).to.have.length(0);

        // reads: the client's read bridge follows the leader on its own
        standIn.faults.next('read-stream', { kind: 'not-leader', host: '127.0.0.1', port: leader.port });
        const reading = EventStoreDbEventStore.connect(standIn.connectionString());
        try {
          const readError = await rejection(collect(reading.readStream('on-leader')));
          expect(readError).to.be.instanceOf(NotLeaderError);
          expect((readError as NotLeaderError).leader).to.deep.equal({ host: '127.0.0.1', port: leader.port });
          expect((await collect(reading.readStream('on-leader'))).map((e) => e.type)).to.deep.equal(['x']);
        } finally {
          await reading.close();
        }
      } finally {
        await follower.close();
        await leader.stop();
      }
    });
  });
}
