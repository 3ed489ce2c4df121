import fs from 'node:fs';
import path from 'node:path';
import { Writable } from 'node:stream';
import { expect } from 'chai';
import { createLogger, type Logger } from '../../src/logging/logger.ts';
import { createArticleFormSet, startAdminFixture, type AdminFixture } from '../admin/support.ts';
import { runEntry, spawnEntry } from '../support/child-process.ts';
import { storeAllAsPlainText, storedForms } from '../support/stored-events.ts';
import { tempDir } from '../support/temp-dir.ts';

/**
 * `annals log compact`: a log an older build wrote (every event as JSON text) rewritten as compressed frames in
 * place, while the service runs and writes, and then with --vacuum.
 */
describe('annals log compact: the embedded log\'s older events rewritten compressed, in place', function () {
  this.timeout(180_000);

  let dataDir: string;
  let file: string;
  let formSetId: string;
  /** The first start's project (each fixture start bootstraps one): the entries are in its form set. */
  let agentKey: string;
  const cli = (args: string[]) => runEntry('src/cli/main.ts', args, { DATA_DIR: dataDir, LOG_LEVEL: 'silent' });

  /** A logger at info whose lines (their messages) the test reads. */
  function capturingLogger(): { logger: Logger; messages: string[] } {
    const messages: string[] = [];
    const stream = new Writable({
      write(chunk: Buffer, _encoding, done) {
        for (const line of chunk.toString().split('\n').filter(Boolean)) messages.push(String(JSON.parse(line).msg));
        done();
      },
    });
    return { logger: createLogger({ level: 'info', destination: stream }), messages };
  }
  const NOTICE = 'the event log holds events stored as text by a build before 2026-11-28';

  async function publish(f: AdminFixture, slug: string): Promise<void> {
    const token = agentKey;
    const created = await f.call('POST', `/form-sets/${formSetId}/entries`, { token, body: { slug, fields: { title: `Title ${slug}`, body: `Body of ${slug}, `.repeat(20) } } });
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
    const revision = created.body.revision;
    expect((await f.call('POST', `/revisions/${revision.id}/submit`, { token, body: {} })).status).to.equal(200);
    expect((await f.call('POST', `/revisions/${revision.id}/publish`, { token, body: { revision: revision.revision } })).status).to.equal(200);
  }

  before(async () => {
    dataDir = path.join(tempDir(), 'data');
    file = path.join(dataDir, 'events.sqlite');
    const f = await startAdminFixture({ dataDir });
    try {
      formSetId = await createArticleFormSet(f);
      agentKey = f.project.agentKey.key;
      for (let i = 0; i < 40; i++) await publish(f, `before-${i}`);
    } finally {
      await f.stop();
    }
  });

  it('rewrites them while the service runs and appends; the service reads on, the chains verify, --vacuum is refused meanwhile', async () => {
    const plain = storeAllAsPlainText(file);
    expect(plain).to.be.greaterThan(200);
    expect(storedForms(file)).to.deep.equal({ frames: 0, texts: plain });

    const started = capturingLogger();
    const f = await startAdminFixture({ dataDir, logger: started.logger });
    // The service says so when it starts on such a log.
    expect(started.messages.some((m) => m.startsWith(NOTICE)), started.messages.join('\n')).to.equal(true);
    let compaction: ReturnType<typeof spawnEntry> | undefined;
    try {
      // Ten events a transaction: the compaction's transactions and the service's appends take turns.
      const child = spawnEntry('src/cli/main.ts', ['log', 'compact', '--batch', '10', '--json'], { DATA_DIR: dataDir, LOG_LEVEL: 'silent' });
      compaction = child;
      let stdout = '';
      child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
      const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
      let written = 0;
      let done = false;
      void exited.then(() => (done = true));
      while (!done) await publish(f, `during-${written++}`);
      expect(await exited).to.equal(0);
      const result = JSON.parse(stdout);
      expect(result).to.include({ rewritten: plain, vacuumed: false });
      expect(result.frameBytes / result.textBytes).to.be.below(0.45);
      expect(written, 'entries published while it ran').to.be.greaterThan(0);
      expect(storedForms(file).texts).to.equal(0);

      const refused = await cli(['log', 'compact', '--vacuum', '--json']);
      expect(refused.code).to.equal(1);
      expect(JSON.parse(refused.stdout).error.code).to.equal('DATA_DIR_LOCKED');

      // Everything written before and during reads as it should.
      const listed = await f.call('GET', `/form-sets/${formSetId}/entries?limit=100`, { token: agentKey });
      expect(listed.status).to.equal(200);
      expect(listed.body.items.map((e: { slug: string }) => e.slug)).to.include.members(['before-0', 'before-39', `during-${written - 1}`]);
    } finally {
      // Never leave it running into the next test (when an assertion above failed).
      if (compaction && compaction.exitCode === null) compaction.kill('SIGKILL');
      await f.stop();
    }
    const verified = await cli(['audit', 'verify', '--json']);
    expect(verified.code, verified.stderr).to.equal(0);
    // Chains, and the log tree against its latest checkpoint: the compacted log is the log it was.
    expect(JSON.parse(verified.stdout)).to.include({ verified: true });
    expect(JSON.parse(verified.stdout).tree).to.include({ verified: true });
  });

  it('with the service stopped: the same log, event for event (digest); the file keeps its size until --vacuum gives the space back', async () => {
    storeAllAsPlainText(file);
    const exported = path.join(tempDir(), 'before.ndjson');
    expect((await cli(['log', 'export', '--to', exported, '--json'])).code).to.equal(0);
    const before = fs.statSync(file).size;

    const compacted = await cli(['log', 'compact', '--json']);
    expect(compacted.code, compacted.stderr).to.equal(0);
    const result = JSON.parse(compacted.stdout);
    expect(result).to.include({ vacuumed: false, rewritten: storedForms(file).frames });
    expect(storedForms(file).texts).to.equal(0);
    // Rows shrink in place: the file does not, and says how to get the space back.
    expect(result.fileBytesAfter).to.equal(result.fileBytesBefore);
    expect(compacted.stderr).to.contain('annals log compact --vacuum');

    const vacuumed = await cli(['log', 'compact', '--vacuum', '--json']);
    expect(vacuumed.code, vacuumed.stderr).to.equal(0);
    expect(JSON.parse(vacuumed.stdout)).to.include({ rewritten: 0, vacuumed: true });
    expect(JSON.parse(vacuumed.stdout).fileBytesAfter).to.be.below(result.fileBytesBefore * 0.7);
    expect(fs.statSync(file).size).to.be.below(before * 0.7);
    expect(vacuumed.stderr).to.contain('every event is stored compressed already');

    const same = await cli(['log', 'verify', exported, '--json']);
    expect(same.code, same.stdout).to.equal(0);
    expect(JSON.parse(same.stdout).verified).to.equal(true);

    // Started on the compacted log, the service has nothing to say about it.
    const started = capturingLogger();
    const f = await startAdminFixture({ dataDir, logger: started.logger });
    await f.stop();
    expect(started.messages).to.include('annals listening');
    expect(started.messages.some((m) => m.startsWith(NOTICE))).to.equal(false);
  });
});
