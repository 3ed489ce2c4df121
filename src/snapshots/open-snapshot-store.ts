import path from 'node:path';
import type { Config } from '../config/config.ts';
import type { SnapshotStore } from './snapshot-store.ts';
import { SqliteSnapshotStore } from './sqlite-snapshot-store.ts';

/**
 * The snapshot store beside the read models: MongoDB (collection `aggregate_snapshots`) when MONGODB_URL is
 * set, else the SQLite file DATA_DIR/snapshots.sqlite. Checked with a ping before it is returned.
 */
export async function openSnapshotStore(config: Pick<Config, 'readModels' | 'dataDir'>): Promise<SnapshotStore> {
  let store: SnapshotStore;
  if (config.readModels.kind === 'mongodb') {
    const { MongoSnapshotStore } = await import('./mongo-snapshot-store.ts');
    store = await MongoSnapshotStore.connect(config.readModels.url);
  } else {
    store = SqliteSnapshotStore.open(snapshotFile(config));
  }
  try {
    await store.ping();
  } catch (error) {
    await store.close().catch(() => undefined);
    throw error;
  }
  return store;
}

export function snapshotFile(config: Pick<Config, 'dataDir'>): string {
  return path.join(config.dataDir, 'snapshots.sqlite');
}
