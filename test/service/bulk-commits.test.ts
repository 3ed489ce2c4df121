import path from 'node:path';
import { expect } from 'chai';
import { loadConfig } from '../../src/config/config.ts';
import { SqliteEventStore } from '../../src/event-store/sqlite-event-store.ts';
import type { SqliteReadModelStore } from '../../src/read-models/sqlite-read-model-store.ts';
import { startService } from '../../src/service/service.ts';
import { writeHistory } from '../support/synthetic-history.ts';
import { serviceDepsForTest } from '../admin/support.ts';
import { tempDir } from '../support/temp-dir.ts';

describe('service: read-model commits at the first start', function () {
  this.timeout(60_000);

  it('folds a log it has not seen with every commit on the writer thread, so that the event loop stays free to answer', async () => {
    const dataDir = tempDir();
    const events = SqliteEventStore.open(path.join(dataDir, 'events.sqlite'));
    // One audit record per event: the audit trail's first build commits 600 documents at once.
    await writeHistory(events, 600, { entries: 30 });
    await events.close();
    const config = loadConfig({ DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'silent', LOAD_SHED_LAG_MS: '0' });
    const service = await startService(config, serviceDepsForTest());
    try {
      expect(await service.supervisor!.waitFor(600n, 30_000)).to.equal(true);
      const readModels = service.stores.readModels as SqliteReadModelStore;
      const places = readModels.commitsByPlace();
      expect(places.eventLoop).to.equal(0);
      expect(places.writerThread).to.be.greaterThan(0);
      expect(await readModels.count({ projection: 'audit-trail', generation: 1 }, 'records')).to.be.at.least(600);
    } finally {
      await service.stop();
    }
  });
});
