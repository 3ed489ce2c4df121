import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { expect } from 'chai';
import { projections } from '../../projections/index.ts';
import { encodePosition } from '../../src/event-store/position.ts';
import { SqliteEventStore } from '../../src/event-store/sqlite-event-store.ts';
import { collect } from '../../src/event-store/event-store.ts';
import { tempDir } from '../support/temp-dir.ts';
import { eventually } from '../support/eventually.ts';
import { writeHistory } from '../support/synthetic-history.ts';
import { runEntry, startServiceProcess } from '../support/child-process.ts';

/** annals_projection_checkpoint_position of a projection, from the service's GET /metrics. */
async function checkpointMetric(url: string, projection: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`annals_projection_checkpoint_position{projection="${projection}"}`));
  return line === undefined ? -1 : Number(line.slice(line.lastIndexOf(' ') + 1));
}

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
    expect(initial.map((p) => p.name)).to.include.members(['audit-trail', 'access', 'content', 'public-content']);
    expect(initial[0]!.head).to.equal('00000000000000003000');

    const rebuilt = await cli(dataDir, 'projections', 'rebuild', 'audit-trail');
    expect(rebuilt.code, rebuilt.stderr).to.equal(0);
    expect(rebuilt.stderr).to.match(/audit-trail .*\| 3000 events \| \d+ events\/s \| ETA/);
    expect(rebuilt.stdout).to.match(/audit-trail: generation 1 swapped in, 3000 events/);

    const again = await cli(dataDir, 'projections', 'rebuild', 'audit-trail', '--json');
    const [result] = JSON.parse(again.stdout) as Array<{ generation: number; previousGeneration: number; events: number; eventsPerSecond: number }>;
    expect(result).to.include({ generation: 2, previousGeneration: 1, events: 3000 });
    expect(result!.eventsPerSecond).to.be.greaterThan(0);

    const after = JSON.parse((await cli(dataDir, 'projections', 'status', '--json')).stdout) as Array<{ name: string; state: string; active: { generation: number; checkpoint: string; lag: string } }>;
    expect(after[0]).to.deep.include({ name: 'audit-trail', state: 'live' });
    expect(after[0]!.active).to.include({ generation: 2, checkpoint: '00000000000000003000', lag: '0' });
  });

  it('a poison event pauses the rebuild; skip records it in the log and the next rebuild passes it; retry refuses when nothing is paused', async () => {
    const dataDir = tempDir();
    const events = SqliteEventStore.open(path.join(dataDir, 'events.sqlite'));
    await writeHistory(events, 200, { entries: 10 });
    // Written by some other tool, without the metadata every event of ours carries.
    const poisonId = randomUUID();
    await events.append('imported-1', [{ id: poisonId, type: 'legacy.imported', data: {}, metadata: {} as never }], 'no_stream');
    await events.close();

    const paused = await cli(dataDir, 'projections', 'rebuild', 'audit-trail', '--json');
    expect(paused.code).to.equal(1);
    expect(paused.stderr).to.match(new RegExp(`rebuild of audit-trail paused at event ${poisonId} \\(legacy\\.imported, position 00000000000000000201\\)`));
    expect(paused.stderr).to.match(/projections skip audit-trail --reason/);

    const noReason = await cli(dataDir, 'projections', 'skip', 'audit-trail');
    expect(noReason.code).to.equal(2);
    expect(noReason.stderr).to.match(/skip needs --reason/);

    const skipped = await cli(dataDir, 'projections', 'skip', 'audit-trail', '--reason', 'legacy import without metadata', '--json');
    expect(skipped.code, skipped.stderr).to.equal(0);
    expect(JSON.parse(skipped.stdout)).to.deep.include({ projection: 'audit-trail' });

    const done = await cli(dataDir, 'projections', 'rebuild', 'audit-trail', '--json');
    expect(done.code, done.stderr).to.equal(0);
    // 200 events of history and the skip's own audit event; the poison event is passed over.
    expect((JSON.parse(done.stdout) as Array<{ events: number }>)[0]!.events).to.equal(201);

    const check = SqliteEventStore.open(path.join(dataDir, 'events.sqlite'));
    const audit = await collect(check.readStream('operations-projections'));
    await check.close();
    expect(audit).to.have.length(1);
    expect(audit[0]!.type).to.equal('projection.event-skipped');
    expect(audit[0]!.data).to.deep.include({ projection: 'audit-trail', eventId: poisonId, reason: 'legacy import without metadata' });
    expect(audit[0]!.metadata.actor.type).to.equal('operator');

    const retry = await cli(dataDir, 'projections', 'retry', 'audit-trail');
    expect(retry.code).to.equal(1);
    expect(retry.stderr).to.match(/audit-trail is not paused/);
    const unknown = await cli(dataDir, 'projections', 'rebuild', 'nope');
    expect(unknown.code).to.equal(1);
    expect(unknown.stderr).to.match(/no projection named "nope"; known: audit-trail, access/);
  });

  it('rebuilds while the service runs and keeps serving; the service follows the swap', async () => {
    const dataDir = tempDir();
    const events = SqliteEventStore.open(path.join(dataDir, 'events.sqlite'));
    await writeHistory(events, 2000, { entries: 40 });
    await events.close();
    const service = await startServiceProcess({ DATA_DIR: dataDir, READINESS_MAX_LAG_MS: '100' });
    try {
      const ready = async () => (await fetch(`${service.url}/readyz`)).status;
      await eventually(ready, (status) => status === 200, 10_000, 'readyz 200', 50);
      const rebuilt = await cli(dataDir, 'projections', 'rebuild', 'audit-trail', '--json');
      expect(rebuilt.code, rebuilt.stderr).to.equal(0);
      expect(await ready()).to.equal(200);
      // New events after the swap are folded by the service into the new generation.
      const more = SqliteEventStore.open(path.join(dataDir, 'events.sqlite'));
      await more.append('late-1', [{ id: randomUUID(), type: 'late.event', data: {}, metadata: { actor: { type: 'user', id: 'u' }, correlationId: 'c', causationId: null, occurredAt: new Date().toISOString(), schemaVersion: 1 } }], 'no_stream');
      // The history, what the service appended at start (review-notices.started, the anchor over unlinked events), and the late event.
      const headPosition = (await more.headPosition())!;
      const head = encodePosition(headPosition);
      await more.close();
      // Waited for through the service's metrics, which read the same stores as the CLI's status (a CLI run a
      // poll would be a process start a poll); then the CLI says so.
      await eventually(() => checkpointMetric(service.url, 'audit-trail'), (checkpoint) => checkpoint >= Number(headPosition), 10_000, 'the late event folded', 50);
      const status = JSON.parse((await cli(dataDir, 'projections', 'status', '--json')).stdout) as Array<{ name: string; active: { generation: number; checkpoint: string } }>;
      expect(status[0]!.active.generation).to.equal(2);
      // Fixed-width positions: in order as strings (the background anchor may land after the late event).
      expect(status[0]!.active.checkpoint >= head, `${status[0]!.active.checkpoint} folded, ${head} appended`).to.equal(true);
      expect(service.logs().some((l) => l['msg'] === 'following swapped-in generation')).to.equal(true);
    } finally {
      await service.stop();
    }
  });

  it('rebuilds the review queue while the service takes writes: each write reads back at once, and the queue answers from the new generation', async () => {
    const dataDir = tempDir();
    const password = 'correct horse battery staple';
    const boot = await runEntry('src/cli/main.ts', ['bootstrap', '--project', 'Desk', '--plan', 'business', '--admin-email', 'desk@example.com'], { DATA_DIR: dataDir, ANNALS_ADMIN_PASSWORD: password });
    expect(boot.code, boot.stderr).to.equal(0);
    const { projectId } = JSON.parse(boot.stdout) as { projectId: string };
    const service = await startServiceProcess({ DATA_DIR: dataDir });
    try {
      // A console session: not rate limited, so the writer below can go as fast as it likes.
      const login = await fetch(`${service.url}/admin/v1/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: 'desk@example.com', password }) });
      const { token } = (await login.json()) as { token: string };
      const call = async (method: string, route: string, body?: unknown) => {
        const response = await fetch(`${service.url}/admin/v1${route}`, {
          method,
          headers: { authorization: `Bearer ${token}`, 'x-project-id': projectId, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
          ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        });
        return { status: response.status, body: (await response.json()) as any };
      };
      const formSetId = (await call('POST', '/form-sets', { slug: 'desk', name: 'Desk', fields: [{ key: 'title', type: 'text', label: 'Title', required: true }] })).body.id as string;
      let n = 0;
      const queued = async (): Promise<{ status: number; ids: string[] }> => {
        const queue = await call('GET', `/review-queue?formSetId=${formSetId}&limit=100`);
        return { status: queue.status, ids: queue.status === 200 ? queue.body.items.map((i: { entry: { id: string } }) => i.entry.id) : [] };
      };
      /**
       * Creates an entry, submits it and withdraws it again (so the queue stays one page): the answers,
       * and the queue right after each write, show that write.
       */
      const submitOne = async (options: { withdraw: boolean } = { withdraw: true }): Promise<string[]> => {
        const problems: string[] = [];
        const slug = `e-${n++}`;
        const created = await call('POST', `/form-sets/${formSetId}/entries`, { slug, fields: { title: slug } });
        if (created.status !== 201) return [`${slug}: create answered ${created.status} ${JSON.stringify(created.body)}`];
        const entryId = created.body.entry.id as string;
        const revisionId = created.body.revision.id as string;
        const submitted = await call('POST', `/revisions/${revisionId}/submit`, {});
        if (submitted.body.status !== 'pending_review') problems.push(`${slug}: submit answered ${submitted.status} ${JSON.stringify(submitted.body)}`);
        let queue = await queued();
        if (queue.status !== 200) problems.push(`${slug}: the queue answered ${queue.status}`);
        else if (!queue.ids.includes(entryId)) problems.push(`${slug}: not in the queue right after its submit`);
        if (!options.withdraw) return problems;
        const withdrawn = await call('POST', `/revisions/${revisionId}/withdraw`, {});
        if (withdrawn.body.status !== 'draft') problems.push(`${slug}: withdraw answered ${withdrawn.status} ${JSON.stringify(withdrawn.body)}`);
        queue = await queued();
        if (queue.status !== 200) problems.push(`${slug}: the queue answered ${queue.status}`);
        else if (queue.ids.includes(entryId)) problems.push(`${slug}: still in the queue right after its withdrawal`);
        return problems;
      };
      for (let i = 0; i < 3; i++) expect(await submitOne()).to.deep.equal([]);

      let rebuilding = true;
      const rebuilt = cli(dataDir, 'projections', 'rebuild', 'review-queue', '--json').finally(() => (rebuilding = false));
      const problems: string[] = [];
      let during = 0;
      while (rebuilding || during < 5) {
        problems.push(...(await submitOne()));
        during++;
      }
      const result = await rebuilt;
      expect(result.code, result.stderr).to.equal(0);
      expect(JSON.parse(result.stdout)[0]).to.include({ projection: 'review-queue', generation: 2, previousGeneration: 1 });
      expect(problems, JSON.stringify(service.logs().filter((l) => /generation|rebuild|projector|lease/.test(String(l['msg']))).map((l) => [l['time'], l['msg'], l['projection'], l['err'] ? String((l['err'] as { message?: string }).message) : '']))).to.deep.equal([]);

      // Once followed, the service folds into and reads from generation 2: what is submitted now is there.
      await eventually(() => service.logs().some((l) => l['msg'] === 'following swapped-in generation' && l['projection'] === 'review-queue'), Boolean, 5_000, 'the swapped-in generation followed', 100);
      expect(await submitOne({ withdraw: false })).to.deep.equal([]);
      const status = JSON.parse((await cli(dataDir, 'projections', 'status', '--json')).stdout) as Array<{ name: string; active: { generation: number } }>;
      expect(status.find((p) => p.name === 'review-queue')!.active.generation).to.equal(2);
      const queue = await call('GET', `/review-queue?formSetId=${formSetId}&limit=100`);
      expect(queue.body.items.map((i: { entry: { slug: string } }) => i.entry.slug)).to.deep.equal([`e-${n - 1}`]);
    } finally {
      await service.stop();
    }
  });
});
