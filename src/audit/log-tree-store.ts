/**
 * The log tree store port: where the log's Merkle tree (./merkle-tree.ts) is kept, with the checkpoints signed
 * over it. The tree is derived from the log (rebuildable: `annals audit tree rebuild`), so it never sits on the
 * write path: one leased follower (./log-tree-follower.ts) appends leaves in log order. Adapters: SQLite
 * (DATA_DIR/log-tree.sqlite, the embedded default) and MongoDB (production, beside the read models); both pass
 * test/audit/log-tree-store.conformance.ts.
 *
 * What it holds:
 * - every perfect subtree's hash under its stored-hash index (storedHashIndex): a proof reads O(log n) of them;
 * - per leaf, the log position and id of its event (an inclusion proof is asked for by event id);
 * - the checkpoints signed over the tree, with the cosignatures witnesses returned and an RFC 3161 token;
 * - the integrity state the start-up check found (API-only processes read it to refuse writes too).
 */

export interface TreeLeaf {
  /** The event's log position. */
  position: bigint;
  eventId: string;
}

export interface TreeState {
  /** Leaves in the tree. */
  size: number;
  /** Log position of the last leaf's event; null for an empty tree. */
  lastPosition: bigint | null;
}

export interface StoredCheckpoint {
  size: number;
  rootHash: Uint8Array;
  /** The signed note, as published. */
  note: string;
  /** When it was signed (ISO 8601 UTC). */
  signedAt: string;
  /** Witness cosignature lines by witness name. */
  cosignatures: Record<string, string>;
  /** The RFC 3161 timestamp token (DER, base64) of the note, when a TSA gave one. */
  timestampToken: string | null;
}

/** What the start-up check found (./log-integrity.ts); `ok` lets writes through. */
export interface IntegrityRecord {
  state: 'ok' | 'mismatch' | 'overridden';
  /** What differs, for people: names the first position found to differ. */
  detail: string;
  /** The first leaf (log index) found to differ, when known. */
  firstLeaf: number | null;
  checkedAt: string;
}

/** An append whose `from` is not the tree's size: another follower appended, or the tree was reset. */
export class TreeConflictError extends Error {
  override name = 'TreeConflictError';
}

export interface LogTreeStore {
  state(): Promise<TreeState>;
  /**
   * Appends leaves [from, from + leaves.length) and their stored hashes (those from storedHashIndex(0, from) on,
   * in order), atomically; TreeConflictError, writing nothing, when the tree does not hold exactly `from` leaves.
   */
  append(from: number, leaves: readonly TreeLeaf[], hashes: readonly Uint8Array[]): Promise<void>;
  /** The hashes at these stored-hash indexes, in order; an error when one is not stored. */
  readHashes(indexes: readonly number[]): Promise<Uint8Array[]>;
  /** The leaf of an event, by its id. */
  leafOfEvent(eventId: string): Promise<{ leaf: number; position: bigint } | null>;
  /** The leaves of events, by their ids (one read; ids not in the tree are left out). */
  leavesOfEvents(eventIds: readonly string[]): Promise<Map<string, { leaf: number; position: bigint }>>;
  /** Leaves [from, from + count) that are stored, in order. */
  leaves(from: number, count: number): Promise<TreeLeaf[]>;
  /** Stores a checkpoint (one per size: a second one of the same size is kept as the first). */
  putCheckpoint(checkpoint: StoredCheckpoint): Promise<void>;
  /** Adds a witness's cosignature line to the checkpoint of that size. */
  addCosignature(size: number, witness: string, line: string): Promise<void>;
  setTimestampToken(size: number, token: string): Promise<void>;
  /** The checkpoint of the largest size, or null. */
  latestCheckpoint(): Promise<StoredCheckpoint | null>;
  checkpointOfSize(size: number): Promise<StoredCheckpoint | null>;
  /** Keeps the newest `keep` checkpoints and every cosigned one; drops the others. */
  pruneCheckpoints(keep: number): Promise<void>;
  integrity(): Promise<IntegrityRecord | null>;
  setIntegrity(record: IntegrityRecord): Promise<void>;
  /** Empties the tree and its checkpoints (a rebuild from the log). */
  reset(): Promise<void>;
  close(): Promise<void>;
}
