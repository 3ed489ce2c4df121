import type { Logger } from 'pino';
import type { EventLog } from '../event-store/event-log.ts';
import type { ReadModelReader } from '../read-models/read-model-reader.ts';
import { OutboxWorker, type OutboxDefinition, type OutboxObserver, type OutboxWorkerOptions } from '../outbox/outbox-worker.ts';
import { BlobStoreUnavailableError, type BlobStore } from '../blobs/blob-store.ts';
import { blobsPurged } from '../domain/media/media-events.ts';
import { MEDIA_LISTS } from '../../projections/media-queries.ts';
import type { PurgeDoc } from '../../projections/media.ts';

type PurgeItem = PurgeDoc & Record<string, unknown>;

/**
 * Deleting an asset removes its bytes too: media.asset-deleted puts a pending item in the media
 * projection's `purges` collection, and this outbox deletes the item's blobs (the original and the WebP
 * variant) and records media.blobs-purged. A store that is briefly unreachable leaves the item pending for a
 * later try; any other failure is recorded (status failed, with the error) and not retried. Deleting a blob
 * that is already gone succeeds, so performing an item twice (a crash before its completion) is harmless.
 */
export function mediaPurgeOutbox(blobs: BlobStore): OutboxDefinition<PurgeItem, { deleted: number }> {
  return {
    name: 'media-purge',
    ...MEDIA_LISTS.purges,
    idOf: (item) => item.assetId,
    order: [['deletedAt', 'asc']],
    async perform(item) {
      for (const key of item.blobKeys) await blobs.delete(key);
      return { deleted: item.blobKeys.length };
    },
    completion: (item, result) => ({
      type: blobsPurged.type,
      data: { projectId: item.projectId, assetId: item.assetId, ok: result.ok, ...(result.ok ? {} : { error: result.error.slice(0, 2000) }) },
    }),
    retryLater: (error) => error instanceof BlobStoreUnavailableError,
  };
}

export function startMediaPurge(deps: { blobs: BlobStore; log: EventLog; reader: ReadModelReader; logger: Logger; pollIntervalMs?: number; observer?: OutboxObserver; commits?: OutboxWorkerOptions['commits'] }): OutboxWorker<PurgeItem, { deleted: number }> {
  const worker = new OutboxWorker(mediaPurgeOutbox(deps.blobs), {
    log: deps.log,
    reader: deps.reader,
    logger: deps.logger,
    concurrency: 4,
    pollIntervalMs: deps.pollIntervalMs ?? 1000,
    ...(deps.observer ? { observer: deps.observer } : {}),
    ...(deps.commits ? { commits: deps.commits } : {}),
  });
  worker.start();
  return worker;
}
