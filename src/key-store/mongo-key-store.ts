import { Binary, MongoServerError, type Collection, type Db, type MongoClient } from 'mongodb';
import { connectMongoDatabase } from '../read-models/mongo-side-database.ts';
import { assertKey, assertSigningKeyRecord, KeyStoreError, type KeyStore, type SigningKeyRecord } from './key-store.ts';

interface KeyDoc {
  _id: string;
  key: Binary | null;
  destroyed: boolean;
}

interface SigningKeyDoc {
  _id: string;
  keyId: string;
  privateJwk: string;
  publicJwk: string;
  createdAt: string;
}

/**
 * The production key store: a MongoDB collection (`submission_keys` in the read models' database). A
 * destroyed key's document keeps its id with `key: null` (a tombstone, so the id can never be given a key
 * again). MongoDB's own copies are beyond this adapter: the oplog of a replica set holds the insert until it
 * rolls over, and backups hold what they hold; size the oplog window and backup retention to the erasure
 * promise you make. Signing keys are in the collection `signing_keys`, one document per name.
 */
export class MongoKeyStore implements KeyStore {
  readonly #keys: Collection<KeyDoc>;
  readonly #signingKeys: Collection<SigningKeyDoc>;
  readonly #client: MongoClient | undefined;
  #closed = false;

  constructor(db: Db, options: { ownsClient?: MongoClient; collection?: string } = {}) {
    this.#keys = db.collection<KeyDoc>(options.collection ?? 'submission_keys');
    this.#signingKeys = db.collection<SigningKeyDoc>('signing_keys');
    this.#client = options.ownsClient;
  }

  /** Connects to `url` (database from the URL, else `annals`) and checks the server answers. */
  static async connect(url: string, options: { database?: string; collection?: string } = {}): Promise<MongoKeyStore> {
    const { client, db } = await connectMongoDatabase(url, { appName: 'annals-key-store', database: options.database, fail: (message) => new KeyStoreError(`key store: ${message}`) });
    return new MongoKeyStore(db, { ownsClient: client, ...(options.collection ? { collection: options.collection } : {}) });
  }

  async put(id: string, key: Buffer): Promise<void> {
    assertKey(id, key);
    try {
      await this.#keys.insertOne({ _id: id, key: new Binary(key), destroyed: false });
      return;
    } catch (error) {
      if (!(error instanceof MongoServerError && error.code === 11000)) throw error;
    }
    const existing = await this.#keys.findOne({ _id: id });
    if (existing?.destroyed) throw new KeyStoreError(`the key ${id} was destroyed; it cannot be given a key again`);
    if (!existing?.key || !Buffer.from(existing.key.buffer).equals(key)) throw new KeyStoreError(`the id ${id} already holds another key; keys are never replaced`);
  }

  async get(id: string): Promise<Buffer | null> {
    const doc = await this.#keys.findOne({ _id: id });
    return doc?.key ? Buffer.from(doc.key.buffer) : null;
  }

  async getMany(ids: readonly string[]): Promise<Map<string, Buffer>> {
    const found = new Map<string, Buffer>();
    if (ids.length === 0) return found;
    for await (const doc of this.#keys.find({ _id: { $in: [...new Set(ids)] } })) {
      if (doc.key) found.set(doc._id, Buffer.from(doc.key.buffer));
    }
    return found;
  }

  async destroy(id: string): Promise<void> {
    await this.#keys.updateOne({ _id: id }, { $set: { key: null, destroyed: true } }, { upsert: true });
  }

  async destroyed(id: string): Promise<boolean> {
    return (await this.#keys.findOne({ _id: id }))?.destroyed === true;
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
      if (!(error instanceof MongoServerError && error.code === 11000)) throw error;
    }
    return (await this.signingKey(record.name))!;
  }

  async ping(): Promise<void> {
    await this.#keys.db.command({ ping: 1 });
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#client?.close();
  }
}
