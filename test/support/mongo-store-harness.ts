import { randomUUID } from 'node:crypto';
import { MongoClient } from 'mongodb';
import type { StartedTestContainer } from 'testcontainers';
import { resolveServerTarget } from './container-runtime.ts';
import type { HarnessOrPending } from './conformance.ts';

/**
 * A conformance harness for a store on MongoDB: MONGODB_URL, else a `mongo:7` container; pending with the
 * reason when neither exists. Each store gets a database of its own (`${prefix}_<random>`), dropped at the end.
 */
export async function mongoStoreHarness<Store>(prefix: string, connect: (url: string, database: string) => Promise<Store>): Promise<HarnessOrPending<Store>> {
  const target = await resolveServerTarget('MONGODB_URL');
  if (target.kind === 'pending') return { pending: target.reason };
  let url: string | undefined;
  let container: StartedTestContainer | undefined;
  const databases: string[] = [];
  return {
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
      const database = `${prefix}_${randomUUID().replace(/-/g, '').slice(0, 12)}`;
      databases.push(database);
      return connect(url!, database);
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
}
