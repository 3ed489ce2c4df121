import { MongoSnapshotStore } from '../../src/snapshots/mongo-snapshot-store.ts';
import { mongoStoreHarness } from '../support/mongo-store-harness.ts';
import { snapshotStoreConformance } from './snapshot-store.conformance.ts';

/** The MongoDB snapshot store against a real server (see mongoStoreHarness). */
snapshotStoreConformance('snapshot store: MongoDB (production)', await mongoStoreHarness('annals_snapshots', (url, database) => MongoSnapshotStore.connect(url, { database })));
