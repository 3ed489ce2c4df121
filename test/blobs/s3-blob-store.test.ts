/**
 * The S3 blob adapter: the port's conformance suite against s3rver (an S3 protocol server the test starts on
 * 127.0.0.1) and against MinIO under testcontainers (MINIO_URL for an existing server; pending with the
 * reason where neither exists), plus failure handling that needs no server.
 */
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import type { StartedTestContainer } from 'testcontainers';
import { S3BlobStore } from '../../src/blobs/s3-blob-store.ts';
import { BlobStoreUnavailableError } from '../../src/blobs/blob-store.ts';
import { resolveServerTarget } from '../support/container-runtime.ts';
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
});

const MINIO_CREDENTIALS = { accessKeyId: 'minioadmin', secretAccessKey: 'minioadmin' };
const minioTarget = await resolveServerTarget('MINIO_URL');
let minioEndpoint: string | undefined;
let minio: StartedTestContainer | undefined;
blobStoreConformance(
  'S3BlobStore against MinIO (conformance)',
  minioTarget.kind === 'pending'
    ? { pending: minioTarget.reason }
    : {
        setup: async () => {
          if (minioTarget.kind === 'existing') {
            minioEndpoint = minioTarget.url;
          } else {
            const { GenericContainer, Wait } = await import('testcontainers');
            minio = await new GenericContainer('minio/minio:latest')
              .withCommand(['server', '/data'])
              .withEnvironment({ MINIO_ROOT_USER: MINIO_CREDENTIALS.accessKeyId, MINIO_ROOT_PASSWORD: MINIO_CREDENTIALS.secretAccessKey })
              .withExposedPorts(9000)
              .withWaitStrategy(Wait.forHttp('/minio/health/ready', 9000))
              .withStartupTimeout(120_000)
              .start();
            minioEndpoint = `http://${minio.getHost()}:${minio.getMappedPort(9000)}`;
          }
        },
        teardown: async () => {
          await minio?.stop();
        },
        create: async () => {
          const bucket = `annals-test-${randomUUID().slice(0, 8)}`;
          const client = new S3Client({ region: 'us-east-1', endpoint: minioEndpoint, forcePathStyle: true, credentials: MINIO_CREDENTIALS });
          await client.send(new CreateBucketCommand({ Bucket: bucket }));
          client.destroy();
          return new S3BlobStore({ bucket, region: 'us-east-1', endpoint: minioEndpoint, forcePathStyle: true, credentials: MINIO_CREDENTIALS });
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

