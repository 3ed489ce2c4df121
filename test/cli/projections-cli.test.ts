import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { expect } from 'chai';
import { projections } from '../../projections/index.ts';
import { SqliteEventStore } from '../../src/event-store/sqlite-event-store.ts';
import { collect } from '../../src/event-store/event-store.ts';
import { tempDir } from '../support/temp-dir.ts';
import { writeHistory } from '../support/synthetic-history.ts';
import { runEntry, startServiceProcess } from '../support/child-process.ts';

const cli = (dataDir: string, ...args: string[]) => runEntry('src/cli/main.ts', args, { DATA_DIR: dataDir });

describe('operator CLI: annals projections ...', function () {
  this.timeout(120_000);

  it('status --json lists every projection with checkpoint and lag; rebuild swaps in a new generation with progress', async () => {
    const dataDir = tempDir();
    const events = SqliteEventStore.open(path.join(dataDir, 'events.sqlite'));
    await writeHistory(events, 3000, { entries: 60 });
    await events.close();

    const before = await cli(dataDir, 'projections', 'status', '--json');
    expect(before.code, before.stderr).to.equal(0);
    const initial = JSON.parse(before.stdout) as Array<{ name: string; state: string; head: string }>;
    expect(initial.map((p) => [p.name, p.state])).to.deep.equal(projections.map((p) => [p.name, 'not-started']));
    expect(initial.map((p) => p.name)).to.include.members(['audit-trail', 'stream-activity', 'access', 'content', 'public-content']);
    expect(initial[0]!.head).to.equal('00000000000000003000');

    const rebuilt = await cli(dataDir, 'projections', 'rebuild', 'stream-activity');
    expect(rebuilt.code, rebuilt.stderr).to.equal(0);
    expect(rebuilt.stderr).to.match(/stream-activity .*\| 3000 events \| \d+ events\/s \| ETA/);
    expect(rebuilt.stdout).to.match(/stream-activity: generation 1 swapped in, 3000 events/);

    const again = await cli(dataDir, 'projections', 'rebuild', 'stream-activity', '--json');
    const [result] = JSON.parse(again.stdout) as Array<{ generation: number; previousGeneration: number; events: number; eventsPerSecond: number }>;
    expect(result).to.include({ generation: 2, previousGeneration: 1, events: 3000 });
    expect(result!.eventsPerSecond).to.be.greaterThan(0);

    const after = JSON.parse((await cli(dataDir, 'projections', 'status', '--json')).stdout) as Array<{ name: string; state: string; active: { generation: number; checkpoint: string; lag: string } }>;
    expect(after[1]).to.deep.include({ name: 'stream-activity', state: 'live' });
    expect(after[1]!.active).to.include({ generation: 2, checkpoint: '00000000000000003000', lag: '0' });
  });

  it('a poison event pauses the rebuild; skip records it in the log and the next rebuild passes it; retry refuses when nothing is paused', async () => {
    const dataDir = tempDir();
    const events = SqliteEventStore.open(path.join(dataDir, 'events.sqlite'));
    await writeHistory(events, 200, { entries: 10 });
    // Written by some other tool, without the metadata every event of ours carries.
    const poisonId = randomUUID();
    await events.append('imported-1', [{ id: poisonId, type: 'legacy.imported', data: {}, metadata: {} as never }], 'no_stream');
    await events.close();

    const paused = await cli(dataDir, 'projections', 'rebuild', 'stream-activity', '--json');
    expect(paused.code).to.equal(1);
    expect(paused.stderr).to.match(new RegExp(`rebuild of stream-activity paused at event ${poisonId} \\(legacy\\.imported, position 00000000000000000201\\)`));
    expect(paused.stderr).to.match(/projections skip stream-activity --reason/);

    const noReason = await cli(dataDir, 'projections', 'skip', 'stream-activity');
    expect(noReason.code).to.equal(2);
    expect(noReason.stderr).to.match(/skip needs --reason/);

    const skipped = await cli(dataDir, 'projections', 'skip', 'stream-activity', '--reason', 'legacy import without metadata', '--json');
    expect(skipped.code, skipped.stderr).to.equal(0);
    expect(JSON.parse(skipped.stdout)).to.deep.include({ projection: 'stream-activity' });

    const done = await cli(dataDir, 'projections', 'rebuild', 'stream-activity', '--json');
    expect(done.code, done.stderr).to.equal(0);
    // 200 events of history and the skip's own audit event; the poison event is passed over.
    expect((JSON.parse(done.stdout) as Array<{ events: number }>)[0]!.events).to.equal(201);

    const check = SqliteEventStore.open(path.join(dataDir, 'events.sqlite'));
    const audit = await collect(check.readStream('operations-projections'));
    await check.close();
    expect(audit).to.have.length(1);
    expect(audit[0]!.type).to.equal('projection.event-skipped');
    expect(audit[0]!.data).to.deep.include({ projection: 'stream-activity', eventId: poisonId, reason: 'legacy import without metadata' });
    expect(audit[0]!.metadata.actor.type).to.equal('operator');

    const retry = await cli(dataDir, 'projections', 'retry', 'stream-activity');
    expect(retry.code).to.equal(1);
    expect(retry.stderr).to.match(/stream-activity is not paused/);
    const unknown = await cli(dataDir, 'projections', 'rebuild', 'nope');
    expect(unknown.code).to.equal(1);
    expect(unknown.stderr).to.match(/no projection named "nope"; known: audit-trail, stream-activity/);
  });

  it('rebuilds while the service runs and keeps serving; the service follows the swap', async () => {
    const dataDir = tempDir();
    const events = SqliteEventStore.open(path.join(dataDir, 'events.sqlite'));
    await writeHistory(events, 2000, { entries: 40 });
    await events.close();
    const service = await startServiceProcess({ DATA_DIR: dataDir, READINESS_MAX_LAG_MS: '100' });
    try {
      const ready = async () => (await fetch(`${service.url}/readyz`)).status;
      for (let i = 0; i < 100 && (await ready()) !== 200; i++) await new Promise((r) => setTimeout(r, 50));
      expect(await ready()).to.equal(200);
      const rebuilt = await cli(dataDir, 'projections', 'rebuild', 'audit-trail', '--json');
      expect(rebuilt.code, rebuilt.stderr).to.equal(0);
      expect(await ready()).to.equal(200);
      // New events after the swap are folded by the service into the new generation.
      const more = SqliteEventStore.open(path.join(dataDir, 'events.sqlite'));
      await more.append('late-1', [{ id: randomUUID(), type: 'late.event', data: {}, metadata: { actor: { type: 'user', id: 'u' }, correlationId: 'c', causationId: null, occurredAt: new Date().toISOString(), schemaVersion: 1 } }], 'no_stream');
      await more.close();
      let status: Array<{ name: string; active: { generation: number; checkpoint: string } }> = [];
      for (let i = 0; i < 100; i++) {
        status = JSON.parse((await cli(dataDir, 'projections', 'status', '--json')).stdout);
        if (status[0]!.active.checkpoint === '00000000000000002001') break;
        await new Promise((r) => setTimeout(r, 100));
      }
      expect(status[0]!.active).to.include({ generation: 2, checkpoint: '00000000000000002001' });
      expect(service.logs().some((l) => l['msg'] === 'following swapped-in generation')).to.equal(true);
    } finally {
      await service.stop();
    }
  });
});
