import type { ChangeStream, Db } from 'mongodb';

/**
 * Whether the server gives change streams: a replica set member (`setName` in its hello) or a mongos
 * (`msg: 'isdbgrid'`). A standalone server has none, nor has FerretDB v1.
 */
export async function hasChangeStreams(db: Db): Promise<boolean> {
  const hello = await db.command({ hello: 1 });
  return typeof hello['setName'] === 'string' || hello['msg'] === 'isdbgrid';
}

/**
 * Tells listeners of every commit to a read-model database, whichever process made it: a change stream on
 * the collection that records each generation's checkpoint (every commit ends by storing it there). The
 * stream is open while anyone listens. A stream that fails (a failover, a network error) tells its
 * listeners (they read what they missed) and opens again after `reopenMs`; the driver itself resumes
 * after the errors it can.
 */
export class MongoCommitWatch {
  readonly #listeners = new Set<() => void>();
  #stream: ChangeStream | undefined;
  #reopen: NodeJS.Timeout | undefined;
  #closed = false;

  constructor(
    private readonly db: Db,
    /** The collection of the generation records. */
    private readonly records: string,
    private readonly options: { reopenMs?: number } = {},
  ) {}

  listen(listener: () => void): () => void {
    // Each registration is its own (one function may listen twice), as the port says.
    const entry = () => listener();
    this.#listeners.add(entry);
    this.#open();
    return () => {
      this.#listeners.delete(entry);
      if (this.#listeners.size === 0) this.#shut();
    };
  }

  async close(): Promise<void> {
    this.#closed = true;
    this.#listeners.clear();
    await this.#shut();
  }

  #open(): void {
    if (this.#stream || this.#reopen || this.#closed) return;
    // Only that something changed matters, not what: no full documents.
    const stream = this.db.collection(this.records).watch([{ $project: { _id: 1 } }]);
    this.#stream = stream;
    stream.on('change', () => this.#tell());
    stream.on('error', () => {
      if (this.#stream !== stream) return;
      this.#stream = undefined;
      void stream.close().catch(() => undefined);
      this.#tell();
      if (this.#listeners.size === 0 || this.#closed) return;
      this.#reopen = setTimeout(() => {
        this.#reopen = undefined;
        if (this.#listeners.size > 0) this.#open();
      }, this.options.reopenMs ?? 1000);
      this.#reopen.unref();
    });
  }

  async #shut(): Promise<void> {
    clearTimeout(this.#reopen);
    this.#reopen = undefined;
    const stream = this.#stream;
    this.#stream = undefined;
    await stream?.close().catch(() => undefined);
  }

  #tell(): void {
    for (const listener of [...this.#listeners]) listener();
  }
}
