/**
 * The SQLite read-model store's commits as the writer thread runs them: the statements of one commit (the
 * lease and checkpoint checks, the documents, the checkpoint and the count of document commits), and a
 * commit that failed as the error the store's callers know.
 */
import { encodePosition } from '../event-store/position.ts';
import { WriterRequestError, type WriteStep } from '../sqlite/writer-thread.ts';
import { KEPT_COMMITS } from './sqlite-deep-pages.ts';
import { tableName } from './sqlite-document-sql.ts';
import { ReadModelError, UniqueConstraintError, type CommitOptions, type DocumentWrite, type ModelTarget } from './read-model-store.ts';

/** The statements of a commit (see SqliteReadModelStore.commit). */
/** SQLite's largest integer (2^63 - 1): a document's position is stored as one (see SqliteGenerationRegistry). */
const MAX_SQLITE_INTEGER = (1n << 63n) - 1n;

export function commitSteps(target: ModelTarget, writes: readonly DocumentWrite[], checkpoint: bigint, now: string, options: CommitOptions): WriteStep[] {
  const steps: WriteStep[] = [];
  if (options.leaseHolder !== undefined) {
    steps.push({ sql: 'SELECT holder FROM projection_leases WHERE projection = ? AND generation = ?', params: [target.projection, target.generation], read: true, abortUnless: options.leaseHolder });
  }
  if (options.expectedCheckpoint !== undefined) {
    steps.push({
      sql: 'SELECT checkpoint FROM projection_generations WHERE projection = ? AND generation = ?',
      params: [target.projection, target.generation],
      read: true,
      abortUnless: options.expectedCheckpoint === null ? null : encodePosition(options.expectedCheckpoint),
    });
  }
  // Deletes first, then puts in position order: a batch that frees a unique value and gives it to
  // another document commits, as applying its events one by one would.
  const ordered = [...writes].sort((a, b) => (a.doc === null) !== (b.doc === null) ? (a.doc === null ? -1 : 1) : a.position < b.position ? -1 : a.position > b.position ? 1 : 0);
  const tables = new Map<string, { table: string; upsert: string; remove: string }>();
  for (const write of ordered) {
    let writer = tables.get(write.collection);
    if (!writer) {
      const table = tableName(target, write.collection);
      writer = {
        table,
        upsert: `INSERT INTO "${table}" (id, pos, doc) VALUES (?, ?, jsonb(?))
             ON CONFLICT (id) DO UPDATE SET pos = excluded.pos, doc = excluded.doc WHERE excluded.pos > "${table}".pos`,
        remove: `DELETE FROM "${table}" WHERE id = ? AND pos < ?`,
      };
      tables.set(write.collection, writer);
    }
    // Past SQLite's largest integer a position would be stored as a REAL, rounded (a log 9.2 exabytes long).
    if (write.position > MAX_SQLITE_INTEGER) throw new ReadModelError(`position ${write.position} of ${write.collection}/${write.id} is past what an SQLite read model stores exactly (${MAX_SQLITE_INTEGER})`);
    const pos = encodePosition(write.position);
    steps.push(write.doc === null ? { sql: writer.remove, params: [write.id, pos] } : { sql: writer.upsert, params: [write.id, pos], json: write.doc });
  }
  steps.push({
    sql: `UPDATE projection_generations SET checkpoint = ?, updated_at = ?
       WHERE projection = ? AND generation = ? AND (checkpoint IS NULL OR checkpoint < ?)`,
    params: [encodePosition(checkpoint), now, target.projection, target.generation, encodePosition(checkpoint)],
  });
  for (const writer of tables.values()) steps.push({ sql: TABLE_COMMIT_SQL, params: [writer.table] });
  // The changes recorded by the commit KEPT_COMMITS before this one go (a few rows, by the index on n).
  steps.push({ sql: PRUNE_COUNTED_CHANGES_SQL, params: [] });
  // Last: the commit's number.
  steps.push({ sql: 'UPDATE document_commits SET n = n + 1 WHERE id = 0', params: [] });
  return steps;
}

const PRUNE_COUNTED_CHANGES_SQL = `DELETE FROM counted_changes WHERE n <= (SELECT n FROM document_commits WHERE id = 0) + 1 - ${KEPT_COMMITS}`;

/** Records, in a commit's transaction, that the commit (the number it is about to take) wrote a table. */
const TABLE_COMMIT_SQL = `INSERT INTO table_commits (name, n) SELECT ?, n + 1 FROM document_commits WHERE id = 0
  ON CONFLICT (name) DO UPDATE SET n = excluded.n`;

/**
 * SQLite's "UNIQUE constraint failed: index '<table>__<index>'" as the port's UniqueConstraintError (the
 * document is the last write to the collection that failed: SQLite stops at the first violation).
 */
function asUniqueConstraintError(error: unknown, target: ModelTarget, writes: readonly DocumentWrite[]): UniqueConstraintError | null {
  const code = (error as { code?: unknown })?.code;
  if (code !== 'SQLITE_CONSTRAINT_UNIQUE') return null;
  const message = (error as Error).message;
  const match = /index '([^']+)'/.exec(message);
  for (const collection of new Set(writes.map((w) => w.collection))) {
    const prefix = `${tableName(target, collection)}__`;
    if (match?.[1]?.startsWith(prefix)) return new UniqueConstraintError(collection, match[1].slice(prefix.length), null, message);
  }
  return new UniqueConstraintError(writes[0]?.collection ?? '?', match?.[1] ?? '?', null, message);
}

/** A commit the writer thread could not make, as the error the store's callers know (SQLite's own, for the others). */
export function commitFailure(failure: { code: string | undefined; message: string }, target: ModelTarget, writes: readonly DocumentWrite[]): Error {
  if (/no such table/.test(failure.message)) return new ReadModelError(`read model not created: ${failure.message.replace('no such table: ', '')}`);
  const error = new WriterRequestError(failure.message, failure.code);
  return asUniqueConstraintError(error, target, writes) ?? error;
}
