import type { MediaConfig } from '../config/config.ts';
import type { BlobStore } from './blob-store.ts';
import { LocalFolderBlobStore } from './local-folder-blob-store.ts';
import { S3BlobStore } from './s3-blob-store.ts';

/** The blob store the configuration names: S3 when S3_BUCKET is set, else the folder DATA_DIR/media. */
export function openBlobStore(config: MediaConfig['blobs']): BlobStore {
  if (config.kind === 's3') {
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
