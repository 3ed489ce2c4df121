/**
 * The SQLite read-model store's connection on the event loop: its prepared statements, and the read
 * transaction that the reads of one turn of the event loop share (see beginTurnRead). Commits run on the
 * writer thread's connection (SqliteWriterThread), everything else on this one.
 */
import type Database from 'better-sqlite3';
import { ReadModelError, ReadModelUnavailableError } from './read-model-store.ts';

export class LoopConnection {
  readonly db: Database.Database;
  readonly #statements = new Map<string, Database.Statement>();
  #closed = false;
  /** Whether this turn's read transaction is open (see #beginTurnRead). */
  #turnRead = false;
  readonly #begin: Database.Statement;
  readonly #end: Database.Statement;

  constructor(db: Database.Database) {
    this.db = db;
    this.#begin = db.prepare('BEGIN');
    this.#end = db.prepare('COMMIT');
  }

  get closed(): boolean {
    return this.#closed;
  }

  /** From here on every statement is refused (ReadModelUnavailableError); the store closes the database itself. */
  markClosed(): void {
    this.#closed = true;
  }

  /** Forgets every prepared statement (a table dropped or made again, the store closed). */
  forgetStatements(): void {
    this.#statements.clear();
  }

  /** A search table made again: statements prepared on it are forgotten (an index added needs no such care). */
  forgetStatementsAfter(statements: readonly string[]): void {
    if (statements.some((sql) => !/^CREATE (UNIQUE )?INDEX /.test(sql))) this.#statements.clear();
  }
  /**
   * A statement of a read of documents, run in this turn's read transaction (see #beginTurnRead); null for a
   * generation that does not exist (never created, or dropped): such a read finds nothing.
   */
  readStmt(sql: string): Database.Statement | null {
    try {
      const statement = this.#prepared(sql);
      this.#beginTurnRead();
      return statement;
    } catch (error) {
      if (error instanceof ReadModelError && error.message.startsWith('read model not created')) return null;
      throw error;
    }
  }

  /** A statement of anything else (writes, generations, leases): run outside any read transaction of the turn. */
  stmt(sql: string): Database.Statement {
    const statement = this.#prepared(sql);
    this.endTurnRead();
    return statement;
  }

  /** A write transaction: it begins once this turn's read transaction has ended (see #beginTurnRead). */
  transaction<T>(write: () => T): Database.Transaction<() => T> {
    this.assertOpen();
    this.endTurnRead();
    return this.db.transaction(write);
  }

  /**
   * Reads of documents share one read transaction per turn of the event loop: the first begins it, and it
   * ends at the next setImmediate or before this store writes anything, whichever comes first. A statement
   * outside a transaction begins and ends a read transaction of its own, which takes two locks on the WAL
   * index (fcntl) and a check of its header: ~2.2 µs of the ~7.5 µs of a single-entry lookup here, and the
   * public reads of a busy service come many to a turn. What a read sees is unchanged for this process (its
   * own writes end the transaction first, so a read after a write sees it); another process's commit is
   * seen from the next turn on, as if it had committed a moment later.
   */
  #beginTurnRead(): void {
    if (this.#turnRead || this.db.inTransaction) return;
    this.#begin.run();
    this.#turnRead = true;
    setImmediate(this.#endTurnReadSoon);
  }

  endTurnRead(): void {
    if (!this.#turnRead) return;
    this.#turnRead = false;
    // A failed statement may have rolled the transaction back already (SQLITE_BUSY, SQLITE_NOMEM).
    if (this.db.inTransaction) this.#end.run();
  }

  readonly #endTurnReadSoon = (): void => {
    if (!this.#closed) this.endTurnRead();
  };

  #prepared(sql: string): Database.Statement {
    this.assertOpen();
    let statement = this.#statements.get(sql);
    if (!statement) {
      try {
        statement = this.db.prepare(sql);
      } catch (error) {
        if (/no such table/.test((error as Error).message)) {
          throw new ReadModelError(`read model not created: ${(error as Error).message.replace('no such table: ', '')}`);
        }
        throw error;
      }
      if (this.#statements.size > 500) this.#statements.clear();
      this.#statements.set(sql, statement);
    }
    return statement;
  }

  assertOpen(): void {
    if (this.#closed) throw new ReadModelUnavailableError('the read-model store is closed');
  }
}
