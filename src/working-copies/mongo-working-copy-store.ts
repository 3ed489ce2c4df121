import type { Collection, Db, MongoClient } from 'mongodb';
import { connectMongoDatabase } from '../read-models/mongo-side-database.ts';
import { assertOwner, assertWorkingCopy, WorkingCopyStoreError, type WorkingCopy, type WorkingCopyHead, type WorkingCopyOwner, type WorkingCopyStore } from './working-copy-store.ts';

interface WorkingCopyDoc {
  /** entryId, owner type and owner id: one copy per entry and owner. */
  _id: string;
  entryId: string;
  owner: WorkingCopyOwner;
  projectId: string;
  baseRevision: number;
  startedAt: string;
  savedAt: string;
  /** The typed values as JSON text: any key a client sends (`$`, dots) is kept as given. */
  fields: string;
}

const HEAD = { _id: 0, entryId: 1, owner: 1, projectId: 1, baseRevision: 1, startedAt: 1, savedAt: 1 } as const;

/**
 * The production working-copy store: the collection `working_copies` in the database that holds the key store
 * (MONGODB_KEYS_DATABASE), never the read models' (a rebuild may drop that one).
 */
export class MongoWorkingCopyStore implements WorkingCopyStore {
  readonly #copies: Collection<WorkingCopyDoc>;
  readonly #client: MongoClient | undefined;
  #indexed: Promise<unknown> | undefined;
  #closed = false;

  constructor(db: Db, options: { ownsClient?: MongoClient } = {}) {
    this.#copies = db.collection<WorkingCopyDoc>('working_copies');
    this.#client = options.ownsClient;
  }

  static async connect(url: string, options: { database?: string } = {}): Promise<MongoWorkingCopyStore> {
    const { client, db } = await connectMongoDatabase(url, { appName: 'annals-working-copies', database: options.database, fail: (message) => new WorkingCopyStoreError(`working-copy store: ${message}`) });
    return new MongoWorkingCopyStore(db, { ownsClient: client });
  }

  async get(entryId: string, owner: WorkingCopyOwner): Promise<WorkingCopy | null> {
    const doc = await this.#copies.findOne({ _id: idOf(entryId, owner) });
    return doc ? { ...headOf(doc), fields: JSON.parse(doc.fields) as Record<string, unknown> } : null;
  }

  async put(copy: WorkingCopy): Promise<void> {
    assertWorkingCopy(copy);
    await this.#indexes();
    await this.#copies.updateOne(
      { _id: idOf(copy.entryId, copy.owner) },
      {
        $set: { projectId: copy.projectId, baseRevision: copy.baseRevision, savedAt: copy.savedAt, fields: JSON.stringify(copy.fields) },
        $min: { startedAt: copy.startedAt },
        $setOnInsert: { entryId: copy.entryId, owner: { type: copy.owner.type, id: copy.owner.id } },
      },
      { upsert: true },
    );
  }

  async list(entryId: string): Promise<WorkingCopyHead[]> {
    const docs = await this.#copies.find({ entryId }, { projection: HEAD }).sort({ savedAt: 1, 'owner.type': 1, 'owner.id': 1 }).toArray();
    return docs.map(headOf);
  }

  async delete(entryId: string, owner: WorkingCopyOwner): Promise<boolean> {
    assertOwner(owner);
    return (await this.#copies.deleteOne({ _id: idOf(entryId, owner) })).deletedCount > 0;
  }

  async deleteEntry(entryId: string): Promise<number> {
    return (await this.#copies.deleteMany({ entryId })).deletedCount;
  }

  async deleteSavedBefore(savedAt: string): Promise<number> {
    return (await this.#copies.deleteMany({ savedAt: { $lt: savedAt } })).deletedCount;
  }

  async ping(): Promise<void> {
    await this.#copies.db.command({ ping: 1 });
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#client?.close();
  }

  #indexes(): Promise<unknown> {
    this.#indexed ??= Promise.all([this.#copies.createIndex({ entryId: 1, savedAt: 1 }), this.#copies.createIndex({ savedAt: 1 })]).catch((error: unknown) => {
      this.#indexed = undefined;
      throw error;
    });
    return this.#indexed;
  }
}

function idOf(entryId: string, owner: WorkingCopyOwner): string {
  return `${entryId}:${owner.type}:${owner.id}`;
}

function headOf(doc: Pick<WorkingCopyDoc, 'entryId' | 'owner' | 'projectId' | 'baseRevision' | 'startedAt' | 'savedAt'>): WorkingCopyHead {
  return { projectId: doc.projectId, entryId: doc.entryId, owner: { type: doc.owner.type, id: doc.owner.id }, baseRevision: doc.baseRevision, startedAt: doc.startedAt, savedAt: doc.savedAt };
}
