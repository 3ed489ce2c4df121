/**
 * Maps what @kurrent/kurrentdb-client 1.x throws (its CommandError classes, raw gRPC ServiceErrors, errors of
 * its native read bridge, Node socket errors, the client's own plain Errors) to the event store port's errors
 * (./errors.ts).
 *
 * The client's error classes are recognised by their `type` tag (ErrorType) rather than by `instanceof`, so
 * that an error from a second copy of the client package is still recognised. The fields read from each are
 * listed in ESDB_ERROR_FIELDS and read only through it: a test builds every listed error with the installed
 * client and fails when a field is missing (a client upgrade renamed it), instead of the mapping quietly
 * reading `undefined`.
 */
import { ErrorType } from '@kurrent/kurrentdb-client';
import {
  EventStoreError,
  EventTooLargeError,
  NotLeaderError,
  StreamNotFoundError,
  UnavailableError,
  WrongExpectedVersionError,
} from './errors.ts';
import type { ExpectedRevision } from './event-store.ts';

/** gRPC status codes (https://grpc.github.io/grpc/core/md_doc_statuscodes.html) the mapping looks at. */
export const GrpcStatus = {
  CANCELLED: 1,
  UNKNOWN: 2,
  INVALID_ARGUMENT: 3,
  DEADLINE_EXCEEDED: 4,
  NOT_FOUND: 5,
  PERMISSION_DENIED: 7,
  RESOURCE_EXHAUSTED: 8,
  FAILED_PRECONDITION: 9,
  ABORTED: 10,
  INTERNAL: 13,
  UNAVAILABLE: 14,
  UNAUTHENTICATED: 16,
} as const;

/** What the adapter was doing when the error happened: decides how ambiguous server answers are read. */
export interface EsdbErrorContext {
  operation?: 'append' | 'read' | 'delete' | 'subscribe' | 'ping' | 'other';
  streamId?: string;
  /** The port expectation the caller passed (append, delete). */
  expected?: ExpectedRevision;
}

/** Socket-level failures: the server is down, unreachable, or went away mid-call. */
const NETWORK_ERROR_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENETDOWN',
]);

const TRANSIENT_GRPC_CODES = new Set<number>([
  GrpcStatus.CANCELLED, // a server-side cancellation; a client-side one never reaches the mapping
  GrpcStatus.DEADLINE_EXCEEDED,
  GrpcStatus.RESOURCE_EXHAUSTED,
  GrpcStatus.ABORTED, // EventStoreDB answers timeouts with ABORTED
  GrpcStatus.UNAVAILABLE,
]);

type Tagged = Error & {
  type?: unknown;
  code?: unknown;
  details?: unknown;
};

/** The fields of the client's errors that the mapping reads, by error type. */
export const ESDB_ERROR_FIELDS = {
  [ErrorType.WRONG_EXPECTED_VERSION]: ['streamName', 'expectedState', 'actualState'],
  [ErrorType.NOT_LEADER]: ['leader'],
  [ErrorType.MAXIMUM_APPEND_SIZE_EXCEEDED]: ['maxAppendSize'],
  [ErrorType.APPEND_RECORD_SIZE_EXCEEDED]: ['stream', 'size', 'maxSize'],
  [ErrorType.STREAM_NOT_FOUND]: ['streamName'],
} as const;

type FieldsOf<T extends keyof typeof ESDB_ERROR_FIELDS> = (typeof ESDB_ERROR_FIELDS)[T][number];

/** A field of a client error, read only if listed in ESDB_ERROR_FIELDS for its type. */
function field<T extends keyof typeof ESDB_ERROR_FIELDS>(error: Tagged, _type: T, name: FieldsOf<T>): unknown {
  return (error as unknown as Record<string, unknown>)[name];
}

function messageOf(error: unknown): string {
  if (error instanceof Error && error.message) return error.message;
  if (typeof error === 'object' && error !== null && 'details' in error && typeof error.details === 'string') {
    return error.details;
  }
  return String(error);
}

/** The client reports "no stream" as the string 'no_stream' or, on some paths, as a negative revision. */
function actualRevision(value: unknown): bigint | 'no_stream' | 'unknown' {
  if (value === 'no_stream') return 'no_stream';
  if (typeof value === 'bigint') return value < 0n ? 'no_stream' : value;
  if (typeof value === 'number' && Number.isInteger(value)) return value < 0 ? 'no_stream' : BigInt(value);
  if (typeof value === 'string' && /^-?\d+$/.test(value)) {
    const parsed = BigInt(value);
    return parsed < 0n ? 'no_stream' : parsed;
  }
  return 'unknown';
}

function expectedRevision(value: unknown): ExpectedRevision {
  if (value === 'any' || value === 'no_stream' || value === 'stream_exists') return value;
  if (typeof value === 'bigint') return value < 0n ? 'no_stream' : value;
  return 'any';
}

function streamNameOf(context: EsdbErrorContext, fromError: unknown): string {
  if (context.streamId !== undefined) return context.streamId;
  return typeof fromError === 'string' ? fromError : '';
}

/** True when `error` means the store could not be reached or the call may succeed when retried. */
export function isTransientEsdbError(error: unknown): boolean {
  if (error instanceof UnavailableError || error instanceof NotLeaderError) return true;
  if (error instanceof EventStoreError) return false;
  const mapped = mapEsdbError(error);
  return mapped instanceof UnavailableError || mapped instanceof NotLeaderError;
}

/**
 * True when the server refused a read or subscription because its start position is not the start of a record
 * in its log (gRPC INVALID_ARGUMENT "Trying to read from an invalid position."). Positions the store handed out
 * are always valid; an arbitrary bigint (say, one less than a real position) usually is not.
 */
export function isInvalidPositionError(error: unknown): boolean {
  for (let current: unknown = error, depth = 0; current && depth < 5; depth++) {
    if (typeof current !== 'object') return false;
    const tagged = current as Tagged;
    const text = `${typeof tagged.details === 'string' ? tagged.details : ''} ${tagged.message ?? ''}`;
    // gRPC errors carry the status; the client's native read bridge only the server's message.
    if (/invalid position/i.test(text) && (tagged.code === GrpcStatus.INVALID_ARGUMENT || tagged.code === undefined || /INVALID_ARGUMENT/.test(text))) {
      return true;
    }
    current = (current as { cause?: unknown }).cause;
  }
  return false;
}

const PERMANENT_TYPES = new Set<unknown>([ErrorType.ACCESS_DENIED, ErrorType.INVALID_ARGUMENT, ErrorType.UNSUPPORTED]);

/**
 * True when retrying cannot help: access denied, an argument the server rejects, a feature the server lacks.
 * Subscriptions resubscribe after any other failure.
 */
export function isPermanentEsdbError(error: unknown): boolean {
  for (let current: unknown = error, depth = 0; current && depth < 5; depth++) {
    if (typeof current !== 'object') return false;
    const tagged = current as Tagged;
    if (PERMANENT_TYPES.has(tagged.type)) return true;
    if (tagged.code === GrpcStatus.PERMISSION_DENIED || tagged.code === GrpcStatus.UNAUTHENTICATED) return true;
    current = (current as { cause?: unknown }).cause;
  }
  return false;
}

/**
 * Turns anything the client threw into the port's error. Errors that already are port errors pass through.
 * Unrecognised errors become a plain EventStoreError whose `cause` is the original.
 */
export function mapEsdbError(error: unknown, context: EsdbErrorContext = {}): Error {
  if (error instanceof EventStoreError) return error;
  if (typeof error !== 'object' || error === null) {
    return new EventStoreError(`KurrentDB error: ${String(error)}`, { cause: error });
  }
  const e = error as Tagged;
  const message = messageOf(error);

  switch (e.type) {
    case ErrorType.WRONG_EXPECTED_VERSION: {
      const type = ErrorType.WRONG_EXPECTED_VERSION;
      return new WrongExpectedVersionError(
        streamNameOf(context, field(e, type, 'streamName')),
        context.expected ?? expectedRevision(field(e, type, 'expectedState')),
        actualRevision(field(e, type, 'actualState')),
      );
    }
    case ErrorType.STREAM_NOT_FOUND:
      return new StreamNotFoundError(streamNameOf(context, field(e, ErrorType.STREAM_NOT_FOUND, 'streamName')));
    case ErrorType.NO_STREAM:
      return new StreamNotFoundError(streamNameOf(context, undefined));
    case ErrorType.STREAM_DELETED:
      // Soft-deleted streams read as "not found"; only a tombstoned (hard-deleted) stream, which this adapter
      // never creates, answers reads with StreamDeleted. On append, EventStoreDB answers "stream exists" on a
      // soft-deleted stream with StreamDeleted: in the port's terms the stream has no events, so that is a
      // wrong expectation with actual "no stream".
      if (context.operation === 'append' || context.operation === 'delete') {
        if (context.expected === 'stream_exists') {
          return new WrongExpectedVersionError(streamNameOf(context, undefined), 'stream_exists', 'no_stream');
        }
        return new EventStoreError(`Stream "${streamNameOf(context, undefined)}" was permanently deleted (tombstoned)`, {
          cause: error,
        });
      }
      return new StreamNotFoundError(streamNameOf(context, undefined));
    case ErrorType.STREAM_TOMBSTONED:
      return new EventStoreError(`Stream "${streamNameOf(context, undefined)}" was permanently deleted (tombstoned)`, { cause: error });
    case ErrorType.NOT_LEADER: {
      const leaderField = field(e, ErrorType.NOT_LEADER, 'leader') as { address?: unknown; port?: unknown } | undefined;
      const host = leaderField?.address;
      const port = leaderField?.port;
      const leader =
        typeof host === 'string' && typeof port === 'number' && Number.isFinite(port) ? { host, port } : undefined;
      return new NotLeaderError(
        leader ? `The event store node is not the leader (leader: ${leader.host}:${leader.port})` : undefined,
        leader,
      );
    }
    case ErrorType.UNAVAILABLE:
    case ErrorType.DEADLINE_EXCEEDED:
    case ErrorType.TIMEOUT:
    case ErrorType.CANCELLED:
      return new UnavailableError(`KurrentDB unavailable: ${message}`, { cause: error });
    case ErrorType.MAXIMUM_APPEND_SIZE_EXCEEDED: {
      // The server's MaxAppendSize is configured below the port's own limit.
      const limit = Number(field(e, ErrorType.MAXIMUM_APPEND_SIZE_EXCEEDED, 'maxAppendSize'));
      return Object.assign(new EventTooLargeError(streamNameOf(context, undefined), null, Number.isFinite(limit) ? limit : 0), { cause: error });
    }
    case ErrorType.APPEND_RECORD_SIZE_EXCEEDED: {
      const type = ErrorType.APPEND_RECORD_SIZE_EXCEEDED;
      const size = Number(field(e, type, 'size'));
      const limit = Number(field(e, type, 'maxSize'));
      return Object.assign(
        new EventTooLargeError(streamNameOf(context, field(e, type, 'stream')), Number.isFinite(size) ? size : null, Number.isFinite(limit) ? limit : 0),
        { cause: error },
      );
    }
    case ErrorType.ACCESS_DENIED:
      return new EventStoreError(`KurrentDB denied access: ${message}`, { cause: error });
    case ErrorType.UNKNOWN:
      // The client wraps anything it does not recognise, connection failures included, as UnknownError; the
      // gRPC code, when present, still tells a transient failure apart.
      break;
    default:
      break;
  }

  if (typeof e.code === 'number' && TRANSIENT_GRPC_CODES.has(e.code)) {
    return new UnavailableError(`KurrentDB unavailable: ${message}`, { cause: error });
  }
  if (typeof e.code === 'string' && NETWORK_ERROR_CODES.has(e.code)) {
    return new UnavailableError(`KurrentDB unreachable: ${message}`, { cause: error });
  }
  // The client's discovery gives up with a plain Error; grpc-js reports a refused channel in the message.
  if (/Failed to discover after \d+ attempts|ECONNREFUSED|No connection established|connect ETIMEDOUT/i.test(message)) {
    return new UnavailableError(`KurrentDB unreachable: ${message}`, { cause: error });
  }
  return new EventStoreError(`KurrentDB error: ${message}`, { cause: error });
}
