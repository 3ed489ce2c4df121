import { decodePosition, encodePosition } from '../event-store/position.ts';
import type { CollectionSpec, DocumentWrite, ModelTarget, ReadModelStore } from '../read-models/read-model-store.ts';

/**
 * A projection's change feed: for a projection that says what its commits change (Projection.changes), the
 * projector records, in the same commit as the documents, one record naming the commit's scopes (say
 * `entry:<id>`). A process that runs the projector hears of every commit as it happens; a process that does
 * not (an API-only replica, ROLES=api) reads the records after the last one it saw, and so drops from its
 * caches only what changed, as the projector's process does, instead of everything on every commit.
 *
 * Each record names the one recorded before it (`since`), so a reader can tell an unbroken run of records
 * from one with a gap (records pruned while it was not looking, a generation swapped in): after a gap it
 * treats everything as changed. The collection keeps the newest CHANGE_FEED_RETAIN records and a few more;
 * the projector deletes older ones as it goes.
 */
export const CHANGE_FEED_COLLECTION = 'change_feed';

/** Records kept (at least): a reader polling every 250 ms follows up to this many commits between two polls. */
export const CHANGE_FEED_RETAIN = 1_000;

/** How many records the projector writes between two prunings of the oldest. */
export const CHANGE_FEED_PRUNE_EVERY = 100;

export interface ChangeRecord {
  /** The commit's checkpoint (encoded position), also the record's id: ids sort as commits do. */
  at: string;
  /** The `at` of the record written before this one in this generation; null for its first. */
  since: string | null;
  /** What the commit changed, in the projection's terms (Projection.changes). */
  scopes: string[];
}

export const changeFeedSpec: CollectionSpec = {
  indexes: [{ name: 'by_at', fields: [['at', 1]] }],
};

/** The scope of a record whose commit changed too much to name (a batch of a catch-up): anything may have changed. */
export const EVERYTHING = '*';

/** Scopes a record names at most; a commit that changes more records EVERYTHING. */
export const MAX_RECORD_SCOPES = 256;

/** The change record of a commit at `checkpoint`, as a document write of the commit. */
export function changeRecordWrite(checkpoint: bigint, since: string | null, scopes: readonly string[]): DocumentWrite {
  const at = encodePosition(checkpoint);
  const record: ChangeRecord = { at, since, scopes: scopes.length > MAX_RECORD_SCOPES ? [EVERYTHING] : [...scopes] };
  return { collection: CHANGE_FEED_COLLECTION, id: at, doc: { ...record }, position: checkpoint };
}

/** The change record among a commit's writes, if it has one. */
export function changeRecordOf(writes: readonly DocumentWrite[]): ChangeRecord | undefined {
  for (let i = writes.length - 1; i >= 0; i--) {
    const write = writes[i]!;
    if (write.collection === CHANGE_FEED_COLLECTION && write.doc !== null) return write.doc as unknown as ChangeRecord;
  }
  return undefined;
}

/**
 * The `at` of the newest record of the generation, null when it has none; with `through` (an encoded
 * checkpoint), the newest at or before it.
 */
export async function latestChange(store: ReadModelStore, target: ModelTarget, through?: string | null): Promise<string | null> {
  const beyond = through === undefined || through === null ? undefined : encodePosition(decodePosition(through) + 1n);
  const [newest] = await store.find(target, CHANGE_FEED_COLLECTION, { sort: [['at', 'desc']], limit: 1, fields: ['at'], ...(beyond === undefined ? {} : { after: { values: [beyond], id: beyond } }) });
  return (newest?.['at'] as string | undefined) ?? null;
}

/**
 * The records after the one at `after` and at or before the generation's checkpoint `through` (a store whose
 * commits are not atomic, MongoDB, stores the checkpoint after the documents: a record beyond it may belong to
 * a commit that failed half-way and is folded again), oldest first, if they follow `after` unbroken; 'gap'
 * when they do not (one was pruned before it was read, or the run is longer than `limit`): then anything may
 * have changed.
 */
export async function changesAfter(store: ReadModelStore, target: ModelTarget, after: string | null, through: string, limit = CHANGE_FEED_RETAIN): Promise<ChangeRecord[] | 'gap'> {
  const query = { sort: [['at', 'asc']] as const, limit: limit + 1, ...(after === null ? {} : { after: { values: [after], id: after } }) };
  const found = (await store.find(target, CHANGE_FEED_COLLECTION, query)) as unknown as ChangeRecord[];
  const records = found.filter((record) => record.at <= through);
  if (records.length > limit) return 'gap';
  let previous = after;
  for (const record of records) {
    if (record.since !== previous) return 'gap';
    previous = record.at;
  }
  return records;
}

/** The ids of the records beyond the newest `retain` (oldest first), for the projector to delete. */
export async function prunableChanges(store: ReadModelStore, target: ModelTarget, retain = CHANGE_FEED_RETAIN): Promise<string[]> {
  const count = await store.count(target, CHANGE_FEED_COLLECTION);
  if (count <= retain) return [];
  const oldest = await store.find(target, CHANGE_FEED_COLLECTION, { sort: [['at', 'asc']], limit: count - retain, fields: ['at'] });
  return oldest.map((record) => record['at'] as string);
}
