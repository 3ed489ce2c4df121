import { randomUUID } from 'node:crypto';
import { MongoClient } from 'mongodb';
import type { HarnessOrPending } from './conformance.ts';
import { mongoServer, mongoServerPending, type MongoServer } from './mongo-server.ts';

/**
 * A conformance harness for a store on MongoDB: the server of mongoServer() (MONGODB_URL, a `mongo:7`
 * container, or FerretDB), pending with the reason when none can run. Each store gets a database of its own
 * (`${prefix}_<random>`), dropped at the end. `server()` tells which server it is, for tests that need what
 * FerretDB lacks.
 */
export async function mongoStoreHarness<Store>(prefix: string, connect: (url: string, database: string) => Promise<Store>): Promise<HarnessOrPending<Store> & { server?: () => MongoServer }> {
  const pending = await mongoServerPending();
  if (pending) return { pending };
  let server: MongoServer | undefined;
  const databases: string[] = [];
  return {
    async setup() {
      server = await mongoServer();
    },
    server() {
      if (!server) throw new Error('MongoDB harness used before setup');
      return server;
    },
    async create() {
      const database = `${prefix}_${randomUUID().replace(/-/g, '').slice(0, 12)}`;
      databases.push(database);
      return connect(server!.url, database);
    },
    async teardown() {
      if (!server) return;
      const client = new MongoClient(server.url);
      try {
        for (const database of databases.splice(0)) await client.db(database).dropDatabase();
      } finally {
        await client.close();
      }
    },
  };
}
