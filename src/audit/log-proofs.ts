/**
 * Proofs from the log tree store: that an event is in the tree of a checkpoint (RFC 9162 inclusion), and that a
 * checkpoint's tree is a prefix of a later one's (consistency). Each proof is against a stored, signed
 * checkpoint, so whoever receives it checks the signature, the proof and (for inclusion) the event's leaf
 * bytes themselves, trusting nothing the service says.
 */
import type { EventStore, RecordedEvent } from '../event-store/event-store.ts';
import { assembleRanges, consistencyRanges, inclusionRanges, rangeIndexes, storedHashIndex, type LeafRange } from './merkle-tree.ts';
import { leafText, eventLeafHash } from './log-leaf.ts';
import type { LogTreeStore, StoredCheckpoint } from './log-tree-store.ts';

export interface CheckpointView {
  size: number;
  rootHash: string;
  /** The signed note as published. */
  note: string;
  signedAt: string;
  cosignatures: Record<string, string>;
  timestampToken: string | null;
}

export interface InclusionProof {
  /** The leaf's index in the tree (0-based, log order). */
  leafIndex: number;
  treeSize: number;
  /** base64 hashes, from the leaf up (RFC 9162 inclusion path). */
  proof: string[];
  leafHash: string;
  /** The leaf bytes (UTF-8 text): SHA-256(0x00 || these) is leafHash. */
  leaf: string;
  event: { id: string; streamId: string; revision: string; position: string; type: string; projectId: string | null };
  checkpoint: CheckpointView;
}

export interface ConsistencyProof {
  fromSize: number;
  toSize: number;
  proof: string[];
  from: CheckpointView | null;
  to: CheckpointView;
}

export class ProofUnavailableError extends Error {
  override name = 'ProofUnavailableError';
  constructor(
    readonly reason: 'event-not-found' | 'no-checkpoint' | 'size-not-checkpointed' | 'invalid-sizes',
    message: string,
  ) {
    super(message);
  }
}

const b64 = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64');

export function checkpointView(checkpoint: StoredCheckpoint): CheckpointView {
  return { size: checkpoint.size, rootHash: b64(checkpoint.rootHash), note: checkpoint.note, signedAt: checkpoint.signedAt, cosignatures: checkpoint.cosignatures, timestampToken: checkpoint.timestampToken };
}

/**
 * The log's event at a leaf, read from the log by position: after the previous leaf's position (a position the
 * store gave, so valid on every store: EventStoreDB's are offsets in its files), or from the start.
 */
export async function eventAtLeaf(tree: LogTreeStore, events: EventStore, leaf: number, position: bigint): Promise<RecordedEvent | null> {
  const [previous] = leaf > 0 ? await tree.leaves(leaf - 1, 1) : [];
  for await (const event of events.readAll({ after: previous ? previous.position : 'start', maxCount: 1 })) {
    if (event.position === position) return event;
  }
  return null;
}

/**
 * Reads the stored hashes several ranges need at once (each one once, whatever the ranges share) and answers
 * each group's hashes, with the stored hash at each of `alsoRead` (read in the same batch).
 */
async function readRangeGroups(tree: LogTreeStore, groups: readonly LeafRange[][], alsoRead: readonly number[] = []): Promise<{ groups: Uint8Array[][]; also: Uint8Array[] }> {
  const wanted = groups.map((ranges) => rangeIndexes(ranges));
  const indexes = [...new Set([...wanted.flat(), ...alsoRead])];
  const hashes = await tree.readHashes(indexes);
  const byIndex = new Map(indexes.map((index, i) => [index, hashes[i]!]));
  return { groups: groups.map((ranges, i) => assembleRanges(ranges, wanted[i]!.map((index) => byIndex.get(index)!))), also: alsoRead.map((index) => byIndex.get(index)!) };
}

/**
 * The RFC 9162 inclusion paths of leaves in the tree of `size` (every leaf below it), with each leaf's stored
 * hash, read in one batch: what an export writes beside each of its events.
 */
export async function inclusionPaths(tree: LogTreeStore, size: number, leaves: readonly number[]): Promise<Array<{ path: Uint8Array[]; leafHash: Uint8Array }>> {
  const read = await readRangeGroups(tree, leaves.map((leaf) => inclusionRanges(size, leaf)), leaves.map((leaf) => storedHashIndex(0, leaf)));
  return leaves.map((_, i) => ({ path: read.groups[i]!, leafHash: read.also[i]! }));
}

/** The RFC 9162 consistency proof from the tree of `fromSize` leaves to that of `toSize`, from the stored hashes (no checkpoint needed). */
export async function consistencyPath(tree: LogTreeStore, fromSize: number, toSize: number): Promise<Uint8Array[]> {
  return (await readRangeGroups(tree, [consistencyRanges(fromSize, toSize)])).groups[0]!;
}

export class LogProofs {
  constructor(
    private readonly tree: LogTreeStore,
    private readonly events: EventStore,
  ) {}

  async latestCheckpoint(): Promise<CheckpointView | null> {
    const latest = await this.tree.latestCheckpoint();
    return latest ? checkpointView(latest) : null;
  }

  /** The checkpoint of that size, or the latest. */
  async #checkpoint(size: number | undefined): Promise<StoredCheckpoint> {
    const checkpoint = size === undefined ? await this.tree.latestCheckpoint() : await this.tree.checkpointOfSize(size);
    if (!checkpoint) {
      throw size === undefined
        ? new ProofUnavailableError('no-checkpoint', 'the log has no checkpoint yet')
        : new ProofUnavailableError('size-not-checkpointed', `no checkpoint of size ${size} is kept; ask for the latest checkpoint, or one a witness cosigned`);
    }
    return checkpoint;
  }

  /** The event of a leaf, read from the log by its position (null when the log no longer holds it there). */
  async eventOfLeaf(eventId: string): Promise<{ leaf: number; event: RecordedEvent } | null> {
    const found = await this.tree.leafOfEvent(eventId);
    if (!found) return null;
    const event = await eventAtLeaf(this.tree, this.events, found.leaf, found.position);
    return event && event.id === eventId ? { leaf: found.leaf, event } : null;
  }

  /**
   * That the event is in the tree of the checkpoint of `size` (default: the latest). `allow` sees the event
   * before anything is disclosed: false answers as for an event that does not exist.
   */
  async inclusion(eventId: string, options: { size?: number; allow?: (event: RecordedEvent) => boolean } = {}): Promise<InclusionProof> {
    const found = await this.eventOfLeaf(eventId);
    if (!found || (options.allow && !options.allow(found.event))) throw new ProofUnavailableError('event-not-found', `no event ${eventId} in the log tree`);
    const checkpoint = await this.#checkpoint(options.size);
    if (found.leaf >= checkpoint.size) {
      throw new ProofUnavailableError('size-not-checkpointed', `event ${eventId} is leaf ${found.leaf}, after the checkpoint of size ${checkpoint.size}: ask again after the next checkpoint (within a second)`);
    }
    const proof = (await inclusionPaths(this.tree, checkpoint.size, [found.leaf]))[0]!.path;
    const { event } = found;
    return {
      leafIndex: found.leaf,
      treeSize: checkpoint.size,
      proof: proof.map(b64),
      leafHash: b64(eventLeafHash(event)),
      leaf: leafText(event),
      event: { id: event.id, streamId: event.streamId, revision: event.revision.toString(), position: event.position.toString(), type: event.type, projectId: event.metadata.projectId ?? null },
      checkpoint: checkpointView(checkpoint),
    };
  }

  /** That the tree of checkpoint `fromSize` is a prefix of that of checkpoint `toSize` (default: the latest). */
  async consistency(fromSize: number, toSize?: number): Promise<ConsistencyProof> {
    const to = await this.#checkpoint(toSize);
    if (!(fromSize >= 0 && fromSize <= to.size)) throw new ProofUnavailableError('invalid-sizes', `no consistency proof from size ${fromSize} to ${to.size}: the first must not be larger`);
    const proof = await consistencyPath(this.tree, fromSize, to.size);
    const from = await this.tree.checkpointOfSize(fromSize);
    return { fromSize, toSize: to.size, proof: proof.map(b64), from: from ? checkpointView(from) : null, to: checkpointView(to) };
  }
}
