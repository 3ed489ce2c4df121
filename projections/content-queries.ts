/**
 * What the rest of the service may ask of the content read model (./content.ts), typed: no collection names or
 * casts outside the read-model layer. Every read goes through the ReadModelReader it is given, so reads follow
 * the active generation and its cache as any other.
 */
import type { ReadModelReader } from '../src/read-models/read-model-reader.ts';
import type { EntryDoc, FormSetDoc, MasterDoc, RevisionDoc, StoredRevisionDoc } from './content.ts';
import type { Doc } from '../src/read-models/read-model-store.ts';
import { EventNotInLogError, type LogByPosition } from '../src/event-store/event-store.ts';
import { decodePosition } from '../src/event-store/position.ts';
import { savedSnapshot } from '../src/domain/content/entry/entry-events.ts';


/** Listed at most by a project's lists of form sets and of masters. */
export const CONTENT_LIST_LIMIT = 1000;
/** Read at most when every name of a project is checked for clashes (a blueprint's form set slugs and master keys). */
const ALL_NAMES_LIMIT = 10_000;

/** The collections the admin API pages by keyset (keysetPage, pinnedPage in src/application/keyset-page.ts). */
export const CONTENT_LISTS = {
  entries: { projection: 'content', collection: 'entries' },
  revisions: { projection: 'content', collection: 'revisions' },
} as const;

/**
 * `log`: where a revision's snapshot is read (the read model keeps the position of the save that carried it,
 * StoredRevisionDoc.snapshotAt).
 */
export function contentQueries(reader: ReadModelReader, log: LogByPosition) {
  return {
    formSet: (formSetId: string) => reader.get<Doc<FormSetDoc>>('content', 'form_sets', formSetId),
    formSetsOfProject: (projectId: string) => reader.find<Doc<FormSetDoc>>('content', 'form_sets', { filter: { projectId }, sort: [['slug', 'asc']], limit: CONTENT_LIST_LIMIT }),
    /** Every form set of the project, unordered (up to 10,000): the slugs a new one could clash with. */
    allFormSetsOfProject: (projectId: string) => reader.find<Doc<FormSetDoc>>('content', 'form_sets', { filter: { projectId }, limit: ALL_NAMES_LIMIT }),
    /** An entry's document; a deleted entry has none. It holds `search`, the search tokens, which no answer shows. */
    entry: (entryId: string) => reader.get<Doc<EntryDoc>>('content', 'entries', entryId),
    /** Whether any entry of the form set has a published revision (one indexed read). */
    async hasLiveEntries(formSetId: string): Promise<boolean> {
      const live = await reader.find('content', 'entries', { filter: { formSetId, 'liveRevision.publishedAt': { $gt: '' } }, limit: 1 });
      return live.length > 0;
    },
    /** A revision by id; a deleted entry's revisions may still be read here while the read model folds the deletion. */
    async revision(revisionId: string): Promise<Doc<RevisionDoc> | null> {
      const stored = await reader.get<Doc<StoredRevisionDoc> | Doc<RevisionDoc>>('content', 'revisions', revisionId);
      return stored === null ? null : withSnapshot(stored, log);
    },
    /** Scheduled revisions whose publish time is at or before `now` (an ISO instant), the earliest first; without their snapshots. */
    revisionsDueForPublishing: (now: string, limit: number) =>
      reader.find<Doc<StoredRevisionDoc>>('content', 'revisions', { filter: { status: 'scheduled', publishAt: { $lte: now } }, sort: [['publishAt', 'asc']], limit }),
    master: (masterId: string) => reader.get<Doc<MasterDoc>>('content', 'masters', masterId),
    mastersOfProject: (projectId: string) => reader.find<Doc<MasterDoc>>('content', 'masters', { filter: { projectId }, sort: [['key', 'asc']], limit: CONTENT_LIST_LIMIT }),
    /** Every master of the project, unordered (up to 10,000): the keys a new one could clash with. */
    allMastersOfProject: (projectId: string) => reader.find<Doc<MasterDoc>>('content', 'masters', { filter: { projectId }, limit: ALL_NAMES_LIMIT }),
    /** The project's masters with these keys (those that exist). */
    mastersWithKeys: (projectId: string, keys: readonly string[]) => reader.find<Doc<MasterDoc>>('content', 'masters', { filter: { projectId, key: { $in: keys } }, limit: keys.length }),
    /** The log position the read model has folded (null: nothing yet): what a pinned walk of entries is pinned to. */
    checkpoint: () => reader.checkpoint('content'),
  };
}

export type ContentQueries = ReturnType<typeof contentQueries>;

/** The revision with its snapshot, read from the save at snapshotAt (a document of version 3 or before holds it already). */
async function withSnapshot(stored: Doc<StoredRevisionDoc> | Doc<RevisionDoc>, log: LogByPosition): Promise<Doc<RevisionDoc>> {
  if (!('snapshotAt' in stored)) return stored;
  const { snapshotAt, ...revision } = stored as Doc<StoredRevisionDoc>;
  const [saved] = await log.readAt([decodePosition(snapshotAt)]);
  const snapshot = savedSnapshot(saved);
  if (snapshot === undefined) {
    throw new EventNotInLogError(`revision ${stored.revisionId}: the content read model names its save at log position ${snapshotAt}, which the log does not hold: rebuild the content projection from this log (annals projections rebuild content)`);
  }
  return { ...revision, snapshot };
}
