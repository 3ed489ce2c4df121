import path from 'node:path';
import { SqliteLogTreeStore } from '../../src/audit/sqlite-log-tree-store.ts';
import { tempDir } from '../support/temp-dir.ts';
import { logTreeStoreConformance } from './log-tree-store.conformance.ts';

logTreeStoreConformance('log tree store: SQLite file (embedded default)', {
  async create() {
    return SqliteLogTreeStore.open(path.join(tempDir(), 'log-tree.sqlite'));
  },
});
