import type { RecordedEvent, SubscriptionFilter } from '../event-store/event-store.ts';
import type { CollectionSpec, Document, DocumentWrite, ReadModelSchema, Scalar } from '../read-models/read-model-store.ts';
import { CHANGE_FEED_COLLECTION, changeFeedSpec } from './change-feed.ts';

/**
 * A read model's definition: which events it handles and how it folds each into documents.
 * Definitions live in projections/, one module each.
 *
 * Rules for `apply`:
 * - deterministic: the same events give the same documents (no clock, no randomness, no network);
 * - it may read any document of its read model, its own or others (a count kept beside the documents it
 *   counts, a host's entry derived from a project's list): every store commits a batch whole, completes a
 *   commit a crash interrupted before the projector folds again (completeInterruptedCommit), and takes a
 *   commit only from the checkpoint its batch was folded from (CommitOptions.expectedCheckpoint), so what
 *   `apply` reads is always the state its previous events left, never a part of a later batch
 *   (test/projection-engine/projector-faults.test.ts folds every projection under faults at each write);
 * - throw to refuse an event: the projector pauses on it and an operator retries or skips it.
 */
export interface Projection {
  /** [a-z][a-z0-9-]* */
  name: string;
  /** Bump when `apply` or the collections change: the running service rebuilds into a new generation. */
  version: number;
  description: string;
  collections: Readonly<Record<string, CollectionSpec>>;
  /** Narrows what the projector subscribes to; omit to see every event. */
  filter?: SubscriptionFilter;
  apply(event: RecordedEvent, view: ProjectionView): void | Promise<void>;
  /**
   * What a commit of these writes changed, as scopes its readers cache by (say `entry:<id>`); none when it
   * changed nothing they serve. With it, every commit that changes something records its scopes in the
   * generation's change feed (change-feed.ts), so that processes without the projector drop from their
   * caches only what changed. Pure: the same writes give the same scopes.
   */
  changes?(writes: readonly DocumentWrite[]): Iterable<string>;
}

/** What `apply` sees of its read model: reads see the batch's own earlier writes. */
export interface ProjectionView {
  get<T extends Document = Document>(collection: string, id: string): Promise<T | null>;
  /**
   * Every document of the collection whose fields equal the given values (dotted paths; null also matches
   * a missing field; strict equality of strings, numbers and booleans), including the batch's own
   * uncommitted writes and excluding documents the batch deleted, in id order. The documents are copies.
   * For fan-out (e.g. re-shaping every entry of a project): use the fields of an index marked whileFolding,
   * built before the first find in the collection; while a rebuild loads a new generation its other indexes
   * are not built yet, so a find by them scans the collection. An invalid field
   * path or value throws (the event pauses); a store failure throws ReadModelAccessError (retried).
   */
  find<T extends Document = Document>(collection: string, where: Readonly<Record<string, Scalar>>): Promise<T[]>;
  put(collection: string, id: string, doc: Document): void;
  delete(collection: string, id: string): void;
  /**
   * The event at a log position before the one being folded, upcast: for a document that keeps where a payload
   * is in the log rather than a copy of it (no read model holds a copy of the log). The log does not change,
   * so a fold that reads it folds the same events into the same documents. A position the log holds no event at
   * throws (the event pauses); a failure to read the log throws ReadModelAccessError (retried).
   */
  eventAt(position: bigint): Promise<RecordedEvent>;
}

export function defineProjection(projection: Projection): Projection {
  return projection;
}

/** The projection's collections, and its change feed's when it has one (Projection.changes). */
export function schemaOf(projection: Projection): ReadModelSchema {
  if (!projection.changes) return { projection: projection.name, collections: projection.collections };
  if (CHANGE_FEED_COLLECTION in projection.collections) throw new Error(`projection ${projection.name}: the collection name ${CHANGE_FEED_COLLECTION} is its change feed's`);
  return { projection: projection.name, collections: { ...projection.collections, [CHANGE_FEED_COLLECTION]: changeFeedSpec } };
}
