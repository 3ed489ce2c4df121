import type { EventCatalog } from '../event-store/event-catalog.ts';
import type { EventLog } from '../event-store/event-log.ts';
import type { RecordedEvent } from '../event-store/event-store.ts';
import type { LogFileEvent } from '../event-store/log-file.ts';
import { assetDeleted, assetUploaded } from '../domain/media/media-events.ts';

/** A media asset as its upload event records it: where its bytes live, and what they are. */
export interface LoggedAsset {
  assetId: string;
  projectId: string;
  fileName: string;
  mimeType: string;
  byteSize: number;
  /** Lower-case hex SHA-256 of the bytes, taken when they were uploaded. */
  sha256: string;
  blobKey: string;
}

const TYPES: readonly string[] = [assetUploaded.type, assetDeleted.type];

/**
 * Folds media events into the live assets: every upload not followed by its deletion, in upload order.
 * A deleted asset's bytes are purged (or about to be), so a move does not carry them.
 */
export class LoggedAssetsFold {
  readonly #assets = new Map<string, LoggedAsset>();

  add(event: { type: string; data: unknown }): void {
    if (event.type === assetUploaded.type) {
      const d = assetUploaded.schema.parse(event.data);
      this.#assets.set(d.assetId, { assetId: d.assetId, projectId: d.projectId, fileName: d.fileName, mimeType: d.mimeType, byteSize: d.byteSize, sha256: d.sha256, blobKey: d.blobKey });
    } else if (event.type === assetDeleted.type) {
      this.#assets.delete(assetDeleted.schema.parse(event.data).assetId);
    }
  }

  assets(): LoggedAsset[] {
    return [...this.#assets.values()];
  }
}

/** The live assets of an event log, read with a filter on the two media event types (up to its head when called). */
export async function loggedAssetsOfLog(log: EventLog): Promise<LoggedAsset[]> {
  const fold = new LoggedAssetsFold();
  const subscription = log.subscribeToAll({ after: 'start', filter: { eventTypes: TYPES } });
  try {
    for await (const message of subscription) {
      if (message.kind === 'event') fold.add(message.event);
      else if (message.kind === 'caught-up') break;
    }
  } finally {
    await subscription.stop();
  }
  return fold.assets();
}

/** The live assets of an exported log's events (`annals log export`), upcast by the catalog as the log would be. */
export async function loggedAssetsOfFile(events: AsyncIterable<LogFileEvent>, catalog: EventCatalog): Promise<LoggedAsset[]> {
  const fold = new LoggedAssetsFold();
  for await (const line of events) {
    if (!TYPES.includes(line.type)) continue;
    const recorded: RecordedEvent = { id: line.id, streamId: line.streamId, revision: BigInt(line.revision), position: BigInt(line.position), type: line.type, data: line.data, metadata: line.metadata };
    fold.add(catalog.upcast(recorded));
  }
  return fold.assets();
}
