import { MongoServerError, type Collection, type Db, type MongoClient } from 'mongodb';
import { decodePosition, encodePosition } from '../event-store/position.ts';
import { connectMongoDatabase } from '../read-models/mongo-side-database.ts';
import { assertSnapshot, SnapshotStoreError, type AggregateSnapshot, type SnapshotStore } from './snapshot-store.ts';

interface SnapshotDoc {
  _id: string;
  kind: string;
  version: number;
  /** 20-digit zero-padded: string order is numeric order. */
  revision: string;
  position: string;
  state: unknown;
  takenAt: string;
}

const DUPLICATE_KEY = 11000;

/** The production snapshot store: a MongoDB collection (`aggregate_snapshots` in the read models' database). */
export class MongoSnapshotStore implements SnapshotStore {
  readonly #snapshots: Collection<SnapshotDoc>;
  readonly #client: MongoClient | undefined;
  #closed = false;

  constructor(db: Db, options: { ownsClient?: MongoClient; collection?: string } = {}) {
    this.#snapshots = db.collection<SnapshotDoc>(options.collection ?? 'aggregate_snapshots');
    this.#client = options.ownsClient;
  }

  /** Connects to `url` (database from the URL, else `annals`) and checks the server answers. */
  static async connect(url: string, options: { database?: string } = {}): Promise<MongoSnapshotStore> {
    const { client, db } = await connectMongoDatabase(url, { appName: 'annals-snapshots', database: options.database, fail: (message) => new SnapshotStoreError(`snapshot store: ${message}`) });
    return new MongoSnapshotStore(db, { ownsClient: client });
  }

  async get(streamId: string): Promise<AggregateSnapshot | null> {
    const doc = await this.#snapshots.findOne({ _id: streamId });
    if (!doc) return null;
    return { streamId: doc._id, kind: doc.kind, version: doc.version, revision: decodePosition(doc.revision), position: decodePosition(doc.position), state: doc.state, takenAt: doc.takenAt };
  }

  async put(snapshot: AggregateSnapshot): Promise<void> {
    assertSnapshot(snapshot);
    const revision = encodePosition(snapshot.revision);
    const doc = { kind: snapshot.kind, version: snapshot.version, revision, position: encodePosition(snapshot.position), state: snapshot.state, takenAt: snapshot.takenAt };
    try {
      // Replaces a snapshot of an older revision, or of another kind or version; never a later one.
      await this.#snapshots.replaceOne(
        { _id: snapshot.streamId, $or: [{ revision: { $lte: revision } }, { kind: { $ne: snapshot.kind } }, { version: { $ne: snapshot.version } }] },
        doc,
        { upsert: true },
      );
    } catch (error) {
      // The upsert met a later snapshot of the same stream (its _id exists but the filter did not match).
      if (!(error instanceof MongoServerError && error.code === DUPLICATE_KEY)) throw error;
    }
  }

  async delete(streamId: string): Promise<void> {
    await this.#snapshots.deleteOne({ _id: streamId });
  }

  async clear(): Promise<void> {
    await this.#snapshots.deleteMany({});
  }

  async ping(): Promise<void> {
    await this.#snapshots.db.command({ ping: 1 });
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#client?.close();
  }
}
