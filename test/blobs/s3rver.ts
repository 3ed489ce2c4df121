import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { tempDir } from '../support/temp-dir.ts';

/** s3rver 3.7.1 (no type declarations) on 127.0.0.1, a real S3 protocol peer for tests. */
export interface LocalS3 {
  endpoint: string;
  /** Credentials s3rver accepts (it checks signatures made with them). */
  credentials: { accessKeyId: string; secretAccessKey: string };
  close(): Promise<void>;
}

export async function startS3rver(buckets: readonly string[]): Promise<LocalS3> {
  // @ts-expect-error s3rver ships no types
  const { default: S3rver } = await import('s3rver');
  const server = new S3rver({
    address: '127.0.0.1',
    port: 0,
    silent: true,
    directory: path.join(tempDir('annals-s3rver-'), 'buckets'),
    configureBuckets: buckets.map((name) => ({ name })),
  });
  const address = (await server.run()) as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${address.port}`,
    credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
    close: () => server.close() as Promise<void>,
  };
}
