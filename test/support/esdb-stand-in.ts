/**
 * A stand-in for a KurrentDB / EventStoreDB server, seen through @kurrent/kurrentdb-client's own pieces: it
 * answers the client methods the adapter calls (appendToStream, deleteStream, readStream, readAll,
 * subscribeToAll, dispose). Subscriptions feed protobuf ReadResp messages through the client's own Subscription
 * transform, so the adapter meets the client's real event ordering (checkpoints and caught-up reported out of
 * band); reads are async generators like the client's native read bridge, failing with the errors its
 * convertBridgeError makes.
 *
 * Server rules it follows, because the adapter depends on them:
 * - positions are byte offsets: every record takes 137 bytes; the log opens with a non-event record at 0 and an
 *   `$epoch-information` event, so positions are sparse and `p - 1` is never a valid start;
 * - subscription starts are exclusive, readAll starts inclusive; only record boundaries are valid starts;
 * - soft deletes write a `$metadata` event and hide the stream until it is written again;
 * - a filtered $all subscription reports progress only through a checkpoint every `32 × checkpointInterval`
 *   considered events (the server's default search window of 32 times the client's multiplier), during catch-up
 *   and live alike, and through caught-up once, when it turns live; a run of unmatched live appends shorter
 *   than that is never reported;
 * - an append whose data and metadata exceed `maxAppendSize` (1 MiB by default) is refused.
 *
 * It is a model of the server, not the server: a pass here proves the adapter's logic against these rules,
 * never compatibility with a real server.
 */
import { randomUUID } from 'node:crypto';
import { PassThrough } from 'node:stream';
import * as client from '@kurrent/kurrentdb-client';
import type { KurrentDBClient } from '@kurrent/kurrentdb-client';
import streamsPb from '@kurrent/kurrentdb-client/generated/kurrentdb/protocols/v1/streams_pb.js';
import sharedPb from '@kurrent/kurrentdb-client/generated/kurrentdb/protocols/v1/shared_pb.js';
import { Subscription as ClientSubscription } from '@kurrent/kurrentdb-client/dist/streams/utils/Subscription.js';
import { convertGrpcEvent } from '@kurrent/kurrentdb-client/dist/utils/convertGrpcEvent.js';
import { convertRustEvent } from '@kurrent/kurrentdb-client/dist/utils/convertRustEvent.js';
import { convertBridgeError } from '@kurrent/kurrentdb-client/dist/utils/convertBridgeError.js';
import timestampProto from 'google-protobuf/google/protobuf/timestamp_pb.js';

const { ReadResp } = streamsPb;
type ReadRespMessage = InstanceType<typeof ReadResp>;

type Grpc = PassThrough & { cancel(): void };

function grpcStream(): Grpc {
  const stream = new PassThrough({ objectMode: true }) as Grpc;
  stream.cancel = () => {
    const cancelled = Object.assign(new Error('1 CANCELLED: Cancelled on client'), { code: 1, details: 'Cancelled on client' });
    stream.destroy(cancelled);
  };
  return stream;
}

/** An error shaped like @grpc/grpc-js's ServiceError, as the client's error conversion reads it. */
export function grpcError(code: number, details: string): Error {
  return Object.assign(new Error(`${code} ${details}`), { code, details, metadata: { get: () => [], getMap: () => ({}) } });
}

/** An error as the client's native read bridge raises it: a plain Error with a name. */
function bridgeError(name: string, message: string): Error {
  return Object.assign(new Error(message), { name, metadata: {} });
}

export interface StandInRecord {
  id: string;
  streamId: string;
  revision: bigint;
  type: string;
  data: unknown;
  /** As stored: the parsed JSON metadata. */
  metadata: unknown;
  position: bigint;
}

interface StandInStream {
  last: bigint; // -1n: none
  truncateBefore: bigint; // events below are hidden (soft delete)
  softDeleted: boolean;
}

interface LiveSubscription {
  grpc: Grpc;
  matches(record: StandInRecord): boolean;
  considered: number;
  checkpointEvery: number;
}

/** The server's default search window: a filtered subscription checkpoints every 32 × multiplier events. */
export const SERVER_SEARCH_WINDOW = 32;

export class EventStoreDbStandIn {
  readonly records: StandInRecord[] = [];
  readonly streams = new Map<string, StandInStream>();
  readonly live = new Set<LiveSubscription>();
  readonly subscribeStarts: Array<client.ReadPosition> = [];
  nextPosition = 137n;
  /** Servers before 23.10 do not report caught-up. */
  reportsCaughtUp = true;
  /** Newer servers name the position with caught-up. */
  caughtUpPosition = false;
  /** The search window (events per checkpoint, times the client's multiplier). */
  searchWindow = SERVER_SEARCH_WINDOW;
  /** The server's MaxAppendSize. */
  maxAppendSize = 1024 * 1024;
  /** When set, readAll fails with this error (as the bridge raises it). */
  readAllFailure: Error | undefined;
  /** Clients handed out and disposed. */
  disposed = 0;

  constructor() {
    this.#write('$epochs', '$epoch-information', {}, undefined);
  }

  /** A client connected to this server. */
  asClient(): KurrentDBClient {
    const server = this;
    const view = {
      appendToStream: this.appendToStream.bind(this),
      deleteStream: this.deleteStream.bind(this),
      readStream: this.readStream.bind(this),
      readAll: this.readAll.bind(this),
      subscribeToAll: this.subscribeToAll.bind(this),
      async dispose() {
        server.disposed += 1;
      },
    };
    return view as unknown as KurrentDBClient;
  }

  /** The events of the log as a reader of $all sees them (system events included). */
  #write(streamId: string, type: string, data: unknown, metadata: unknown, id: string = randomUUID()): StandInRecord {
    const stream = this.streams.get(streamId) ?? { last: -1n, truncateBefore: 0n, softDeleted: false };
    this.streams.set(streamId, stream);
    stream.last += 1n;
    const record: StandInRecord = { id, streamId, revision: stream.last, type, data, metadata, position: this.nextPosition };
    this.nextPosition += 137n;
    this.records.push(record);
    return record;
  }

  #isBoundary(position: client.Position): boolean {
    return position.commit === 0n || position.commit === this.nextPosition || this.records.some((r) => r.position === position.commit);
  }

  #publish(record: StandInRecord): void {
    for (const subscription of this.live) consider(subscription, record);
  }

  /** Every live subscription loses its connection. */
  dropConnections(): void {
    for (const subscription of this.live) subscription.grpc.destroy(grpcError(14, 'Connection dropped'));
    this.live.clear();
  }

  async appendToStream(streamName: string, events: client.EventData | client.EventData[], options: { streamState?: client.AppendStreamState } = {}) {
    const list = Array.isArray(events) ? events : [events];
    const expected = options.streamState ?? 'any';
    const stream = this.streams.get(streamName);
    const last = stream?.last ?? -1n;
    const wrong = () => new client.WrongExpectedVersionError(undefined, { streamName, expected, current: last < 0n || stream?.softDeleted ? 'no_stream' : last });
    if (expected === 'stream_exists') {
      if (stream?.softDeleted) throw client.StreamDeletedError.fromStreamName(streamName);
      if (last < 0n) throw wrong();
    } else if (expected === 'no_stream') {
      if (last >= 0n && !stream?.softDeleted) throw wrong();
    } else if (typeof expected === 'bigint' && expected !== last) {
      throw wrong();
    }
    const size = list.reduce((sum, e) => sum + Buffer.byteLength(JSON.stringify(e.data)) + (e.metadata === undefined ? 0 : Buffer.byteLength(JSON.stringify(e.metadata))), 0);
    if (size > this.maxAppendSize) throw client.MaxAppendSizeExceededError.fromMaxAppendSize(this.maxAppendSize);
    if (stream?.softDeleted) {
      stream.softDeleted = false;
      stream.truncateBefore = stream.last + 1n;
    }
    let record: StandInRecord | undefined;
    for (const e of list) {
      record = this.#write(streamName, e.type, JSON.parse(JSON.stringify(e.data)), e.metadata === undefined ? undefined : JSON.parse(JSON.stringify(e.metadata)), e.id);
      this.#publish(record);
    }
    return { success: true, nextExpectedRevision: record!.revision, position: { commit: record!.position, prepare: record!.position } };
  }

  async deleteStream(streamName: string, options: { expectedRevision?: client.StreamState } = {}) {
    const expected = options.expectedRevision ?? 'any';
    const stream = this.streams.get(streamName);
    const last = stream?.last ?? -1n;
    if ((expected === 'no_stream' && last >= 0n) || (typeof expected === 'bigint' && expected !== last)) {
      throw new client.WrongExpectedVersionError(undefined, { streamName, expected, current: last < 0n ? 'no_stream' : last });
    }
    if (stream) stream.softDeleted = true;
    this.#publish(this.#write(`$$${streamName}`, '$metadata', { $tb: 'deleted' }, undefined));
    return {};
  }

  readStream(streamName: string, options: { direction?: string; fromRevision?: client.ReadRevision; maxCount?: number | bigint } = {}) {
    const server = this;
    const direction = options.direction ?? 'forwards';
    const from = options.fromRevision ?? 'start';
    const maxCount = Number(options.maxCount ?? Number.MAX_SAFE_INTEGER);
    return (async function* () {
      await new Promise((resolve) => setImmediate(resolve));
      const stream = server.streams.get(streamName);
      if (!stream || stream.softDeleted || stream.last < stream.truncateBefore) {
        throw convertBridgeError(bridgeError('StreamNotFoundError', `stream ${streamName} not found`), streamName);
      }
      let visible = server.records.filter((r) => r.streamId === streamName && r.revision >= stream.truncateBefore);
      if (direction === 'forwards') {
        if (from === 'end') visible = [];
        else if (from !== 'start') visible = visible.filter((r) => r.revision >= from);
      } else {
        visible.reverse();
        if (from === 'start') visible = visible.filter((r) => r.revision === 0n);
        else if (from !== 'end') visible = visible.filter((r) => r.revision <= from);
      }
      for (const record of visible.slice(0, maxCount)) yield convertRustEvent({ event: rustRecord(record), commitPosition: record.position });
    })();
  }

  readAll(options: { direction?: string; fromPosition?: client.ReadPosition; maxCount?: number | bigint } = {}) {
    const server = this;
    const direction = options.direction ?? 'forwards';
    const from = options.fromPosition ?? 'start';
    const maxCount = Number(options.maxCount ?? Number.MAX_SAFE_INTEGER);
    return (async function* () {
      await new Promise((resolve) => setImmediate(resolve));
      if (server.readAllFailure) throw convertBridgeError(server.readAllFailure);
      if (typeof from === 'object' && !server.#isBoundary(from)) {
        throw convertBridgeError(bridgeError('InvalidArgumentError', 'Trying to read from an invalid position.'));
      }
      let selected: StandInRecord[];
      if (direction === 'forwards') {
        selected = from === 'start' ? [...server.records] : from === 'end' ? [] : server.records.filter((r) => r.position >= from.commit);
      } else {
        selected = (from === 'end' ? [...server.records] : from === 'start' ? [] : server.records.filter((r) => r.position < from.commit)).reverse();
      }
      for (const record of selected.slice(0, maxCount)) yield convertRustEvent({ event: rustRecord(record), commitPosition: record.position });
    })();
  }

  subscribeToAll(options: { fromPosition?: client.ReadPosition; filter?: client.Filter } = {}) {
    const from = options.fromPosition ?? 'start';
    this.subscribeStarts.push(from);
    const filter = options.filter;
    const matches = (record: StandInRecord): boolean => {
      if (!filter) return true;
      const subject = filter.filterOn === 'eventType' ? record.type : record.streamId;
      if ('regex' in filter) return new RegExp(filter.regex).test(subject);
      return filter.prefixes.some((prefix) => subject.startsWith(prefix));
    };
    const grpc = grpcStream();
    // Unfiltered subscriptions get no checkpoints at all.
    const checkpointEvery = filter ? this.searchWindow * (filter.checkpointInterval ?? 1) : Number.POSITIVE_INFINITY;
    const subscription: LiveSubscription = { grpc, matches, considered: 0, checkpointEvery };
    setImmediate(() => {
      if (typeof from === 'object' && !this.#isBoundary(from)) {
        return grpc.destroy(grpcError(3, 'Trying to read from an invalid position.'));
      }
      // The server starts strictly after the first event at or after the given position.
      let backlog: StandInRecord[] = [];
      if (from === 'start') backlog = [...this.records];
      else if (typeof from === 'object') {
        const first = this.records.findIndex((r) => r.position >= from.commit);
        backlog = first < 0 ? [] : this.records.slice(first + 1);
      }
      // Everything is written at once, as a fast network would: the client buffers while the adapter reads.
      for (const record of backlog) consider(subscription, record);
      if (this.reportsCaughtUp) {
        const caughtUp = new ReadResp.CaughtUp();
        if (this.caughtUpPosition && this.records.length > 0) {
          const position = new ReadResp.Position();
          const last = this.records.at(-1)!.position.toString();
          position.setCommitPosition(last);
          position.setPreparePosition(last);
          caughtUp.setPosition(position);
          caughtUp.setTimestamp(timestampPb());
        }
        const resp = new ReadResp();
        resp.setCaughtUp(caughtUp);
        grpc.write(resp);
      }
      this.live.add(subscription);
      grpc.on('close', () => this.live.delete(subscription));
    });
    return new ClientSubscription(async () => grpc as never, convertGrpcEvent, {}, filter?.checkpointReached);
  }
}

function consider(subscription: LiveSubscription, record: StandInRecord): void {
  subscription.considered += 1;
  if (subscription.matches(record)) subscription.grpc.write(eventResp(record));
  if (subscription.considered % subscription.checkpointEvery === 0) subscription.grpc.write(checkpointResp(record.position));
}

function timestampPb(): InstanceType<typeof timestampProto.Timestamp> {
  return timestampProto.Timestamp.fromDate(new Date(Date.UTC(2026, 0, 1)));
}

/** A record as the client's native bridge hands it to convertRustEvent. */
function rustRecord(record: StandInRecord) {
  return {
    streamId: record.streamId,
    id: record.id,
    revision: record.revision,
    type: record.type,
    created: Date.UTC(2026, 0, 1),
    isJson: true,
    data: Buffer.from(JSON.stringify(record.data)),
    metadata: record.metadata === undefined ? Buffer.alloc(0) : Buffer.from(JSON.stringify(record.metadata)),
    position: { commit: record.position, prepare: record.position },
  };
}

function eventResp(record: StandInRecord): ReadRespMessage {
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
