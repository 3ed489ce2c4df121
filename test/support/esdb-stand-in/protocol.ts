/**
 * The stand-in's wire vocabulary: KurrentDB's v1 protobuf messages (the generated code that
 * @kurrent/kurrentdb-client ships) built from and read into the log's plain values, and gRPC errors shaped as
 * the server sends them (a status code, and for the server's own exceptions an `exception` trailer naming it,
 * with its details in further trailers).
 */
import * as grpc from '@grpc/grpc-js';
import streamsPb from '@kurrent/kurrentdb-client/generated/kurrentdb/protocols/v1/streams_pb.js';
import sharedPb from '@kurrent/kurrentdb-client/generated/kurrentdb/protocols/v1/shared_pb.js';
import timestampPb from 'google-protobuf/google/protobuf/timestamp_pb.js';
import type { Expectation, LogRecord, ProposedEvent } from './log.ts';

export const { ReadReq, ReadResp, AppendReq, AppendResp, BatchAppendReq, BatchAppendResp, DeleteReq, DeleteResp, TombstoneReq, TombstoneResp } = streamsPb;
export const { UUID, StreamIdentifier, Empty, AllStreamPosition } = sharedPb;
export type ReadRespMessage = InstanceType<typeof ReadResp>;
type UuidMessage = InstanceType<typeof UUID>;
type StreamIdentifierMessage = InstanceType<typeof StreamIdentifier>;

/** How the client asked for ids: as strings, or as two signed 64-bit halves. */
export type UuidFormat = 'string' | 'structured';

export function readUuid(uuid: UuidMessage | undefined): string {
  if (!uuid) return '';
  if (uuid.hasStructured()) {
    const structured = uuid.getStructured()!;
    const hex = (value: string) => (BigInt(value) & ((1n << 64n) - 1n)).toString(16).padStart(16, '0');
    const ms = hex(structured.getMostSignificantBits());
    const ls = hex(structured.getLeastSignificantBits());
    return `${ms.slice(0, 8)}-${ms.slice(8, 12)}-${ms.slice(12)}-${ls.slice(0, 4)}-${ls.slice(4)}`;
  }
  return uuid.getString();
}

export function uuidMessage(id: string, format: UuidFormat): UuidMessage {
  const uuid = new UUID();
  if (format === 'string') {
    uuid.setString(id);
    return uuid;
  }
  const hex = id.replace(/-/g, '');
  const signed = (half: string) => BigInt.asIntN(64, BigInt(`0x${half}`)).toString();
  const structured = new UUID.Structured();
  structured.setMostSignificantBits(signed(hex.slice(0, 16)));
  structured.setLeastSignificantBits(signed(hex.slice(16)));
  uuid.setStructured(structured);
  return uuid;
}

export function readStreamName(identifier: StreamIdentifierMessage | undefined): string {
  return identifier ? Buffer.from(identifier.getStreamName_asU8()).toString('utf8') : '';
}

export function streamIdentifier(name: string): StreamIdentifierMessage {
  const identifier = new StreamIdentifier();
  identifier.setStreamName(Buffer.from(name, 'utf8'));
  return identifier;
}

/** A proposed message of Append or BatchAppend as the log takes it. */
export function proposedEvent(message: {
  getId(): UuidMessage | undefined;
  getMetadataMap(): { get(key: string): string | undefined };
  getData_asU8(): Uint8Array;
  getCustomMetadata_asU8(): Uint8Array;
}): ProposedEvent {
  const metadata = message.getMetadataMap();
  return {
    id: readUuid(message.getId()),
    type: metadata.get('type') ?? '',
    contentType: metadata.get('content-type') === 'application/json' ? 'application/json' : 'application/octet-stream',
    data: Buffer.from(message.getData_asU8()),
    metadata: Buffer.from(message.getCustomMetadata_asU8()),
  };
}

/** An expectation from request options that carry one; `revision` is the oneof's revision field, when set. */
export function readExpectation(options: { hasNoStream(): boolean; hasStreamExists(): boolean }, revision: string | undefined): Expectation {
  if (options.hasNoStream()) return { kind: 'no_stream' };
  if (options.hasStreamExists()) return { kind: 'stream_exists' };
  if (revision !== undefined) return { kind: 'revision', revision: BigInt(revision) };
  return { kind: 'any' };
}

/** The number the server puts in the `expected-version` trailer: a revision, or -1 no stream, -2 any, -4 exists. */
export function expectedVersionNumber(expected: Expectation): string {
  switch (expected.kind) {
    case 'no_stream':
      return '-1';
    case 'any':
      return '-2';
    case 'stream_exists':
      return '-4';
    case 'revision':
      return expected.revision.toString();
  }
}

export function readEvent(record: LogRecord, format: UuidFormat): InstanceType<typeof ReadResp.ReadEvent> {
  const recorded = new ReadResp.ReadEvent.RecordedEvent();
  recorded.setId(uuidMessage(record.id, format));
  recorded.setStreamIdentifier(streamIdentifier(record.streamId));
  recorded.setStreamRevision(record.revision.toString());
  recorded.setCommitPosition(record.position.toString());
  recorded.setPreparePosition(record.position.toString());
  const metadata = recorded.getMetadataMap();
  metadata.set('type', record.type);
  metadata.set('content-type', record.contentType);
  metadata.set('created', record.created.toString());
  recorded.setData(record.data);
  recorded.setCustomMetadata(record.metadata);
  const event = new ReadResp.ReadEvent();
  event.setEvent(recorded);
  event.setCommitPosition(record.position.toString());
  return event;
}

export function eventResp(record: LogRecord, format: UuidFormat): ReadRespMessage {
  const resp = new ReadResp();
  resp.setEvent(readEvent(record, format));
  return resp;
}

export function confirmationResp(subscriptionId: string): ReadRespMessage {
  const confirmation = new ReadResp.SubscriptionConfirmation();
  confirmation.setSubscriptionId(subscriptionId);
  const resp = new ReadResp();
  resp.setConfirmation(confirmation);
  return resp;
}

export function checkpointResp(position: bigint, now: Date): ReadRespMessage {
  const checkpoint = new ReadResp.Checkpoint();
  checkpoint.setCommitPosition(position.toString());
  checkpoint.setPreparePosition(position.toString());
  checkpoint.setTimestamp(timestampPb.Timestamp.fromDate(now));
  const resp = new ReadResp();
  resp.setCheckpoint(checkpoint);
  return resp;
}

/** Caught up; servers from 24.x name the time and the position, older ones (23.10) send it bare. */
export function caughtUpResp(position: bigint | null, now: Date): ReadRespMessage {
  const caughtUp = new ReadResp.CaughtUp();
  if (position !== null) {
    caughtUp.setTimestamp(timestampPb.Timestamp.fromDate(now));
    const at = new ReadResp.Position();
    at.setCommitPosition(position.toString());
    at.setPreparePosition(position.toString());
    caughtUp.setPosition(at);
  }
  const resp = new ReadResp();
  resp.setCaughtUp(caughtUp);
  return resp;
}

export function streamNotFoundResp(name: string): ReadRespMessage {
  const notFound = new ReadResp.StreamNotFound();
  notFound.setStreamIdentifier(streamIdentifier(name));
  const resp = new ReadResp();
  resp.setStreamNotFound(notFound);
  return resp;
}

/** A gRPC error as grpc-js sends it: status, details and trailers. */
export type StatusError = grpc.StatusObject & Error;

export function statusError(code: grpc.status, details: string, trailers: Record<string, string> = {}): StatusError {
  const metadata = new grpc.Metadata();
  for (const [key, value] of Object.entries(trailers)) metadata.set(key, value);
  return Object.assign(new Error(details), { code, details, metadata });
}

/** The server's errors, as its gRPC layer raises them (RpcExceptions). */
export const serverErrors = {
  accessDenied: () => statusError(grpc.status.PERMISSION_DENIED, 'Access Denied', { exception: 'access-denied' }),
  streamDeleted: (stream: string) =>
    statusError(grpc.status.FAILED_PRECONDITION, `Event stream '${stream}' is deleted.`, { exception: 'stream-deleted', 'stream-name': stream }),
  wrongExpectedVersion: (stream: string, expected: Expectation, current: bigint | 'no_stream') =>
    statusError(grpc.status.FAILED_PRECONDITION, `Append failed due to WrongExpectedVersion. Stream: ${stream}, Expected version: ${expectedVersionNumber(expected)}, Actual version: ${current === 'no_stream' ? -1 : current}`, {
      exception: 'wrong-expected-version',
      'stream-name': stream,
      'expected-version': expectedVersionNumber(expected),
      'actual-version': current === 'no_stream' ? '-1' : current.toString(),
    }),
  maximumAppendSizeExceeded: (maxAppendSize: number) =>
    statusError(grpc.status.INVALID_ARGUMENT, `Maximum Append Size of ${maxAppendSize} Exceeded.`, {
      exception: 'maximum-append-size-exceeded',
      'maximum-append-size': String(maxAppendSize),
    }),
  invalidPosition: () => statusError(grpc.status.INVALID_ARGUMENT, 'Trying to read from an invalid position.'),
  timeout: () => statusError(grpc.status.ABORTED, 'Operation timed out'),
  notReady: () => statusError(grpc.status.UNAVAILABLE, 'Server Is Not Ready'),
  notLeader: (host: string, port: number) =>
    statusError(grpc.status.NOT_FOUND, 'Leader info available', { exception: 'not-leader', 'leader-endpoint-host': host, 'leader-endpoint-port': String(port) }),
} as const;

/** Writes one message of a server stream, waiting while the client does not read (HTTP/2 flow control). */
export async function write<T>(call: grpc.ServerWritableStream<unknown, T>, message: T): Promise<void> {
  if (call.write(message)) return;
  await new Promise<void>((resolve) => {
    const done = () => {
      call.off('drain', done);
      call.off('cancelled', done);
      resolve();
    };
    call.on('drain', done);
    call.on('cancelled', done);
  });
}
