import { createReadStream } from 'node:fs';
import fs from 'node:fs/promises';
import { pipeline, Readable } from 'node:stream';
import {
  DeleteObjectCommand,
  GetObjectCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  PutObjectCommand,
  S3Client,
  S3ServiceException,
} from '@aws-sdk/client-s3';
import { assertBlobKey, BlobRangeError, assertByteRange, exactLength, BlobStoreError, BlobStoreUnavailableError, type BlobRead, type BlobSource, type BlobStore, type ByteRange } from './blob-store.ts';

export interface S3BlobStoreSettings {
  bucket: string;
  region: string;
  /** An S3-compatible endpoint (MinIO, R2, ...); unset for AWS. */
  endpoint?: string | undefined;
  /** Path-style addressing (`endpoint/bucket/key`), which MinIO and most S3-compatible stores need. */
  forcePathStyle: boolean;
  /** Unset: the SDK's default chain (environment, shared files, instance role). */
  credentials?: { accessKeyId: string; secretAccessKey: string } | undefined;
}

/**
 * Blobs as objects in one S3 bucket (or an S3-compatible store), object key = blob key. PutObject replaces
 * an object atomically; GetObject streams (with a Range header for byte ranges). Checksums are computed
 * only where S3 requires them, so S3-compatible stores that predate flexible checksums work too.
 */
export class S3BlobStore implements BlobStore {
  readonly kind = 's3';
  readonly #client: S3Client;
  readonly #bucket: string;

  constructor(settings: S3BlobStoreSettings) {
    this.#bucket = settings.bucket;
    this.#client = new S3Client({
      region: settings.region,
      ...(settings.endpoint ? { endpoint: settings.endpoint } : {}),
      forcePathStyle: settings.forcePathStyle,
      ...(settings.credentials ? { credentials: settings.credentials } : {}),
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
      requestHandler: { connectionTimeout: 5_000 },
      maxAttempts: 3,
      // The SDK's default logger is silent except for one console.warn when a streaming put fails, which the
      // put's own error already reports: silent there too.
      logger: { trace() {}, debug() {}, info() {}, warn() {}, error() {} },
    });
  }

  async put(key: string, source: BlobSource, options: { contentType: string }): Promise<void> {
    // The SDK pipes a stream body into the request without watching it: a stream that fails (or yields the
    // wrong number of bytes) aborts the request, so the object is never completed.
    const abort = new AbortController();
    let stream: Readable | undefined;
    try {
      assertBlobKey(key);
      let body: { Body: Readable | Uint8Array; ContentLength: number };
      if ('bytes' in source) body = { Body: source.bytes, ContentLength: source.bytes.byteLength };
      else {
        const size = 'path' in source ? (await fs.stat(source.path)).size : source.size;
        stream = 'path' in source ? createReadStream(source.path) : source.stream;
        const checked = pipeline(stream, exactLength(size, key), (error) => {
          if (error) abort.abort(error);
        });
        body = { Body: checked, ContentLength: size };
      }
      await this.#client.send(new PutObjectCommand({ Bucket: this.#bucket, Key: key, ContentType: options.contentType, ...body }), { abortSignal: abort.signal });
    } catch (error) {
      const streamFailed = abort.signal.aborted;
      if ('stream' in source) source.stream.destroy();
      stream?.destroy();
      if (streamFailed) throw abort.signal.reason as Error;
      throw translate(error, `storing ${key}`);
    }
  }

  async get(key: string, range?: ByteRange): Promise<BlobRead | null> {
    assertBlobKey(key);
    if (range) assertByteRange(range);
    try {
      const response = await this.#client.send(
        new GetObjectCommand({ Bucket: this.#bucket, Key: key, ...(range ? { Range: `bytes=${range.start}-${range.end}` } : {}) }),
      );
      const body = response.Body;
      if (!(body instanceof Readable)) throw new BlobStoreError(`reading ${key}: the S3 client returned no Node stream`);
      const length = response.ContentLength ?? 0;
      const total = /\/(\d+)$/.exec(response.ContentRange ?? '')?.[1];
      return { body, size: total === undefined ? length : Number(total), length };
    } catch (error) {
      if (isMissing(error)) return null;
      if (error instanceof S3ServiceException && error.$metadata.httpStatusCode === 416) {
        throw new BlobRangeError(`byte range ${range?.start}-${range?.end} starts beyond the blob ${key}`);
      }
      throw translate(error, `reading ${key}`);
    }
  }

  async stat(key: string): Promise<{ size: number } | null> {
    assertBlobKey(key);
    try {
      const response = await this.#client.send(new HeadObjectCommand({ Bucket: this.#bucket, Key: key }));
      return { size: response.ContentLength ?? 0 };
    } catch (error) {
      if (isMissing(error)) return null;
      throw translate(error, `reading ${key}`);
    }
  }

  async delete(key: string): Promise<void> {
    assertBlobKey(key);
    try {
      await this.#client.send(new DeleteObjectCommand({ Bucket: this.#bucket, Key: key }));
    } catch (error) {
      if (isMissing(error)) return;
      throw translate(error, `deleting ${key}`);
    }
  }

  async ping(): Promise<void> {
    try {
      await this.#client.send(new HeadBucketCommand({ Bucket: this.#bucket }));
    } catch (error) {
      throw new BlobStoreUnavailableError(`S3 bucket ${this.#bucket} cannot be reached (${describe(error)})`, { cause: error });
    }
  }

  async close(): Promise<void> {
    this.#client.destroy();
  }
}

function isMissing(error: unknown): boolean {
  return error instanceof S3ServiceException && (error.name === 'NoSuchKey' || error.name === 'NotFound' || error.$metadata.httpStatusCode === 404);
}

/** Network trouble, throttling, server errors and refused credentials make the store unavailable; anything else is a bug. */
function translate(error: unknown, doing: string): Error {
  if (error instanceof BlobStoreError) return error;
  const status = error instanceof S3ServiceException ? error.$metadata.httpStatusCode : undefined;
  if (status === undefined || status >= 500 || status === 403 || status === 429 || status === 503) {
    return new BlobStoreUnavailableError(`S3: ${doing} failed (${describe(error)})`, { cause: error });
  }
  return new BlobStoreError(`S3: ${doing} failed (${describe(error)})`, { cause: error });
}

function describe(error: unknown): string {
  if (error instanceof S3ServiceException) return `${error.name}, HTTP ${error.$metadata.httpStatusCode ?? '?'}`;
  return error instanceof Error ? `${(error as NodeJS.ErrnoException).code ?? error.name}: ${error.message}` : String(error);
}
