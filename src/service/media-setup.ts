import type { Config } from '../config/config.ts';
import type { BlobStore } from '../blobs/blob-store.ts';
import type { AdminDeps } from '../http/admin/admin-context.ts';
import type { MediaAdminDeps } from '../http/admin/media-routes.ts';
import type { PublicMediaDeps } from '../http/public/media-routes.ts';
import { Idempotency } from '../application/idempotency.ts';
import { outboundPolicy } from '../security/ssrf-guard.ts';
import { MediaService } from '../media/media-service.ts';
import { removeUploadTempDir, uploadTempDir } from '../media/received-file.ts';
import { WebpVariants } from '../media/webp-variants.ts';

/**
 * The media collaborators of an API process: the admin routes' and the public route's. `close` removes the
 * process's temporary upload folder (call it once the HTTP server has stopped).
 */
export async function mediaFor(
  config: Config,
  admin: AdminDeps,
  blobs: BlobStore,
): Promise<{ service: MediaService; admin: MediaAdminDeps; public: PublicMediaDeps; close(): Promise<void> }> {
  const tempDir = await uploadTempDir();
  const service = new MediaService({ log: admin.log, reader: admin.reader, blobs, idempotency: new Idempotency(admin.log, { clock: admin.clock }), watermark: admin.watermark, clock: admin.clock });
  return {
    service,
    admin: { service, maxBytes: config.media.maxBytes, sourceTimeoutMs: config.media.sourceTimeoutMs, outbound: outboundPolicy(config.outboundAllowlist), tempDir },
    public: { reader: admin.reader, blobs, variants: new WebpVariants({ blobs, tempDir, logger: admin.logger }), logger: admin.logger },
    close: () => removeUploadTempDir(tempDir),
  };
}
