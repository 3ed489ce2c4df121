/**
 * A read-model store that puts every commit through faults at each of its writes in turn, and checks that
 * none ever lands in part. It wraps the store under test (the subject) and a clean store of the same adapter
 * (the reference), which every mutation reaches too, without faults. For each commit:
 * 1. the reference commits: its state after is what the commit must give;
 * 2. the subject commits with a fault armed at write 1; once the fault fired, the subject is opened anew
 *    (after a `kill`), asked to complete an interrupted commit (as a projector does before folding), and
 *    its state must then be the state before the commit or the state after it, exactly, documents and
 *    generation records alike;
 * 3. again with the fault at write 2, 3, ... until a commit runs without reaching it (every write of
 *    commits of up to EXHAUSTIVE_WRITES writes; beyond, at doubling positions);
 * 4. the subject's final state must be the reference's.
 * The conformance suite run over it then checks, as ever, what the commits did.
 */
import { expect } from 'chai';
import type {
  CommitOptions,
  DocumentEntry,
  DocumentWrite,
  GenerationRecord,
  ModelTarget,
  ProjectionFailure,
  ReadModelSchema,
  ReadModelStore,
  SkipRecord,
} from '../../src/read-models/read-model-store.ts';
import { DelegatingStore } from './delegating-store.ts';
import type { FaultMode, WriteFaults } from './write-faults.ts';

/** Every write of a commit of up to this many writes gets its fault; beyond, writes at doubling positions. */
export const EXHAUSTIVE_WRITES = 16;

export interface FaultableStore {
  store: ReadModelStore;
  faults: WriteFaults;
  /** Runs a call of the store under the armed fault (SQLite's faults need to see its outcome). */
  call?<T>(run: () => Promise<T>): Promise<T>;
}

export interface FaultStats {
  commits: number;
  faults: number;
  /** Faults after which the commit had landed (it was recorded before the fault, and completed). */
  landed: number;
  /** The most writes a commit made. */
  maxWrites: number;
}

export class FaultCheckedStore extends DelegatingStore {
  #subject: FaultableStore;
  readonly #reopen: () => Promise<FaultableStore>;
  readonly #reference: ReadModelStore;
  readonly #mode: FaultMode;
  readonly #schemas = new Map<string, Set<string>>();
  readonly stats: FaultStats = { commits: 0, faults: 0, landed: 0, maxWrites: 0 };

  constructor(subject: FaultableStore, reopen: () => Promise<FaultableStore>, reference: ReadModelStore, mode: FaultMode) {
    super();
    this.#subject = subject;
    this.#reopen = reopen;
    this.#reference = reference;
    this.#mode = mode;
  }

  protected override get inner(): ReadModelStore {
    return this.#subject.store;
  }

  get #store(): ReadModelStore {
    return this.#subject.store;
  }

  override async createGeneration(schema: ReadModelSchema, generation: number, version: number, now: string, options?: { deferIndexes?: boolean }): Promise<GenerationRecord> {
    const collections = this.#schemas.get(schema.projection) ?? new Set<string>();
    for (const collection of Object.keys(schema.collections)) collections.add(collection);
    this.#schemas.set(schema.projection, collections);
    return this.#both((store) => store.createGeneration(schema, generation, version, now, options));
  }
  override createIndexes(schema: ReadModelSchema, generation: number): Promise<void> {
    return this.#both((store) => store.createIndexes(schema, generation));
  }
  override activateGeneration(projection: string, generation: number, expectedActive: number | null, now: string): Promise<void> {
    return this.#both((store) => store.activateGeneration(projection, generation, expectedActive, now));
  }
  override dropGeneration(schema: ReadModelSchema, generation: number): Promise<void> {
    return this.#both((store) => store.dropGeneration(schema, generation));
  }
  override setFailure(target: ModelTarget, failure: ProjectionFailure | null, now: string): Promise<void> {
    return this.#both((store) => store.setFailure(target, failure, now));
  }
  override addSkip(skip: SkipRecord): Promise<void> {
    return this.#both((store) => store.addSkip(skip));
  }
  override acquireLease(target: ModelTarget, holder: string, now: string, ttlMs: number, options?: { takeOverFrom?: string }): Promise<boolean> {
    return this.#both((store) => store.acquireLease(target, holder, now, ttlMs, options));
  }
  override releaseLease(target: ModelTarget, holder: string): Promise<void> {
    return this.#both((store) => store.releaseLease(target, holder));
  }

  override async close(): Promise<void> {
    await Promise.all([this.#store.close(), this.#reference.close()]);
  }

  override async commit(target: ModelTarget, writes: readonly DocumentWrite[], checkpoint: bigint, now: string, options?: CommitOptions): Promise<void> {
    this.stats.commits += 1;
    const expected = await this.#reference.commit(target, writes, checkpoint, now, options).then(
      () => ({ failed: false as const }),
      (error: unknown) => ({ failed: true as const, error }),
    );
    const before = await snapshot(this.#store, target, this.#schemas);
    const after = expected.failed ? before : await snapshot(this.#reference, target, this.#schemas);
    let k = 1;
    for (;;) {
      this.#subject.faults.arm(k, this.#mode);
      let outcome: { error?: unknown };
      try {
        await this.#call(() => this.#store.commit(target, writes, checkpoint, now, options));
        outcome = {};
      } catch (error) {
        outcome = { error };
      }
      const { writes: counted, fired } = this.#subject.faults.disarm();
      if (!fired) {
        this.stats.maxWrites = Math.max(this.stats.maxWrites, counted);
        const state = await snapshot(this.#store, target, this.#schemas);
        if (expected.failed) {
          expect(outcome.error, `the commit failed on the reference (${String(expected.error)}) but not on the store under test`).to.not.equal(undefined);
          expect(state, `a failed commit changed the store (after faults up to write ${k - 1})`).to.deep.equal(before);
          throw outcome.error;
        }
        if (outcome.error !== undefined) throw outcome.error;
        expect(state, `the commit's outcome differs from the reference's (after faults up to write ${k - 1})`).to.deep.equal(after);
        return;
      }
      this.stats.faults += 1;
      if (this.#subject.faults.dead) {
        await this.#store.close().catch(() => undefined);
        this.#subject = await this.#reopen();
      }
      await this.#store.completeInterruptedCommit(target);
      const state = await snapshot(this.#store, target, this.#schemas);
      if (deepEqual(state, after) && !deepEqual(state, before)) {
        this.stats.landed += 1;
      } else {
        expect(state, `${this.#mode} at write ${k} of a commit of ${writes.length} documents left it in part`).to.deep.equal(before);
      }
      k = k < EXHAUSTIVE_WRITES ? k + 1 : k * 2;
    }
  }

  #call<T>(run: () => Promise<T>): Promise<T> {
    return this.#subject.call ? this.#subject.call(run) : run();
  }

  /** A mutation on the reference, then the store under test: the same outcome expected of both. */
  async #both<T>(run: (store: ReadModelStore) => Promise<T>): Promise<T> {
    const reference = await run(this.#reference).then((value) => ({ value }), (error: unknown) => ({ error }));
    const subject = await run(this.#store).then((value) => ({ value }), (error: unknown) => ({ error }));
    expect('error' in subject, `the store under test and the reference disagree: ${String('error' in subject ? subject.error : 'error' in reference ? reference.error : '')}`).to.equal('error' in reference);
    if ('error' in subject) throw subject.error;
    return subject.value as T;
  }
}

/** What a commit into `target` may change: the projection's generation records and the generation's documents, by id. */
async function snapshot(store: ReadModelStore, target: ModelTarget, schemas: Map<string, Set<string>>): Promise<unknown> {
  const records = (await store.listGenerations(target.projection)).map((record) => ({ ...record, checkpoint: record.checkpoint?.toString() ?? null }));
  const collections: Record<string, DocumentEntry[]> = {};
  for (const collection of [...(schemas.get(target.projection) ?? [])].sort()) {
    const docs: DocumentEntry[] = [];
    for (let offset = 0; ; offset += 5000) {
      const page = await store.findWithIds(target, collection, { limit: 5000, offset });
      docs.push(...page);
      if (page.length < 5000) break;
    }
    collections[collection] = docs;
  }
  return { records, collections };
}

function deepEqual(a: unknown, b: unknown): boolean {
  try {
    expect(a).to.deep.equal(b);
    return true;
  } catch {
    return false;
  }
}
