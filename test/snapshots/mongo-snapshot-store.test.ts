import { randomUUID } from 'node:crypto';
import { MongoClient } from 'mongodb';
import type { StartedTestContainer } from 'testcontainers';
import { MongoSnapshotStore } from '../../src/snapshots/mongo-snapshot-store.ts';
import { resolveServerTarget } from '../support/container-runtime.ts';
import type { HarnessOrPending } from '../support/conformance.ts';
import type { SnapshotStore } from '../../src/snapshots/snapshot-store.ts';
import { snapshotStoreConformance } from './snapshot-store.conformance.ts';

/**
 * The MongoDB snapshot store against a real server: MONGODB_URL, else a `mongo:7` container; pending with the
 * reason when neither exists.
 */
const target = await resolveServerTarget('MONGODB_URL');
let url: string | undefined;
let container: StartedTestContainer | undefined;
const databases: string[] = [];

const harness: HarnessOrPending<SnapshotStore> =
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
          const database = `annals_snapshots_${randomUUID().replace(/-/g, '').slice(0, 12)}`;
          databases.push(database);
          return MongoSnapshotStore.connect(url!, { database });
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

snapshotStoreConformance('snapshot store: MongoDB (production)', harness);
