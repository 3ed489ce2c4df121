/**
 * A projector's change feed records (Projection.changes): the record each commit that changes anything adds
 * to its writes, and the pruning of old records every CHANGE_FEED_PRUNE_EVERY.
 */
import type { DocumentWrite, ModelTarget, ReadModelStore } from '../read-models/read-model-store.ts';
import { CHANGE_FEED_COLLECTION, CHANGE_FEED_PRUNE_EVERY, changeRecordWrite, latestChange, prunableChanges } from './change-feed.ts';
import type { Projection } from './projection.ts';

export class ChangeRecords {
  readonly #projection: Projection;
  readonly #store: ReadModelStore;
  readonly #target: ModelTarget;
  /** The change feed (Projection.changes): its newest record's `at`, read when first needed in a consume loop. */
  #lastChange: string | null | undefined;
  /** Change records written since the feed was last pruned, and the old ones the next record's commit deletes. */
  #changesSincePrune = 0;
  #changesToPrune: string[] = [];

  constructor(projection: Projection, store: ReadModelStore, target: ModelTarget) {
    this.#projection = projection;
    this.#store = store;
    this.#target = target;
  }

  /** A consume loop starts: the newest record is read again when first needed. */
  restart(): void {
    this.#lastChange = undefined;
  }

  /**
   * With a change feed (Projection.changes): adds the commit's change record to its writes, when the commit
   * changes anything, and the deletes of records pruned since the last one; returns the record's `at`.
   */
  async add(writes: DocumentWrite[], checkpoint: bigint): Promise<string | undefined> {
    const projection = this.#projection;
    if (!projection.changes || writes.length === 0) return undefined;
    const scopes = [...projection.changes(writes)];
    if (scopes.length === 0) return undefined;
    this.#lastChange ??= await latestChange(this.#store, this.#target);
    if (this.#changesSincePrune >= CHANGE_FEED_PRUNE_EVERY) {
      this.#changesSincePrune = 0;
      this.#changesToPrune = await prunableChanges(this.#store, this.#target);
    }
    const record = changeRecordWrite(checkpoint, this.#lastChange, scopes);
    writes.push(record);
    for (const id of this.#changesToPrune) writes.push({ collection: CHANGE_FEED_COLLECTION, id, doc: null, position: checkpoint });
    return record.id;
  }

  /** After the commit of a change record: the next one follows it (and every CHANGE_FEED_PRUNE_EVERY, prunes the oldest). */
  recorded(at: string): void {
    this.#lastChange = at;
    this.#changesToPrune = [];
    this.#changesSincePrune++;
  }
}
