import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

/** A value bound to a statement run on the writer thread (what better-sqlite3 binds, less what cannot cross threads). */
export type WriteParameter = string | number | bigint | null | Uint8Array;

/**
 * One statement of a transaction run on the writer thread. `read` statements give their first row (its values
 * in column order, or null); the others the number of rows they changed. With `abortUnless`, a read whose first
 * value is not that (or that finds no row) rolls the whole transaction back (TransactionOutcome `aborted`).
 */
export interface WriteStep {
  sql: string;
  params: readonly WriteParameter[];
  /** A value bound after `params` as its JSON text (made where the statement runs: on the thread, off the event loop). */
  json?: unknown;
  read?: boolean;
  abortUnless?: WriteParameter;
}

/** What a transaction on the writer thread came to. */
export type TransactionOutcome =
  | { committed: ReadonlyArray<number | readonly unknown[] | null> }
  | { aborted: { step: number; row: readonly unknown[] | null } }
  | { failed: { code: string | undefined; message: string } };

/**
 * The thread's connection and what it does. `pragmas` are the connection's settings, as the opening connection
 * set them (see connectionPragmas). `handler` is the CommonJS source of a function that the thread calls with its
 * connection (a better-sqlite3 Database) and that returns the function answering each request: what it returns
 * is the reply (anything structured clone carries); what it throws fails that request alone. It runs on another
 * thread: it may use only its arguments and `require`. STEPS_HANDLER (the default) runs a transaction of
 * WriteSteps.
 */
export interface WriterThreadOptions {
  pragmas: readonly string[];
  busyTimeoutMs: number;
  handler?: string;
}

/** The writer thread died (or could not open the file) with transactions outstanding: whether each committed is unknown. */
export class WriterThreadError extends Error {
  override name = 'WriterThreadError';
}

/** A write the writer thread could not make (a request its handler threw on, or one statement's failure): the message, and SQLite's code if it was SQLite's. */
export class WriterRequestError extends Error {
  override name = 'SqliteError';
  constructor(
    message: string,
    readonly code: string | undefined,
  ) {
    super(message);
  }
}

/** Runs a list of WriteSteps as one IMMEDIATE transaction (see SqliteWriterThread.run). */
export const STEPS_HANDLER = `(db) => {
  // Reads run in raw mode (rows as arrays), so a statement used both ways is prepared once for each.
  const reads = new Map();
  const writes = new Map();
  const prepared = (sql, read) => {
    const statements = read ? reads : writes;
    let statement = statements.get(sql);
    if (!statement) {
      statement = db.prepare(sql);
      if (read) statement.raw(true);
      if (statements.size > 500) statements.clear();
      statements.set(sql, statement);
    }
    return statement;
  };
  class Abort {
    constructor(step, row) { this.step = step; this.row = row; }
  }
  const run = db.transaction((steps) => steps.map((step, i) => {
    if (!step.read) {
      const statement = prepared(step.sql, false);
      return ('json' in step ? statement.run(...step.params, JSON.stringify(step.json)) : statement.run(...step.params)).changes;
    }
    const row = prepared(step.sql, true).get(...step.params) ?? null;
    if ('abortUnless' in step && (row === null || row[0] !== step.abortUnless)) throw new Abort(i, row);
    return row;
  }));
  return (steps) => {
    try {
      return { committed: run.immediate(steps) };
    } catch (error) {
      if (error instanceof Abort) return { aborted: { step: error.step, row: error.row } };
      return { failed: { code: error && error.code, message: String(error && error.message || error) } };
    }
  };
}`;

/** The thread: a connection of its own to the file, then the handler's answer to each message. CommonJS run with `eval`, so that it loads the same under tsx and from dist/ (as the checkpointing thread's). */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
let answer;
try {
  const db = new Database(workerData.file, { fileMustExist: true, timeout: workerData.busyTimeoutMs });
  for (const pragma of workerData.pragmas) db.pragma(pragma);
  answer = (0, eval)(workerData.handler)(db);
  parentPort.on('message', (message) => {
    if (message === 'close') {
      db.close();
      parentPort.close();
      return;
    }
    let reply;
    try {
      reply = { id: message.id, reply: answer(message.request) };
    } catch (error) {
      reply = { id: message.id, error: { code: error && error.code, message: String(error && error.message || error) } };
    }
    parentPort.postMessage(reply);
  });
} catch (error) {
  // SQLite's errors reach the parent as their code alone: a plain Error keeps the message.
  throw new Error((error && error.code ? error.code + ': ' : '') + String(error && error.message || error));
}
`;

/**
 * Runs a SQLite file's write transactions on a thread of its own, so that the event loop goes on answering
 * while SQLite writes pages, updates indexes and (when the WAL passes its threshold) checkpoints: work that,
 * on the loop, held every request up for its length (5 ms per publish cycle on average for the read models,
 * 20-50 ms when SQLite's own checkpoint ran in the commit).
 *
 * Requests are answered one at a time, in the order asked for, by the handler (WriterThreadOptions); each
 * promise settles once the thread has answered (for a transaction: committed, or not). The connection is the
 * thread's: to the process's other connections its commits are another connection's (PRAGMA data_version).
 * The thread starts with the first request, does not keep the process alive while idle, and is replaced if it
 * dies (outstanding requests fail with WriterThreadError).
 */
export class SqliteWriterThread<Request = readonly WriteStep[], Reply = TransactionOutcome> {
  readonly #file: string;
  readonly #options: WriterThreadOptions;
  #thread: { worker: Worker; exited: Promise<void> } | undefined;
  readonly #pending = new Map<number, (outcome: { reply: Reply } | { error: Error }) => void>();
  #nextId = 1;
  #closed = false;

  constructor(file: string, options: WriterThreadOptions) {
    this.#file = file;
    this.#options = options;
  }

  /** Requests asked for and not yet answered. */
  get outstanding(): number {
    return this.#pending.size;
  }

  /**
   * The handler's reply to `request`, once the thread has answered; rejects with what the handler threw
   * (WriterRequestError), or WriterThreadError if the thread is gone. With STEPS_HANDLER: runs the steps in one
   * transaction.
   */
  run(request: Request): Promise<Reply> {
    if (this.#closed) return Promise.reject(new WriterThreadError('the writer thread is closed'));
    const { worker } = (this.#thread ??= this.#start());
    const id = this.#nextId++;
    return new Promise<Reply>((resolve, reject) => {
      this.#pending.set(id, (outcome) => ('error' in outcome ? reject(outcome.error) : resolve(outcome.reply)));
      // While a request is outstanding the process must wait for it.
      if (this.#pending.size === 1) worker.ref();
      worker.postMessage({ id, request });
    });
  }

  /** Waits for the outstanding transactions, then ends the thread. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    const thread = this.#thread;
    if (!thread) return;
    thread.worker.ref();
    thread.worker.postMessage('close');
    await thread.exited;
  }

  #start(): { worker: Worker; exited: Promise<void> } {
    const driver = createRequire(import.meta.url).resolve('better-sqlite3');
    const worker = new Worker(WORKER_SOURCE, {
      eval: true,
      execArgv: [],
      workerData: { file: this.#file, driver, pragmas: this.#options.pragmas, busyTimeoutMs: this.#options.busyTimeoutMs, handler: this.#options.handler ?? STEPS_HANDLER },
    });
    worker.unref();
    worker.on('message', (message: { id: number; reply?: Reply; error?: { code: string | undefined; message: string } }) => {
      const settle = this.#pending.get(message.id);
      if (!settle) return;
      this.#pending.delete(message.id);
      if (this.#pending.size === 0 && !this.#closed) worker.unref();
      settle(message.error ? { error: new WriterRequestError(message.error.message, message.error.code) } : { reply: message.reply as Reply });
    });
    let failure: Error | undefined;
    worker.on('error', (error) => (failure = error));
    const exited = new Promise<void>((resolve) =>
      worker.once('exit', () => {
        if (this.#thread?.worker === worker) this.#thread = undefined;
        const outstanding = [...this.#pending.values()];
        this.#pending.clear();
        const reason = failure ? `: ${failure.message}` : '';
        for (const settle of outstanding) settle({ error: new WriterThreadError(`the writer thread of ${this.#file} ended before answering${reason}`) });
        resolve();
      }),
    );
    return { worker, exited };
  }
}
