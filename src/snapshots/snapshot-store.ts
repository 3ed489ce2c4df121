/**
 * The aggregate snapshot port: the folded state of an aggregate at one revision of its stream, kept beside
 * the event log so that loading a long stream reads the snapshot and the few events after it, not the
 * whole history. A snapshot is an optimisation only: the log stays the source of truth, a snapshot is used
 * only after it has been verified against the stream (see AggregateSnapshots), and deleting any or every
 * snapshot changes no answer.
 *
 * Every adapter (SQLite file on the embedded default, MongoDB in production) passes
 * test/snapshots/snapshot-store.conformance.ts:
 * - get(streamId) returns the stored snapshot, or null;
 * - put(snapshot) keeps the snapshot unless the stored one is of a later revision (of the same kind and
 *   version): concurrent writers never move a snapshot back;
 * - delete(streamId) and clear() remove one or every snapshot (idempotent);
 * - state is any JSON value and comes back equal; revisions and positions come back as the bigints given.
 */
export interface AggregateSnapshot {
  streamId: string;
  /** The aggregate kind and the version of its state's shape: a snapshot of another version is ignored. */
  kind: string;
  version: number;
  /** Revision and global position of the last event folded into `state`. */
  revision: bigint;
  position: bigint;
  state: unknown;
  /** UTC ISO time it was taken. */
  takenAt: string;
}

export interface SnapshotStore {
  get(streamId: string): Promise<AggregateSnapshot | null>;
  put(snapshot: AggregateSnapshot): Promise<void>;
  delete(streamId: string): Promise<void>;
  /** Removes every snapshot. */
  clear(): Promise<void>;
  ping(): Promise<void>;
  close(): Promise<void>;
}

export class SnapshotStoreError extends Error {
  override name = 'SnapshotStoreError';
}

export function assertSnapshot(snapshot: AggregateSnapshot): void {
  if (typeof snapshot.streamId !== 'string' || snapshot.streamId.length === 0 || snapshot.streamId.length > 500) throw new SnapshotStoreError('stream ids are 1 to 500 characters');
  if (typeof snapshot.kind !== 'string' || snapshot.kind.length === 0) throw new SnapshotStoreError('a snapshot names its aggregate kind');
  if (!Number.isSafeInteger(snapshot.version)) throw new SnapshotStoreError('a snapshot version is an integer');
  if (typeof snapshot.revision !== 'bigint' || snapshot.revision < 0n || typeof snapshot.position !== 'bigint' || snapshot.position < 0n) {
    throw new SnapshotStoreError('revision and position are non-negative bigints');
  }
}
