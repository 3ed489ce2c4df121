import { createHash } from 'node:crypto';
import { Transform } from 'node:stream';
import type { BlobStore } from '../blobs/blob-store.ts';

/** What a blob store holds under a key: its size and the lower-case hex SHA-256 of its bytes. */
export interface StoredDigest {
  size: number;
  sha256: string;
}

/**
 * Reads the blob under `key` through and hashes it; null when the key holds nothing. Streams: memory does not
 * grow with the blob. `onBytes` is told of each chunk's length (progress).
 */
export async function blobDigest(store: BlobStore, key: string, onBytes?: (bytes: number) => void): Promise<StoredDigest | null> {
  const read = await store.get(key);
  if (!read) return null;
  const hash = createHash('sha256');
  let size = 0;
  for await (const chunk of read.body) {
    const bytes = chunk as Buffer;
    hash.update(bytes);
    size += bytes.length;
    onBytes?.(bytes.length);
  }
  return { size, sha256: hash.digest('hex') };
}

/** The bytes that went through a digest gate are not the ones the log records. */
export class DigestMismatchError extends Error {
  override name = 'DigestMismatchError';
  constructor(
    readonly expected: string,
    readonly actual: string,
  ) {
    super(`the bytes have SHA-256 ${actual}; the log records ${expected}`);
  }
}

/**
 * Passes bytes through while hashing them, holding back the last chunk until the end: it is released only
 * if the whole stream's SHA-256 is `expected`, else the stream fails with DigestMismatchError. A store
 * writing what comes out (which stores a stream only once it has every byte of its size) therefore never
 * completes a blob whose bytes differ from the record, not even for an instant.
 */
export function digestGate(expected: string, onBytes?: (bytes: number) => void): Transform {
  const hash = createHash('sha256');
  let held: Buffer | undefined;
  return new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      hash.update(chunk);
      onBytes?.(chunk.length);
      const release = held;
      held = chunk;
      callback(null, release);
    },
    flush(callback) {
      const actual = hash.digest('hex');
      if (actual !== expected) callback(new DigestMismatchError(expected, actual));
      else callback(null, held);
    },
  });
}
