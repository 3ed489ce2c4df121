import path from 'node:path';
import { SqliteSnapshotStore } from '../../src/snapshots/sqlite-snapshot-store.ts';
import { tempDir } from '../support/temp-dir.ts';
import { snapshotStoreConformance } from './snapshot-store.conformance.ts';

snapshotStoreConformance('snapshot store: SQLite file (embedded default)', {
  async create() {
    return SqliteSnapshotStore.open(path.join(tempDir(), 'snapshots.sqlite'));
  },
});
