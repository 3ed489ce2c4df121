import fs from 'node:fs';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { articleFormSet, serviceDepsForTest, startAdminFixture } from '../admin/support.ts';
import { adminSession } from '../mcp/support.ts';
import { runEntry, runProgram, type Finished } from '../support/child-process.ts';
import { tempDir } from '../support/temp-dir.ts';
import { eventually } from '../support/engine-fixture.ts';
import { goPeerPending, locateGoPeer, needingPeer } from '../support/go-peers.ts';
import { relink, rewriteStream, storedEvents, truncateLog, writeEvents, type StoredEvent } from '../support/insider.ts';
import { CHECKPOINT_FILE, publishedCheckpoints } from '../../src/audit/checkpoint-folder.ts';
import { loadConfig } from '../../src/config/config.ts';
import { startService } from '../../src/service/service.ts';

/**
 * Tampering as an insider with write access to a stopped service's SQLite files (the log as stored: compressed
 * frames, hash-chain links recomputed with the documented formula), starting from a real data folder the service
 * wrote through its API (approvals and policy changes among it) and a checkpoint it published outside DATA_DIR.
 * Every rewrite is found by `annals audit verify --against` that checkpoint and by the independent Go verifier
 * (golang.org/x/mod/sumdb/tlog and note, test/peers/tlog-verifier) reading `annals log export`. (Where events
 * carry per-stream links, from logs written before the tree, the insider recomputes them: links carry no secret.)
 * The service refuses writes when started on such a log, unless told otherwise, which it records.
 */
describe('audit: an insider rewriting the stored log is caught against a checkpoint published before', function () {
  this.timeout(300_000);
  let dataDir: string;
  let published: string;
  let projectId: string;
  let vkey: string;
  let entryStream: string;
  let projectStream: string;
  let clean: StoredEvent[];

  const cli = (dir: string, args: string[]) => runEntry('src/cli/main.ts', args, { DATA_DIR: dir, LOG_LEVEL: 'silent', AUDIT_LOG_ORIGIN: 'tamper.example/annals' }, 120_000);
  const go = (args: string[]) => runProgram(locateGoPeer('tlog-verifier')!, args, {});
  const json = (run: Finished) => {
    try {
      return JSON.parse(run.stdout);
    } catch {
      throw new Error(`not JSON (exit ${run.code}): ${run.stdout}\n${run.stderr}`);
    }
  };

  before(async () => {
    dataDir = path.join(tempDir(), 'data');
    published = path.join(tempDir(), 'published');
    const f = await startAdminFixture({ dataDir, env: { AUDIT_CHECKPOINT_DIR: published, AUDIT_LOG_ORIGIN: 'tamper.example/annals' } });
    try {
      projectId = f.project.projectId;
      const admin = await adminSession(f);
      const asAdmin = { token: admin, headers: { 'X-Project-Id': projectId } };
      const formSet = await f.call('POST', '/form-sets', { body: articleFormSet });
      expect(formSet.status).to.equal(201);
      for (const body of [{ humanApproval: true }, { humanApproval: false }, { fourEyes: true }]) {
        const changed = await f.call('PUT', '/project/approval-policy', { body, ...asAdmin });
        expect(changed.status, JSON.stringify(changed.body)).to.equal(200);
      }
      for (const slug of ['quarterly-figures', 'board-minutes', 'annual-report']) {
        const created = await f.call('POST', `/form-sets/${formSet.body.id}/entries`, { body: { slug, fields: { title: `The ${slug}` } } });
        expect(created.status).to.equal(201);
        const revision = created.body.revision;
        expect((await f.call('POST', `/revisions/${revision.id}/submit`, { body: {} })).status).to.equal(200);
        // The agent wrote and submitted it; the tenant admin, a person, publishes it (four eyes holds).
        const publishedRevision = await f.call('POST', `/revisions/${revision.id}/publish`, { body: { revision: revision.revision }, ...asAdmin });
        expect(publishedRevision.status, JSON.stringify(publishedRevision.body)).to.equal(200);
      }
      const head = (await f.service.stores.events.headPosition())!;
      await eventually(async () => (fs.existsSync(path.join(published, CHECKPOINT_FILE)) ? publishedCheckpoints(published).at(-1)?.size ?? 0 : 0), (size) => size >= Number(head), 15_000);
    } finally {
      await f.stop();
    }
    clean = storedEvents(path.join(dataDir, 'events.sqlite'));
    const publish = clean.find((e) => e.type === 'entry.revision-published')!;
    entryStream = publish.streamId;
    projectStream = clean.find((e) => e.type === 'project.approval-policy-changed')!.streamId;
    const key = await cli(dataDir, ['audit', 'log-key', '--json']);
    expect(key.code, key.stderr).to.equal(0);
    vkey = json(key).keys.at(-1).vkey;
    expect(vkey).to.match(/^tamper\.example\/annals\+[0-9a-f]{8}\+/);
  });

  const publishedFile = () => path.join(published, 'checkpoints.ndjson');

  /** A copy of the data folder, as the insider found it. */
  const copy = (): { dir: string; file: string } => {
    const dir = path.join(tempDir(), 'data');
    fs.cpSync(dataDir, dir, { recursive: true });
    return { dir, file: path.join(dir, 'events.sqlite') };
  };

  it('the untouched log extends its published checkpoint, by `audit verify --against` and by the Go verifier; proofs verify in Go, a forged one does not', async function () {
    const verified = await cli(dataDir, ['audit', 'verify', '--against', publishedFile(), '--json']);
    expect(verified.code, verified.stderr).to.equal(0);
    const report = json(verified);
    expect(report.tree).to.include({ verified: true, extendsCheckpoint: true });
    expect(report.tree.checkpoint.signedBy).to.be.a('string');
    if (goPeerPending('tlog-verifier')) this.skip();
    const logFile = path.join(tempDir(), 'log.ndjson');
    expect((await cli(dataDir, ['log', 'export', '--to', logFile, '--json'])).code).to.equal(0);
    const tree = await go(['tree', '--checkpoint', publishedFile(), '--vkey', vkey, '--log', logFile]);
    expect(tree.code, tree.stdout + tree.stderr).to.equal(0);
    expect(JSON.parse(tree.stdout)).to.include({ verified: true, size: report.tree.checkpoint.size });

    const proofDir = tempDir();
    const target = clean.find((e) => e.type === 'entry.revision-published')!;
    const inclusion = await cli(dataDir, ['audit', 'proof', 'inclusion', '--event', target.eventId, '--json']);
    expect(inclusion.code, inclusion.stderr).to.equal(0);
    fs.writeFileSync(path.join(proofDir, 'inclusion.json'), inclusion.stdout);
    expect((await go(['inclusion', '--proof', path.join(proofDir, 'inclusion.json'), '--vkey', vkey])).code).to.equal(0);
    const forged = json(inclusion);
    forged.leaf = forged.leaf.replace('"type":', '"type" :');
    fs.writeFileSync(path.join(proofDir, 'forged.json'), JSON.stringify(forged));
    expect((await go(['inclusion', '--proof', path.join(proofDir, 'forged.json'), '--vkey', vkey])).code).to.equal(1);

    const sizes = publishedCheckpoints(published).map((c) => c.size);
    const consistency = await cli(dataDir, ['audit', 'proof', 'consistency', '--from', String(sizes[0]), '--to', String(sizes.at(-1)), '--json']);
    expect(consistency.code, consistency.stderr).to.equal(0);
    fs.writeFileSync(path.join(proofDir, 'consistency.json'), consistency.stdout);
    expect((await go(['consistency', '--proof', path.join(proofDir, 'consistency.json'), '--vkey', vkey])).code).to.equal(0);
  });

  const edits: Array<{ name: string; tamper: (file: string) => void; rebuildTree?: boolean; appended?: boolean }> = [
    {
      name: 'rewrite a stream\'s history with recomputed links: the publication attributed to another person',
      tamper: (file) =>
        rewriteStream(file, entryStream, (events) =>
          events.map((event) => (event.type === 'entry.revision-published' ? { ...event, metadata: { ...event.metadata, actor: { type: 'user', id: randomUUID() } } } : event)),
        ),
    },
    {
      name: 'remove the policy off/on events from the project\'s stream and recompute its links',
      tamper: (file) => rewriteStream(file, projectStream, (events) => events.filter((event) => event.type !== 'project.approval-policy-changed')),
    },
    { name: 'delete the last events of a stream', tamper: (file) => rewriteStream(file, entryStream, (events) => events.slice(0, -2)) },
    {
      name: 'delete a whole stream',
      tamper: (file) => writeEvents(file, storedEvents(file).filter((e) => e.streamId === entryStream).map((e) => e.position), []),
    },
    {
      name: 'swap the log positions of two events of different streams',
      tamper: (file) => {
        const events = storedEvents(file);
        const a = events.find((e) => e.streamId === entryStream)!;
        const b = events.find((e) => e.position > a.position && e.streamId !== entryStream)!;
        writeEvents(file, [a.position, b.position], [{ ...b, position: a.position }, { ...a, position: b.position }]);
      },
    },
    {
      name: 'append a forged policy change with a recomputed link, dated before the checkpoint',
      appended: true,
      tamper: (file) =>
        rewriteStream(file, projectStream, (events) => {
          const last = [...events].reverse().find((e) => e.type === 'project.approval-policy-changed')!;
          // Dated ten minutes before the policy change it undoes: as if four eyes had been off all along.
          const occurredAt = new Date(Date.parse(String(last.metadata['occurredAt'])) - 10 * 60_000).toISOString();
          return [...events, { ...last, eventId: randomUUID(), data: { ...(last.data as object), fourEyes: false }, metadata: { ...last.metadata, correlationId: randomUUID(), occurredAt } }];
        }),
    },
    {
      name: 'rewrite the whole chain with recomputed links, and the tree with it',
      rebuildTree: true,
      tamper: (file) => {
        const events = storedEvents(file);
        const edited = events.map((e) => (e.type === 'entry.revision-saved' ? { ...e, data: JSON.parse(JSON.stringify(e.data).replace('The quarterly-figures', 'The revised figures')) } : e));
        const byStream = new Map<string, StoredEvent[]>();
        for (const e of edited) byStream.set(e.streamId, [...(byStream.get(e.streamId) ?? []), e]);
        writeEvents(file, events.map((e) => e.position), [...byStream.values()].flatMap((stream) => relink(stream)));
      },
    },
    { name: 'truncate the log', tamper: (file) => truncateLog(file, storedEvents(file)[Math.floor(clean.length * 0.6)]!.position) },
  ];

  for (const edit of edits) {
    it(needingPeer('tlog-verifier', `${edit.name}: found by verify --against the published checkpoint and by the Go verifier`), async () => {
      const { dir, file } = copy();
      edit.tamper(file);
      if (edit.rebuildTree) for (const name of fs.readdirSync(dir).filter((n) => n.startsWith('log-tree.sqlite'))) fs.rmSync(path.join(dir, name));

      const run = await cli(dir, ['audit', 'verify', '--against', publishedFile(), '--json']);
      expect(run.code, run.stderr).to.equal(1);
      const report = json(run);
      expect(report.verified).to.equal(false);
      expect(report.tree.verified).to.equal(false);
      if (edit.appended) {
        // Written after the checkpoint, so the tree extends it, but dated before it was published.
        expect(report.tree.backdated[0]).to.include({ streamId: projectStream });
      } else {
        expect(report.tree.extendsCheckpoint).to.equal(false);
        expect(report.tree.firstDifference.detail).to.be.a('string');
      }
      expect(run.stderr).to.contain('does NOT extend');

      if (goPeerPending('tlog-verifier')) return;
      const logFile = path.join(tempDir(), 'log.ndjson');
      const exported = await cli(dir, ['log', 'export', '--to', logFile, '--json']);
      expect(exported.code, exported.stderr).to.equal(0);
      const tree = await go(['tree', '--checkpoint', publishedFile(), '--vkey', vkey, '--log', logFile]);
      expect(tree.code, tree.stdout + tree.stderr).to.equal(1);
      expect(JSON.parse(tree.stdout).verified).to.equal(false);
    });
  }

  it('the service started on a rewritten log refuses writes naming where it differs, keeps serving reads, and takes writes only with a reason it records', async () => {
    const { dir, file } = copy();
    rewriteStream(file, projectStream, (events) => events.filter((event) => event.type !== 'project.approval-policy-changed'));
    for (const name of fs.readdirSync(dir).filter((n) => n.startsWith('log-tree.sqlite'))) fs.rmSync(path.join(dir, name));
    const start = (env: Record<string, string> = {}) =>
      startService(loadConfig({ DATA_DIR: dir, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'silent', LOAD_SHED_LAG_MS: '0', AUDIT_CHECKPOINT_DIR: published, AUDIT_LOG_ORIGIN: 'tamper.example/annals', ...env }), serviceDepsForTest());
    const checkpointsBefore = publishedCheckpoints(published).length;
    const service = await start();
    try {
      const record = await service.logTree!.integrity;
      expect(record?.state).to.equal('mismatch');
      const write = await service.log.append(`test-${randomUUID()}`, [{ type: 'review-notices.started', data: {} }], 'no_stream', { actor: { type: 'operator', id: 'test' } }).then(
        () => null,
        (error: Error) => error,
      );
      expect(write?.message).to.contain('Writes are refused').and.match(/between positions \d+ and \d+/);
      // Reads go on: readiness names the refusal without taking the service out of rotation (it was not ready
      // while the check ran).
      const readiness = (await (await fetch(`${service.url}/readyz`)).json()) as { checks: Record<string, { ok: boolean; detail?: string }> };
      expect(readiness.checks['audit-log']).to.deep.equal({ ok: true, detail: 'writes refused: the log does not extend its last published checkpoint' });
      const health = await fetch(`${service.url}/healthz`);
      expect(health.status).to.equal(200);
    } finally {
      await service.stop();
    }
    expect(publishedCheckpoints(published).length, 'no checkpoint of the rewritten log was published').to.equal(checkpointsBefore);

    const overridden = await start({ AUDIT_ACCEPT_CHECKPOINT_MISMATCH: 'restored from the backup of 2026-12-01 after disk failure' });
    try {
      expect((await overridden.logTree!.integrity)?.state).to.equal('overridden');
      const events = storedEvents(file);
      const record = events.find((e) => e.type === 'audit.checkpoint-mismatch-overridden');
      expect(record?.data).to.include({ reason: 'restored from the backup of 2026-12-01 after disk failure' });
      expect(String((record!.data as { detail: string }).detail)).to.match(/between positions \d+ and \d+/);
    } finally {
      await overridden.stop();
    }
  });
});
