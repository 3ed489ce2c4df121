/**
 * `annals audit verify --against CHECKPOINT`: that the log as it is now extends a checkpoint held elsewhere (a
 * published file, a copy an auditor kept, the checkpoint a witness cosigned). Every leaf is recomputed from the
 * log's events (trusting no stored hash), the root of the first `size` leaves compared with the checkpoint's,
 * and the checkpoint's signature checked with every key of the audit key ring (its cosignatures with the
 * configured witnesses' keys). When the roots differ it names where the log first differs:
 * - exactly, when the stored tree still reproduces the checkpoint (the log was changed, the tree was not): the
 *   first leaf whose recomputed hash is not the stored one;
 * - else between two checkpoints: the last earlier published checkpoint the log still reproduces, and the first
 *   it does not (the tree was rewritten too).
 */
import type { EventStore } from '../event-store/event-store.ts';
import { encodePosition } from '../event-store/position.ts';
import type { AuditPublicKeyInfo } from './audit-keys.ts';
import { checkpointOfNote, treeRoot } from './log-checkpoints.ts';
import type { LogTreeStore } from './log-tree-store.ts';
import { TreeAppender, storedHashIndex, HASH_SIZE } from './merkle-tree.ts';
import { parseNote, parseVerifierKey, verifiedSigners, verifyCosignature } from './signed-note.ts';

/**
 * How long before a checkpoint was signed an event after it may say it occurred: an event is stamped before it is
 * committed and folded into the tree, and processes' clocks differ a little. Past this it was backdated.
 */
export const BACKDATING_TOLERANCE_MS = 60_000;

/** An event after a checkpoint that says it occurred before it (written later, dated earlier). */
export interface BackdatedEvent {
  leaf: number;
  eventId: string;
  streamId: string;
  revision: string;
  occurredAt: string;
}

/** Every leaf hash of the log in order, as one growing buffer; null leaves (unreadable events) are remembered. */
export class LeafCollector {
  #bytes: Buffer = Buffer.alloc(HASH_SIZE * 65_536);
  #count = 0;
  readonly unreadable: number[] = [];
  readonly backdated: BackdatedEvent[] = [];

  /**
   * @param after events from leaf `after.size` on must not say they occurred before `after.signedAt` (less the
   *   tolerance): the checkpoint's publication time, from outside the log.
   */
  constructor(private readonly after?: { size: number; signedAt: string }) {}

  /** Adds the next leaf; `event` is checked against the checkpoint's time when it comes after it. */
  addEvent(hash: Uint8Array | null, event: { id: string; streamId: string; revision: bigint | string; metadata?: { occurredAt?: string } }): void {
    this.checkEvent(this.#count, event);
    this.add(hash);
  }

  /** Checks the event of leaf `index` against the checkpoint's time (the leaves themselves come from elsewhere). */
  checkEvent(index: number, event: { id: string; streamId: string; revision: bigint | string; metadata?: { occurredAt?: string } }): void {
    if (this.after && index >= this.after.size && event.metadata?.occurredAt !== undefined && this.backdated.length < 100) {
      if (Date.parse(event.metadata.occurredAt) < Date.parse(this.after.signedAt) - BACKDATING_TOLERANCE_MS) {
        this.backdated.push({ leaf: index, eventId: event.id, streamId: event.streamId, revision: event.revision.toString(), occurredAt: event.metadata.occurredAt });
      }
    }
  }

  /** Takes every leaf at once (computed on worker threads): `hashes` is count × 32 bytes. */
  setAll(hashes: Buffer, count: number, unreadable: readonly number[]): void {
    this.#bytes = hashes;
    this.#count = count;
    this.unreadable.splice(0, this.unreadable.length, ...unreadable);
  }

  add(hash: Uint8Array | null): void {
    if ((this.#count + 1) * HASH_SIZE > this.#bytes.length) {
      const grown = Buffer.alloc(this.#bytes.length * 2);
      this.#bytes.copy(grown);
      this.#bytes = grown;
    }
    if (hash) this.#bytes.set(hash, this.#count * HASH_SIZE);
    else this.unreadable.push(this.#count);
    this.#count++;
  }

  get count(): number {
    return this.#count;
  }

  leaf(index: number): Uint8Array {
    return this.#bytes.subarray(index * HASH_SIZE, (index + 1) * HASH_SIZE);
  }
}

export interface CheckpointToCheck {
  note: string;
  /** When it was published (its line in checkpoints.ndjson), if known. */
  signedAt?: string;
  /** Where it came from, for the report (a file, a witness). */
  source: string;
  cosignatures?: Record<string, string>;
}

export interface TreeReport {
  verified: boolean;
  checkpoint: { source: string; origin: string; size: number; rootHash: string; signedBy: string | null; cosignatures: Array<{ witness: string; verified: boolean; time: number | null }> };
  /** Events the log holds (read in this pass). */
  logEvents: number;
  /** The root of the log's first `size` events, or null when it holds fewer. */
  logRootAtSize: string | null;
  extendsCheckpoint: boolean;
  firstDifference: { fromLeaf: number; toLeaf: number; eventId: string | null; position: string | null; detail: string } | null;
  /** Events after the checkpoint that say they occurred before it was published (more than a minute before). */
  backdated: BackdatedEvent[];
}

export interface TreeCheckOptions {
  keys: readonly AuditPublicKeyInfo[];
  /** The configured witnesses' vkeys, to check cosignatures with. */
  witnessVkeys?: readonly string[];
  /** Earlier published checkpoints (notes), to bracket a difference when the tree was rewritten too. */
  earlier?: readonly string[];
  tree?: LogTreeStore;
  events?: EventStore;
}

const b64 = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64');

/** Checks the collected leaves against the checkpoint; see the module comment. */
export async function checkLeavesAgainst(leaves: LeafCollector, target: CheckpointToCheck, options: TreeCheckOptions): Promise<TreeReport> {
  const checkpoint = checkpointOfNote(target.note);
  const signer = options.keys.find((key) => verifiedSigners(target.note, [{ name: checkpoint.origin, publicKey: key.publicKey }]).length > 0);
  const { body } = parseNote(target.note);
  const cosignatures = Object.entries(target.cosignatures ?? {}).map(([witness, line]) => {
    const vkey = (options.witnessVkeys ?? []).find((candidate) => parseVerifierKey(candidate).name === witness);
    const verified = vkey ? verifyCosignature(body, line, vkey) : null;
    return { witness, verified: verified !== null, time: verified?.time ?? null };
  });
  const report: TreeReport = {
    verified: false,
    checkpoint: { source: target.source, origin: checkpoint.origin, size: checkpoint.size, rootHash: b64(checkpoint.rootHash), signedBy: signer?.keyId ?? null, cosignatures },
    logEvents: leaves.count,
    logRootAtSize: null,
    extendsCheckpoint: false,
    firstDifference: null,
    backdated: leaves.backdated,
  };
  const appender = new TreeAppender(0, []);
  const unreadableBefore = leaves.unreadable.find((leaf) => leaf < checkpoint.size);
  if (unreadableBefore !== undefined) {
    report.firstDifference = { fromLeaf: unreadableBefore, toLeaf: unreadableBefore, eventId: null, position: null, detail: `the log's event at leaf ${unreadableBefore} cannot be read back (damaged or edited)` };
  } else if (leaves.count < checkpoint.size) {
    report.firstDifference = { fromLeaf: leaves.count, toLeaf: checkpoint.size - 1, eventId: null, position: null, detail: `the log holds ${leaves.count} events; the checkpoint covers ${checkpoint.size}: events from leaf ${leaves.count} on were removed` };
  } else {
    for (let i = 0; i < checkpoint.size; i++) appender.append(leaves.leaf(i));
    const root = appender.root();
    report.logRootAtSize = b64(root);
    report.extendsCheckpoint = Buffer.compare(Buffer.from(root), Buffer.from(checkpoint.rootHash)) === 0;
    if (!report.extendsCheckpoint) report.firstDifference = await locate(leaves, checkpoint, options);
  }
  report.verified = report.extendsCheckpoint && report.backdated.length === 0 && signer !== undefined && cosignatures.every((c) => c.verified);
  return report;
}

async function locate(leaves: LeafCollector, checkpoint: { size: number; rootHash: Uint8Array }, options: TreeCheckOptions): Promise<TreeReport['firstDifference']> {
  const { tree } = options;
  if (tree && (await tree.state()).size >= checkpoint.size && Buffer.compare(Buffer.from(await treeRoot(tree, checkpoint.size)), Buffer.from(checkpoint.rootHash)) === 0) {
    // The stored tree is still the checkpoint's: its leaves are the original ones.
    for (let from = 0; from < checkpoint.size; from += 4096) {
      const count = Math.min(4096, checkpoint.size - from);
      const stored = await tree.readHashes(Array.from({ length: count }, (_, i) => storedHashIndex(0, from + i)));
      for (let i = 0; i < count; i++) {
        if (Buffer.compare(Buffer.from(stored[i]!), Buffer.from(leaves.leaf(from + i))) !== 0) {
          const [leaf] = await tree.leaves(from + i, 1);
          return {
            fromLeaf: from + i,
            toLeaf: from + i,
            eventId: leaf?.eventId ?? null,
            position: leaf ? encodePosition(leaf.position) : null,
            detail: `the log's event at leaf ${from + i}${leaf ? ` (event ${leaf.eventId}, log position ${encodePosition(leaf.position)})` : ''} is not the one the checkpoint covers: changed, moved, inserted or removed after it was written`,
          };
        }
      }
    }
  }
  // Bracket with earlier published checkpoints the log does or does not reproduce.
  const sizes = (options.earlier ?? []).flatMap((note) => {
    try {
      return [checkpointOfNote(note)];
    } catch {
      return [];
    }
  }).filter((c) => c.size < checkpoint.size).sort((a, b) => a.size - b.size);
  const appender = new TreeAppender(0, []);
  let good = 0;
  let bad = checkpoint.size;
  for (const earlier of sizes) {
    while (appender.size < earlier.size) appender.append(leaves.leaf(appender.size));
    if (Buffer.compare(Buffer.from(appender.root()), Buffer.from(earlier.rootHash)) === 0) good = earlier.size;
    else {
      bad = earlier.size;
      break;
    }
  }
  return { fromLeaf: good, toLeaf: bad - 1, eventId: null, position: null, detail: `the log's first ${good} events match ${good > 0 ? 'an earlier published checkpoint' : 'nothing checked'}; it differs from what the checkpoint of size ${bad} covers, somewhere in leaves ${good} to ${bad - 1} (the tree was rewritten with the log)` };
}
