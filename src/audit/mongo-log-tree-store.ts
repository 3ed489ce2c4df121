/**
 * The log tree store on MongoDB (production, beside the read models: their database), so that every process of a
 * split deployment reads the same tree: API replicas on other hosts than the projector's serve proofs from it and
 * follow the start-up check's finding through it.
 *
 * Collections (prefix `log_tree_`):
 * - `log_tree_state`: `{_id: "tree", size, lastPosition, claim}`, the committed size of the tree and the position of
 *   its last leaf's event, with the claim of an append under way; `{_id: "integrity", record}`;
 * - `log_tree_hashes`: `{_id: stored-hash index, h: 32 bytes}`;
 * - `log_tree_leaves`: `{_id: leaf, p: position (20 digits, text order is numeric order), e: event id}`, indexed by e;
 * - `log_tree_checkpoints`: `{_id: size, root, note, signedAt, cosignatures: [{w, line}], timestampToken}`.
 *
 * No transactions and no partial indexes (a standalone server, FerretDB): an append is made visible by one
 * conditional update of the state document, its commit point. It first claims the append (the state's size is
 * `from` and no other claim is live: one conditional update, so a second appender gets TreeConflictError before it
 * writes anything), then writes its hashes and leaves (replacing any left by an append that died before its
 * commit), then sets the size and clears its claim, conditional on still holding it. Readers see the committed
 * size only: hashes, leaves and leaf lookups past it are ignored, so a half-written append is invisible. A claim
 * older than CLAIM_STALE_MS (an appender that died) may be taken over; what the tree holds is computed from the
 * log, so an appender that was only slow writes the same hashes the one that took over does, and its commit fails.
 * Checkpoints, cosignatures and tokens are single-document writes.
 */
import { randomUUID } from 'node:crypto';
import { Binary, MongoServerError, type AnyBulkWriteOperation, type Collection, type Db, type MongoClient } from 'mongodb';
import { decodeNullablePosition, encodePosition } from '../event-store/position.ts';
import { connectMongoDatabase } from '../read-models/mongo-side-database.ts';
import { DUPLICATE_KEY, translateError } from '../read-models/mongo-errors.ts';
import { storedHashIndex } from './merkle-tree.ts';
import { TreeConflictError, type IntegrityRecord, type LogTreeStore, type StoredCheckpoint, type TreeLeaf, type TreeState } from './log-tree-store.ts';

/** How old a claim must be before another appender may take it over (its appender died). */
export const CLAIM_STALE_MS = 60_000;

interface TreeDoc {
  _id: 'tree';
  size: number;
  lastPosition: string | null;
  claim: { token: string; from: number; at: Date } | null;
}

interface IntegrityDoc {
  _id: 'integrity';
  record: IntegrityRecord;
}

interface HashDoc {
  _id: number;
  h: Binary;
}

interface LeafDoc {
  _id: number;
  p: string;
  e: string;
}

interface CheckpointDoc {
  _id: number;
  root: Binary;
  note: string;
  signedAt: string;
  cosignatures: Array<{ w: string; line: string }>;
  timestampToken: string | null;
}

/** The log tree store on MongoDB; see the module comment. */
export class MongoLogTreeStore implements LogTreeStore {
  readonly #db: Db;
  readonly #client: MongoClient | undefined;
  readonly #state: Collection<TreeDoc | IntegrityDoc>;
  readonly #hashes: Collection<HashDoc>;
  readonly #leaves: Collection<LeafDoc>;
  readonly #checkpoints: Collection<CheckpointDoc>;
  #ready: Promise<void> | undefined;

  constructor(db: Db, options: { ownsClient?: MongoClient } = {}) {
    this.#db = db;
    this.#client = options.ownsClient;
    this.#state = db.collection('log_tree_state');
    this.#hashes = db.collection('log_tree_hashes');
    this.#leaves = db.collection('log_tree_leaves');
    this.#checkpoints = db.collection('log_tree_checkpoints');
  }

  /** Connects to `url` (database from the URL, else `annals`: the read models'), checks the server answers, and prepares the collections. */
  static async connect(url: string, options: { database?: string } = {}): Promise<MongoLogTreeStore> {
    const { client, db } = await connectMongoDatabase(url, { appName: 'annals-log-tree', database: options.database, fail: (message) => new Error(`log tree store: ${message}`) });
    const store = new MongoLogTreeStore(db, { ownsClient: client });
    try {
      await store.#prepare();
    } catch (error) {
      await client.close().catch(() => undefined);
      throw error;
    }
    return store;
  }

  #prepare(): Promise<void> {
    this.#ready ??= this.#run('prepare the log tree collections', async () => {
      await this.#leaves.createIndex({ e: 1 }, { name: 'by_event' });
      await this.#trees().updateOne({ _id: 'tree' }, { $setOnInsert: { size: 0, lastPosition: null, claim: null } }, { upsert: true });
    }).catch((error: unknown) => {
      this.#ready = undefined;
      throw error;
    });
    return this.#ready;
  }

  #trees(): Collection<TreeDoc> {
    return this.#state as unknown as Collection<TreeDoc>;
  }

  async #run<T>(what: string, work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (error) {
      throw translateError(error, what, this.#db);
    }
  }

  async #tree(): Promise<TreeDoc> {
    await this.#prepare();
    const doc = await this.#run('read the log tree state', () => this.#trees().findOne({ _id: 'tree' }));
    return doc ?? { _id: 'tree', size: 0, lastPosition: null, claim: null };
  }

  async state(): Promise<TreeState> {
    const tree = await this.#tree();
    return { size: tree.size, lastPosition: decodeNullablePosition(tree.lastPosition) };
  }

  async append(from: number, leaves: readonly TreeLeaf[], hashes: readonly Uint8Array[]): Promise<void> {
    await this.#prepare();
    const token = randomUUID();
    const now = Date.now();
    const claimed = await this.#run('claim a log tree append', () =>
      this.#trees().updateOne({ _id: 'tree', size: from, $or: [{ claim: null }, { 'claim.at': { $lt: new Date(now - CLAIM_STALE_MS) } }] }, { $set: { claim: { token, from, at: new Date(now) } } }),
    );
    if (claimed.matchedCount === 0) {
      const tree = await this.#tree();
      throw new TreeConflictError(tree.size !== from ? `the tree holds ${tree.size} leaves, not ${from}: another follower appended, or it was reset` : `another append to the tree is under way (since ${tree.claim?.at.toISOString() ?? '?'})`);
    }
    try {
      let index = storedHashIndex(0, from);
      const hashWrites: AnyBulkWriteOperation<HashDoc>[] = hashes.map((hash) => {
        const _id = index++;
        return { replaceOne: { filter: { _id }, replacement: { _id, h: new Binary(Buffer.from(hash)) }, upsert: true } };
      });
      const leafWrites: AnyBulkWriteOperation<LeafDoc>[] = leaves.map((leaf, i) => ({ replaceOne: { filter: { _id: from + i }, replacement: { _id: from + i, p: encodePosition(leaf.position), e: leaf.eventId }, upsert: true } }));
      await this.#run('write log tree hashes', async () => {
        if (hashWrites.length > 0) await this.#hashes.bulkWrite(hashWrites, { ordered: false });
        if (leafWrites.length > 0) await this.#leaves.bulkWrite(leafWrites, { ordered: false });
      });
      const last = leaves.at(-1);
      const committed = await this.#run('commit a log tree append', () =>
        this.#trees().updateOne({ _id: 'tree', 'claim.token': token }, { $set: { size: from + leaves.length, ...(last ? { lastPosition: encodePosition(last.position) } : {}), claim: null } }),
      );
      if (committed.matchedCount === 0) throw new TreeConflictError('another follower took the append over (this one was too slow): following again from the tree\'s state');
    } catch (error) {
      await this.#trees()
        .updateOne({ _id: 'tree', 'claim.token': token }, { $set: { claim: null } })
        .catch(() => undefined);
      throw error;
    }
  }

  async readHashes(indexes: readonly number[]): Promise<Uint8Array[]> {
    if (indexes.length === 0) return [];
    const unique = [...new Set(indexes)];
    const found = new Map<number, Uint8Array>();
    const docs = await this.#run('read log tree hashes', () => this.#hashes.find({ _id: { $in: unique } }).toArray());
    for (const doc of docs) found.set(doc._id, new Uint8Array(doc.h.buffer));
    return indexes.map((index) => {
      const hash = found.get(index);
      if (!hash) throw new Error(`the log tree holds no hash at index ${index}`);
      return hash;
    });
  }

  async leafOfEvent(eventId: string): Promise<{ leaf: number; position: bigint } | null> {
    return (await this.leavesOfEvents([eventId])).get(eventId) ?? null;
  }

  async leavesOfEvents(eventIds: readonly string[]): Promise<Map<string, { leaf: number; position: bigint }>> {
    const found = new Map<string, { leaf: number; position: bigint }>();
    if (eventIds.length === 0) return found;
    const { size } = await this.#tree();
    const docs = await this.#run('read log tree leaves', () => this.#leaves.find({ e: { $in: [...new Set(eventIds)] }, _id: { $lt: size } }).toArray());
    for (const doc of docs) if (!found.has(doc.e) || found.get(doc.e)!.leaf > doc._id) found.set(doc.e, { leaf: doc._id, position: BigInt(doc.p) });
    return found;
  }

  async leaves(from: number, count: number): Promise<TreeLeaf[]> {
    const { size } = await this.#tree();
    const to = Math.min(from + count, size);
    if (to <= from) return [];
    const docs = await this.#run('read log tree leaves', () => this.#leaves.find({ _id: { $gte: from, $lt: to } }).sort({ _id: 1 }).toArray());
    return docs.map((doc) => ({ position: BigInt(doc.p), eventId: doc.e }));
  }

  async putCheckpoint(c: StoredCheckpoint): Promise<void> {
    const doc: CheckpointDoc = { _id: c.size, root: new Binary(Buffer.from(c.rootHash)), note: c.note, signedAt: c.signedAt, cosignatures: Object.entries(c.cosignatures).map(([w, line]) => ({ w, line })), timestampToken: c.timestampToken };
    try {
      await this.#checkpoints.insertOne(doc);
    } catch (error) {
      // One checkpoint per size: the first is kept.
      if (error instanceof MongoServerError && error.code === DUPLICATE_KEY) return;
      throw translateError(error, 'store a checkpoint', this.#db);
    }
  }

  async addCosignature(size: number, witness: string, line: string): Promise<void> {
    // An array of {w, line}: witness names hold dots, which field paths would split. The last line per witness counts.
    await this.#run('add a cosignature', () => this.#checkpoints.updateOne({ _id: size }, { $push: { cosignatures: { w: witness, line } } }));
  }

  async setTimestampToken(size: number, token: string): Promise<void> {
    await this.#run('store a timestamp token', () => this.#checkpoints.updateOne({ _id: size }, { $set: { timestampToken: token } }));
  }

  async latestCheckpoint(): Promise<StoredCheckpoint | null> {
    const [doc] = await this.#run('read the latest checkpoint', () => this.#checkpoints.find().sort({ _id: -1 }).limit(1).toArray());
    return checkpointOf(doc);
  }

  async checkpointOfSize(size: number): Promise<StoredCheckpoint | null> {
    return checkpointOf((await this.#run('read a checkpoint', () => this.#checkpoints.findOne({ _id: size }))) ?? undefined);
  }

  async pruneCheckpoints(keep: number): Promise<void> {
    await this.#run('prune checkpoints', async () => {
      const [oldestKept] = await this.#checkpoints.find({}, { projection: { _id: 1 } }).sort({ _id: -1 }).skip(Math.max(0, keep - 1)).limit(1).toArray();
      if (oldestKept) await this.#checkpoints.deleteMany({ _id: { $lt: oldestKept._id }, 'cosignatures.0': { $exists: false } });
    });
  }

  async integrity(): Promise<IntegrityRecord | null> {
    const doc = (await this.#run('read the integrity record', () => this.#state.findOne({ _id: 'integrity' }))) as IntegrityDoc | null;
    return doc?.record ?? null;
  }

  async setIntegrity(record: IntegrityRecord): Promise<void> {
    await this.#run('store the integrity record', () => (this.#state as unknown as Collection<IntegrityDoc>).replaceOne({ _id: 'integrity' }, { record }, { upsert: true }));
  }

  async reset(): Promise<void> {
    await this.#prepare();
    await this.#run('reset the log tree', async () => {
      // The size first: nothing of the old tree is visible from then on, whatever the deletes leave behind.
      await this.#trees().updateOne({ _id: 'tree' }, { $set: { size: 0, lastPosition: null, claim: null } });
      await Promise.all([this.#hashes.deleteMany({}), this.#leaves.deleteMany({}), this.#checkpoints.deleteMany({}), this.#state.deleteOne({ _id: 'integrity' })]);
    });
  }

  async close(): Promise<void> {
    await this.#client?.close();
  }
}

function checkpointOf(doc: CheckpointDoc | undefined): StoredCheckpoint | null {
  if (!doc) return null;
  return {
    size: doc._id,
    rootHash: new Uint8Array(doc.root.buffer),
    note: doc.note,
    signedAt: doc.signedAt,
    cosignatures: Object.fromEntries(doc.cosignatures.map(({ w, line }) => [w, line])),
    timestampToken: doc.timestampToken,
  };
}
