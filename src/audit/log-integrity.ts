/**
 * The start-up check of the log against its last published checkpoint (AUDIT_CHECKPOINT_DIR, outside DATA_DIR),
 * and the gate that refuses writes when they disagree. Cheap, whatever the log's length:
 *
 * 1. the checkpoint's signature verifies with one of the audit key ring's keys, under its origin;
 * 2. the log still holds at least the checkpoint's events (the tree's leaves up to its size exist, and the log
 *    holds an event at the last one's position): a truncated log, or events deleted at its end, fail here;
 * 3. the stored tree's right edge reproduces the checkpoint's root (O(log n) stored hashes);
 * 4. the log's events at a sample of leaves (the last 256 before the checkpoint's size, and 256 spread over
 *    the rest) hash to the stored leaves.
 *
 * What it catches, and what only `annals audit verify --against` does: an insider who rewrites the log and
 * leaves the tree is caught at start when the rewrite touches a sampled leaf (and always by verify --against,
 * which recomputes every leaf); one who rewrites the tree as well (it is derived from the log, so easily
 * recomputed) is caught by 3 whatever they changed before the checkpoint, since the root they can compute is
 * not the one signed and published; one who also forges a checkpoint cannot sign it without the audit key, and
 * cannot rewrite what was published outside DATA_DIR, held by witnesses, or sent to webhook receivers.
 * Deleting the tree makes the follower rebuild it from the (rewritten) log: the check then waits until it has
 * caught up and fails at 3.
 *
 * On a mismatch the service refuses every write (503, naming the first position known to differ) and keeps
 * serving reads, unless started with AUDIT_ACCEPT_CHECKPOINT_MISMATCH=<reason>, whose use is recorded in the log.
 */
import type { EventStore } from '../event-store/event-store.ts';
import { encodePosition } from '../event-store/position.ts';
import { publishedCheckpoints } from './checkpoint-folder.ts';
import { checkpointOfNote, treeRoot } from './log-checkpoints.ts';
import { eventLeafHash } from './log-leaf.ts';
import { storedHashIndex } from './merkle-tree.ts';
import { verifiedSigners } from './signed-note.ts';
import { eventAtLeaf } from './log-proofs.ts';
import type { AuditPublicKeyInfo } from './audit-keys.ts';
import type { IntegrityRecord, LogTreeStore } from './log-tree-store.ts';

/** Writes refused because the log does not extend its published checkpoint. */
export class WritesRefusedError extends Error {
  override name = 'WritesRefusedError';
}

/** Open until the integrity check finds a mismatch; then every append through gatedAppends is refused. */
export class WriteGate {
  #refusal: string | null = null;

  refuse(reason: string): void {
    this.#refusal = reason;
  }

  /** Lets writes through again (the check found nothing wrong). */
  open(): void {
    this.#refusal = null;
  }

  get refusal(): string | null {
    return this.#refusal;
  }

  assertOpen(): void {
    if (this.#refusal !== null) throw new WritesRefusedError(this.#refusal);
  }
}

/** The store with appends refused while the gate is shut; reads go through. */
export function gatedAppends(store: EventStore, gate: WriteGate): EventStore {
  const append: EventStore['append'] = async (...args) => {
    gate.assertOpen();
    return store.append(...args);
  };
  return new Proxy(store, {
    get(target, property) {
      if (property === 'append') return append;
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}

export interface IntegrityCheckOptions {
  tree: LogTreeStore;
  events: EventStore;
  /** The published file or folder (AUDIT_CHECKPOINT_DIR). */
  published: string;
  keys: readonly AuditPublicKeyInfo[];
  now: () => Date;
  /** Waits until the tree holds `size` leaves or the log has no more events; answers the tree's size then. */
  treeReaches: (size: number) => Promise<number>;
  samples?: number;
}

const mismatch = (detail: string, firstLeaf: number | null, now: Date): IntegrityRecord => ({ state: 'mismatch', detail, firstLeaf, checkedAt: now.toISOString() });

/** Checks the log against the last checkpoint published in `published`; see the module comment. */
export async function checkAgainstPublished(options: IntegrityCheckOptions): Promise<IntegrityRecord> {
  const { tree, events } = options;
  let all;
  try {
    all = publishedCheckpoints(options.published);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { state: 'ok', detail: 'no checkpoint published yet', firstLeaf: null, checkedAt: options.now().toISOString() };
    throw error;
  }
  const last = all[all.length - 1];
  if (!last) return { state: 'ok', detail: 'no checkpoint published yet', firstLeaf: null, checkedAt: options.now().toISOString() };
  let checkpoint;
  try {
    checkpoint = checkpointOfNote(last.note);
  } catch (error) {
    return mismatch(`the last published checkpoint (size ${last.size}) is not a checkpoint: ${(error as Error).message}`, null, options.now());
  }
  if (verifiedSigners(last.note, options.keys.map((key) => ({ name: checkpoint.origin, publicKey: key.publicKey }))).length === 0) {
    return mismatch(`the last published checkpoint (size ${checkpoint.size}) is not signed by any audit key of this service under ${checkpoint.origin}`, null, options.now());
  }
  const size = await options.treeReaches(checkpoint.size);
  // The earliest published checkpoint the tree no longer reproduces brackets the first change.
  const bracket = async (): Promise<{ good: number; bad: number }> => {
    let good = 0;
    let bad = Math.min(size, checkpoint.size);
    for (const earlier of all) {
      const parsed = checkpointOfNote(earlier.note);
      if (parsed.size > size || parsed.size > checkpoint.size) break;
      if (Buffer.compare(Buffer.from(await treeRoot(tree, parsed.size)), Buffer.from(parsed.rootHash)) === 0) good = Math.max(good, parsed.size);
      else {
        bad = parsed.size;
        break;
      }
    }
    return { good, bad };
  };
  if (size < checkpoint.size) {
    const { good, bad } = await bracket();
    if (good < bad && bad <= size && bad !== size) {
      return mismatch(`the log holds ${size} events; the checkpoint published at ${last.signedAt} covered ${checkpoint.size}: the log was changed between positions ${good} and ${bad - 1} (0-based, in log order; the first ${good} events still match an earlier published checkpoint)`, good, options.now());
    }
    return mismatch(`the log holds ${size} events; the checkpoint published at ${last.signedAt} covered ${checkpoint.size}: events were removed between positions ${good} and ${checkpoint.size - 1} (0-based, in log order; the first ${good} events still match a published checkpoint)`, good, options.now());
  }
  const root = await treeRoot(tree, checkpoint.size);
  if (Buffer.compare(Buffer.from(root), Buffer.from(checkpoint.rootHash)) !== 0) {
    const { good, bad } = await bracket();
    return mismatch(`the log's tree does not reproduce the root of the checkpoint of size ${checkpoint.size} published at ${last.signedAt}: the log was changed between positions ${good} and ${bad - 1} (0-based, in log order; the first ${good} events still match an earlier published checkpoint)`, good, options.now());
  }
  // The log's events at sampled leaves against the stored leaves.
  const samples = options.samples ?? 256;
  const picked = new Set<number>();
  for (let i = Math.max(0, checkpoint.size - samples); i < checkpoint.size; i++) picked.add(i);
  for (let i = 0; i < samples && checkpoint.size > 0; i++) picked.add(Math.floor((i * checkpoint.size) / samples));
  const leaves = [...picked].sort((a, b) => a - b);
  const stored = await tree.readHashes(leaves.map((leaf) => storedHashIndex(0, leaf)));
  for (const [i, leaf] of leaves.entries()) {
    const [entry] = await tree.leaves(leaf, 1);
    let hash: Uint8Array | null = null;
    let described = `leaf ${leaf}`;
    if (entry) {
      described = `position ${leaf} (log position ${encodePosition(entry.position)}, event ${entry.eventId})`;
      try {
        const event = await eventAtLeaf(tree, events, leaf, entry.position);
        if (event) hash = eventLeafHash(event);
      } catch (error) {
        return mismatch(`the log's event at ${described} cannot be read: ${(error as Error).message}`, leaf, options.now());
      }
    }
    if (!hash) return mismatch(`the log no longer holds the event at ${described}, which the checkpoint of size ${checkpoint.size} covers`, leaf, options.now());
    if (Buffer.compare(Buffer.from(hash), Buffer.from(stored[i]!)) !== 0) {
      return mismatch(`the log's event at ${described} is not the one the checkpoint of size ${checkpoint.size} covers: it was changed after it was written`, leaf, options.now());
    }
  }
  return { state: 'ok', detail: `the log extends the checkpoint of size ${checkpoint.size} published at ${last.signedAt}`, firstLeaf: null, checkedAt: options.now().toISOString() };
}
