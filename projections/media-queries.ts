/**
 * What the rest of the service may ask of the media read model (./media.ts), typed: no collection names or casts
 * outside the read-model layer. Every read goes through the ReadModelReader it is given, so reads follow the
 * active generation and its cache as any other. The public media route is hot: build the queries once per route
 * group, never per request.
 */
import type { ReadModelReader } from '../src/read-models/read-model-reader.ts';
import type { Doc, Query } from '../src/read-models/read-model-store.ts';
import type { AssetDoc, FolderDoc } from './media.ts';


/** Listed at most by a project's list of folders. */
export const MAX_FOLDERS_LISTED = 1000;

/** The collections paged by keyset (keysetPage in src/application/keyset-page.ts) or worked through by an outbox. */
export const MEDIA_LISTS = {
  assets: { projection: 'media', collection: 'assets' },
  /** The outbox of blobs to delete (src/media/media-purge.ts). */
  purges: { projection: 'media', collection: 'purges' },
} as const;

export function mediaQueries(reader: ReadModelReader) {
  return {
    /** An asset by id (lower-case); a deleted asset has none. */
    asset: (assetId: string) => reader.get<Doc<AssetDoc>>('media', 'assets', assetId),
    foldersOfProject: (projectId: string) => reader.find<Doc<FolderDoc>>('media', 'folders', { filter: { projectId }, sort: [['folder', 'asc']], limit: MAX_FOLDERS_LISTED }),
    /**
     * A page of every asset (of one project, or of all) in the order of the project index, with only `fields`
     * of each, after the keyset `after` (annals media verify: memory does not grow with the number of assets).
     */
    assetPage: (projectId: string | undefined, fields: readonly string[], limit: number, after: Query['after']) =>
      reader.findWithIds('media', 'assets', {
        ...(projectId ? { filter: { projectId } } : {}),
        sort: [['projectId', 'asc'], ['seq', 'desc']],
        fields,
        limit,
        ...(after ? { after } : {}),
      }),
    /** How many assets there are (of one project, or of all). */
    countAssets: (projectId?: string) => reader.count('media', 'assets', projectId ? { projectId } : undefined),
  };
}

export type MediaQueries = ReturnType<typeof mediaQueries>;
