/**
 * The S3 blob adapter: the port's conformance suite against s3rver (an S3 protocol server the test starts on
 * 127.0.0.1) and against MinIO (test/support/minio-server.ts: MINIO_URL, a container, or MinIO built from Go
 * sources; pending with the reason where none can run), plus failure handling that needs no server.
 */
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { S3BlobStore } from '../../src/blobs/s3-blob-store.ts';
import { BlobStoreUnavailableError } from '../../src/blobs/blob-store.ts';
import { minioServer, minioServerPending, type MinioServer } from '../support/minio-server.ts';
import { blobStoreConformance } from './blob-store.conformance.ts';
import { startS3rver, type LocalS3 } from './s3rver.ts';
import { freePort } from '../support/ports.ts';

const BUCKET = 'annals-media';

let s3rver: LocalS3 | undefined;
blobStoreConformance('S3BlobStore against s3rver (conformance)', {
  setup: async () => {
    s3rver = await startS3rver([BUCKET]);
  },
  teardown: async () => {
    await s3rver?.close();
  },
  create: async () =>
    new S3BlobStore({ bucket: BUCKET, region: 'us-east-1', endpoint: s3rver!.endpoint, forcePathStyle: true, credentials: s3rver!.credentials }),
}, {
  firstByteRange: 's3rver 3.7.1 reads Range bytes=0-0 as bytes=0- (S3 and MinIO answer one byte)',
  atomicConcurrentPuts: 's3rver 3.7.1 writes objects in place, so concurrent puts interleave (S3 and MinIO replace atomically)',
  abortedPuts: 's3rver 3.7.1 keeps the bytes of an upload aborted midway (S3 and MinIO store nothing)',
});

const minioPending = await minioServerPending();
let minio: MinioServer | undefined;
blobStoreConformance(
  'S3BlobStore against MinIO (conformance)',
  minioPending
    ? { pending: minioPending }
    : {
        setup: async () => {
          minio = await minioServer();
        },
        create: async () => {
          const bucket = `annals-test-${randomUUID().slice(0, 8)}`;
          const client = new S3Client({ region: 'us-east-1', endpoint: minio!.endpoint, forcePathStyle: true, credentials: minio!.credentials });
          await client.send(new CreateBucketCommand({ Bucket: bucket }));
          client.destroy();
          return new S3BlobStore({ bucket, region: 'us-east-1', endpoint: minio!.endpoint, forcePathStyle: true, credentials: minio!.credentials });
        },
      },
);

describe('S3BlobStore failures', () => {
  it('ping fails with BlobStoreUnavailableError when nothing listens at the endpoint', async function () {
    this.timeout(30_000);
    const port = await freePort();
    const store = new S3BlobStore({ bucket: BUCKET, region: 'us-east-1', endpoint: `http://127.0.0.1:${port}`, forcePathStyle: true, credentials: { accessKeyId: 'x', secretAccessKey: 'y' } });
    try {
      let error: unknown;
      try {
        await store.ping();
      } catch (e) {
        error = e;
      }
      expect(error).to.be.instanceOf(BlobStoreUnavailableError);
      let readError: unknown;
      try {
        await store.get('p/a');
      } catch (e) {
        readError = e;
      }
      expect(readError).to.be.instanceOf(BlobStoreUnavailableError);
    } finally {
      await store.close();
    }
  });

  it('ping fails with BlobStoreUnavailableError for a bucket that does not exist', async () => {
    const server = await startS3rver([BUCKET]);
    const store = new S3BlobStore({ bucket: 'no-such-bucket', region: 'us-east-1', endpoint: server.endpoint, forcePathStyle: true, credentials: server.credentials });
    try {
      let error: unknown;
      try {
        await store.ping();
      } catch (e) {
        error = e;
      }
      expect(error).to.be.instanceOf(BlobStoreUnavailableError);
      expect((error as Error).message).to.contain('no-such-bucket');
    } finally {
      await store.close();
      await server.close();
    }
  });
});

