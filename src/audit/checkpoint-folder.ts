/**
 * Checkpoints published to a folder outside DATA_DIR (AUDIT_CHECKPOINT_DIR): one append-only file,
 * `checkpoints.ndjson`, one JSON object per line, only ever appended to (opened O_APPEND, synced after each
 * line). Mount it where the service's database writer cannot rewrite it (another volume, a WORM store, a file
 * made append-only with `chattr +a`): a checkpoint there is what `annals audit verify --against` and the
 * service's start-up check hold the log to.
 *
 *   {"kind":"checkpoint","size":N,"note":"<signed note>","signedAt":"..."}
 *   {"kind":"cosignature","size":N,"witness":"<name>","line":"— <name> <base64>"}    a witness cosigned checkpoint N
 *   {"kind":"timestamp","size":N,"token":"<base64 DER>"}                              an RFC 3161 token over note N
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Logger } from 'pino';
import type { CheckpointPublisher } from './log-checkpoints.ts';
import type { StoredCheckpoint } from './log-tree-store.ts';

export const CHECKPOINT_FILE = 'checkpoints.ndjson';

export type PublishedLine =
  | { kind: 'checkpoint'; size: number; note: string; signedAt: string }
  | { kind: 'cosignature'; size: number; witness: string; line: string }
  | { kind: 'timestamp'; size: number; token: string };

/** AUDIT_CHECKPOINT_DIR inside DATA_DIR: checkpoints there would be in the insider's reach. */
export class CheckpointFolderError extends Error {
  override name = 'CheckpointFolderError';
}

/** The real path of a folder that may not exist yet: that of its nearest existing ancestor, then the rest. */
function realPathOf(target: string): string {
  const absolute = path.resolve(target);
  let existing = absolute;
  while (!fs.existsSync(existing)) existing = path.dirname(existing);
  return path.join(fs.realpathSync(existing), path.relative(existing, absolute));
}

/** Refuses a folder inside DATA_DIR (or DATA_DIR itself), links resolved. */
export function assertOutsideDataDir(dir: string, dataDir: string): void {
  const folder = realPathOf(dir);
  const data = realPathOf(dataDir);
  const relative = path.relative(data, folder);
  if (relative === '' || (!relative.startsWith('..') && !path.isAbsolute(relative))) {
    throw new CheckpointFolderError(`AUDIT_CHECKPOINT_DIR (${dir}) is inside DATA_DIR (${dataDir}): checkpoints must be published where the database's writer cannot change them (another volume, an append-only mount)`);
  }
}

/** Appends lines to the folder's file, one at a time, each synced before the next. */
export class CheckpointFolder implements CheckpointPublisher {
  readonly name = 'folder';
  readonly file: string;
  #queue: Promise<void> = Promise.resolve();

  constructor(
    dir: string,
    dataDir: string,
    private readonly logger: Logger,
  ) {
    assertOutsideDataDir(dir, dataDir);
    fs.mkdirSync(dir, { recursive: true, mode: 0o755 });
    this.file = path.join(dir, CHECKPOINT_FILE);
    fs.accessSync(dir, fs.constants.W_OK);
  }

  publish(checkpoint: StoredCheckpoint): void {
    this.append({ kind: 'checkpoint', size: checkpoint.size, note: checkpoint.note, signedAt: checkpoint.signedAt });
  }

  /** Appends one line (queued behind the others); failures are logged, never thrown. */
  append(line: PublishedLine): void {
    this.#queue = this.#queue.then(async () => {
      try {
        const handle = await fs.promises.open(this.file, 'a', 0o644);
        try {
          await handle.appendFile(`${JSON.stringify(line)}\n`);
          await handle.sync();
        } finally {
          await handle.close();
        }
      } catch (error) {
        this.logger.error({ err: error, file: this.file }, 'log checkpoint: writing to the checkpoint folder failed');
      }
    });
  }

  async stop(): Promise<void> {
    await this.#queue;
  }
}

/** Every line of a published file (or of a folder's), in order; lines that are not JSON are skipped. */
export function readPublishedLines(fileOrDir: string): PublishedLine[] {
  const file = fs.statSync(fileOrDir).isDirectory() ? path.join(fileOrDir, CHECKPOINT_FILE) : fileOrDir;
  const lines: PublishedLine[] = [];
  for (const text of fs.readFileSync(file, 'utf8').split('\n')) {
    if (text.trim() === '') continue;
    try {
      lines.push(JSON.parse(text) as PublishedLine);
    } catch {
      // A torn last line (a crash mid-write) or foreign text: not a checkpoint.
    }
  }
  return lines;
}

/** The checkpoints of a published file, with the cosignatures and tokens given for each, in order of size. */
export function publishedCheckpoints(fileOrDir: string): Array<{ size: number; note: string; signedAt: string; cosignatures: Record<string, string>; timestampToken: string | null }> {
  const bySize = new Map<number, { size: number; note: string; signedAt: string; cosignatures: Record<string, string>; timestampToken: string | null }>();
  for (const line of readPublishedLines(fileOrDir)) {
    if (line.kind === 'checkpoint') {
      if (!bySize.has(line.size)) bySize.set(line.size, { size: line.size, note: line.note, signedAt: line.signedAt, cosignatures: {}, timestampToken: null });
    } else if (line.kind === 'cosignature') {
      const checkpoint = bySize.get(line.size);
      if (checkpoint) checkpoint.cosignatures[line.witness] = line.line;
    } else if (line.kind === 'timestamp') {
      const checkpoint = bySize.get(line.size);
      if (checkpoint) checkpoint.timestampToken = line.token;
    }
  }
  return [...bySize.values()].sort((a, b) => a.size - b.size);
}
