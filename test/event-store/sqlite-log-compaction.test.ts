import path from 'node:path';
import { expect } from 'chai';
import { SqliteEventStore } from '../../src/event-store/sqlite-event-store.ts';
import { collect, type RecordedEvent } from '../../src/event-store/event-store.ts';
import { compactEventLog } from '../../src/event-store/sqlite-log-compaction.ts';
import { revisionEvent } from '../support/synthetic-history.ts';
import { storeAllAsPlainText, storedForms } from '../support/stored-events.ts';
import { tempDir } from '../support/temp-dir.ts';

/** Every event of the log file, read through a store opened for it. */
async function readAll(file: string): Promise<RecordedEvent[]> {
  const store = SqliteEventStore.open(file);
  try {
    return await collect(store.readAll());
  } finally {
    await store.close();
  }
}

/** The compaction's own guarantees, below the command: batches commit on their own, and a rerun finishes the work. */
describe('event log compaction (the embedded log\'s text rows rewritten as frames)', () => {
  it('keeps every batch it committed when interrupted between batches; a second run rewrites the rest; the log reads the same throughout', async () => {
    const file = path.join(tempDir(), 'events.sqlite');
    const store = SqliteEventStore.open(file);
    for (let i = 0; i < 50; i++) await store.append(`entry-${i % 7}`, [revisionEvent(i, 1)], 'any');
    const before = await collect(store.readAll());
    await store.close();
    expect(storeAllAsPlainText(file)).to.equal(50);

    const interrupted = await compactEventLog(file, {
      batch: 10,
      onProgress: ({ events }) => {
        if (events >= 20) throw new Error('interrupted after the second batch');
      },
    }).catch((error: unknown) => error);
    expect(interrupted).to.be.instanceOf(Error).with.property('message', 'interrupted after the second batch');
    expect(storedForms(file)).to.deep.equal({ frames: 20, texts: 30 });
    expect(await readAll(file)).to.deep.equal(before);

    const rest = await compactEventLog(file, { batch: 10 });
    expect(rest).to.include({ rewritten: 30, vacuumed: false });
    expect(storedForms(file)).to.deep.equal({ frames: 50, texts: 0 });
    expect(await readAll(file)).to.deep.equal(before);
  });
});
