import path from 'node:path';
import type { Config } from '../config/config.ts';
import type { WorkingCopyStore } from './working-copy-store.ts';
import { SqliteWorkingCopyStore } from './sqlite-working-copy-store.ts';

/**
 * The working-copy store: on MongoDB (MONGODB_URL) in the key store's database (MONGODB_KEYS_DATABASE, which is
 * never the read models'), else the SQLite file DATA_DIR/working-copies.sqlite. Checked with a ping before it is
 * returned.
 */
export async function openWorkingCopyStore(config: Pick<Config, 'readModels' | 'dataDir'>): Promise<WorkingCopyStore> {
  let store: WorkingCopyStore;
  if (config.readModels.kind === 'mongodb') {
    const { MongoWorkingCopyStore } = await import('./mongo-working-copy-store.ts');
    store = await MongoWorkingCopyStore.connect(config.readModels.url, { database: config.readModels.keysDatabase });
  } else {
    store = SqliteWorkingCopyStore.open(workingCopyFile(config));
  }
  try {
    await store.ping();
  } catch (error) {
    await store.close().catch(() => undefined);
    throw error;
  }
  return store;
}

export function workingCopyFile(config: Pick<Config, 'dataDir'>): string {
  return path.join(config.dataDir, 'working-copies.sqlite');
}
