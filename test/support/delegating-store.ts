import type {
  CommitOptions,
  Document,
  DocumentEntry,
  DocumentWrite,
  GenerationRecord,
  LeaseRecord,
  ModelTarget,
  ProjectionFailure,
  Query,
  ReadModelSchema,
  ReadModelStore,
  SkipRecord,
} from '../../src/read-models/read-model-store.ts';

/** A read-model store that hands every call to `inner` (which may change: a store opened anew); subclasses take over some. */
export abstract class DelegatingStore implements ReadModelStore {
  protected abstract get inner(): ReadModelStore;

  createGeneration(schema: ReadModelSchema, generation: number, version: number, now: string, options?: { deferIndexes?: boolean }): Promise<GenerationRecord> {
    return this.inner.createGeneration(schema, generation, version, now, options);
  }
  createIndexes(schema: ReadModelSchema, generation: number): Promise<void> {
    return this.inner.createIndexes(schema, generation);
  }
  activateGeneration(projection: string, generation: number, expectedActive: number | null, now: string): Promise<void> {
    return this.inner.activateGeneration(projection, generation, expectedActive, now);
  }
  dropGeneration(schema: ReadModelSchema, generation: number): Promise<void> {
    return this.inner.dropGeneration(schema, generation);
  }
  setFailure(target: ModelTarget, failure: ProjectionFailure | null, now: string): Promise<void> {
    return this.inner.setFailure(target, failure, now);
  }
  addSkip(skip: SkipRecord): Promise<void> {
    return this.inner.addSkip(skip);
  }
  acquireLease(target: ModelTarget, holder: string, now: string, ttlMs: number, options?: { takeOverFrom?: string }): Promise<boolean> {
    return this.inner.acquireLease(target, holder, now, ttlMs, options);
  }
  releaseLease(target: ModelTarget, holder: string): Promise<void> {
    return this.inner.releaseLease(target, holder);
  }
  commit(target: ModelTarget, writes: readonly DocumentWrite[], checkpoint: bigint, now: string, options?: CommitOptions): Promise<void> {
    return this.inner.commit(target, writes, checkpoint, now, options);
  }
  completeInterruptedCommit(target: ModelTarget): Promise<boolean> {
    return this.inner.completeInterruptedCommit(target);
  }
  getGeneration(projection: string, generation: number): Promise<GenerationRecord | null> {
    return this.inner.getGeneration(projection, generation);
  }
  listGenerations(projection?: string): Promise<GenerationRecord[]> {
    return this.inner.listGenerations(projection);
  }
  activeGeneration(projection: string): Promise<number | null> {
    return this.inner.activeGeneration(projection);
  }
  listSkips(projection: string): Promise<SkipRecord[]> {
    return this.inner.listSkips(projection);
  }
  getLease(target: ModelTarget): Promise<LeaseRecord | null> {
    return this.inner.getLease(target);
  }
  get(target: ModelTarget, collection: string, id: string): Promise<Document | null> {
    return this.inner.get(target, collection, id);
  }
  getMany(target: ModelTarget, collection: string, ids: readonly string[]): Promise<DocumentEntry[]> {
    return this.inner.getMany(target, collection, ids);
  }
  find(target: ModelTarget, collection: string, query?: Query): Promise<Document[]> {
    return this.inner.find(target, collection, query);
  }
  findWithIds(target: ModelTarget, collection: string, query?: Query): Promise<DocumentEntry[]> {
    return this.inner.findWithIds(target, collection, query);
  }
  findStrings(target: ModelTarget, collection: string, query: Omit<Query, 'fields'>, field: string): Promise<Array<string | null>> {
    return this.inner.findStrings(target, collection, query, field);
  }
  count(target: ModelTarget, collection: string, filter?: Query['filter'], text?: Query['text']): Promise<number> {
    return this.inner.count(target, collection, filter, text);
  }
  ping(): Promise<void> {
    return this.inner.ping();
  }
  close(): Promise<void> {
    return this.inner.close();
  }
}
