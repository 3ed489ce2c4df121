import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { Config } from '../config/config.ts';

/** The file that describes a backup; written last, so a backup without it is incomplete. */
export const MANIFEST_FILE = 'annals-backup.json';

export interface BackupFile {
  /** Relative to the backup folder (and to DATA_DIR on restore), with forward slashes. */
  path: string;
  bytes: number;
  sha256: string;
}

export interface BackupManifest {
  format: 'annals-backup';
  formatVersion: 1;
  /** The annals version that took it. */
  annalsVersion: string;
  createdAt: string;
  /** The DATA_DIR it was taken from. */
  source: string;
  /** The last position of the event log in the backup (20 digits), null for an empty log. */
  eventLogHead: string | null;
  files: BackupFile[];
}

/** Why a backup or restore cannot be done; `code` for --json, `exitCode` 2 for usage, 1 otherwise. */
export class BackupError extends Error {
  override name = 'BackupError';
  constructor(
    readonly code: 'NOT_EMBEDDED' | 'BAD_TARGET' | 'BAD_SOURCE' | 'BAD_BACKUP',
    message: string,
    readonly exitCode: 1 | 2,
  ) {
    super(message);
  }
}

/**
 * `annals backup` and `restore` copy the embedded stores in DATA_DIR. With EventStoreDB or MongoDB the
 * stores live in those servers, and their own tools make consistent copies: say which.
 */
export function assertEmbeddedStores(config: Pick<Config, 'eventStore' | 'readModels' | 'media'>, command: 'backup' | 'restore'): void {
  const elsewhere: string[] = [];
  if (config.eventStore.kind !== 'sqlite') {
    elsewhere.push(
      "the event log is on EventStoreDB/KurrentDB: back it up with the server's own backup (a file-copy backup of its database folder or a volume snapshot, as its documentation describes) and restore it the same way",
    );
  }
  if (config.readModels.kind !== 'sqlite') {
    elsewhere.push(
      "the read models and the submission keys are on MongoDB: use mongodump / mongorestore (or your MongoDB service's backups); read models can also be rebuilt from the log with `annals projections rebuild`, the submission_keys collection cannot",
    );
  }
  if (elsewhere.length === 0) return;
  const media = config.media.blobs.kind === 's3' ? '; media is in S3: use bucket versioning or replication' : '';
  throw new BackupError('NOT_EMBEDDED', `annals ${command} copies the embedded stores in DATA_DIR only, and ${elsewhere.join('; ')}${media}.`, 2);
}

export async function sha256OfFile(file: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/** Every regular file under a folder, relative to it, sorted. */
export async function filesUnder(root: string): Promise<string[]> {
  const found: string[] = [];
  for (const entry of await fs.readdir(root, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) found.push(path.relative(root, path.join(entry.parentPath, entry.name)));
  }
  return found.sort();
}

/** 12.3 MB, for progress lines. */
export function sizeText(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  const units = ['KB', 'MB', 'GB', 'TB'];
  let value = bytes / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return `${value.toFixed(1)} ${units[unit]}`;
}
