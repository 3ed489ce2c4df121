import type { Asset, UploadSource } from '../src/domain/media/asset-decider.ts';
import { mediaEvents, type MediaEvent } from '../src/domain/media/media-events.ts';
import { mediaKindOf, type MediaKind } from '../src/domain/media/media-kind.ts';
import { defineProjection, type ProjectionView } from '../src/projection-engine/projection.ts';
import type { Doc } from '../src/read-models/read-model-store.ts';

/**
 * Media assets as the admin list, the MCP tools and GET /media/{assetId} read them, and the purge work
 * list of deleted assets' bytes.
 *
 * Collections:
 * - `assets`, id assetId: every live asset; a deleted asset's document is removed, so the public route and
 *   the admin API answer 404 for it at once;
 * - `purges`, id assetId: one item per deleted asset, `status` pending until the media purge outbox
 *   (src/media/media-purge.ts) has removed its blobs, then done or failed (with the error);
 * - `folders`, id `${projectId}:${folder}`: each folder of a project's media library that holds assets, with
 *   how many (a folder is there while something is in it); the top ('') is not listed.
 */
export interface AssetDoc extends Asset {
  /** The top-level type (image, application, ...), for MIME prefix filters. */
  mimeTop: string;
  kind: MediaKind;
  source: UploadSource;
  uploadedBy: { type: string; id: string };
  uploadedAt: string;
  /** The upload's global log position, zero-padded to 20 digits: the list's newest-first order. */
  seq: string;
  updatedAt: string;
}

export interface FolderDoc {
  projectId: string;
  folder: string;
  assets: number;
}

export interface PurgeDoc {
  assetId: string;
  projectId: string;
  blobKeys: string[];
  status: 'pending' | 'done' | 'failed';
  error: string | null;
  deletedAt: string;
  finishedAt: string | null;
}


export const media = defineProjection({
  name: 'media',
  // 2: folders and focal points (documents folded before have no folder field to filter on).
  version: 2,
  description: 'Media assets (admin list, public serving), the library\'s folders, and the purge work list of deleted assets.',
  collections: {
    assets: {
      indexes: [
        { name: 'by_project', fields: [['projectId', 1], ['seq', -1]] },
        { name: 'by_project_kind', fields: [['projectId', 1], ['kind', 1], ['seq', -1]] },
        { name: 'by_project_mime', fields: [['projectId', 1], ['mimeTop', 1], ['seq', -1]] },
        { name: 'by_project_folder', fields: [['projectId', 1], ['folder', 1], ['seq', -1]] },
      ],
    },
    folders: {
      indexes: [{ name: 'by_project', fields: [['projectId', 1], ['folder', 1]] }],
    },
    purges: {
      indexes: [{ name: 'by_status', fields: [['status', 1]] }],
    },
  },
  filter: { eventTypes: mediaEvents.map((definition) => definition.type) },

  async apply(recorded, view) {
    const event = { type: recorded.type, data: recorded.data } as MediaEvent;
    switch (event.type) {
      case 'media.asset-uploaded': {
        const { uploadedAt, ...d } = event.data;
        const doc: AssetDoc = {
          assetId: d.assetId,
          projectId: d.projectId,
          fileName: d.fileName,
          mimeType: d.mimeType,
          mimeTop: d.mimeType.split('/', 1)[0]!.toLowerCase(),
          kind: mediaKindOf(d.mimeType),
          byteSize: d.byteSize,
          sha256: d.sha256,
          width: d.width,
          height: d.height,
          animated: d.animated,
          altText: d.altText,
          caption: d.caption,
          blobKey: d.blobKey,
          folder: '',
          focalPoint: null,
          source: d.source,
          uploadedBy: { type: recorded.metadata.actor.type, id: recorded.metadata.actor.id },
          uploadedAt,
          seq: recorded.position.toString().padStart(20, '0'),
          updatedAt: uploadedAt,
        };
        view.put('assets', doc.assetId, { ...doc });
        return;
      }
      case 'media.asset-details-changed': {
        const asset = await view.get<Doc<AssetDoc>>('assets', event.data.assetId);
        if (asset) view.put('assets', asset.assetId, { ...asset, altText: event.data.altText, caption: event.data.caption, updatedAt: event.data.changedAt });
        return;
      }
      case 'media.asset-filed': {
        const asset = await view.get<Doc<AssetDoc>>('assets', event.data.assetId);
        if (!asset || asset.folder === event.data.folder) return;
        await countIn(view, asset.projectId, asset.folder, -1);
        await countIn(view, asset.projectId, event.data.folder, 1);
        view.put('assets', asset.assetId, { ...asset, folder: event.data.folder, updatedAt: event.data.changedAt });
        return;
      }
      case 'media.focal-point-set': {
        const asset = await view.get<Doc<AssetDoc>>('assets', event.data.assetId);
        if (asset) view.put('assets', asset.assetId, { ...asset, focalPoint: event.data.focalPoint, updatedAt: event.data.changedAt });
        return;
      }
      case 'media.asset-deleted': {
        const { assetId, projectId, blobKeys, deletedAt } = event.data;
        const gone = await view.get<Doc<AssetDoc>>('assets', assetId);
        if (gone) await countIn(view, gone.projectId, gone.folder, -1);
        view.delete('assets', assetId);
        const existing = await view.get<Doc<PurgeDoc>>('purges', assetId);
        if (existing) return;
        const purge: PurgeDoc = { assetId, projectId, blobKeys, status: 'pending', error: null, deletedAt, finishedAt: null };
        view.put('purges', assetId, { ...purge });
        return;
      }
      case 'media.blobs-purged': {
        const purge = await view.get<Doc<PurgeDoc>>('purges', event.data.assetId);
        if (!purge) return;
        view.put('purges', purge.assetId, {
          ...purge,
          status: event.data.ok ? 'done' : 'failed',
          error: event.data.ok ? null : (event.data.error ?? 'unknown error'),
          finishedAt: recorded.metadata.occurredAt,
        });
        return;
      }
    }
  },
});

/** Counts an asset into or out of a folder (the top is not counted); a folder left empty goes. */
async function countIn(view: ProjectionView, projectId: string, folder: string, by: 1 | -1): Promise<void> {
  if (folder === '') return;
  const id = `${projectId}:${folder}`;
  const current = await view.get<Doc<FolderDoc>>('folders', id);
  const assets = (current?.assets ?? 0) + by;
  if (assets <= 0) view.delete('folders', id);
  else view.put('folders', id, { projectId, folder, assets } satisfies FolderDoc);
}
