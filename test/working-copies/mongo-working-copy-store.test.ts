import { MongoWorkingCopyStore } from '../../src/working-copies/mongo-working-copy-store.ts';
import { mongoStoreHarness } from '../support/mongo-store-harness.ts';
import { workingCopyStoreConformance } from './working-copy-store.conformance.ts';

/** The MongoDB working-copy store against a real server (see mongoStoreHarness: MONGODB_URL, a container, or FerretDB). */
workingCopyStoreConformance('working-copy store: MongoDB (production)', await mongoStoreHarness('annals_working_copies', (url, database) => MongoWorkingCopyStore.connect(url, { database })));
