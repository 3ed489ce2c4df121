import { randomBytes, randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { BSON, Binary, MongoClient } from 'mongodb';
import { loadConfig, ConfigError } from '../../src/config/config.ts';
import { MongoKeyStore } from '../../src/key-store/mongo-key-store.ts';
import { openKeyStore } from '../../src/key-store/open-key-store.ts';
import { KeyStoreError, type KeyStore } from '../../src/key-store/key-store.ts';
import { mongoServer, mongoServerPending } from '../support/mongo-server.ts';
import { mongoStoreHarness } from '../support/mongo-store-harness.ts';
import { keyStoreConformance } from './key-store.conformance.ts';

/** Every document of every collection of the store's database, as BSON: what a reader of the database gets. */
async function databaseBytes(url: string, database: string): Promise<Buffer> {
  const client = await MongoClient.connect(url);
  try {
    const db = client.db(database);
    const parts: Buffer[] = [];
    for (const { name } of await db.listCollections({}, { nameOnly: true }).toArray()) {
      for await (const doc of db.collection(name).find()) parts.push(Buffer.from(BSON.serialize(doc)));
    }
    return Buffer.concat(parts);
  } finally {
    await client.close();
  }
}

/** The MongoDB key store against a real server (see mongoStoreHarness). */
const harness = await mongoStoreHarness('annals_keys', (url, database) => MongoKeyStore.connect(url, { database }));
keyStoreConformance('key store: MongoDB (production)', {
  ...harness,
  async raw(store: KeyStore) {
    return databaseBytes((await mongoServer()).url, (store as MongoKeyStore).databaseName);
  },
});

const pending = await mongoServerPending();
describe(`key store: MongoDB, its own database${pending ? ` [pending: ${pending}]` : ''}`, () => {
  if (pending) {
    it('refuses to run in the read models\' database, at configuration and at start');
    it('destroying a key deletes its document; the tombstone holds the id alone');
    it('destroying a key deletes its document; the tombstone holds the id alone', async () => {
    const database = `annals_keys_${randomUUID().slice(0, 8)}`;
    databases.push(database);
    const store = await MongoKeyStore.connect(url, { database });
    try {
      const id = randomUUID();
      await store.put(id, randomBytes(32));
      await store.destroy(id);
      expect(await client.db(database).collection('submission_keys').countDocuments({ _id: id as never })).to.equal(0);
      expect(await client.db(database).collection('destroyed_submission_keys').find({ _id: id as never }).toArray()).to.deep.equal([{ _id: id }]);
    } finally {
      await store.close();
    }
  });

  it('moves the keys an earlier version kept in the read models\' database, erasures and signing keys with them, once');
    return;
  }
  let url: string;
  let client: MongoClient;
  const databases: string[] = [];
  before(async () => {
    url = (await mongoServer()).url;
    client = await MongoClient.connect(url);
  });
  after(async () => {
    for (const name of databases) await client.db(name).dropDatabase();
    await client.close();
  });
  /** `url` with its path naming `database`. */
  const urlOf = (database: string) => url.replace(/\/(\?|$)/, `/${database}$1`);

  it('refuses to run in the read models\' database, at configuration and at start', async () => {
    const readModels = `annals_rm_${randomUUID().slice(0, 8)}`;
    expect(() => loadConfig({ MONGODB_URL: urlOf(readModels), MONGODB_KEYS_DATABASE: readModels })).to.throw(ConfigError, /MONGODB_KEYS_DATABASE.*read models' database/);
    expect(() => loadConfig({ MONGODB_URL: urlOf(readModels), MONGODB_KEYS_DATABASE: 'a.b' })).to.throw(ConfigError, /not a MongoDB database name/);
    // By default the keys are in a database of their own.
    const config = loadConfig({ MONGODB_URL: urlOf(readModels) });
    expect(config.readModels).to.include({ kind: 'mongodb', keysDatabase: `${readModels}_keys` });
    const error = await openKeyStore({ dataDir: '/nonexistent', readModels: { kind: 'mongodb', url: urlOf(readModels), keysDatabase: readModels } }).then(() => null, (e: unknown) => e);
    expect(error).to.be.instanceOf(KeyStoreError).with.property('message').that.matches(/cannot share the read models' database/);
  });

  it('moves the keys an earlier version kept in the read models\' database, erasures and signing keys with them, once', async () => {
    const readModels = `annals_rm_${randomUUID().slice(0, 8)}`;
    databases.push(readModels, `${readModels}_keys`);
    const [live, erased] = [randomUUID(), randomUUID()];
    const key = randomBytes(32);
    const old = client.db(readModels);
    await old.collection('submission_keys').insertMany([
      { _id: live as never, key: new Binary(key), destroyed: false },
      { _id: erased as never, key: null, destroyed: true },
    ]);
    const signing = { _id: 'audit' as never, keyId: 'kid-1', privateJwk: '{"d":"x"}', publicJwk: '{"x":"y"}', createdAt: '2026-11-24T10:00:00.000Z' };
    await old.collection('signing_keys').insertOne(signing);
    await old.collection('rm.public-content.entries.g1').insertOne({ _id: 'kept' as never });
    const config = { dataDir: '/nonexistent', readModels: { kind: 'mongodb' as const, url: urlOf(readModels), keysDatabase: `${readModels}_keys` } };
    const store = await openKeyStore(config);
    try {
      expect((await store.get(live))?.equals(key)).to.equal(true);
      expect(await store.get(erased)).to.equal(null);
      expect(await store.destroyed(erased)).to.equal(true);
      expect((await store.signingKey('audit'))?.keyId).to.equal('kid-1');
    } finally {
      await store.close();
    }
    const left = (await old.listCollections({}, { nameOnly: true }).toArray()).map((c) => c.name).sort();
    expect(left).to.deep.equal(['rm.public-content.entries.g1']);
    // Dropping the read models' database to rebuild them erases no key.
    await old.dropDatabase();
    const again = await openKeyStore(config);
    try {
      expect((await again.get(live))?.equals(key)).to.equal(true);
      expect(await again.destroyed(erased)).to.equal(true);
    } finally {
      await again.close();
    }
  });
});
