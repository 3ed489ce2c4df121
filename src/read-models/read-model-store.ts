/**
 * The read-model port. Every adapter (SQLite, MongoDB) implements it and passes
 * test/read-models/read-model-store.conformance.ts.
 *
 * A projection owns named collections of JSON documents. Each rebuild writes into a new generation of
 * those collections while the active generation keeps serving; activating the new generation swaps it in.
 * Every document write carries the global position of the event that produced it, and the checkpoint of a
 * generation is stored with its writes, all or nothing, on every store: in a transaction where the store has
 * them (SQLite; MongoDB on a replica set), and elsewhere (a standalone MongoDB server, FerretDB) through a
 * journal that a commit writes in one write before applying it, and that is completed before the
 * generation is committed to or folded into again (completeInterruptedCommit). A write whose position is not
 * newer than the stored document's changes nothing, so a batch folded again changes nothing already newer.
 */

import { MAX_QUERY_TOKENS, MAX_TOKEN_LENGTH } from '../search/search-tokens.ts';
import { valueAt } from './document-values.ts';

export type Document = { [key: string]: unknown };
/** A projection's document type as the store holds it: its declared fields, and whatever else a document carries. */
export type Doc<T> = T & Document;

export interface IndexSpec {
  /** Unique per collection: [a-z0-9_]. */
  name: string;
  /** Document fields (dotted paths allowed) and direction. */
  fields: ReadonlyArray<readonly [field: string, direction: 1 | -1]>;
  unique?: boolean;
  /**
   * The projection queries by this index while it folds events (view.find, say every revision of a deleted
   * entry): while a rebuild defers the other indexes, a projector builds this one before its first find in
   * the collection, so that those reads use it instead of scanning the collection once per event. A rebuild
   * that never finds in the collection builds it with the others after its load rather than updating it on
   * every commit (document ids are random: each commit would rewrite pages all over it). A unique one is
   * created with the generation, so that it refuses a duplicate at the event that makes it.
   */
  whileFolding?: boolean;
  /**
   * Top-level string fields whose values the index also holds, after its keys: findStrings of one of them,
   * filtered and sorted by this index, then reads the index alone, with no seek of each document (a list page
   * of 20 items: 20 seeks fewer), and takes the strings as they are. Their bytes are stored again, in the
   * index: for small fields of hot reads. Not on a unique index. An adapter whose indexes cannot hold values
   * besides their keys (MongoDB) checks the names and otherwise ignores them: results are the same either way.
   */
  include?: readonly string[];
  /**
   * Documents whose last indexed field is null or missing are left out of the index where the adapter can (SQLite:
   * a partial index): for an index most documents have no value for, read only to find the few that do (an
   * import path, an external id). Only a query that names a value of that field (equality, or a range) uses it;
   * a query that could match null reads as if there were no index. Not on a unique index (unique indexes leave
   * out null keys already). An adapter that cannot leave documents out (MongoDB here: FerretDB has no partial
   * indexes) indexes them all: results are the same either way.
   */
  sparse?: boolean;
}

export interface CollectionSpec {
  indexes?: readonly IndexSpec[];
  /**
   * A document field (dotted path allowed) holding the document's search tokens joined by single spaces
   * (src/search/search-tokens.ts: indexTokens, or indexText). Query.text searches it. At most one per
   * collection. A document whose field is missing or not a string is found by no text query.
   */
  textField?: string;
  /**
   * Fields every text query on this collection names with an equality condition (say, the form set and
   * locale). On MongoDB the text index is compound with them, so a search reads the matches of one form set
   * rather than of every tenant; a text query without them fails with ReadModelError there. Ignored on SQLite,
   * whose search table is joined to the filtered documents.
   */
  textPrefix?: readonly string[];
}

export interface ReadModelSchema {
  /** Projection name: [a-z0-9-]. */
  projection: string;
  /** Collection names: [a-z0-9_]. */
  collections: Readonly<Record<string, CollectionSpec>>;
}

/**
 * The schema with only the indexes a projection queries while folding (IndexSpec.whileFolding) and no search:
 * with `collection`, of that collection only; with `uniqueOnly`, only the unique ones.
 */
export function foldingIndexesOf(schema: ReadModelSchema, options: { collection?: string; uniqueOnly?: boolean } = {}): ReadModelSchema {
  const collections = Object.entries(schema.collections)
    .filter(([name]) => options.collection === undefined || name === options.collection)
    .map(([name, spec]) => [name, { indexes: (spec.indexes ?? []).filter((index) => index.whileFolding && (!options.uniqueOnly || index.unique)) }] as const);
  return { projection: schema.projection, collections: Object.fromEntries(collections) };
}

/** Which copy of a projection's collections an operation addresses. */
export interface ModelTarget {
  projection: string;
  generation: number;
}

/** The final state of one document after a batch: `doc: null` deletes it. */
export interface DocumentWrite {
  collection: string;
  id: string;
  doc: Document | null;
  /** Position of the last event that changed this document in the batch. */
  position: bigint;
}

export type Scalar = string | number | boolean | null;
export type FieldCondition =
  | Scalar
  | { $in: readonly Scalar[] }
  | { $ne: Scalar }
  | RangeCondition;

/**
 * A range of one field: a lower bound ($gt or $gte), an upper bound ($lt or $lte), or both (a time between two
 * instants in one condition: `{ $gte: from, $lt: to }`). Never two bounds on one side.
 */
export type RangeCondition = { $gt?: string | number; $gte?: string | number; $lt?: string | number; $lte?: string | number };
export interface Query {
  /** Every condition must hold. Keys are document fields, dotted paths allowed. */
  filter?: Readonly<Record<string, FieldCondition>>;
  /**
   * Ties are broken by document id: in the direction of the last sort key when a sort is given, ascending
   * otherwise. Adapters end every non-unique index with the id the same way, so a sort on an index's
   * leading fields (after the equality filters) walks the index in either direction, and deep pages skip
   * index entries rather than sorting every match.
   */
  sort?: ReadonlyArray<readonly [field: string, direction: 'asc' | 'desc']>;
  limit?: number;
  offset?: number;
  /**
   * Keyset paging: only the documents after the one given, in the query's order (the sort keys, then the
   * id tie-break described above). Give the sort values of the last document of the previous page (one per
   * sort key, null for a field that is null or missing) and its id. A document whose sort field is null or
   * missing orders before every value ascending and after every value descending (both stores' order).
   * Sort fields used with `after` hold strings or numbers (one type per field) or nothing. Unlike an
   * offset, the page does not shift when documents are added or removed before it. Not with offset, nor
   * with a text condition that has no sort (relevance order); ReadModelError otherwise.
   */
  after?: { values: readonly (string | number | null)[]; id: string };
  /**
   * Only these top-level fields of each document (a field the document lacks is left out, as it is from the
   * stored document). Reads a small part of large documents (say, one pre-serialised response) without
   * decoding the rest. At most MAX_QUERY_FIELDS names, [A-Za-z_][A-Za-z0-9_]*; ReadModelError otherwise.
   */
  fields?: readonly string[];
  /**
   * Search tokens (src/search/search-tokens.ts: queryTokens): every one must occur in the collection's
   * textField, as a whole token. Results come most relevant first (ties by id) unless `sort` is given.
   * An empty list matches no document. Only on collections with a textField: otherwise the adapter
   * throws ReadModelError. At most MAX_QUERY_TOKENS tokens of at most MAX_TOKEN_LENGTH code points, with
   * no whitespace, control character or '"' (ReadModelError otherwise).
   */
  text?: readonly string[];
}

export interface CommitOptions {
  /**
   * The lease the committing projector holds: the commit fails with LeaseLostError, before any write, when
   * another holder has it (SQLite and MongoDB's transactions check it in the commit's transaction; MongoDB's
   * journal just before it is written).
   */
  leaseHolder?: string;
  /**
   * The checkpoint the batch was folded from (null: from the start): the commit fails with
   * CheckpointConflictError, before any write, when the generation's stored checkpoint is another (a commit
   * of another writer landed since, such as a projector that stalled past its lease; or an interrupted commit
   * was completed). Checked in the same step that makes the commit happen, so that of two writers folding
   * from one checkpoint only one commits: what a projection reads while it folds is then always the state of
   * the checkpoint it folds from. Unset: the commit lands on whatever is stored.
   */
  expectedCheckpoint?: bigint | null;
}

export interface LeaseRecord {
  holder: string;
  expiresAt: string;
}

/** A document with its id. */
export interface DocumentEntry {
  id: string;
  doc: Document;
}

export type GenerationState = 'building' | 'active' | 'retired';

/** The event a projector could not fold, which paused that generation. */
export interface ProjectionFailure {
  eventId: string;
  eventType: string;
  streamId: string;
  position: bigint;
  message: string;
  failedAt: string;
}

export interface GenerationRecord {
  projection: string;
  generation: number;
  /** Version of the projection definition this generation was built with. */
  version: number;
  state: GenerationState;
  /** Position of the last event folded into this generation, null before the first. */
  checkpoint: bigint | null;
  failure: ProjectionFailure | null;
  createdAt: string;
  updatedAt: string;
}

/** An operator's decision to skip an event a projection cannot fold. Kept for every later rebuild. */
export interface SkipRecord {
  projection: string;
  eventId: string;
  position: bigint;
  reason: string;
  actor: string;
  skippedAt: string;
}

/**
 * The query half of the read-model port: what readers ask of a projection's generations (which one is active,
 * how far it has folded) and of their documents. The read path (ReadModelReader, the progress a write waits
 * for) takes only this half.
 */
export interface ReadModelQueries {
  /** The active generation's number, or null. */
  activeGeneration(projection: string): Promise<number | null>;
  getGeneration(projection: string, generation: number): Promise<GenerationRecord | null>;
  /** Every generation record, of one projection or of all. */
  listGenerations(projection?: string): Promise<GenerationRecord[]>;
  get(target: ModelTarget, collection: string, id: string): Promise<Document | null>;
  /**
   * The documents of these ids that exist, each with its id, in no particular order: one lookup of the
   * primary key, whatever the collection's size (an outbox checking which of its claims are still pending).
   * At most MAX_GET_MANY_IDS ids; ReadModelError otherwise.
   */
  getMany(target: ModelTarget, collection: string, ids: readonly string[]): Promise<DocumentEntry[]>;
  find(target: ModelTarget, collection: string, query?: Query): Promise<Document[]>;
  /** As find, each document with its id. */
  findWithIds(target: ModelTarget, collection: string, query?: Query): Promise<DocumentEntry[]>;
  /**
   * The string value of one top-level field of each document the query finds, in its order (Query.fields
   * is not taken): null for a document whose field is missing or holds anything but a string. What a list
   * of pre-serialised items reads: the strings as stored, no document decoded. An index that includes the
   * field (IndexSpec.include) and serves the query's filter and sort answers it alone.
   */
  findStrings(target: ModelTarget, collection: string, query: Omit<Query, 'fields'>, field: string): Promise<Array<string | null>>;
  /** Documents matching the filter and, when given, the text condition (as Query.text). */
  count(target: ModelTarget, collection: string, filter?: Query['filter'], text?: Query['text']): Promise<number>;
  /**
   * Calls `listener` soon after another connection (another process) commits, until the returned function is
   * called: a process that does not run the projectors (ROLES=api) polls the read models on this cue instead of
   * waiting for its next timed poll. It may also be called after this store's own commits (SQLite's are made by
   * its writer thread's connection): a poll more. `urgent` (a write waits for the projector process's commit):
   * told as soon as the adapter can, at some cost while the listener listens (SQLite: a look every millisecond
   * instead of every 5-25 ms). Adapters that cannot tell cheaply leave it out (MongoDB without change streams:
   * a standalone server, FerretDB); callers then poll.
   */
  watchOtherCommits?(listener: () => void, options?: { urgent?: boolean }): () => void;
  /**
   * Sorted list pages read deep since the store opened: `counted` found through what the store keeps of the
   * list (SQLite: its counts, from an offset of DEEP_OFFSET; MongoDB: its block index, from one block), `offset`
   * walked with OFFSET or skip() (a list not counted yet, or its counts dropped). For the metrics.
   */
  deepPageReads?(): { counted: number; offset: number };
  /** Verifies the store is reachable. Throws ReadModelUnavailableError otherwise. */
  ping(): Promise<void>;
}

/**
 * The admin half of the read-model port: what projectors and operators do to generations (create, index,
 * activate, drop), their commits, failures, skips and the projector lease.
 */
export interface ReadModelAdmin {
  /**
   * Creates the generation's collections and indexes (idempotent) and records it as 'building'. On a
   * generation that exists it adds the collections and indexes it lacks and leaves its record (version,
   * state, checkpoint) and documents as they are: newer code folding into a generation an older version
   * built gets what it declares (ProjectionSupervisor, after a version change).
   * With `deferIndexes`, only the collections and the unique indexes marked `whileFolding`
   * (foldingIndexesOf(schema, { uniqueOnly: true })): a rebuild loads documents first and calls createIndexes
   * before swapping in (building an index once is far cheaper than maintaining it through a bulk load). Its
   * projector creates a collection's other whileFolding indexes before it first finds in it (projections
   * otherwise read by id while folding).
   */
  createGeneration(schema: ReadModelSchema, generation: number, version: number, now: string, options?: { deferIndexes?: boolean }): Promise<GenerationRecord>;
  /** Creates the declared indexes of a generation (idempotent). Fails when a unique index does not hold. */
  createIndexes(schema: ReadModelSchema, generation: number): Promise<void>;
  /**
   * Makes `generation` the active one and retires the previously active one, in one step.
   * Fails with GenerationConflictError when the active generation is not `expectedActive`
   * (null: none is active yet).
   */
  activateGeneration(projection: string, generation: number, expectedActive: number | null, now: string): Promise<void>;
  /** Removes a generation's collections and its record. */
  dropGeneration(schema: ReadModelSchema, generation: number): Promise<void>;
  setFailure(target: ModelTarget, failure: ProjectionFailure | null, now: string): Promise<void>;
  addSkip(skip: SkipRecord): Promise<void>;
  listSkips(projection: string): Promise<SkipRecord[]>;
  /**
   * Applies the writes and stores the checkpoint, all or nothing: a commit that fails (or whose process dies)
   * leaves the documents and the checkpoint as they were, or, past the point where it is recorded (a store
   * that journals its commits), as they are after it once completeInterruptedCommit or the next commit has
   * run; never a part of it. The checkpoint never moves back: stored, it is the larger of the stored one and
   * `checkpoint`. Writes are applied as if one after another in position order, and a write whose position is
   * not newer than the stored document's is passed over, so a batch that deletes a document (or moves its
   * unique value away) and gives the freed value to another commits. A write that breaks a unique index fails
   * the commit with UniqueConstraintError, before anything is written. Unique indexes ignore documents whose
   * indexed field is missing or null, as SQL does.
   */
  commit(target: ModelTarget, writes: readonly DocumentWrite[], checkpoint: bigint, now: string, options?: CommitOptions): Promise<void>;
  /**
   * Completes the generation's commit that a failure or a crash interrupted after it was recorded (stores
   * that journal their commits: MongoDB without transactions); resolves to whether there was one (the
   * generation's documents and checkpoint have moved on since it was last read). A projector calls it once it
   * holds the generation's lease, before it reads the generation's checkpoint and folds from it: until then,
   * readers may see such a commit's documents in part. Stores whose commits are transactions resolve false.
   */
  completeInterruptedCommit(target: ModelTarget): Promise<boolean>;
  /**
   * The projector lease: one active projector per generation, in any number of processes. Takes the lease
   * of `target` for `holder` until `now + ttlMs`, or renews it, when it is free, expired (at or before `now`)
   * or already `holder`'s. Resolves to whether `holder` holds it. Atomic across processes sharing the store.
   * Times are the callers' clocks (ISO 8601 UTC): processes sharing a store need clocks within a small part
   * of the TTL of each other. `takeOverFrom` also takes it from that holder, expired or not (a holder known
   * to be dead: a process of this host that no longer runs).
   */
  acquireLease(target: ModelTarget, holder: string, now: string, ttlMs: number, options?: { takeOverFrom?: string }): Promise<boolean>;
  /** Gives the lease up if `holder` holds it, so another projector may take it at once. */
  releaseLease(target: ModelTarget, holder: string): Promise<void>;
  /** Who holds the lease of `target` and until when; null when nobody ever took it. */
  getLease(target: ModelTarget): Promise<LeaseRecord | null>;
}

/** A read-model store: both halves, and close(). Adapters implement it (one conformance suite per half). */
export interface ReadModelStore extends ReadModelQueries, ReadModelAdmin {
  close(): Promise<void>;
}

export class ReadModelError extends Error {
  override name = 'ReadModelError';
}

/**
 * A commit's write would break a unique index. Not a store failure: retrying the same writes fails the same
 * way, so a projector treats it as the fault of the event that made the write (a poison event).
 */
export class UniqueConstraintError extends ReadModelError {
  override name = 'UniqueConstraintError';
  constructor(
    readonly collection: string,
    readonly index: string,
    /** The document whose write collided, when the store says. */
    readonly id: string | null,
    detail: string,
  ) {
    super(`unique index ${index} of collection ${collection} refused the write of ${id === null ? 'a document' : JSON.stringify(id)}: ${detail}`);
  }
}

/** A commit by a projector whose lease another holder now has (it stalled past the TTL and was taken over). */
export class LeaseLostError extends ReadModelError {
  override name = 'LeaseLostError';
  constructor(readonly target: ModelTarget, readonly holder: string, readonly current: string | null) {
    super(`projector ${holder} no longer holds the lease of ${target.projection} generation ${target.generation}${current === null ? '' : ` (${current} does)`}`);
  }
}

/**
 * A commit folded from another checkpoint than the stored one (CommitOptions.expectedCheckpoint): another
 * commit landed since. Nothing was written; the committer folds again from the stored checkpoint.
 */
export class CheckpointConflictError extends ReadModelError {
  override name = 'CheckpointConflictError';
  constructor(readonly target: ModelTarget, readonly expected: bigint | null, readonly stored: bigint | null) {
    super(`${target.projection} generation ${target.generation} is at checkpoint ${stored ?? 'none'}, not ${expected ?? 'none'} as the commit expected: another commit landed first`);
  }
}

export class GenerationConflictError extends ReadModelError {
  override name = 'GenerationConflictError';
}

/**
 * A text query (Query.text) on a collection whose text index the server could not build: it has none (a
 * MongoDB wire-compatible server without text indexes, such as FerretDB v1). Everything else of the read model
 * works; search does not, until the read models move to a server that has them.
 */
export class TextSearchUnavailableError extends ReadModelError {
  override name = 'TextSearchUnavailableError';
}

export class ReadModelUnavailableError extends ReadModelError {
  override name = 'ReadModelUnavailableError';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

const PROJECTION_NAME = /^[a-z][a-z0-9-]{0,62}$/;
const COLLECTION_NAME = /^[a-z][a-z0-9_]{0,62}$/;
const FIELD_PATH = /^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$/;

export function assertProjectionName(name: string): void {
  if (!PROJECTION_NAME.test(name)) throw new ReadModelError(`invalid projection name ${JSON.stringify(name)}: use [a-z][a-z0-9-]*`);
}
export function assertCollectionName(name: string): void {
  if (!COLLECTION_NAME.test(name)) throw new ReadModelError(`invalid collection name ${JSON.stringify(name)}: use [a-z][a-z0-9_]*`);
}
export function assertFieldPath(path: string): void {
  if (!FIELD_PATH.test(path)) throw new ReadModelError(`invalid field path ${JSON.stringify(path)}`);
}

export const MAX_QUERY_LIMIT = 10_000;

export const MAX_QUERY_FIELDS = 16;

/** Most ids one getMany looks up. */
export const MAX_GET_MANY_IDS = 1000;

/** Refuses a getMany of more than MAX_GET_MANY_IDS ids (both adapters). */
export function assertGetManyIds(ids: readonly string[]): void {
  if (ids.length > MAX_GET_MANY_IDS) throw new ReadModelError(`getMany takes at most ${MAX_GET_MANY_IDS} ids, not ${ids.length}`);
}
const TOP_LEVEL_FIELD = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Checks the field list of a query (Query.fields), or what `context` names (an index's include). */
export function assertFields(fields: Query['fields'], context = ''): void {
  if (fields === undefined) return;
  if (!Array.isArray(fields) || fields.length === 0 || fields.length > MAX_QUERY_FIELDS) throw new ReadModelError(`${context}invalid fields: 1 to ${MAX_QUERY_FIELDS} top-level field names`);
  for (const field of fields) if (typeof field !== 'string' || !TOP_LEVEL_FIELD.test(field)) throw new ReadModelError(`${context}invalid field ${JSON.stringify(field)}: a top-level field name`);
}

/**
 * Checks an index's options: its included fields (IndexSpec.include) are names a find can read (assertFields),
 * none twice, none on a unique index; a unique index is not sparse.
 */
export function assertIndexOptions(index: IndexSpec): void {
  if (index.sparse && index.unique) throw new ReadModelError(`index ${index.name}: a unique index cannot be sparse (it leaves out null keys already)`);
  if (index.include === undefined) return;
  if (index.unique) throw new ReadModelError(`index ${index.name}: a unique index cannot include fields (they would count in what is unique)`);
  assertFields(index.include, `index ${index.name} include: `);
  if (new Set(index.include).size !== index.include.length) throw new ReadModelError(`index ${index.name} includes a field twice`);
}

/** A document's value of a sort field as a keyset holds it (Query.after): a string, a finite number, or null for anything else. */
export function keysetValue(doc: Document, field: string): string | number | null {
  const value = valueAt(doc, field);
  return typeof value === 'string' || (typeof value === 'number' && Number.isFinite(value)) ? value : null;
}

/** Checks a keyset condition (Query.after) against the query it belongs to. */
export function assertAfter(query: Query): void {
  const after = query.after;
  if (after === undefined) return;
  if (after === null || typeof after !== 'object' || typeof after.id !== 'string' || !Array.isArray(after.values)) {
    throw new ReadModelError('invalid after: expected {values, id}');
  }
  if ((query.offset ?? 0) > 0) throw new ReadModelError('after and offset cannot be combined');
  if (query.text !== undefined && query.sort === undefined) throw new ReadModelError('after needs a sort with a text condition (relevance order has no keyset)');
  const keys = query.sort?.length ?? 0;
  if (after.values.length !== keys) throw new ReadModelError(`invalid after: ${after.values.length} values for ${keys} sort keys`);
  for (const value of after.values) {
    if (!(value === null || typeof value === 'string' || (typeof value === 'number' && Number.isFinite(value)))) {
      throw new ReadModelError(`invalid after value ${JSON.stringify(value)}: a string, a finite number or null`);
    }
  }
}

/** Checks a collection's textField. */
export function assertTextField(collection: string, spec: CollectionSpec): void {
  if (spec.textField === undefined) return;
  if (typeof spec.textField !== 'string') throw new ReadModelError(`collection ${collection}: textField must be a field path`);
  assertFieldPath(spec.textField);
  for (const field of spec.textPrefix ?? []) assertFieldPath(field);
}

const TOKEN_BREAK = /[\s"\p{Cc}]/u;

/** Checks the tokens of a text condition (Query.text). */
export function assertTextTokens(text: readonly string[]): void {
  if (!Array.isArray(text)) throw new ReadModelError('invalid text condition: expected an array of search tokens');
  if (text.length > MAX_QUERY_TOKENS) throw new ReadModelError(`invalid text condition: at most ${MAX_QUERY_TOKENS} tokens`);
  for (const token of text) {
    if (typeof token !== 'string' || token === '' || TOKEN_BREAK.test(token) || [...token].length > MAX_TOKEN_LENGTH) {
      throw new ReadModelError(
        `invalid search token ${JSON.stringify(token)}: a non-empty string of at most ${MAX_TOKEN_LENGTH} characters without whitespace, control characters or '"'`,
      );
    }
  }
}
