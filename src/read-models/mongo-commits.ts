/**
 * Commits of the MongoDB read-model store: a batch's documents and its checkpoint land together or not at
 * all (ReadModelStore.commit).
 *
 * On a replica set (or through mongos) a commit is a transaction: the generation's record is read and its
 * checkpoint compared with the expected one, the lease checked, the stored positions of the written ids read
 * (a write not newer than the stored document is passed over: inside a transaction, a write that collides
 * aborts it), then the deletes, the puts in position order and the record's new checkpoint, all in one
 * snapshot transaction. A unique index that refuses a put aborts it, and nothing lands.
 *
 * A standalone server has no transactions (nor has FerretDB). There a commit is journaled:
 * 1. the batch's final documents, less the writes that would change nothing, are checked against the
 *    collections' unique indexes as if applied in order (mongo-unique-keys.ts): a commit that would break
 *    one fails before anything is written;
 * 2. they are recorded as the generation's journal, in one conditional write of its record that also checks
 *    its checkpoint is the one expected and that no other journal is pending: the commit point. A journal of
 *    more than INLINE_JOURNAL_BYTES goes first to `projection_journal` in chunks, which the record names;
 *    chunks no record names are left-overs of a commit that failed before its commit point;
 * 3. the writes are applied, each guarded by position (it replaces or deletes only an older version);
 * 4. one write of the record sets the checkpoint and removes the journal.
 * A failure or a crash after step 2 leaves the journal, which completeInterrupted applies again (step 3 is
 * idempotent) before anyone folds into the generation again, as does the next commit before its own step 1.
 * Until then readers may see the commit's documents in part; the checkpoint, which read-your-writes waits
 * for, moves only once all of them are there. A projector that stalls longer than its lease in the middle of
 * step 3 and then goes on applying after another has taken over is the one case this does not cover (the
 * position guards keep it from replacing newer documents, not from putting back one the other deleted): on
 * such servers keep the lease's TTL far above any pause a process may take.
 */
import { randomUUID } from 'node:crypto';
import { BSON, MongoBulkWriteError, MongoServerError, type AnyBulkWriteOperation, type ClientSession, type Collection, type Db } from 'mongodb';
import { decodeNullablePosition, encodePosition } from '../event-store/position.ts';
import { valueAt } from './document-values.ts';
import { DUPLICATE_KEY, isUnavailableError } from './mongo-errors.ts';
import type { MongoLeases } from './mongo-leases.ts';
import { generationId, missingGeneration, type JournalRecord, type JournalWrite, type MongoGenerationRegistry, type StoredGeneration } from './mongo-generation-registry.ts';
import { DOC_FIELD, physicalCollectionName, planCollectionWrites, POSITION_FIELD, UNIQUE_INDEX_SUFFIX } from './mongo-query.ts';
import { findUniqueViolation, uniqueKeysOf, UNIQUE_KEYS_FIELD, type UniqueKeySpec } from './mongo-unique-keys.ts';
import {
  CheckpointConflictError,
  ReadModelError,
  UniqueConstraintError,
  type CommitOptions,
  type Document,
  type DocumentWrite,
  type ModelTarget,
} from './read-model-store.ts';

export const JOURNAL_CHUNKS_COLLECTION = 'projection_journal';
/** A journal up to this size (BSON) is held by the generation's record itself; a larger one goes in chunks. */
export const INLINE_JOURNAL_BYTES = 1024 * 1024;
/** The most a chunk holds: under MongoDB's 16 MiB per document, with room for one large document. */
const CHUNK_BYTES = 8 * 1024 * 1024;

export type CommitMode = 'transaction' | 'journal';

interface JournalChunk {
  _id: string;
  generation: string;
  journal: string;
  n: number;
  writes: JournalWrite[];
}

export interface StoredDocument {
  _id: string;
  _pos: string;
  doc: Document;
  _unique?: Record<string, string>;
}

/** One collection's writes of a batch, the last per id. */
interface CollectionBatch {
  collection: string;
  physical: string;
  writes: DocumentWrite[];
}

/** What a commit reads of the generation's record. */
const COMMIT_FIELDS = { checkpoint: 1, uniques: 1, 'journal.id': 1, lease: 1 } as const;

/** A journal is pending on the record a transaction read: it is completed outside the transaction first. */
class PendingJournal extends Error {}

export interface MongoCommitsOptions {
  /** How commits land: detected from the server when unset (transactions where it has them). */
  mode?: CommitMode;
}

export class MongoCommits {
  readonly #db: Db;
  readonly #registry: MongoGenerationRegistry;
  readonly #leases: MongoLeases;
  readonly #chunks: Collection<JournalChunk>;
  #mode: Promise<CommitMode> | undefined;
  /** Physical collection → its unique indexes that exist (name and fields), from listIndexes. */
  readonly #enforced = new Map<string, Promise<UniqueKeySpec[]>>();
  /** Generation id → the unique indexes its collections declare, as last read from its record. */
  readonly #declared = new Map<string, Record<string, UniqueKeySpec[]>>();

  constructor(db: Db, registry: MongoGenerationRegistry, leases: MongoLeases, options: MongoCommitsOptions = {}) {
    this.#db = db;
    this.#registry = registry;
    this.#leases = leases;
    this.#chunks = db.collection<JournalChunk>(JOURNAL_CHUNKS_COLLECTION);
    if (options.mode) this.#mode = Promise.resolve(options.mode);
  }

  /** Transactions when the server has them (a replica set member or mongos), else the journal. Asked once. */
  mode(): Promise<CommitMode> {
    this.#mode ??= this.#probeTransactions().catch((error: unknown) => {
      this.#mode = undefined;
      throw error;
    });
    return this.#mode;
  }

  /** The indexes of these collections changed (created, dropped): read them again, and the generation's declarations. */
  forgetIndexes(physical: readonly string[], generation?: ModelTarget): void {
    for (const name of physical) this.#enforced.delete(name);
    if (generation) this.#declared.delete(generationId(generation.projection, generation.generation));
  }

  async commit(target: ModelTarget, writes: readonly DocumentWrite[], checkpoint: bigint, now: string, options: CommitOptions): Promise<void> {
    const batches = batchesOf(target, writes);
    if ((await this.mode()) === 'transaction') {
      for (;;) {
        try {
          return await this.#commitInTransaction(target, batches, checkpoint, now, options);
        } catch (error) {
          if (!(error instanceof PendingJournal)) throw error;
          // Left by a journaled commit (the server was standalone then): completed first.
          await this.completeInterrupted(target);
        }
      }
    }
    // A record that changes under the commit between its read and its commit point (another writer) makes
    // it read again, a few times, unless the caller expects a checkpoint (then it is a conflict).
    for (let attempt = 0; attempt < 5; attempt++) {
      if (await this.#commitWithJournal(target, batches, checkpoint, now, options)) return;
    }
    throw new ReadModelError(`commit into ${target.projection} generation ${target.generation} kept meeting other commits; retry`);
  }

  /**
   * Applies the generation's journal, if any, and stores its checkpoint (idempotent: several may run at
   * once). True when there was one.
   */
  async completeInterrupted(target: ModelTarget): Promise<boolean> {
    const record = await this.#registry.records.findOne({ _id: generationId(target.projection, target.generation) }, { projection: { journal: 1, uniques: 1 } });
    if (!record?.journal) return false;
    await this.#applyJournal(target, record, record.journal);
    return true;
  }

  /** One attempt: true once committed, false when the record changed under it (read it again). */
  async #commitWithJournal(target: ModelTarget, batches: CollectionBatch[], checkpoint: bigint, now: string, options: CommitOptions): Promise<boolean> {
    const id = generationId(target.projection, target.generation);
    // A projector's commit names the checkpoint it expects: when the generation's declarations are known, the
    // record is not read first; a commit point that misses then reads it, to tell why (see below).
    const declared = options.expectedCheckpoint === undefined ? undefined : this.#declared.get(id);
    let record: Pick<StoredGeneration, 'checkpoint' | 'uniques' | 'journal' | 'lease'> | null = declared
      ? { checkpoint: options.expectedCheckpoint === null ? null : encodePosition(options.expectedCheckpoint!), uniques: declared }
      : await this.#registry.records.findOne({ _id: id }, { projection: COMMIT_FIELDS });
    if (!record) throw missingGeneration(target);
    if (record.journal) {
      await this.completeInterrupted(target);
      record = await this.#registry.records.findOne({ _id: id }, { projection: COMMIT_FIELDS });
      if (!record) throw missingGeneration(target);
      if (record.journal) return false;
    }
    if (!declared) this.#declared.set(id, record.uniques ?? {});
    const stored = decodeNullablePosition(record.checkpoint);
    this.#checkExpected(target, stored, options);
    // The lease is checked by the commit point itself, against the holder stamped on the record; a record
    // read here that names another holder (or none) is settled from the lease, and read again.
    if (!declared && options.leaseHolder !== undefined && record.lease?.holder !== options.leaseHolder) {
      await this.#leases.confirm(target, options.leaseHolder, record.lease?.holder);
      return false;
    }
    const effective = await this.#effectiveWrites(batches, 'journal');
    const next = stored === null || checkpoint > stored ? checkpoint : stored;
    // The record as read: its checkpoint, the lease's holder, and no journal (the commit point's condition).
    const unchanged = { _id: id, checkpoint: record.checkpoint, journal: { $exists: false }, ...(options.leaseHolder === undefined ? {} : { 'lease.holder': options.leaseHolder }) };
    // Unread, the record may hold a journal, another checkpoint or another holder's stamp; read, it may have
    // changed since: a miss reads it in the next attempt, which tells which.
    const missed = (matched: number) => {
      if (matched > 0 || (!declared && options.leaseHolder === undefined)) return this.#landed(target, matched, stored, options);
      this.#declared.delete(id);
      return false;
    };
    if (effective.length === 0) {
      if (next === stored) return true;
      const moved = await this.#registry.records.updateOne(unchanged, { $set: { checkpoint: encodePosition(next), updatedAt: now } });
      return missed(moved.matchedCount);
    }
    const journal: JournalRecord = { id: randomUUID(), checkpoint: encodePosition(next), at: now };
    const size = effective.reduce((total, write) => total + BSON.calculateObjectSize(write), 0);
    if (size <= INLINE_JOURNAL_BYTES) {
      journal.writes = effective;
    } else {
      // Left-overs of commits that failed before their commit point go first.
      await this.#chunks.deleteMany({ generation: id });
      const chunks = chunked(effective, CHUNK_BYTES).map((writes, n) => ({ _id: `${journal.id}:${n}`, generation: id, journal: journal.id, n, writes }));
      await this.#chunks.insertMany(chunks, { ordered: true });
      journal.chunks = chunks.length;
    }
    const recorded = await this.#registry.records.updateOne(unchanged, { $set: { journal } });
    if (!missed(recorded.matchedCount)) return false;
    await this.#applyJournal(target, record, journal);
    return true;
  }

  /** Whether a conditional write of the record matched; when it did not, a conflict if the caller expects a checkpoint. */
  #landed(target: ModelTarget, matched: number, stored: bigint | null, options: CommitOptions): boolean {
    if (matched > 0) return true;
    if (options.expectedCheckpoint !== undefined) throw new CheckpointConflictError(target, options.expectedCheckpoint, stored);
    return false;
  }

  #checkExpected(target: ModelTarget, stored: bigint | null, options: CommitOptions): void {
    if (options.expectedCheckpoint !== undefined && options.expectedCheckpoint !== stored) {
      throw new CheckpointConflictError(target, options.expectedCheckpoint, stored);
    }
  }

  /**
   * The writes that change something, as journal writes: those not older than the stored document. Read for
   * the collections where it matters: on the journal, those with unique indexes (whose check needs the stored
   * documents; elsewhere the apply passes stale writes over itself); in a transaction, all (a stale write
   * there would collide and abort it). On the journal, the unique indexes are checked here.
   */
  async #effectiveWrites(batches: CollectionBatch[], mode: CommitMode, session?: ClientSession): Promise<JournalWrite[]> {
    const perCollection = await Promise.all(
      batches.map(async (batch) => {
        const enforced = mode === 'journal' ? await this.#enforcedUniques(batch.physical) : [];
        if (mode === 'journal' && enforced.length === 0) return batch.writes;
        const collection = this.#db.collection<StoredDocument>(batch.physical);
        const fields = new Set(enforced.flatMap((spec) => spec.fields.map((field) => `${DOC_FIELD}.${field}`)));
        const projection = { [POSITION_FIELD]: 1, ...Object.fromEntries([...fields].map((field) => [field, 1])) };
        const found = await collection.find({ _id: { $in: batch.writes.map((w) => w.id) } }, { projection, session }).toArray();
        const storedDocs = new Map(found.map((s) => [s._id, s]));
        const fresh = batch.writes.filter((w) => {
          const s = storedDocs.get(w.id);
          return !s || s._pos < encodePosition(w.position);
        });
        if (enforced.length > 0) await this.#checkUnique(batch, enforced, fresh, storedDocs, collection);
        return fresh;
      }),
    );
    return perCollection.flat().map((w) => ({ c: w.collection, i: w.id, p: encodePosition(w.position), d: w.doc }));
  }

  /** Fails with UniqueConstraintError when the writes, applied in order, would break one of the collection's unique indexes. */
  async #checkUnique(batch: CollectionBatch, enforced: UniqueKeySpec[], fresh: DocumentWrite[], stored: Map<string, StoredDocument>, collection: Collection<StoredDocument>): Promise<void> {
    const { deletes, puts } = planCollectionWrites(fresh);
    const holders: Array<{ id: string; doc: Document }> = [];
    for (const spec of enforced) {
      const tuples = puts.map((p) => spec.fields.map((field) => valueAt(p.doc!, field))).filter((values) => values.every((v) => v !== undefined && v !== null));
      if (tuples.length === 0) continue;
      const filter =
        spec.fields.length === 1
          ? { [`${DOC_FIELD}.${spec.fields[0]}`]: { $in: tuples.map((t) => t[0]) } }
          : { $or: tuples.map((t) => Object.fromEntries(spec.fields.map((field, i) => [`${DOC_FIELD}.${field}`, { $eq: t[i] }]))) };
      const projection = Object.fromEntries(spec.fields.map((field) => [`${DOC_FIELD}.${field}`, 1]));
      for (const found of await collection.find(filter, { projection }).toArray()) holders.push({ id: found._id, doc: found.doc ?? {} });
    }
    const storedDocs = new Map([...stored].map(([id, s]) => [id, s.doc ?? {}]));
    const violation = findUniqueViolation(enforced, deletes, puts, storedDocs, holders);
    if (violation) {
      throw new UniqueConstraintError(batch.collection, violation.index, violation.id, `its value is held by ${JSON.stringify(violation.holder)}`);
    }
  }

  /** The collection's unique indexes that exist, each with its fields (from its query index, which has the same name). */
  #enforcedUniques(physical: string): Promise<UniqueKeySpec[]> {
    let found = this.#enforced.get(physical);
    if (!found) {
      found = (async () => {
        let indexes: Array<{ name?: string; key?: Record<string, unknown> }>;
        try {
          indexes = await this.#db.collection(physical).listIndexes().toArray();
        } catch (error) {
          if (error instanceof MongoServerError && error.code === 26) return []; // NamespaceNotFound
          throw error;
        }
        const byName = new Map(indexes.map((index) => [index.name, index]));
        return indexes
          .filter((index) => index.name?.endsWith(UNIQUE_INDEX_SUFFIX))
          .map((index) => {
            const name = index.name!.slice(0, -UNIQUE_INDEX_SUFFIX.length);
            const key = byName.get(name)?.key ?? index.key ?? {};
            return { name, fields: Object.keys(key).filter((path) => path.startsWith(`${DOC_FIELD}.`)).map((path) => path.slice(DOC_FIELD.length + 1)) };
          })
          .filter((spec) => spec.fields.length > 0);
      })();
      found.catch(() => this.#enforced.delete(physical));
      this.#enforced.set(physical, found);
    }
    return found;
  }

  /** Applies a journal (step 3), then stores its checkpoint and removes it (step 4). */
  async #applyJournal(target: ModelTarget, record: Pick<StoredGeneration, 'uniques'>, journal: JournalRecord): Promise<void> {
    const id = generationId(target.projection, target.generation);
    const writes = journal.writes ?? (await this.#loadChunks(id, journal));
    const byCollection = new Map<string, JournalWrite[]>();
    for (const write of writes) {
      let list = byCollection.get(write.c);
      if (!list) byCollection.set(write.c, (list = []));
      list.push(write);
    }
    const outcomes = await Promise.allSettled(
      [...byCollection].map(([collection, list]) => this.#applyCollection(target, collection, list, record.uniques?.[collection] ?? [])),
    );
    const failed = outcomes.find((outcome): outcome is PromiseRejectedResult => outcome.status === 'rejected');
    if (failed) throw failed.reason;
    const stamps = Object.fromEntries([...byCollection.keys()].map((collection) => [`stamps.${collection}`, journal.checkpoint]));
    await this.#registry.records.updateOne({ _id: id, 'journal.id': journal.id }, { $set: { checkpoint: journal.checkpoint, updatedAt: journal.at, ...stamps }, $unset: { journal: '' } });
    if (journal.chunks !== undefined) await this.#chunks.deleteMany({ journal: journal.id });
  }

  async #loadChunks(id: string, journal: JournalRecord): Promise<JournalWrite[]> {
    const chunks = await this.#chunks.find({ journal: journal.id }).sort({ n: 1 }).toArray();
    if (chunks.length !== journal.chunks || chunks.some((chunk, n) => chunk.n !== n)) {
      throw new ReadModelError(`the journal ${journal.id} of ${id} names ${journal.chunks} chunks; ${chunks.length} are stored`);
    }
    return chunks.flatMap((chunk) => chunk.writes);
  }

  /**
   * One collection's writes of a journal, each guarded by position: the deletes, then the puts in position
   * order (an ordered bulk write). A put that finds a newer version stored collides on its id (its upsert):
   * it is passed over, and the rest sent again.
   */
  async #applyCollection(target: ModelTarget, collection: string, writes: JournalWrite[], uniques: readonly UniqueKeySpec[]): Promise<void> {
    const physical = physicalCollectionName(target.projection, collection, target.generation);
    const stored = this.#db.collection<StoredDocument>(physical);
    const deletes = writes.filter((w) => w.d === null);
    const puts = writes.filter((w) => w.d !== null).sort((a, b) => (a.p < b.p ? -1 : a.p > b.p ? 1 : 0));
    if (deletes.length > 0) {
      await stored.bulkWrite(deletes.map((w) => ({ deleteOne: { filter: { _id: w.i, _pos: { $lt: w.p } } } })), { ordered: false });
    }
    let rest = puts;
    while (rest.length > 0) {
      try {
        await stored.bulkWrite(rest.map((w) => guardedPut(w, uniques)), { ordered: true, ignoreUndefined: true });
        return;
      } catch (error) {
        const at = collidedAt(error);
        if (at === null) throw error;
        const write = rest[at]!;
        // A collision on the id: a newer version is stored. On another index: the check before the commit
        // point missed a writer (or the generation was built by a version without it): nothing to pass over.
        const current = await stored.findOne({ _id: write.i }, { projection: { [POSITION_FIELD]: 1 } });
        if (!current || current._pos < write.p) {
          throw new ReadModelError(`the journal of ${target.projection} generation ${target.generation} cannot apply its write of ${JSON.stringify(write.i)} in ${collection}: ${(error as Error).message}`, { cause: error });
        }
        rest = rest.slice(at + 1);
      }
    }
  }

  async #commitInTransaction(target: ModelTarget, batches: CollectionBatch[], checkpoint: bigint, now: string, options: CommitOptions): Promise<void> {
    const id = generationId(target.projection, target.generation);
    const session = this.#db.client.startSession();
    try {
      await session.withTransaction(
        async () => {
          const record = await this.#registry.records.findOne({ _id: id }, { session, projection: COMMIT_FIELDS });
          if (!record) throw missingGeneration(target);
          if (record.journal) throw new PendingJournal();
          const stored = decodeNullablePosition(record.checkpoint);
          this.#checkExpected(target, stored, options);
          // In the transaction's snapshot: the stamped holder, else the lease itself (which stamps the record).
          if (options.leaseHolder !== undefined && record.lease?.holder !== options.leaseHolder) {
            await this.#leases.confirm(target, options.leaseHolder, record.lease?.holder, session);
          }
          const effective = await this.#effectiveWrites(batches, 'transaction', session);
          const next = stored === null || checkpoint > stored ? checkpoint : stored;
          const written = new Set<string>();
          for (const batch of batches) {
            const mine = effective.filter((w) => w.c === batch.collection);
            if (mine.length === 0) continue;
            written.add(batch.collection);
            await this.#writeInTransaction(batch, mine, record.uniques?.[batch.collection] ?? [], session);
          }
          if (next === stored && written.size === 0) return;
          const stamps = Object.fromEntries([...written].map((collection) => [`stamps.${collection}`, encodePosition(next)]));
          await this.#registry.records.updateOne({ _id: id }, { $set: { checkpoint: encodePosition(next), updatedAt: now, ...stamps } }, { session });
        },
        { readConcern: { level: 'snapshot' }, writeConcern: { w: 'majority' }, readPreference: 'primary' },
      );
    } finally {
      await session.endSession();
    }
  }

  /** One collection's fresh writes in the transaction: deletes, then puts in position order; a unique index that refuses one aborts it. */
  async #writeInTransaction(batch: CollectionBatch, writes: JournalWrite[], uniques: readonly UniqueKeySpec[], session: ClientSession): Promise<void> {
    const collection = this.#db.collection<StoredDocument>(batch.physical);
    const deletes = writes.filter((w) => w.d === null).map((w) => w.i);
    const puts = writes.filter((w) => w.d !== null).sort((a, b) => (a.p < b.p ? -1 : a.p > b.p ? 1 : 0));
    if (deletes.length > 0) await collection.deleteMany({ _id: { $in: deletes } }, { session });
    if (puts.length === 0) return;
    try {
      await collection.bulkWrite(
        puts.map((w) => ({ replaceOne: { filter: { _id: w.i }, replacement: storedFields(w, uniques), upsert: true } })),
        { ordered: true, session, ignoreUndefined: true },
      );
    } catch (error) {
      const at = collidedAt(error);
      if (at === null) throw error;
      const message = firstWriteError(error)?.errmsg;
      const index = (/index: (\S+)/.exec(message ?? '')?.[1] ?? '?').replace(UNIQUE_INDEX_SUFFIX, '');
      throw new UniqueConstraintError(batch.collection, index, puts[at]?.i ?? null, message ?? 'duplicate key');
    }
  }

  async #probeTransactions(): Promise<CommitMode> {
    const session = this.#db.client.startSession();
    try {
      await session.withTransaction(async () => {
        await this.#registry.records.findOne({ _id: '' }, { session });
      });
      return 'transaction';
    } catch (error) {
      // A standalone server refuses transaction numbers (IllegalOperation); FerretDB refuses their fields.
      if (isUnavailableError(error)) throw error;
      return 'journal';
    } finally {
      await session.endSession();
    }
  }
}

/** The batch's writes by collection, the one of the highest position kept per id (it is the document's final state). */
function batchesOf(target: ModelTarget, writes: readonly DocumentWrite[]): CollectionBatch[] {
  const batches = new Map<string, { collection: string; writes: Map<string, DocumentWrite> }>();
  for (const write of writes) {
    let batch = batches.get(write.collection);
    if (!batch) batches.set(write.collection, (batch = { collection: write.collection, writes: new Map() }));
    const previous = batch.writes.get(write.id);
    if (!previous || previous.position <= write.position) batch.writes.set(write.id, write);
  }
  return [...batches.values()].map((batch) => ({
    collection: batch.collection,
    physical: physicalCollectionName(target.projection, batch.collection, target.generation),
    writes: [...batch.writes.values()],
  }));
}

/** What a put stores: its position, its document, and its keys in the collection's unique indexes. */
function storedFields(write: JournalWrite, uniques: readonly UniqueKeySpec[]): Omit<StoredDocument, '_id'> {
  const keys = uniqueKeysOf(write.d!, uniques);
  return { [POSITION_FIELD]: write.p, [DOC_FIELD]: write.d!, ...(keys ? { [UNIQUE_KEYS_FIELD]: keys } : {}) } as Omit<StoredDocument, '_id'>;
}

/** A put guarded by position: it replaces an older version, or inserts; a newer version stored makes its upsert collide on the id. */
function guardedPut(write: JournalWrite, uniques: readonly UniqueKeySpec[]): AnyBulkWriteOperation<StoredDocument> {
  return { replaceOne: { filter: { _id: write.i, _pos: { $lt: write.p } }, replacement: storedFields(write, uniques), upsert: true } };
}

/** The index (in its bulk write) of the write an ordered bulk write stopped at on a duplicate key; null for any other failure. */
function collidedAt(error: unknown): number | null {
  const first = firstWriteError(error);
  return first && first.code === DUPLICATE_KEY ? first.index : null;
}

/** The first write error of a bulk write that failed for its writes (not for the network, a closed client or its write concern). */
function firstWriteError(error: unknown): { code: number; index: number; errmsg?: string | undefined } | undefined {
  if (!(error instanceof MongoBulkWriteError) || error.errorResponse instanceof Error || error.result?.getWriteConcernError()) return undefined;
  const writeErrors = Array.isArray(error.writeErrors) ? error.writeErrors : [error.writeErrors];
  return writeErrors[0];
}

/** Journal writes cut into runs of at most `bytes` (BSON), one write per run at least. */
function chunked(writes: JournalWrite[], bytes: number): JournalWrite[][] {
  const chunks: JournalWrite[][] = [];
  let current: JournalWrite[] = [];
  let size = 0;
  for (const write of writes) {
    const n = BSON.calculateObjectSize(write);
    if (current.length > 0 && size + n > bytes) {
      chunks.push(current);
      current = [];
      size = 0;
    }
    current.push(write);
    size += n;
  }
  if (current.length > 0) chunks.push(current);
  return chunks;
}
