/**
 * Moving a whole log between event stores of any adapters (the embedded SQLite log to EventStoreDB, or a
 * copy of either), through the file format of ./log-file.ts:
 *
 * - exportLog writes every event in global order (ids, stream revisions, types, schema versions, data,
 *   metadata as stored) and every soft delete, with the digest of the whole log;
 * - importLog appends such a file into an event store that is empty, or holds a prefix of the file (an
 *   import that was interrupted): it first checks that what the store holds is exactly the file's first
 *   events, then continues after them, so a rerun never duplicates. Events keep their ids, stream revisions
 *   and order; consecutive events of one stream go in one append (within MAX_APPEND_BYTES);
 * - digestStore reads a store back (its events and deletions) into the same digest, which importLog compares
 *   with the file's: the verification step.
 */
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import { once } from 'node:events';
import { StreamNotFoundError } from './errors.ts';
import { MAX_APPEND_BYTES, type EventStore, type ExpectedRevision, type NewEvent } from './event-store.ts';
import { eventLine, LOG_FILE_FORMAT, LOG_FILE_VERSION, LogDigest, LogFileError, parseLogLine, type LogFileEnd, type LogFileEvent, type LogFileHeader } from './log-file.ts';

export interface TransferProgress {
  /** Events handled so far. */
  events: number;
  /** Share of the work done, 0..1. */
  fraction: number;
}

export interface LogSummary {
  events: number;
  streams: number;
  digest: string;
}

/** Events per append at most, when consecutive events of one stream are appended together. */
const MAX_GROUP_EVENTS = 500;

/** Writes the store's whole log to `file` (through a temporary file, renamed when complete). */
export async function exportLog(store: EventStore, file: string, options: { now: () => Date; onProgress?: (progress: TransferProgress) => void }): Promise<LogSummary> {
  const head = await store.headPosition();
  const temporary = path.join(path.dirname(file), `.${path.basename(file)}.${process.pid}.partial`);
  // The whole log (personal data in it sealed, the rest not): readable by the exporting user only.
  const out = fs.createWriteStream(temporary, { encoding: 'utf8', mode: 0o600 });
  const write = async (line: unknown) => {
    if (!out.write(`${JSON.stringify(line)}\n`)) await once(out, 'drain');
  };
  const digest = new LogDigest();
  const lastRevision = new Map<string, bigint>();
  try {
    const header: LogFileHeader = { kind: 'header', format: LOG_FILE_FORMAT, version: LOG_FILE_VERSION, exportedAt: options.now().toISOString(), head: head === null ? null : head.toString() };
    await write(header);
    for await (const event of store.readAll()) {
      if (head !== null && event.position > head) break; // appended after the export began: left for a later export
      await write(eventLine(event));
      digest.addEvent(event);
      lastRevision.set(event.streamId, event.revision);
      if (digest.events % 1000 === 0) options.onProgress?.({ events: digest.events, fraction: fractionOf(event.position, head) });
    }
    for (const [streamId, deletedBefore] of await deletions(store, lastRevision)) {
      digest.addDeletion(streamId, deletedBefore);
      await write({ kind: 'stream', streamId, deletedBefore: deletedBefore.toString() });
    }
    const summary = { events: digest.events, streams: digest.streams, digest: digest.digest() };
    const end: LogFileEnd = { kind: 'end', ...summary };
    await write(end);
    out.end();
    await once(out, 'finish');
    await fs.promises.rename(temporary, file);
    options.onProgress?.({ events: digest.events, fraction: 1 });
    return summary;
  } catch (error) {
    out.destroy();
    await fs.promises.rm(temporary, { force: true });
    throw error;
  }
}

/**
 * The soft deletes of the given streams (their last revisions known): a stream that reads as not found was
 * deleted after its last event; one that reads from a later first revision was deleted before it. One read
 * per stream.
 */
async function deletions(store: EventStore, lastRevision: ReadonlyMap<string, bigint>): Promise<Array<[string, bigint]>> {
  const found: Array<[string, bigint]> = [];
  for (const [streamId, last] of [...lastRevision].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    try {
      for await (const first of store.readStream(streamId, { maxCount: 1 })) {
        if (first.revision > 0n) found.push([streamId, first.revision]);
      }
    } catch (error) {
      if (!(error instanceof StreamNotFoundError)) throw error;
      found.push([streamId, last + 1n]);
    }
  }
  return found;
}

/** The store's log as a digest (events, then deletions), for comparing with a file's. */
export async function digestStore(store: EventStore): Promise<LogSummary> {
  const digest = new LogDigest();
  const lastRevision = new Map<string, bigint>();
  for await (const event of store.readAll()) {
    digest.addEvent(event);
    lastRevision.set(event.streamId, event.revision);
  }
  for (const [streamId, deletedBefore] of await deletions(store, lastRevision)) digest.addDeletion(streamId, deletedBefore);
  return { events: digest.events, streams: digest.streams, digest: digest.digest() };
}

/** What a first pass over the file finds: its soft deletes and its summary, checked against its events. */
interface FileOutline {
  header: LogFileHeader;
  events: number;
  deletedBefore: Map<string, bigint>;
  end: LogFileEnd;
}

async function* lines(file: string): AsyncGenerator<{ line: ReturnType<typeof parseLogLine>; at: number; bytes: number }> {
  const input = readline.createInterface({ input: fs.createReadStream(file, { encoding: 'utf8' }), crlfDelay: Infinity });
  let at = 0;
  try {
    for await (const text of input) {
      at += 1;
      if (text.trim() === '') continue;
      yield { line: parseLogLine(text, at), at, bytes: Buffer.byteLength(text) };
    }
  } finally {
    input.close();
  }
}

async function outline(file: string): Promise<FileOutline> {
  let header: LogFileHeader | undefined;
  let end: LogFileEnd | undefined;
  const digest = new LogDigest();
  const deletedBefore = new Map<string, bigint>();
  for await (const { line, at } of lines(file)) {
    if (end) throw new LogFileError(`line ${at}: after the end line`);
    if (!header) {
      if (line.kind !== 'header') throw new LogFileError(`line ${at}: the file does not start with an annals log header`);
      header = line;
      continue;
    }
    if (line.kind === 'event') digest.addEvent(line);
    else if (line.kind === 'stream') {
      deletedBefore.set(line.streamId, BigInt(line.deletedBefore));
      digest.addDeletion(line.streamId, line.deletedBefore);
    } else if (line.kind === 'end') end = line;
    else throw new LogFileError(`line ${at}: a second header`);
  }
  if (!header) throw new LogFileError('the file is empty');
  if (!end) throw new LogFileError('the file has no end line: the export did not finish (or the file was cut)');
  if (end.events !== digest.events || end.digest !== digest.digest()) {
    throw new LogFileError(`the file does not match its own end line (${digest.events} events, digest ${digest.digest()}; the end line says ${end.events}, ${end.digest}): it was changed or damaged`);
  }
  return { header, events: digest.events, deletedBefore, end };
}

/** The events of a file, in order (after checking the file matches its end line). */
export async function* fileEvents(file: string): AsyncGenerator<LogFileEvent> {
  await outline(file);
  for await (const { line } of lines(file)) if (line.kind === 'event') yield line;
}

/** A file's summary (its end line), after checking the file matches it. */
export async function outlineSummary(file: string): Promise<LogSummary> {
  const { end } = await outline(file);
  return { events: end.events, streams: end.streams, digest: end.digest };
}

/** The store holds events the file does not start with: importing would mix two logs. */
export class ImportTargetError extends Error {
  override name = 'ImportTargetError';
}

export interface ImportResult {
  /** Events in the file. */
  events: number;
  /** Of them, found already imported (an earlier, interrupted run). */
  alreadyPresent: number;
  /** Of them, appended by this run. */
  appended: number;
  /** The file's summary, and the store's read back after the import. */
  source: LogSummary;
  target: LogSummary;
  verified: boolean;
}

export interface ImportOptions {
  onProgress?: (progress: TransferProgress) => void;
  /** Stop after appending this many events (tests of resuming). */
  stopAfter?: number;
}

/** Appends the file's log into `store` (empty, or holding the file's first events), then verifies it. */
export async function importLog(store: EventStore, file: string, options: ImportOptions = {}): Promise<ImportResult> {
  const plan = await outline(file);
  const source: LogSummary = { events: plan.end.events, streams: plan.end.streams, digest: plan.end.digest };
  const present = await presentPrefix(store, file);
  const progress = (done: number) => options.onProgress?.({ events: done, fraction: plan.events === 0 ? 1 : done / plan.events });
  progress(present);

  /** Streams this run deleted (or found deleted) at their recorded revision. */
  const lastRevision = new Map<string, bigint>();
  let group: LogFileEvent[] = [];
  let groupBytes = 0;
  let seen = 0;
  let appended = 0;
  const flush = async () => {
    if (group.length === 0) return;
    const first = group[0]!;
    const revision = BigInt(first.revision);
    const deletedBefore = plan.deletedBefore.get(first.streamId);
    let expected: ExpectedRevision = revision === 0n ? 'no_stream' : revision - 1n;
    if (deletedBefore !== undefined && revision === deletedBefore && revision > 0n) {
      // The stream was soft-deleted before this event in the source: delete it here too, then recreate it.
      await deleteIgnoringMissing(store, first.streamId);
      expected = 'any';
    }
    await store.append(first.streamId, group.map(toNewEvent), expected);
    appended += group.length;
    progress(present + appended);
    group = [];
    groupBytes = 0;
  };

  for await (const { line, bytes } of lines(file)) {
    if (line.kind !== 'event') continue;
    seen += 1;
    lastRevision.set(line.streamId, BigInt(line.revision));
    if (seen <= present) continue;
    if (options.stopAfter !== undefined && appended + group.length >= options.stopAfter) break;
    const continues =
      group.length > 0 &&
      group[group.length - 1]!.streamId === line.streamId &&
      group.length < MAX_GROUP_EVENTS &&
      groupBytes + bytes <= MAX_APPEND_BYTES &&
      BigInt(line.revision) !== plan.deletedBefore.get(line.streamId);
    if (!continues) await flush();
    group.push(line);
    groupBytes += bytes;
  }
  await flush();
  if (options.stopAfter !== undefined && present + appended < plan.events) {
    return { events: plan.events, alreadyPresent: present, appended, source, target: await digestStore(store), verified: false };
  }
  // Streams deleted after their last event.
  for (const [streamId, deletedBefore] of plan.deletedBefore) {
    const last = lastRevision.get(streamId);
    if (last !== undefined && deletedBefore > last) await deleteIgnoringMissing(store, streamId);
  }
  const target = await digestStore(store);
  return { events: plan.events, alreadyPresent: present, appended, source, target, verified: target.digest === source.digest && target.events === source.events && target.streams === source.streams };
}

/**
 * How many of the file's first events the store already holds, checking that the store holds nothing else:
 * its events, in order, must be the file's first ones (same ids, streams and revisions).
 */
async function presentPrefix(store: EventStore, file: string): Promise<number> {
  const stored = store.readAll()[Symbol.asyncIterator]();
  const fileEvents = lines(file);
  let count = 0;
  try {
    for (;;) {
      const next = await stored.next();
      if (next.done) return count;
      let line: LogFileEvent | undefined;
      for (;;) {
        const item = await fileEvents.next();
        if (item.done) break;
        if (item.value.line.kind === 'event') {
          line = item.value.line;
          break;
        }
      }
      const event = next.value;
      if (!line || line.id !== event.id || line.streamId !== event.streamId || line.revision !== event.revision.toString()) {
        throw new ImportTargetError(
          `the target event store is not empty and does not hold this file's first events (its event ${count + 1} is ${event.id} in ${JSON.stringify(event.streamId)}${line ? `, the file's is ${line.id} in ${JSON.stringify(line.streamId)}` : ', the file has no more'}): import into an empty store`,
        );
      }
      count += 1;
    }
  } finally {
    await stored.return?.();
    await fileEvents.return(undefined);
  }
}

async function deleteIgnoringMissing(store: EventStore, streamId: string): Promise<void> {
  try {
    await store.deleteStream(streamId, 'any');
  } catch (error) {
    if (!(error instanceof StreamNotFoundError)) throw error;
  }
}

function toNewEvent(line: LogFileEvent): NewEvent {
  return { id: line.id, type: line.type, data: line.data, metadata: line.metadata };
}

function fractionOf(position: bigint, head: bigint | null): number {
  if (head === null || head === 0n) return 1;
  return Math.min(1, Number((position * 10_000n) / head) / 10_000);
}
