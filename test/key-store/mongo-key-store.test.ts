import { MongoKeyStore } from '../../src/key-store/mongo-key-store.ts';
import { mongoStoreHarness } from '../support/mongo-store-harness.ts';
import { keyStoreConformance } from './key-store.conformance.ts';

/** The MongoDB key store against a real server (see mongoStoreHarness). */
keyStoreConformance('key store: MongoDB (production)', await mongoStoreHarness('annals_keys', (url, database) => MongoKeyStore.connect(url, { database })));
