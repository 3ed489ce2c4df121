import { Transform, type Readable } from 'node:stream';

/**
 * The blob port: where media bytes live. Every adapter (a local folder, S3) implements it and passes
 * test/blobs/blob-store.conformance.ts.
 *
 * Keys are relative slash-separated names of safe characters (`<projectId>/<assetId>`); adapters refuse
 * anything else, so a key can never name a file outside the store. Writes replace a key atomically:
 * a reader sees the old bytes or the new ones, never part of either. Reads stream: no adapter holds a
 * whole blob in memory.
 */
export interface BlobStore {
  /** Which adapter, for logs and readiness ('local-folder', 's3'). */
  readonly kind: string;
  /**
   * Stores the bytes under `key`, replacing what was there. From a stream, the blob is stored only if the
   * stream ends after exactly `size` bytes: a stream that fails, or yields fewer or more bytes, stores
   * nothing (the key keeps what it held) and the put rejects.
   */
  put(key: string, source: BlobSource, options: { contentType: string }): Promise<void>;
  /**
   * Opens the blob for reading, the whole of it or the inclusive byte range `[start, end]` (which the caller
   * has checked against the size; one starting at or beyond the stored blob's end is refused with
   * BlobRangeError). Null when the key holds nothing. The caller consumes or destroys `body`.
   */
  get(key: string, range?: ByteRange): Promise<BlobRead | null>;
  /** The blob's size in bytes, or null when the key holds nothing. */
  stat(key: string): Promise<{ size: number } | null>;
  /** Removes the blob; removing a key that holds nothing is not an error. */
  delete(key: string): Promise<void>;
  /** Throws BlobStoreUnavailableError when the store cannot be reached. */
  ping(): Promise<void>;
  close(): Promise<void>;
}

/**
 * A file on local disk (streamed), bytes already in memory (small: WebP variants, tests), or a stream of a
 * known size (a copy from another store, never held whole in memory).
 */
export type BlobSource = { path: string } | { bytes: Uint8Array } | { stream: Readable; size: number };

/** Inclusive byte offsets, as in HTTP's Range header. */
export interface ByteRange {
  start: number;
  end: number;
}

export interface BlobRead {
  body: Readable;
  /** Size of the whole blob. */
  size: number;
  /** Bytes `body` yields: `size`, or the range's length. */
  length: number;
}

export class BlobStoreError extends Error {
  override name = 'BlobStoreError';
}

/** A byte range that starts at or beyond the blob's end. */
export class BlobRangeError extends BlobStoreError {
  override name = 'BlobRangeError';
}

/** The store could not be reached (network, permissions, missing bucket). */
export class BlobStoreUnavailableError extends BlobStoreError {
  override name = 'BlobStoreUnavailableError';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

const SEGMENT = /^[A-Za-z0-9][A-Za-z0-9._-]{0,199}$/;

/** Throws BlobStoreError unless `key` is 1 to 8 segments of [A-Za-z0-9._-], each starting alphanumeric. */
export function assertBlobKey(key: string): void {
  const segments = key.split('/');
  if (key.length > 1024 || segments.length > 8 || !segments.every((segment) => SEGMENT.test(segment))) {
    throw new BlobStoreError(`invalid blob key ${JSON.stringify(key)}: use slash-separated segments of [A-Za-z0-9._-] starting with a letter or digit`);
  }
}

/** Throws BlobStoreError unless the range is whole numbers with 0 <= start <= end. */
export function assertByteRange(range: ByteRange): void {
  if (!Number.isSafeInteger(range.start) || !Number.isSafeInteger(range.end) || range.start < 0 || range.end < range.start) {
    throw new BlobStoreError(`invalid byte range ${range.start}-${range.end}`);
  }
}

/**
 * Passes `size` bytes through and fails (BlobStoreError) when the stream yields more, or ends with fewer: an
 * adapter writing a stream source stores nothing then.
 */
export function exactLength(size: number, key: string): Transform {
  let seen = 0;
  return new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      seen += chunk.length;
      if (seen > size) callback(new BlobStoreError(`storing ${key}: the stream yielded more than its ${size} bytes`));
      else callback(null, chunk);
    },
    flush(callback) {
      callback(seen === size ? null : new BlobStoreError(`storing ${key}: the stream ended after ${seen} of its ${size} bytes`));
    },
  });
}
