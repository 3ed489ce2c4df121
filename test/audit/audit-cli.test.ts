import fs from 'node:fs';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import Database from 'better-sqlite3';
import { expect } from 'chai';
import { articleFormSet, startAdminFixture } from '../admin/support.ts';
import { runEntry, runProgram } from '../support/child-process.ts';
import { tempDir } from '../support/temp-dir.ts';
import { eventually } from '../support/engine-fixture.ts';
import { SqliteEventStore } from '../../src/event-store/sqlite-event-store.ts';
import { collect } from '../../src/event-store/event-store.ts';
import { EventFrames } from '../../src/event-store/event-frames.ts';

const SCRIPT = 'scripts/audit/verify-audit-export.mjs';

/**
 * `annals audit verify | export | public-key` on a log the service wrote, and the standalone verification
 * script an auditor runs (node and the script alone: it is run here by plain `node`, not through tsx).
 */
describe('audit: verify the log, export a project, verify the export without the service', function () {
  this.timeout(120_000);

  let dataDir: string;
  let projectId: string;
  let env: Record<string, string>;
  const targetTitle = 'Quarterly figures, as first written';

  before(async () => {
    dataDir = path.join(tempDir(), 'data');
    const f = await startAdminFixture({ dataDir });
    try {
      projectId = f.project.projectId;
      const formSet = await f.call('POST', '/form-sets', { body: articleFormSet });
      expect(formSet.status).to.equal(201);
      for (const [slug, title] of [['figures', targetTitle], ['other', 'Another article']] as const) {
        const created = await f.call('POST', `/form-sets/${formSet.body.id}/entries`, { body: { slug, fields: { title, body: 'Text' } } });
        expect(created.status).to.equal(201);
        const revision = created.body.revision;
        expect((await f.call('POST', `/revisions/${revision.id}/submit`, { body: {} })).status).to.equal(200);
        expect((await f.call('POST', `/revisions/${revision.id}/publish`, { body: { revision: revision.revision } })).status).to.equal(200);
      }
    } finally {
      await f.stop();
    }
    env = { DATA_DIR: dataDir, LOG_LEVEL: 'silent' };
  });

  const cli = (args: string[]) => runEntry('src/cli/main.ts', ['audit', ...args], env);

  it('verify passes on the log the service wrote; a byte of one event\'s data changed in the SQLite file is found, with its stream, revision and event id', async () => {
    const clean = await cli(['verify', '--json']);
    expect(clean.code, clean.stderr).to.equal(0);
    const report = JSON.parse(clean.stdout);
    // Events are covered by the log's Merkle tree (no per-stream links since it superseded them): checked against
    // the latest checkpoint the service signed, kept in the tree store (nothing was published outside DATA_DIR).
    expect(report).to.include({ verified: true, chainedEvents: 0, firstBreak: null });
    expect(report.unlinkedEvents).to.be.greaterThan(10);
    expect(report.tree).to.include({ verified: true, extendsCheckpoint: true });
    expect(report.tree.checkpoint.source).to.contain('tree store');
    const scoped = JSON.parse((await cli(['verify', '--project', projectId, '--json'])).stdout);
    expect(scoped.verified).to.equal(true);

    // Work on a copy: the other tests use the clean log.
    const copy = path.join(tempDir(), 'data');
    fs.cpSync(dataDir, copy, { recursive: true });
    const file = path.join(copy, 'events.sqlite');
    const db = new Database(file);
    db.pragma('wal_checkpoint(TRUNCATE)');
    const saved = db.prepare("SELECT event_id, stream_id, revision, data FROM events WHERE type = 'entry.revision-saved'").all() as Array<{ event_id: string; stream_id: string; revision: number; data: Buffer }>;
    db.close();
    // Stored compressed (event-frames.ts): the title is not in the file as text; its event's frame is, once.
    const row = saved.find((r) => new EventFrames().read(r.data).data.includes(targetTitle))!;
    expect(row, 'the saved revision of the target entry').to.not.equal(undefined);
    const bytes = fs.readFileSync(file);
    expect(bytes.indexOf(Buffer.from(targetTitle)), 'the title is not stored as text').to.equal(-1);
    const at = bytes.indexOf(row.data);
    expect(at).to.be.greaterThan(0);
    expect(bytes.indexOf(row.data, at + 1), 'the frame occurs once in the file').to.equal(-1);
    const flipped = at + Math.floor(row.data.length / 2);
    bytes[flipped] = bytes[flipped]! ^ 0x04; // one bit of one byte
    fs.writeFileSync(file, bytes);

    const broken = await runEntry('src/cli/main.ts', ['audit', 'verify', '--json'], { DATA_DIR: copy, LOG_LEVEL: 'silent' });
    expect(broken.code).to.equal(1);
    const found = JSON.parse(broken.stdout);
    expect(found.verified).to.equal(false);
    // Its checksum shows the damaged frame; the events after it (its stream's publish among them) still verify.
    expect(found.breaks, JSON.stringify(found.breaks)).to.have.length(1);
    expect(found.firstBreak).to.include({ reason: 'unreadable', eventId: row.event_id, streamId: row.stream_id, revision: String(row.revision) });
    expect(found.unlinkedEvents).to.equal(report.unlinkedEvents - 1);
    // The tree check names the same event as the first leaf that differs from the checkpoint.
    expect(found.tree.extendsCheckpoint).to.equal(false);
    expect(found.tree.firstDifference.detail).to.contain('cannot be read back');
    expect(broken.stderr).to.contain(row.event_id).and.contain(row.stream_id);
  });

  it('an export verifies with the standalone script and the public key; with one line edited, or the key of another service, it is refused', async () => {
    const dir = tempDir();
    const bundle = path.join(dir, 'audit.ndjson');
    const exported = await cli(['export', '--project', projectId, '--from', '2020-01-01', '--to', '2100-01-01T00:00:00Z', '--out', bundle, '--json']);
    expect(exported.code, exported.stderr).to.equal(0);
    const summary = JSON.parse(exported.stdout);
    expect(summary).to.include({ projectId, streams: summary.streams });
    expect(summary.events).to.be.greaterThan(6);
    expect(fs.statSync(bundle).mode & 0o777).to.equal(0o600);

    const key = await cli(['public-key', '--json']);
    expect(key.code).to.equal(0);
    const keyFile = path.join(dir, 'audit-public-key.json');
    fs.writeFileSync(keyFile, key.stdout);
    expect(JSON.parse(key.stdout)).to.include({ keyId: summary.keyId });

    const verified = await runProgram(process.execPath, [SCRIPT, bundle, '--public-key', keyFile], {});
    expect(verified.code, verified.stderr).to.equal(0);
    const result = JSON.parse(verified.stdout);
    expect(result).to.include({ valid: true, authenticated: true, projectId, events: summary.events, streams: summary.streams, keyId: summary.keyId });
    // Without the key from the operator: intact, but who signed it is not established.
    expect(JSON.parse((await runProgram(process.execPath, [SCRIPT, bundle], {})).stdout)).to.include({ valid: true, authenticated: false });

    // One line edited: a title in one event's data.
    const lines = fs.readFileSync(bundle, 'utf8').split('\n');
    const target = lines.findIndex((l) => l.includes(targetTitle));
    expect(target).to.be.greaterThan(0);
    const edited = path.join(dir, 'edited.ndjson');
    fs.writeFileSync(edited, lines.map((l, i) => (i === target ? l.replace('as first written', 'as later written') : l)).join('\n'));
    const refused = await runProgram(process.execPath, [SCRIPT, edited, '--public-key', keyFile], {});
    expect(refused.code).to.equal(1);
    const problems = JSON.parse(refused.stdout).problems.map((p: { line: number | null; message: string }) => `${p.line}: ${p.message}`);
    // Events written since the log's Merkle tree superseded per-stream links carry none: the signed digest shows
    // the edit (which line, once exports carry their events' inclusion proofs).
    expect(problems.some((p: string) => p.includes('a line was edited, added or removed'))).to.equal(true);

    // A line removed: the digest breaks even where no chain does.
    const removed = path.join(dir, 'removed.ndjson');
    fs.writeFileSync(removed, lines.filter((_, i) => i !== lines.length - 3).join('\n'));
    expect((await runProgram(process.execPath, [SCRIPT, removed, '--public-key', keyFile], {})).code).to.equal(1);

    // Another service's key: the signature does not verify.
    const otherDir = path.join(tempDir(), 'data');
    const other = await runEntry('src/cli/main.ts', ['audit', 'public-key', '--json'], { DATA_DIR: otherDir, LOG_LEVEL: 'silent' });
    const otherKey = path.join(dir, 'other-key.json');
    fs.writeFileSync(otherKey, other.stdout);
    const stranger = await runProgram(process.execPath, [SCRIPT, bundle, '--public-key', otherKey], {});
    expect(stranger.code).to.equal(1);
    expect(stranger.stdout).to.contain('signature');
  });

  it('a log written before chains is covered by the log tree\'s first checkpoint when the service starts: verify --against it passes, its events stay as they were', async () => {
    const legacyDir = path.join(tempDir(), 'data');
    const published = path.join(tempDir(), 'published');
    fs.mkdirSync(legacyDir, { recursive: true, mode: 0o700 });
    const store = SqliteEventStore.open(path.join(legacyDir, 'events.sqlite'));
    const legacy = Array.from({ length: 3 }, (_, i) => ({
      id: randomUUID(),
      type: 'tenant.created',
      data: { tenantId: randomUUID(), name: `Tenant ${i}` },
      metadata: { actor: { type: 'operator' as const, id: 'old-build' }, correlationId: randomUUID(), causationId: null, occurredAt: '2025-06-01T00:00:00.000Z', schemaVersion: 1 },
    }));
    for (const event of legacy) await store.append(`tenant-${event.data.tenantId}`, [event], 'no_stream');
    const before = await collect(store.readAll());
    await store.close();

    // Events without links are no break: they are covered by checkpoints once the tree has them.
    expect(JSON.parse((await runEntry('src/cli/main.ts', ['audit', 'verify', '--json'], { DATA_DIR: legacyDir, LOG_LEVEL: 'silent' })).stdout)).to.include({ verified: true, unlinkedEvents: 3 });
    const f = await startAdminFixture({ dataDir: legacyDir, env: { AUDIT_CHECKPOINT_DIR: published } });
    try {
      const file = path.join(published, 'checkpoints.ndjson');
      await eventually(async () => (fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : ''), (text) => text.includes('"kind":"checkpoint"'), 20_000);
    } finally {
      await f.stop();
    }
    const after = SqliteEventStore.open(path.join(legacyDir, 'events.sqlite'));
    try {
      const events = await collect(after.readAll());
      expect(events.slice(0, 3)).to.deep.equal(before);
      expect(events.filter((e) => e.type === 'audit.log-anchored')).to.have.length(0);
    } finally {
      await after.close();
    }
    const verified = await runEntry('src/cli/main.ts', ['audit', 'verify', '--json'], { DATA_DIR: legacyDir, LOG_LEVEL: 'silent', AUDIT_CHECKPOINT_DIR: published });
    expect(verified.code, verified.stderr).to.equal(0);
    const report = JSON.parse(verified.stdout);
    expect(report).to.include({ verified: true, unlinkedEvents: report.unlinkedEvents });
    expect(report.tree).to.include({ verified: true, extendsCheckpoint: true });
  });

  it('export refuses a bad range and an existing file, with exit code 2', async () => {
    const existing = path.join(tempDir(), 'exists.ndjson');
    fs.writeFileSync(existing, '');
    for (const args of [
      ['export', '--project', projectId, '--from', 'yesterday', '--to', '2100-01-01', '--out', path.join(tempDir(), 'a.ndjson')],
      ['export', '--project', projectId, '--from', '2100-01-01', '--to', '2020-01-01', '--out', path.join(tempDir(), 'b.ndjson')],
      ['export', '--project', projectId, '--from', '2020-01-01', '--to', '2100-01-01', '--out', existing],
      ['export', '--from', '2020-01-01', '--to', '2100-01-01', '--out', path.join(tempDir(), 'c.ndjson')],
    ]) {
      const result = await cli([...args, '--json']);
      expect(result.code, args.join(' ')).to.equal(2);
      expect(JSON.parse(result.stdout).error.code).to.equal('USAGE_ERROR');
    }
  });
});
