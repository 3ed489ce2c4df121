/**
 * Faults at the k-th underlying write of a read-model store, for the tests that prove commits never land in
 * part (test/read-models/commit-faults.test.ts, test/projection-engine/projector-faults.test.ts).
 *
 * A write is one document write as the server sees it: an insert, update, replace or delete of one document
 * (a bulk write of n operations is n writes, of which a fault lets a prefix through), or on SQLite one row
 * written inside the commit's transaction. At the armed write:
 * - `fail`: the write is not made and the call fails, as when the connection drops before the server gets
 *   it; the writes after it work again;
 * - `lost-ack`: the write is made and the call fails, as when the connection drops before the answer comes
 *   back (on SQLite, where a commit is one transaction: the transaction commits and the call fails);
 * - `kill`: the write is not made, and no call of that store instance works again, as if its process died
 *   there: the test opens the store anew, as a restarted process would.
 */
import Database from 'better-sqlite3';
import { MongoNetworkError, type Collection, type Db } from 'mongodb';

export type FaultMode = 'fail' | 'lost-ack' | 'kill';
export const FAULT_MODES: readonly FaultMode[] = ['fail', 'lost-ack', 'kill'];

export interface WriteFaults {
  /** The k-th write from now (1-based) faults in `mode`. */
  arm(k: number, mode: FaultMode): void;
  /** Ends the arming: how many writes were counted since, and whether the fault was injected. */
  disarm(): { writes: number; fired: boolean };
  /** After a `kill`: the store instance is gone. */
  readonly dead: boolean;
}

export class InjectedFault extends MongoNetworkError {
  constructor(what: string) {
    super(`injected fault: ${what}`);
  }
}

const SINGLE_WRITES = new Set(['insertOne', 'updateOne', 'replaceOne', 'deleteOne', 'updateMany', 'deleteMany', 'findOneAndUpdate', 'findOneAndReplace', 'findOneAndDelete']);
const READS = new Set(['find', 'findOne', 'countDocuments', 'estimatedDocumentCount', 'aggregate', 'distinct', 'listIndexes', 'indexes', 'createIndexes', 'createIndex', 'dropIndex', 'dropIndexes']);

/** Faults in the writes a MongoDB store makes through the Db that `wrap` gives it. */
export class MongoWriteFaults implements WriteFaults {
  #armed: { k: number; mode: FaultMode } | null = null;
  #count = 0;
  #fired = false;
  #dead = false;

  get dead(): boolean {
    return this.#dead;
  }

  arm(k: number, mode: FaultMode): void {
    this.#armed = { k, mode };
    this.#count = 0;
    this.#fired = false;
  }

  disarm(): { writes: number; fired: boolean } {
    const outcome = { writes: this.#count, fired: this.#fired };
    this.#armed = null;
    return outcome;
  }

  /** The database as the store under test sees it. */
  wrap(db: Db): Db {
    return new Proxy(db, {
      get: (target, property, receiver) => {
        const value = Reflect.get(target, property, receiver) as unknown;
        if (property === 'collection') {
          return (name: string, options?: object) => this.#collection(target.collection(name, options));
        }
        if (typeof value !== 'function' || property === 'constructor') return value;
        return (...args: unknown[]) => {
          this.#alive();
          return (value as (...a: unknown[]) => unknown).apply(target, args);
        };
      },
    });
  }

  #collection<T extends object>(collection: Collection<T>): Collection<T> {
    return new Proxy(collection, {
      get: (target, property, receiver) => {
        const value = Reflect.get(target, property, receiver) as unknown;
        if (typeof value !== 'function' || typeof property !== 'string') return value;
        const method = value as (...a: unknown[]) => unknown;
        if (property === 'bulkWrite') {
          return (operations: unknown[], options: Record<string, unknown> = {}) =>
            this.#write(operations.length, (n) => method.call(target, operations.slice(0, n), n < operations.length ? { ...options, ordered: true } : options));
        }
        if (property === 'insertMany') {
          return (docs: unknown[], options: Record<string, unknown> = {}) => this.#write(docs.length, (n) => method.call(target, docs.slice(0, n), options));
        }
        if (SINGLE_WRITES.has(property)) return (...args: unknown[]) => this.#write(1, () => method.apply(target, args));
        if (READS.has(property)) {
          return (...args: unknown[]) => {
            this.#alive();
            return method.apply(target, args);
          };
        }
        return method.bind(target);
      },
    });
  }

  #alive(): void {
    if (this.#dead) throw new InjectedFault('the store instance was killed');
  }

  /** A call making `writes` document writes; `run(n)` makes its first n. */
  async #write<R>(writes: number, run: (n: number) => unknown): Promise<R> {
    this.#alive();
    const armed = this.#armed;
    if (armed && !this.#fired && this.#count < armed.k && armed.k <= this.#count + writes) {
      const at = armed.k - this.#count;
      this.#fired = true;
      this.#count = armed.k;
      const through = armed.mode === 'lost-ack' ? at : at - 1;
      if (through > 0) await run(through);
      if (armed.mode === 'kill') this.#dead = true;
      throw new InjectedFault(`${armed.mode} at write ${armed.k}`);
    }
    this.#count += writes;
    return run(writes) as Promise<R>;
  }
}

const FAULT_PLAN = 'test_fault_plan';

/**
 * Faults in a SQLite read-model file's commits: triggers (made in the file by this test connection) count
 * the rows each commit's transaction writes to the document tables and the generation records, and abort
 * the transaction at the armed one. A commit is one transaction, so `fail` and `kill` roll it back whole;
 * `lost-ack` lets it commit and fails the call (see faultCall).
 */
export class SqliteWriteFaults implements WriteFaults {
  readonly #db: Database.Database;
  #armed: { k: number; mode: FaultMode } | null = null;
  #fired = false;
  #dead = false;

  constructor(file: string) {
    this.#db = new Database(file);
    this.#db.exec(`CREATE TABLE IF NOT EXISTS ${FAULT_PLAN} (id INTEGER PRIMARY KEY CHECK (id = 0), armed INTEGER NOT NULL, k INTEGER NOT NULL, n INTEGER NOT NULL);
      INSERT OR IGNORE INTO ${FAULT_PLAN} (id, armed, k, n) VALUES (0, 0, 0, 0)`);
  }

  get dead(): boolean {
    return this.#dead;
  }

  /** The mode armed, for the wrapper that makes a `lost-ack` of the whole transaction. */
  get mode(): FaultMode | undefined {
    return this.#armed?.mode;
  }

  arm(k: number, mode: FaultMode): void {
    this.#counting();
    this.#armed = { k, mode };
    this.#fired = false;
    // A lost acknowledgement of a transaction is the whole transaction landing: nothing to abort in it.
    this.#db.prepare(`UPDATE ${FAULT_PLAN} SET armed = 1, k = ?, n = 0`).run(mode === 'lost-ack' ? 0 : k);
  }

  disarm(): { writes: number; fired: boolean } {
    const n = (this.#db.prepare(`SELECT n FROM ${FAULT_PLAN}`).get() as { n: number }).n;
    this.#db.prepare(`UPDATE ${FAULT_PLAN} SET armed = 0, k = 0`).run();
    const outcome = { writes: n, fired: this.#fired };
    this.#armed = null;
    return outcome;
  }

  /**
   * Runs a commit of the store under the armed fault: an aborting trigger's error is the injected fault; a
   * `lost-ack` fires once the transaction committed (when it wrote at least k rows).
   */
  async faultCall<T>(commit: () => Promise<T>): Promise<T> {
    if (this.#dead) throw new InjectedFault('the store instance was killed');
    const armed = this.#armed;
    let result: T;
    try {
      result = await commit();
    } catch (error) {
      if (armed && /injected fault/.test(String((error as Error).message))) {
        this.#fired = true;
        if (armed.mode === 'kill') this.#dead = true;
        throw new InjectedFault(`${armed.mode} at write ${armed.k}`);
      }
      throw error;
    }
    if (armed?.mode === 'lost-ack') {
      const n = (this.#db.prepare(`SELECT n FROM ${FAULT_PLAN}`).get() as { n: number }).n;
      if (n >= armed.k) {
        this.#fired = true;
        throw new InjectedFault(`lost-ack after write ${armed.k}`);
      }
    }
    return result;
  }

  close(): void {
    this.#db.close();
  }

  /** Counting triggers on every table a commit writes that has none yet (tables of generations made since). */
  #counting(): void {
    const tables = this.#db
      .prepare(`SELECT name FROM sqlite_schema WHERE type = 'table' AND (name LIKE 'rm\\_%' ESCAPE '\\' OR name IN ('projection_generations', 'document_commits', 'table_commits'))`)
      .pluck()
      .all() as string[];
    const body = `BEGIN UPDATE ${FAULT_PLAN} SET n = n + 1; SELECT RAISE(ABORT, 'injected fault') WHERE (SELECT n = k FROM ${FAULT_PLAN}); END`;
    for (const table of tables) {
      for (const op of ['INSERT', 'UPDATE', 'DELETE']) {
        this.#db.exec(`CREATE TRIGGER IF NOT EXISTS "fault_${table}_${op.toLowerCase()}" AFTER ${op} ON "${table}" WHEN (SELECT armed FROM ${FAULT_PLAN}) = 1 ${body}`);
      }
    }
  }
}
