import { Binary, MongoServerError, type Collection, type Db, type MongoClient } from 'mongodb';
import { connectMongoDatabase } from '../read-models/mongo-side-database.ts';
import { assertKey, assertSigningKeyRecord, KeyStoreError, type KeyStore, type SigningKeyRecord } from './key-store.ts';

interface KeyDoc {
  _id: string;
  key: Binary;
}

interface TombstoneDoc {
  _id: string;
}

interface SigningKeyDoc {
  _id: string;
  keyId: string;
  privateJwk: string;
  publicJwk: string;
  createdAt: string;
}

/** A key document as versions before the tombstones kept it (in the read models' database): a destroyed key was `key: null, destroyed: true`. */
interface LegacyKeyDoc {
  _id: string;
  key: Binary | null;
  destroyed: boolean;
}

const KEYS = 'submission_keys';
const TOMBSTONES = 'destroyed_submission_keys';
const SIGNING_KEYS = 'signing_keys';
const DUPLICATE_KEY = 11000;

/**
 * The production key store, in a MongoDB database of its own (MONGODB_KEYS_DATABASE, by default the read
 * models' database followed by `_keys`): the read models are rebuilt, and an operator who drops their
 * database to do it must not take every contact-form submission's key with it.
 *
 * - `submission_keys`: one document per live key. Destroying a key deletes its document; the id's
 *   tombstone, in `destroyed_submission_keys`, holds the id alone, never the key, so that it can never be
 *   given a key again. A destroy writes the tombstone first, then deletes the key; a put inserts the key, then
 *   looks for a tombstone (and takes its key back out when it finds one): whatever the interleaving, no key
 *   outlives its tombstone, and reads never answer a key whose id has one.
 * - `signing_keys`: one document per name.
 *
 * What a delete does not reach, and what the operator must do about it. The key leaves every read path at
 * once, but MongoDB (WiredTiger) does not overwrite a deleted document's bytes: they stay in the collection's
 * data file until its space is reused or `compact` rewrites the file; the journal keeps the insert until its
 * file is recycled (100 MB files); on a replica set the oplog keeps it until the oplog rolls over, and every
 * secondary and backup keeps its own copies. Nothing like SQLite's `secure_delete` (which zeroes the bytes
 * in the file and its WAL: the embedded key store) exists for it. So, for an erasure promise to hold on
 * MongoDB: keep this database on encrypted storage (encryption at rest, with keys that retired disks and
 * snapshots cannot reach), size the oplog window and the backup retention of this database to the erasure
 * period you promise (its own database can have its own backup policy), and run `compact` on
 * `submission_keys` after erasures if freed space must be rewritten sooner.
 */
export class MongoKeyStore implements KeyStore {
  readonly #keys: Collection<KeyDoc>;
  readonly #tombstones: Collection<TombstoneDoc>;
  readonly #signingKeys: Collection<SigningKeyDoc>;
  readonly #client: MongoClient | undefined;
  readonly #db: Db;
  #closed = false;

  constructor(db: Db, options: { ownsClient?: MongoClient } = {}) {
    this.#db = db;
    this.#keys = db.collection<KeyDoc>(KEYS);
    this.#tombstones = db.collection<TombstoneDoc>(TOMBSTONES);
    this.#signingKeys = db.collection<SigningKeyDoc>(SIGNING_KEYS);
    this.#client = options.ownsClient;
  }

  /** Connects to `url`, in `database` (else the URL's, else `annals`), and checks the server answers. */
  static async connect(url: string, options: { database?: string } = {}): Promise<MongoKeyStore> {
    const { client, db } = await connectMongoDatabase(url, { appName: 'annals-key-store', database: options.database, fail: (message) => new KeyStoreError(`key store: ${message}`) });
    return new MongoKeyStore(db, { ownsClient: client });
  }

  get databaseName(): string {
    return this.#db.databaseName;
  }

  async put(id: string, key: Buffer): Promise<void> {
    assertKey(id, key);
    let inserted = false;
    try {
      await this.#keys.insertOne({ _id: id, key: new Binary(key) });
      inserted = true;
    } catch (error) {
      if (!(error instanceof MongoServerError && error.code === DUPLICATE_KEY)) throw error;
    }
    if (await this.destroyed(id)) {
      // Destroyed before (or while) this put ran: the key goes again.
      if (inserted) await this.#keys.deleteOne({ _id: id });
      throw new KeyStoreError(`the key ${id} was destroyed; it cannot be given a key again`);
    }
    if (inserted) return;
    const existing = await this.#keys.findOne({ _id: id });
    if (!existing || !Buffer.from(existing.key.buffer).equals(key)) throw new KeyStoreError(`the id ${id} already holds another key; keys are never replaced`);
  }

  async get(id: string): Promise<Buffer | null> {
    return (await this.getMany([id])).get(id) ?? null;
  }

  async getMany(ids: readonly string[]): Promise<Map<string, Buffer>> {
    const found = new Map<string, Buffer>();
    const unique = [...new Set(ids)];
    if (unique.length === 0) return found;
    const [keys, tombstones] = await Promise.all([this.#keys.find({ _id: { $in: unique } }).toArray(), this.#tombstones.find({ _id: { $in: unique } }, { projection: { _id: 1 } }).toArray()]);
    const destroyed = new Set(tombstones.map((t) => t._id));
    for (const doc of keys) if (!destroyed.has(doc._id)) found.set(doc._id, Buffer.from(doc.key.buffer));
    return found;
  }

  /** The tombstone, then the key document deleted: idempotent, and a retry after a failure in between finishes it. */
  async destroy(id: string): Promise<void> {
    await this.#tombstones.updateOne({ _id: id }, { $setOnInsert: { _id: id } }, { upsert: true }).catch((error: unknown) => {
      if (!(error instanceof MongoServerError && error.code === DUPLICATE_KEY)) throw error;
    });
    await this.#keys.deleteOne({ _id: id });
  }

  async destroyed(id: string): Promise<boolean> {
    return (await this.#tombstones.countDocuments({ _id: id }, { limit: 1 })) > 0;
  }

  async signingKey(name: string): Promise<SigningKeyRecord | null> {
    const doc = await this.#signingKeys.findOne({ _id: name });
    return doc ? { name: doc._id, keyId: doc.keyId, privateJwk: doc.privateJwk, publicJwk: doc.publicJwk, createdAt: doc.createdAt } : null;
  }

  async putSigningKey(record: SigningKeyRecord): Promise<SigningKeyRecord> {
    assertSigningKeyRecord(record);
    try {
      await this.#signingKeys.insertOne({ _id: record.name, keyId: record.keyId, privateJwk: record.privateJwk, publicJwk: record.publicJwk, createdAt: record.createdAt });
    } catch (error) {
      if (!(error instanceof MongoServerError && error.code === DUPLICATE_KEY)) throw error;
    }
    return (await this.signingKey(record.name))!;
  }

  /**
   * Moves the keys versions before MONGODB_KEYS_DATABASE kept in the read models' database (on this server) into this
   * store: every key, every erasure (as a tombstone) and every signing key is copied, then the old
   * collections are dropped. Idempotent, so that a move a crash interrupted is finished at the next start.
   * Resolves to what was moved.
   */
  async moveFrom(database: string): Promise<{ keys: number; erased: number; signingKeys: number }> {
    const moved = { keys: 0, erased: 0, signingKeys: 0 };
    if (database === this.databaseName) throw new KeyStoreError('the key store cannot move its keys onto themselves');
    const from = this.#db.client.db(database);
    const names = new Set((await from.listCollections({}, { nameOnly: true }).toArray()).map((c) => c.name));
    if (names.has(KEYS)) {
      for await (const doc of from.collection<LegacyKeyDoc>(KEYS).find()) {
        if (doc.destroyed || !doc.key) {
          await this.destroy(doc._id);
          moved.erased += 1;
        } else {
          await this.put(doc._id, Buffer.from(doc.key.buffer)).catch((error: unknown) => {
            // Erased here already (a move interrupted after an erasure): the erasure stands.
            if (!(error instanceof KeyStoreError)) throw error;
          });
          moved.keys += 1;
        }
      }
    }
    if (names.has(SIGNING_KEYS)) {
      for await (const doc of from.collection<SigningKeyDoc>(SIGNING_KEYS).find()) {
        const kept = await this.putSigningKey({ name: doc._id, keyId: doc.keyId, privateJwk: doc.privateJwk, publicJwk: doc.publicJwk, createdAt: doc.createdAt });
        if (kept.keyId !== doc.keyId) throw new KeyStoreError(`the signing key ${doc._id} differs between the read models' database and the key store's; move it by hand`);
        moved.signingKeys += 1;
      }
    }
    for (const name of [KEYS, SIGNING_KEYS]) if (names.has(name)) await from.dropCollection(name);
    return moved;
  }

  async ping(): Promise<void> {
    await this.#db.command({ ping: 1 });
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#client?.close();
  }
}
