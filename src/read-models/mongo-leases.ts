/**
 * The projector leases of the MongoDB read-model store, and their fence in commits.
 *
 * `projection_leases` holds one lease per generation (`_id` "<projection>:<generation>"): its holder and
 * until when. Taking it is one conditional upsert; a taker that finds it held by another, unexpired,
 * collides on `_id`.
 *
 * The holder is also stamped on the generation's record (`lease: {holder, expiresAt}`) when it changes
 * hands, so that a commit checks it in the same conditional write that is its commit point (mongo-commits.ts)
 * instead of reading the lease first: no extra round trip per commit, and no gap between the check and the
 * write. A stamp only replaces one of an earlier or equal expiry, so a taker delayed between its lease and
 * its stamp cannot put its name back over a later holder's. A record without the holder's stamp (a lease
 * taken before the record existed, a crash between the two writes, a record of an older version) is
 * settled from the lease itself by confirm(), which stamps it when the lease is the caller's.
 */
import { MongoServerError, type ClientSession, type Collection, type Db } from 'mongodb';
import { DUPLICATE_KEY } from './mongo-errors.ts';
import { generationId, type MongoGenerationRegistry } from './mongo-generation-registry.ts';
import { LeaseLostError, type LeaseRecord, type ModelTarget } from './read-model-store.ts';

export const LEASES_COLLECTION = 'projection_leases';

interface StoredLease {
  _id: string;
  holder: string;
  expiresAt: string;
}

export class MongoLeases {
  readonly #leases: Collection<StoredLease>;

  constructor(
    db: Db,
    private readonly registry: MongoGenerationRegistry,
  ) {
    this.#leases = db.collection<StoredLease>(LEASES_COLLECTION);
  }

  /**
   * ReadModelStore.acquireLease: one conditional upsert, and when the lease changes hands, the new holder's
   * stamp on the generation's record (a renewal by the holder writes nothing more).
   */
  async acquire(target: ModelTarget, holder: string, now: string, ttlMs: number, takeOverFrom?: string): Promise<boolean> {
    const id = generationId(target.projection, target.generation);
    const expiresAt = new Date(Date.parse(now) + ttlMs).toISOString();
    let before: StoredLease | null;
    try {
      before = await this.#leases.findOneAndUpdate(
        { _id: id, $or: [{ holder: { $in: [holder, takeOverFrom ?? holder] } }, { expiresAt: { $lte: now } }] },
        { $set: { holder, expiresAt } },
        { upsert: true, returnDocument: 'before' },
      );
    } catch (error) {
      if (error instanceof MongoServerError && error.code === DUPLICATE_KEY) return false;
      throw error;
    }
    if (before?.holder !== holder) await this.#stamp(id, { holder, expiresAt });
    return true;
  }

  /** Gives the lease up if `holder` holds it, and its stamp with it. */
  async release(target: ModelTarget, holder: string): Promise<void> {
    const id = generationId(target.projection, target.generation);
    await this.#leases.deleteOne({ _id: id, holder });
    await this.registry.records.updateOne({ _id: id, 'lease.holder': holder }, { $unset: { lease: '' } });
  }

  async get(target: ModelTarget): Promise<LeaseRecord | null> {
    const lease = await this.#leases.findOne({ _id: generationId(target.projection, target.generation) });
    return lease ? { holder: lease.holder, expiresAt: lease.expiresAt } : null;
  }

  /** Removes the lease of a generation being dropped. */
  async drop(target: ModelTarget): Promise<void> {
    await this.#leases.deleteOne({ _id: generationId(target.projection, target.generation) });
  }

  /**
   * For a commit whose record does not carry `holder`'s stamp (`stamped` is the holder it names): fails with
   * LeaseLostError unless the lease is `holder`'s; then stamps the record with it, so that the commit point,
   * tried again, finds it.
   */
  async confirm(target: ModelTarget, holder: string, stamped: string | undefined, session?: ClientSession): Promise<void> {
    const id = generationId(target.projection, target.generation);
    const lease = await this.#leases.findOne({ _id: id }, { session });
    if (lease?.holder !== holder) throw new LeaseLostError(target, holder, lease?.holder ?? null);
    if (stamped !== holder) await this.#stamp(id, { holder, expiresAt: lease.expiresAt }, session);
  }

  /** Stamps the record with a holder, unless it names one of a later expiry. */
  async #stamp(id: string, lease: { holder: string; expiresAt: string }, session?: ClientSession): Promise<void> {
    await this.registry.records.updateOne({ _id: id, $or: [{ lease: { $exists: false } }, { 'lease.expiresAt': { $lte: lease.expiresAt } }] }, { $set: { lease } }, { session });
  }
}
