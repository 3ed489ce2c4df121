/**
 * Other processes' commits on MongoDB read models (ReadModelStore.watchOtherCommits): a change stream where the
 * server has them (a replica set), none on a standalone server or FerretDB, where callers poll instead.
 */
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { MongoClient } from 'mongodb';
import { MongoReadModelStore } from '../../src/read-models/mongo-read-model-store.ts';
import { hasChangeStreams } from '../../src/read-models/mongo-commit-watch.ts';
import { mongoServer, mongoServerPending, pendingOnTarget } from '../support/mongo-server.ts';

const NOW = '2026-11-22T10:00:00.000Z';
const pending = await mongoServerPending();
/**
 * Why the change-stream test cannot run on this server, known before the suite is declared (so that the reason
 * stands in its title): FerretDB has no change streams, nor has a standalone MongoDB.
 */
async function changeStreamsMissing(): Promise<string | undefined> {
  if (pending) return undefined;
  const ferret = await pendingOnTarget('replica sets (change streams)');
  if (ferret) return ferret;
  const client = new MongoClient((await mongoServer()).url);
  try {
    return (await hasChangeStreams(client.db('admin'))) ? undefined : 'a standalone MongoDB has no change streams (a replica set has)';
  } finally {
    await client.close();
  }
}
const needsStreams = await changeStreamsMissing();

describe('MongoDB read models: other processes\' commits', function () {
  this.timeout(60_000);
  if (pending) {
    it(`pending: ${pending}`);
    return;
  }
  let url: string;
  let database: string;
  let client: MongoClient;
  const stores: MongoReadModelStore[] = [];
  before(async () => {
    url = (await mongoServer()).url;
    client = new MongoClient(url);
    await client.connect();
  });
  beforeEach(() => {
    database = `annals_watch_${randomUUID().replace(/-/g, '').slice(0, 12)}`;
  });
  afterEach(async () => {
    for (const store of stores.splice(0)) await store.close();
    await client.db(database).dropDatabase();
  });
  after(async () => {
    await client?.close();
  });
  const connect = async () => {
    const store = await MongoReadModelStore.connect(url, { database });
    stores.push(store);
    return store;
  };

  it('offers a commit watch exactly when the server has change streams; without (FerretDB, standalone), callers poll', async () => {
    const store = await connect();
    const streams = await hasChangeStreams(client.db(database));
    if ((await mongoServer()).flavour === 'ferretdb') expect(streams, 'FerretDB v1 has no change streams').to.equal(false);
    expect(store.watchOtherCommits !== undefined).to.equal(streams);
  });

  const streamTest = 'tells a process of another process\'s commit through a change stream (a replica set)';
  if (needsStreams) {
    it(`${streamTest} [pending: ${needsStreams}]`);
    return;
  }
  it(streamTest, async () => {
    const projector = await connect();
    const api = await connect();
    const schema = { projection: 'watched', collections: { docs: {} } };
    await projector.createGeneration(schema, 1, 1, NOW);
    let told = 0;
    const unwatch = api.watchOtherCommits!(() => told++, { urgent: true });
    try {
      // The stream is open once the server has answered its first getMore: commit until it tells.
      const deadline = Date.now() + 10_000;
      for (let position = 1n; told === 0; position++) {
        if (Date.now() > deadline) throw new Error('no change was told within 10 s');
        await projector.commit({ projection: 'watched', generation: 1 }, [{ collection: 'docs', id: `d${position}`, doc: { n: Number(position) }, position }], position, NOW);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    } finally {
      unwatch();
    }
  });
});
