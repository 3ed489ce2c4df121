/**
 * The working-copy port: what a person typed into an entry and has not yet saved as a revision, kept on the
 * server while they type (the console's autosave) so that nothing is lost to a closed tab, a crashed browser or
 * another device, without making a revision of every pause in typing. A working copy is not history: it is its
 * owner's alone, is replaced at every autosave, and is gone once its owner saves a revision of the entry, once
 * the entry is deleted, or after the retention period. The revision saved from it is what the log records.
 *
 * Its data is not derived from the log, so it lives apart from the rebuildable read models: DATA_DIR/
 * working-copies.sqlite on the embedded default, the MongoDB database that holds the key store in production.
 *
 * Every adapter passes test/working-copies/working-copy-store.conformance.ts:
 * - put(copy) keeps one copy per entry and owner, replacing the fields, base revision and savedAt, and keeping
 *   the first startedAt; get gives it back equal (fields as any JSON object);
 * - list(entryId) gives every owner's copy of the entry without its fields, oldest savedAt first;
 * - delete(entryId, owner), deleteEntry(entryId) and deleteSavedBefore(time) remove copies and say how many.
 */
export interface WorkingCopyOwner {
  type: 'user' | 'agent';
  id: string;
}

export interface WorkingCopyHead {
  projectId: string;
  entryId: string;
  owner: WorkingCopyOwner;
  /** The revision the typing started from: a later revision saved meanwhile by another means a conflict to settle. */
  baseRevision: number;
  /** UTC ISO: when this owner's unsaved typing began, and when it was last kept. */
  startedAt: string;
  savedAt: string;
}

export interface WorkingCopy extends WorkingCopyHead {
  fields: Record<string, unknown>;
}

export interface WorkingCopyStore {
  get(entryId: string, owner: WorkingCopyOwner): Promise<WorkingCopy | null>;
  /** Keeps the copy, replacing this owner's but keeping the earlier startedAt (one write, nothing read back). */
  put(copy: WorkingCopy): Promise<void>;
  list(entryId: string): Promise<WorkingCopyHead[]>;
  delete(entryId: string, owner: WorkingCopyOwner): Promise<boolean>;
  deleteEntry(entryId: string): Promise<number>;
  /** Removes the copies last kept before `savedAt` (UTC ISO): the retention period. */
  deleteSavedBefore(savedAt: string): Promise<number>;
  ping(): Promise<void>;
  close(): Promise<void>;
}

export class WorkingCopyStoreError extends Error {
  override name = 'WorkingCopyStoreError';
}

export function assertWorkingCopy(copy: WorkingCopy): void {
  if (typeof copy.entryId !== 'string' || copy.entryId.length === 0 || copy.entryId.length > 200) throw new WorkingCopyStoreError('entry ids are 1 to 200 characters');
  if (typeof copy.projectId !== 'string' || copy.projectId.length === 0 || copy.projectId.length > 200) throw new WorkingCopyStoreError('project ids are 1 to 200 characters');
  assertOwner(copy.owner);
  if (!Number.isSafeInteger(copy.baseRevision) || copy.baseRevision < 0) throw new WorkingCopyStoreError('a base revision is a non-negative integer');
  if (copy.fields === null || typeof copy.fields !== 'object' || Array.isArray(copy.fields)) throw new WorkingCopyStoreError('fields are a JSON object');
}

export function assertOwner(owner: WorkingCopyOwner): void {
  if ((owner.type !== 'user' && owner.type !== 'agent') || typeof owner.id !== 'string' || owner.id.length === 0 || owner.id.length > 200) {
    throw new WorkingCopyStoreError('an owner is a user or an agent key with an id of 1 to 200 characters');
  }
}
