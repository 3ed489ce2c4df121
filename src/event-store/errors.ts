import type { ExpectedRevision } from './expected-revision.ts';

/** Base class of every error the event store port raises. */
export class EventStoreError extends Error {
  override name = 'EventStoreError';
}

/** The stream's revision did not match the append's expectation. Same class on every adapter. */
export class WrongExpectedVersionError extends EventStoreError {
  override name = 'WrongExpectedVersionError';
  constructor(
    readonly streamId: string,
    readonly expected: ExpectedRevision,
    /** The stream's actual last revision, or 'no_stream'. */
    readonly actual: bigint | 'no_stream' | 'unknown',
  ) {
    super(`Wrong expected revision on stream "${streamId}": expected ${String(expected)}, actual ${String(actual)}`);
  }
}

export class StreamNotFoundError extends EventStoreError {
  override name = 'StreamNotFoundError';
  constructor(readonly streamId: string) {
    super(`Stream "${streamId}" not found`);
  }
}

/** The node contacted is not the cluster leader and the operation requires it. */
export class NotLeaderError extends EventStoreError {
  override name = 'NotLeaderError';
  constructor(message = 'The event store node is not the leader', readonly leader?: { host: string; port: number }) {
    super(message);
  }
}

/** The store cannot be reached or failed in a way that may succeed on retry. */
export class UnavailableError extends EventStoreError {
  override name = 'UnavailableError';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

/**
 * An event the store holds but cannot read back (the embedded log: its frame is damaged, or needs a zstd
 * dictionary this version does not have). Names the event, so that a reader can report it and read on after
 * `position`.
 */
export class UnreadableEventError extends EventStoreError {
  override name = 'UnreadableEventError';
  constructor(
    readonly position: bigint,
    readonly streamId: string,
    readonly revision: bigint,
    readonly eventId: string,
    readonly type: string,
    readonly reason: string,
    options?: { cause?: unknown },
  ) {
    super(`the event at position ${position} (${streamId}, revision ${revision}, id ${eventId}) cannot be read: ${reason}`, options);
  }
}

/** The event is malformed for the store (not a UUID id, unserialisable data, ...). */
export class InvalidEventError extends EventStoreError {
  override name = 'InvalidEventError';
}

/**
 * One append is larger than the store takes (MAX_APPEND_BYTES: its events' data and metadata, as stored).
 * Refused before anything is written, on every adapter.
 */
export class EventTooLargeError extends InvalidEventError {
  override name = 'EventTooLargeError';
  constructor(
    readonly streamId: string,
    /** The append's size as measured; null when the server refused it without saying. */
    readonly bytes: number | null,
    readonly limitBytes: number,
  ) {
    super(
      bytes === null
        ? `The append to stream "${streamId}" is over the store's limit of ${limitBytes} bytes per append`
        : `The append to stream "${streamId}" takes ${bytes} bytes of event data and metadata; the limit is ${limitBytes} bytes per append`,
    );
  }
}
