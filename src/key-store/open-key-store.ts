import path from 'node:path';
import type { Config } from '../config/config.ts';
import type { Logger } from '../logging/logger.ts';
import { readModelsDatabaseOf } from '../read-models/mongo-url.ts';
import { KeyStoreError, type KeyStore } from './key-store.ts';
import { SqliteKeyStore } from './sqlite-key-store.ts';

/**
 * The key store: on MongoDB (MONGODB_URL) in a database of its own (MONGODB_KEYS_DATABASE), which is refused
 * when it is the read models' (a rebuild may drop that one); keys an earlier version kept in the read models'
 * database are moved there first. Else the SQLite file DATA_DIR/keys.sqlite. Checked with a ping before it is
 * returned.
 */
export async function openKeyStore(config: Pick<Config, 'readModels' | 'dataDir'>, options: { logger?: Logger } = {}): Promise<KeyStore> {
  let store: KeyStore;
  if (config.readModels.kind === 'mongodb') {
    const { url, keysDatabase } = config.readModels;
    const readModels = readModelsDatabaseOf(url);
    if (keysDatabase === readModels) {
      throw new KeyStoreError(`the key store cannot share the read models' database ${readModels}: a rebuild may drop it with every key; set MONGODB_KEYS_DATABASE to another database`);
    }
    const { MongoKeyStore } = await import('./mongo-key-store.ts');
    const mongoStore = await MongoKeyStore.connect(url, { database: keysDatabase });
    store = mongoStore;
    try {
      const moved = await mongoStore.moveFrom(readModels);
      if (moved.keys + moved.erased + moved.signingKeys > 0) {
        options.logger?.info({ ...moved, from: readModels, to: keysDatabase }, "moved the key store out of the read models' database");
      }
    } catch (error) {
      await store.close().catch(() => undefined);
      throw error;
    }
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
  return config.readModels.kind === 'mongodb' ? `MongoDB database ${config.readModels.keysDatabase}` : `SQLite ${path.join(config.dataDir, 'keys.sqlite')}`;
}
