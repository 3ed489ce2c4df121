import path from 'node:path';
import type { Config } from '../config/config.ts';
import type { KeyStore } from './key-store.ts';
import { SqliteKeyStore } from './sqlite-key-store.ts';

/**
 * The key store beside the read models: MongoDB (collection `submission_keys`) when MONGODB_URL is set,
 * else the SQLite file DATA_DIR/keys.sqlite. Checked with a ping before it is returned.
 */
export async function openKeyStore(config: Pick<Config, 'readModels' | 'dataDir'>): Promise<KeyStore> {
  let store: KeyStore;
  if (config.readModels.kind === 'mongodb') {
    const { MongoKeyStore } = await import('./mongo-key-store.ts');
    store = await MongoKeyStore.connect(config.readModels.url);
  } else {
    store = SqliteKeyStore.open(path.join(config.dataDir, 'keys.sqlite'));
  }
  try {
    await store.ping();
  } catch (error) {
    await store.close().catch(() => undefined);
    throw error;
  }
  return store;
}

export function describeKeyStore(config: Pick<Config, 'readModels' | 'dataDir'>): string {
  return config.readModels.kind === 'mongodb' ? 'MongoDB collection submission_keys' : `SQLite ${path.join(config.dataDir, 'keys.sqlite')}`;
}
