import { randomUUID } from 'node:crypto';
import { MongoClient } from 'mongodb';
import type { StartedTestContainer } from 'testcontainers';
import { MongoKeyStore } from '../../src/key-store/mongo-key-store.ts';
import { resolveServerTarget } from '../support/container-runtime.ts';
import type { HarnessOrPending } from '../support/conformance.ts';
import type { KeyStore } from '../../src/key-store/key-store.ts';
import { keyStoreConformance } from './key-store.conformance.ts';

/**
 * The MongoDB key store against a real server: MONGODB_URL, else a `mongo:7` container; pending with the
 * reason when neither exists.
 */
const target = await resolveServerTarget('MONGODB_URL');
let url: string | undefined;
let container: StartedTestContainer | undefined;
const databases: string[] = [];

const harness: HarnessOrPending<KeyStore> =
  target.kind === 'pending'
    ? { pending: target.reason }
    : {
        async setup() {
          if (target.kind === 'existing') {
            url = target.url;
            return;
          }
          const { GenericContainer, Wait } = await import('testcontainers');
          container = await new GenericContainer('mongo:7').withExposedPorts(27017).withWaitStrategy(Wait.forLogMessage(/Waiting for connections/)).withStartupTimeout(120_000).start();
          url = `mongodb://${container.getHost()}:${container.getMappedPort(27017)}/?directConnection=true`;
        },
        async create() {
          const database = `annals_keys_${randomUUID().replace(/-/g, '').slice(0, 12)}`;
          databases.push(database);
          return MongoKeyStore.connect(url!, { database });
        },
        async teardown() {
          if (url) {
            const client = new MongoClient(url);
            try {
              for (const database of databases) await client.db(database).dropDatabase();
            } finally {
              await client.close();
            }
          }
          await container?.stop();
        },
      };

keyStoreConformance('key store: MongoDB (production)', harness);
