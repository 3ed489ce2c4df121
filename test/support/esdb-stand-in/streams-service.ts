/**
 * The stand-in's Streams service (event_store.client.streams.Streams, the v1 protocol), as KurrentDB answers it:
 *
 * - Read: a stream forwards or backwards from a revision (`stream_not_found` in the response when the stream
 *   has no readable events; an error status "stream-deleted" when tombstoned), $all forwards or backwards
 *   from a position (system events included; optional filter), or a subscription to $all
 *   (./subscription.ts). Ids as strings or structured, as asked.
 * - Append (client streaming: options, then the events): the result in the response, a wrong expectation in
 *   the response too (with the current revision), every other refusal as an error status.
 * - BatchAppend (bidirectional, one call shared by many appends told apart by correlation id, an append's
 *   events possibly spread over several requests until `is_final`): each append's outcome in its own
 *   response, refusals as a google.rpc.Status with the server's detail message (WrongExpectedVersion,
 *   StreamDeleted, AccessDenied, Timeout, MaximumAppendSizeExceeded); the request's deadline is honoured.
 * - Delete (soft) and Tombstone (hard): the position of the record written, or an error status.
 *
 * Deviations from KurrentDB: subscriptions to a single stream are not served (UNIMPLEMENTED; the adapter
 * subscribes to $all only); reads never resolve links; no authentication (calls carry no credentials on an
 * insecure connection, as the adapter's `tls=false` tests use it).
 */
import * as grpc from '@grpc/grpc-js';
import statusPb from '@kurrent/kurrentdb-client/generated/kurrentdb/protocols/v1/status_pb.js';
import codePb from '@kurrent/kurrentdb-client/generated/kurrentdb/protocols/v1/code_pb.js';
import anyPb from 'google-protobuf/google/protobuf/any_pb.js';
import emptyPb from 'google-protobuf/google/protobuf/empty_pb.js';
import sharedPb from '@kurrent/kurrentdb-client/generated/kurrentdb/protocols/v1/shared_pb.js';
import { delay, type Fault, type Faults, type Operation } from './faults.ts';
import type { CallLedger } from './ledger.ts';
import type { AppendOutcome, EsdbLog, Expectation, LogRecord, ProposedEvent } from './log.ts';
import {
  AllStreamPosition,
  AppendResp,
  BatchAppendResp,
  DeleteResp,
  Empty,
  ReadReq,
  TombstoneResp,
  eventResp,
  proposedEvent,
  readExpectation,
  readStreamName,
  readUuid,
  serverErrors,
  statusError,
  streamIdentifier,
  streamNotFoundResp,
  uuidMessage,
  write,
  type ReadRespMessage,
  type StatusError,
  type UuidFormat,
} from './protocol.ts';
import { recordFilter, runSubscription, type CaughtUpReport } from './subscription.ts';

type AppendReqMessage = InstanceType<typeof import('./protocol.ts').AppendReq>;
type BatchAppendReqMessage = InstanceType<typeof import('./protocol.ts').BatchAppendReq>;
type BatchAppendRespMessage = InstanceType<typeof BatchAppendResp>;
type ReadReqMessage = InstanceType<typeof ReadReq>;

export interface StreamsContext {
  log: EsdbLog;
  faults: Faults;
  calls: CallLedger;
  caughtUp: CaughtUpReport;
  clock: () => Date;
}

/** The fault for this call, after any stall it includes: an error to answer with, or undefined to proceed. */
async function meetFault(faults: Faults, operation: Operation): Promise<Exclude<Fault, { kind: 'stall' }> | undefined> {
  for (;;) {
    const fault = faults.take(operation);
    if (!fault) return undefined;
    if (fault.kind !== 'stall') return fault;
    await delay(fault.ms);
  }
}

/** A fault as an error status (every call but BatchAppend's in-band refusals). */
function faultError(fault: Exclude<Fault, { kind: 'stall' }>, operation: Operation): StatusError {
  switch (fault.kind) {
    case 'access-denied':
      return serverErrors.accessDenied();
    case 'not-ready':
      return serverErrors.notReady();
    case 'timeout':
      return operation === 'append' ? serverErrors.timeout() : statusError(grpc.status.DEADLINE_EXCEEDED, 'Deadline Exceeded');
    case 'not-leader':
      return serverErrors.notLeader(fault.host, fault.port);
  }
}

export function streamsService(context: StreamsContext): grpc.UntypedServiceImplementation {
  const { log, faults, calls } = context;

  async function read(call: grpc.ServerWritableStream<ReadReqMessage, ReadRespMessage>): Promise<void> {
    const options = call.request.getOptions()!;
    const subscription = options.hasSubscription();
    const close = calls.opened(subscription ? 'subscription' : 'read');
    call.on('finish', close);
    call.on('cancelled', close);
    call.on('close', close);
    const uuidFormat: UuidFormat = options.getUuidOption()?.hasStructured() ? 'structured' : 'string';
    try {
      if (subscription && !options.hasAll()) {
        call.emit('error', statusError(grpc.status.UNIMPLEMENTED, 'The stand-in serves subscriptions to $all only'));
        return;
      }
      const fault = await meetFault(faults, subscription ? 'subscribe' : options.hasAll() ? 'read-all' : 'read-stream');
      if (fault) {
        call.emit('error', faultError(fault, 'read-all'));
        return;
      }
      if (subscription) {
        await runSubscription(call, options, uuidFormat, {
          log,
          caughtUp: context.caughtUp,
          clock: context.clock,
          onStart: (from) => calls.subscriptionStarts.push(from),
        });
        return;
      }
      const forwards = options.getReadDirection() === ReadReq.Options.ReadDirection.FORWARDS;
      const maxCount = options.hasCount() ? BigInt(options.getCount()) : BigInt(Number.MAX_SAFE_INTEGER);
      calls.reads.push({ of: options.hasStream() ? readStreamName(options.getStream()!.getStreamIdentifier()) : '$all', count: maxCount });
      let records: LogRecord[];
      if (options.hasStream()) {
        const stream = options.getStream()!;
        const name = readStreamName(stream.getStreamIdentifier());
        const from = stream.hasStart() ? 'start' : stream.hasEnd() ? 'end' : BigInt(stream.getRevision());
        const result = log.readStream(name, forwards ? 'forwards' : 'backwards', from, maxCount);
        if (result.kind === 'deleted') {
          call.emit('error', serverErrors.streamDeleted(name));
          return;
        }
        if (result.kind === 'not-found') {
          await write(call, streamNotFoundResp(name));
          call.end();
          return;
        }
        records = result.records;
      } else {
        const all = options.getAll()!;
        let from: bigint | 'start' | 'end' = all.hasStart() ? 'start' : 'end';
        if (all.hasPosition()) {
          const position = all.getPosition()!;
          from = BigInt(position.getCommitPosition());
          if (from !== BigInt(position.getPreparePosition())) {
            call.emit('error', serverErrors.invalidPosition());
            return;
          }
        }
        const filter = recordFilter(options);
        const selected = log.readAll(forwards ? 'forwards' : 'backwards', from, options.hasFilter() ? BigInt(Number.MAX_SAFE_INTEGER) : maxCount);
        if (!selected) {
          call.emit('error', serverErrors.invalidPosition());
          return;
        }
        records = options.hasFilter() ? selected.filter((r) => filter.matches(r)).slice(0, Number(maxCount)) : selected;
      }
      for (const record of records) {
        if (call.cancelled) return;
        await write(call, eventResp(record, uuidFormat));
      }
      call.end();
    } catch (error) {
      call.emit('error', statusError(grpc.status.INTERNAL, `stand-in failure: ${(error as Error).message}`));
    }
  }

  function append(call: grpc.ServerReadableStream<AppendReqMessage, InstanceType<typeof AppendResp>>, callback: grpc.sendUnaryData<InstanceType<typeof AppendResp>>): void {
    const close = calls.opened('append');
    let stream = '';
    let expected: Expectation = { kind: 'any' };
    const events: ProposedEvent[] = [];
    let size = 0;
    let refused = false;
    const answer: typeof callback = (error, value) => {
      close();
      if (!refused) callback(error, value);
      refused = true;
    };
    call.on('data', (message: AppendReqMessage) => {
      if (refused) return;
      if (message.hasOptions()) {
        const options = message.getOptions()!;
        stream = readStreamName(options.getStreamIdentifier());
        expected = readExpectation(options, options.hasRevision() ? options.getRevision() : undefined);
        return;
      }
      const event = proposedEvent(message.getProposedMessage()!);
      size += event.data.byteLength + event.metadata.byteLength;
      // The server refuses as soon as the events received are over its limit.
      if (size > log.maxAppendSize) return answer(serverErrors.maximumAppendSizeExceeded(log.maxAppendSize));
      events.push(event);
    });
    call.on('error', () => close());
    call.on('cancelled', () => close());
    call.on('end', async () => {
      if (refused) return;
      const fault = await meetFault(faults, 'append');
      if (fault) return answer(faultError(fault, 'append'));
      const outcome = log.append(stream, events, expected);
      switch (outcome.kind) {
        case 'success': {
          const success = new AppendResp.Success();
          success.setCurrentRevision(outcome.revision.toString());
          const position = new AppendResp.Position();
          position.setCommitPosition(outcome.position.toString());
          position.setPreparePosition(outcome.position.toString());
          success.setPosition(position);
          const resp = new AppendResp();
          resp.setSuccess(success);
          return answer(null, resp);
        }
        case 'wrong-expected-version': {
          const wrong = new AppendResp.WrongExpectedVersion();
          if (outcome.current === 'no_stream') wrong.setCurrentNoStream(new Empty());
          else wrong.setCurrentRevision(outcome.current.toString());
          if (expected.kind === 'revision') wrong.setExpectedRevision(expected.revision.toString());
          else if (expected.kind === 'no_stream') wrong.setExpectedNoStream(new Empty());
          else if (expected.kind === 'stream_exists') wrong.setExpectedStreamExists(new Empty());
          else wrong.setExpectedAny(new Empty());
          const resp = new AppendResp();
          resp.setWrongExpectedVersion(wrong);
          return answer(null, resp);
        }
        case 'stream-deleted':
          return answer(serverErrors.streamDeleted(stream));
        case 'too-large':
          return answer(serverErrors.maximumAppendSizeExceeded(outcome.maxAppendSize));
      }
    });
  }

  function batchAppend(call: grpc.ServerDuplexStream<BatchAppendReqMessage, BatchAppendRespMessage>): void {
    const close = calls.opened('batch-append');
    call.on('cancelled', close);
    call.on('finish', close);
    call.on('close', close);
    /** Appends whose events are still arriving, by correlation id. */
    const pending = new Map<string, { stream: string; expected: Expectation; deadline: number; events: ProposedEvent[] }>();
    let failed = false;
    /** Appends being answered, and whether the client has ended its side: the call ends after the last answer. */
    let answering = 0;
    let clientEnded = false;
    const endWhenAnswered = () => {
      if (clientEnded && answering === 0 && !failed) call.end();
    };
    const fail = (error: StatusError) => {
      if (failed) return;
      failed = true;
      call.emit('error', error);
    };
    call.on('data', (request: BatchAppendReqMessage) => {
      const correlationId = readUuid(request.getCorrelationId());
      let entry = pending.get(correlationId);
      if (!entry) {
        const options = request.getOptions();
        if (!options) return fail(statusError(grpc.status.INVALID_ARGUMENT, 'The first request of an append must carry its options'));
        const deadline = options.hasDeadline21100()
          ? options.getDeadline21100()!.toDate().getTime()
          : options.hasDeadline()
            ? Date.now() + options.getDeadline()!.getSeconds() * 1000 + Math.floor(options.getDeadline()!.getNanos() / 1e6)
            : Number.POSITIVE_INFINITY;
        entry = {
          stream: readStreamName(options.getStreamIdentifier()),
          expected: readExpectation(options, options.hasStreamPosition() ? options.getStreamPosition() : undefined),
          deadline,
          events: [],
        };
        pending.set(correlationId, entry);
      }
      for (const message of request.getProposedMessagesList()) entry.events.push(proposedEvent(message));
      if (!request.getIsFinal()) return;
      pending.delete(correlationId);
      const { stream, expected, deadline, events } = entry;
      answering += 1;
      void (async () => {
        const fault = await meetFault(faults, 'append');
        if (fault?.kind === 'not-ready' || fault?.kind === 'not-leader') return fail(faultError(fault, 'append'));
        let outcome: AppendOutcome | { kind: 'access-denied' } | { kind: 'timeout' };
        if (fault) outcome = { kind: fault.kind };
        else if (Date.now() > deadline) outcome = { kind: 'timeout' };
        else outcome = log.append(stream, events, expected);
        if (!failed && !call.cancelled) call.write(batchResponse(correlationId, stream, expected, outcome));
      })().finally(() => {
        answering -= 1;
        endWhenAnswered();
      });
    });
    call.on('end', () => {
      clientEnded = true;
      endWhenAnswered();
    });
  }

  function removal(kind: 'delete' | 'tombstone') {
    return async (
      call: grpc.ServerUnaryCall<InstanceType<typeof import('./protocol.ts').DeleteReq>, unknown>,
      callback: grpc.sendUnaryData<unknown>,
    ): Promise<void> => {
      const close = calls.opened(kind);
      try {
        const options = call.request.getOptions()!;
        const stream = readStreamName(options.getStreamIdentifier());
        const expected = readExpectation(options, options.hasRevision() ? options.getRevision() : undefined);
        const fault = await meetFault(faults, kind);
        if (fault) return callback(faultError(fault, kind));
        const outcome = kind === 'delete' ? log.delete(stream, expected) : log.tombstone(stream, expected);
        if (outcome.kind === 'wrong-expected-version') return callback(serverErrors.wrongExpectedVersion(stream, expected, outcome.current));
        if (outcome.kind === 'stream-deleted') return callback(serverErrors.streamDeleted(stream));
        const Resp = kind === 'delete' ? DeleteResp : TombstoneResp;
        const position = new Resp.Position();
        position.setCommitPosition(outcome.position.toString());
        position.setPreparePosition(outcome.position.toString());
        const resp = new Resp();
        resp.setPosition(position);
        callback(null, resp);
      } finally {
        close();
      }
    };
  }

  return { read, append, batchAppend, delete: removal('delete'), tombstone: removal('tombstone') } as grpc.UntypedServiceImplementation;
}

/** A BatchAppend response: the outcome of one append, refusals as a google.rpc.Status with the server's details. */
function batchResponse(
  correlationId: string,
  stream: string,
  expected: Expectation,
  outcome: AppendOutcome | { kind: 'access-denied' } | { kind: 'timeout' },
): BatchAppendRespMessage {
  const resp = new BatchAppendResp();
  resp.setCorrelationId(uuidMessage(correlationId, 'string'));
  resp.setStreamIdentifier(streamIdentifier(stream));
  if (expected.kind === 'revision') resp.setStreamPosition(expected.revision.toString());
  else if (expected.kind === 'no_stream') resp.setNoStream(new emptyPb.Empty());
  else if (expected.kind === 'stream_exists') resp.setStreamExists(new emptyPb.Empty());
  else resp.setAny(new emptyPb.Empty());
  if (outcome.kind === 'success') {
    const success = new BatchAppendResp.Success();
    success.setCurrentRevision(outcome.revision.toString());
    const position = new AllStreamPosition();
    position.setCommitPosition(outcome.position.toString());
    position.setPreparePosition(outcome.position.toString());
    success.setPosition(position);
    resp.setSuccess(success);
    return resp;
  }
  const status = new statusPb.Status();
  const details = new anyPb.Any();
  switch (outcome.kind) {
    case 'wrong-expected-version': {
      const wrong = new sharedPb.WrongExpectedVersion();
      if (outcome.current === 'no_stream') wrong.setCurrentNoStream(new emptyPb.Empty());
      else wrong.setCurrentStreamRevision(outcome.current.toString());
      if (expected.kind === 'revision') wrong.setExpectedStreamPosition(expected.revision.toString());
      else if (expected.kind === 'no_stream') wrong.setExpectedNoStream(new emptyPb.Empty());
      else if (expected.kind === 'stream_exists') wrong.setExpectedStreamExists(new emptyPb.Empty());
      else wrong.setExpectedAny(new emptyPb.Empty());
      status.setCode(codePb.Code.FAILED_PRECONDITION);
      status.setMessage('Append failed due to WrongExpectedVersion');
      details.pack(wrong.serializeBinary(), 'event_store.client.WrongExpectedVersion');
      break;
    }
    case 'stream-deleted': {
      const deleted = new sharedPb.StreamDeleted();
      deleted.setStreamIdentifier(streamIdentifier(stream));
      status.setCode(codePb.Code.FAILED_PRECONDITION);
      status.setMessage(`Event stream '${stream}' is deleted.`);
      details.pack(deleted.serializeBinary(), 'event_store.client.StreamDeleted');
      break;
    }
    case 'too-large': {
      const tooLarge = new sharedPb.MaximumAppendSizeExceeded();
      tooLarge.setMaxappendsize(outcome.maxAppendSize);
      status.setCode(codePb.Code.INVALID_ARGUMENT);
      status.setMessage(`Maximum Append Size of ${outcome.maxAppendSize} Exceeded.`);
      details.pack(tooLarge.serializeBinary(), 'event_store.client.MaximumAppendSizeExceeded');
      break;
    }
    case 'access-denied':
      status.setCode(codePb.Code.PERMISSION_DENIED);
      status.setMessage('Access Denied');
      details.pack(new sharedPb.AccessDenied().serializeBinary(), 'event_store.client.AccessDenied');
      break;
    case 'timeout':
      status.setCode(codePb.Code.DEADLINE_EXCEEDED);
      status.setMessage('Operation timed out');
      details.pack(new sharedPb.Timeout().serializeBinary(), 'event_store.client.Timeout');
      break;
  }
  status.setDetails(details);
  resp.setError(status);
  return resp;
}
