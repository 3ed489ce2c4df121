import path from 'node:path';
import fs from 'node:fs';
import { expect } from 'chai';
import { SqliteReadModelStore } from '../../src/read-models/sqlite-read-model-store.ts';
import { SqliteOpenError } from '../../src/sqlite/open-database.ts';
import { tempDir } from '../support/temp-dir.ts';
import { articlesSchema, readModelStoreConformance } from './read-model-store.conformance.ts';

readModelStoreConformance('read models: SQLite adapter', {
  create: async () => SqliteReadModelStore.open(path.join(tempDir(), 'read-models.sqlite')),
});

describe('read models: SQLite adapter, file behaviour', () => {
  it('answers equality queries through the declared expression index', async () => {
    const file = path.join(tempDir(), 'read-models.sqlite');
    const store = SqliteReadModelStore.open(file);
    await store.createGeneration(articlesSchema, 1, 1, '2026-11-22T10:00:00.000Z');
    await store.close();
    const Database = (await import('better-sqlite3')).default;
    const db = new Database(file, { readonly: true });
    const plan = db
      .prepare(`EXPLAIN QUERY PLAN SELECT doc FROM rm_test_articles__articles__g1 WHERE json_extract(doc, '$.slug') = ?`)
      .all('x') as Array<{ detail: string }>;
    db.close();
    expect(plan.map((p) => p.detail).join(' ')).to.match(/USING INDEX rm_test_articles__articles__g1__by_slug/);
  });

  it('refuses a corrupt file with a clear message', () => {
    const file = path.join(tempDir(), 'read-models.sqlite');
    fs.writeFileSync(file, Buffer.alloc(8192, 7));
    expect(() => SqliteReadModelStore.open(file)).to.throw(SqliteOpenError, /read models file .* not a SQLite database/);
  });
});
