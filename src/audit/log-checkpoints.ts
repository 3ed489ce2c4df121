/**
 * Signed checkpoints of the log's Merkle tree (C2SP tlog-checkpoint, ./signed-note.ts): made at most once a
 * second while the tree grows (so at least every second while the log changes) and on demand, signed through
 * the audit key ring (./audit-keys.ts), stored beside the tree and handed to every publisher (a folder outside
 * DATA_DIR, witnesses, a timestamp authority, webhooks). A publisher that is slow or down delays nothing: each
 * runs on its own (see ./checkpoint-publishers.ts), and appends never wait for checkpoints.
 *
 * The note's key name is the log's origin; its signature lines name the ring's current key by key hash, so a
 * checkpoint verifies with `verifierKey(origin, publicKey)` of the key that was current when it was signed.
 */
import type { Logger } from 'pino';
import type { Clock } from '../clock.ts';
import type { AuditKeyRing } from './audit-keys.ts';
import { auditLogOrigin } from './log-origin.ts';
import { assembleRanges, rootIndexes, EMPTY_ROOT } from './merkle-tree.ts';
import { checkpointBody, isValidKeyName, parseCheckpointBody, parseNote, signNote, verifiedSigners, verifierKey } from './signed-note.ts';
import type { LogTreeStore, StoredCheckpoint } from './log-tree-store.ts';

/** A checkpoint asked for while checkpoints are held (see LogCheckpoints.hold). */
export class CheckpointsHeldError extends Error {
  override name = 'CheckpointsHeldError';
}

/** Receives each checkpoint once it is signed and stored. Must not throw nor wait: queue and return. */
export interface CheckpointPublisher {
  readonly name: string;
  publish(checkpoint: StoredCheckpoint): void;
  /** Finishes what is under way (bounded), then stops. */
  stop(): Promise<void>;
}

/** The root hash of the tree of `size` leaves, read from the store. */
export async function treeRoot(tree: LogTreeStore, size: number): Promise<Uint8Array> {
  if (size === 0) return EMPTY_ROOT;
  return assembleRanges([{ lo: 0, hi: size }], await tree.readHashes(rootIndexes(size)))[0]!;
}

/**
 * The log's origin: AUDIT_LOG_ORIGIN, or one derived from the audit key chain's first key (./log-origin.ts), so
 * that it stays the same for the life of the log without being stored anywhere, and is known before the log has
 * an event (the keys' signed-note names, given to witnesses, are the origin).
 */
export function logOrigin(ring: Pick<AuditKeyRing, 'publicKeys'>, configured: string | undefined): string {
  return auditLogOrigin({ audit: { origin: configured } }, ring.publicKeys());
}

export function assertOrigin(origin: string): void {
  if (!isValidKeyName(origin)) throw new Error(`the log origin ${JSON.stringify(origin)} is not valid: no spaces, no "+"`);
}

/** The vkey of each of the ring's keys under the origin: what witnesses and verifiers are given. */
export function logVerifierKeys(ring: Pick<AuditKeyRing, 'publicKeys'>, origin: string): Array<{ keyId: string; vkey: string; validFrom: string; validUntil: string | null }> {
  return ring.publicKeys().map((key) => ({ keyId: key.keyId, vkey: verifierKey(origin, key.publicKey), validFrom: key.validFrom, validUntil: key.validUntil }));
}

/** Whether a checkpoint note is signed under the origin by one of the ring's keys (any that ever signed). */
export function signedByRing(note: string, ring: AuditKeyRing, origin: string): boolean {
  return verifiedSigners(note, ring.publicKeys().map((key) => ({ name: origin, publicKey: key.publicKey }))).length > 0;
}

export interface LogCheckpointsOptions {
  tree: LogTreeStore;
  /** The ring to sign with, taken when a checkpoint is signed (so a rotated key signs the next one). */
  ring: () => AuditKeyRing;
  /** AUDIT_LOG_ORIGIN, or undefined to derive it from the log. */
  origin: string | undefined;
  clock: Clock;
  logger: Logger;
  publishers?: readonly CheckpointPublisher[];
  /** The shortest time between two checkpoints made as the tree grows (default 1000 ms). */
  intervalMs?: number;
  /** Checkpoints kept in the tree store besides those a witness cosigned (default 10,000). */
  keep?: number;
  /** Told of each checkpoint made: its size and how long it took from the growth that asked for it. */
  onCheckpoint?: (checkpoint: StoredCheckpoint) => void;
}

/** Makes, stores and publishes checkpoints; see the module comment. */
export class LogCheckpoints {
  readonly #o: LogCheckpointsOptions & { intervalMs: number; keep: number };
  #lastAt = 0;
  #lastSize = -1;
  #pendingSize = 0;
  #timer: NodeJS.Timeout | undefined;
  #making: Promise<StoredCheckpoint | null> | undefined;
  #made = 0;
  #stopped = false;
  #held = false;
  #origin: string | null = null;

  constructor(options: LogCheckpointsOptions) {
    this.#o = { intervalMs: 1000, keep: 10_000, ...options };
    if (options.origin) assertOrigin(options.origin);
  }

  /** The origin checkpoints are made under (null until the log has an event and none is configured). */
  async origin(): Promise<string | null> {
    this.#origin ??= logOrigin(this.#o.ring(), this.#o.origin);
    return this.#origin;
  }

  /**
   * Holds checkpoints back until release(): while the log is checked against its last published checkpoint, and
   * for good when it does not extend it (a checkpoint of a rewritten log must not replace the published one).
   */
  hold(): void {
    this.#held = true;
  }

  release(): void {
    if (!this.#held) return;
    this.#held = false;
    if (this.#pendingSize > 0) {
      const size = this.#pendingSize;
      this.#pendingSize = 0;
      this.grew(size);
    }
  }

  /** The tree grew to `size`: a checkpoint follows now, or once a second has passed since the last one. */
  grew(size: number): void {
    if (this.#stopped || size <= this.#pendingSize) return;
    this.#pendingSize = size;
    if (this.#timer || this.#held) return;
    const wait = Math.max(0, this.#lastAt + this.#o.intervalMs - this.#o.clock.now().getTime());
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      void this.checkpoint().catch((error: unknown) => this.#o.logger.error({ err: error }, 'log checkpoint: signing a checkpoint failed'));
    }, wait);
  }

  /** Signs a checkpoint of the tree as it is now (or answers the latest when the tree has not grown since). */
  async checkpoint(): Promise<StoredCheckpoint | null> {
    if (this.#held) throw new CheckpointsHeldError('checkpoints are held: the log does not extend its last published checkpoint, or is being checked against it');
    while (this.#making) await this.#making.catch(() => undefined);
    this.#making = this.#make();
    try {
      return await this.#making;
    } finally {
      this.#making = undefined;
    }
  }

  async #make(): Promise<StoredCheckpoint | null> {
    const { tree, logger } = this.#o;
    const { size } = await tree.state();
    const latest = await tree.latestCheckpoint();
    if (latest && latest.size >= size) {
      this.#lastSize = latest.size;
      return latest;
    }
    const origin = await this.origin();
    if (origin === null) return null;
    const rootHash = await treeRoot(tree, size);
    const ring = this.#o.ring();
    const key = ring.current();
    const note = await signNote(checkpointBody({ origin, size, rootHash, extensions: [] }), [{ name: origin, publicKey: key.publicKey, sign: (message) => key.sign(message) }]);
    const signedAt = this.#o.clock.now().toISOString();
    const checkpoint: StoredCheckpoint = { size, rootHash, note, signedAt, cosignatures: {}, timestampToken: null };
    await tree.putCheckpoint(checkpoint);
    this.#lastAt = this.#o.clock.now().getTime();
    this.#lastSize = size;
    if (++this.#made % 1000 === 0) await tree.pruneCheckpoints(this.#o.keep).catch((error: unknown) => logger.warn({ err: error }, 'log checkpoint: pruning old checkpoints failed'));
    this.#o.onCheckpoint?.(checkpoint);
    for (const publisher of this.#o.publishers ?? []) {
      try {
        publisher.publish(checkpoint);
      } catch (error) {
        logger.error({ err: error, publisher: publisher.name }, 'log checkpoint: a publisher refused the checkpoint');
      }
    }
    return checkpoint;
  }

  /** The size of the last checkpoint made or found (-1 before any). */
  get lastSize(): number {
    return this.#lastSize;
  }

  /** Signs what the tree grew by since the last checkpoint (a graceful stop leaves none uncovered), then stops. */
  async stop(): Promise<void> {
    const pending = this.#timer !== undefined && !this.#held;
    this.#stopped = true;
    clearTimeout(this.#timer);
    this.#timer = undefined;
    await this.#making?.catch(() => undefined);
    if (pending) await this.#make().catch((error: unknown) => this.#o.logger.error({ err: error }, 'log checkpoint: signing the last checkpoint at stop failed'));
    await Promise.all((this.#o.publishers ?? []).map((publisher) => publisher.stop()));
  }
}

/** The checkpoint a note carries, with the note's body. */
export function checkpointOfNote(note: string): { body: string; origin: string; size: number; rootHash: Uint8Array } {
  const { body } = parseNote(note);
  return { body, ...parseCheckpointBody(body) };
}
