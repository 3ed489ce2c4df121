import type { MediaConfig } from '../config/config.ts';
import type { BlobStore } from './blob-store.ts';
import { LocalFolderBlobStore } from './local-folder-blob-store.ts';

/**
 * The blob store the configuration names: S3 when S3_BUCKET is set, else the folder DATA_DIR/media. The S3
 * adapter is loaded only then: the AWS SDK costs ~0.3 s of CPU to load, which every start of the service and
 * of an operator command paid before, S3 or not.
 */
export async function openBlobStore(config: MediaConfig['blobs']): Promise<BlobStore> {
  if (config.kind === 's3') {
    const { S3BlobStore } = await import('./s3-blob-store.ts');
    return new S3BlobStore({
      bucket: config.bucket,
      region: config.region,
      endpoint: config.endpoint,
      forcePathStyle: config.forcePathStyle,
      credentials: config.credentials,
    });
  }
  return new LocalFolderBlobStore(config.dir);
}
