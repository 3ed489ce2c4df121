import { expect } from 'chai';
import * as client from '@kurrent/kurrentdb-client';
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
