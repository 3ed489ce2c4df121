/**
 * Where the log tree store is kept, from the configuration: beside the read models when they are on MongoDB (their
 * database, ./mongo-log-tree-store.ts), so that every process of a split deployment, on any host, reads the one
 * tree; else the embedded file DATA_DIR/log-tree.sqlite (./sqlite-log-tree-store.ts), on the projector's host.
 */
import fs from 'node:fs';
import type { Config } from '../config/config.ts';
import type { LogTreeStore } from './log-tree-store.ts';
import { SqliteLogTreeStore } from './sqlite-log-tree-store.ts';

export type LogTreeLocation = { kind: 'sqlite'; file: string } | { kind: 'mongodb'; url: string };

export function logTreeLocation(config: Pick<Config, 'audit' | 'readModels'>): LogTreeLocation {
  return config.readModels.kind === 'mongodb' ? { kind: 'mongodb', url: config.readModels.url } : { kind: 'sqlite', file: config.audit.treeFile };
}

export async function openLogTreeStore(location: LogTreeLocation): Promise<LogTreeStore> {
  if (location.kind === 'sqlite') return SqliteLogTreeStore.open(location.file);
  // Loaded only when configured: the embedded default never loads the driver for it.
  const { MongoLogTreeStore } = await import('./mongo-log-tree-store.ts');
  return MongoLogTreeStore.connect(location.url);
}

/** The store when there is one to read: a SQLite file that does not exist is not created (undefined). */
export async function openExistingLogTreeStore(location: LogTreeLocation): Promise<LogTreeStore | undefined> {
  return location.kind === 'sqlite' && !fs.existsSync(location.file) ? undefined : openLogTreeStore(location);
}
