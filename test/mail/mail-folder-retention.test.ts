import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { pino } from 'pino';
import { ManualClock } from '../../src/clock.ts';
import { EmlFileTransport } from '../../src/mail/eml-file-transport.ts';
import { FIRST_SWEEP_AFTER_MS, startMailFolderRetention, sweepMailFolder } from '../../src/mail/mail-folder-retention.ts';
import { startAdminFixture } from '../admin/support.ts';
import { tempDir } from '../support/temp-dir.ts';
import { eventually } from '../support/eventually.ts';

const DAY_MS = 24 * 60 * 60 * 1000;
const NOW = new Date('2026-06-01T12:00:00.000Z');

/** A file in `dir` last written `ageMs` before `now`. */
function fileAged(dir: string, name: string, ageMs: number, now = NOW): string {
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, name);
  fs.writeFileSync(file, `Subject: ${name}\n\nbody\n`);
  const at = new Date(now.getTime() - ageMs);
  fs.utimesSync(file, at, at);
  return file;
}

const remaining = (dir: string) => fs.readdirSync(dir).sort();

const until = (condition: () => boolean, timeoutMs: number) => eventually(condition, Boolean, timeoutMs, 'condition', 50);

describe('mail folder retention (MAIL_FOLDER_KEEP_DAYS)', () => {
  it('removes the .eml files written before the cut and temporary files older than an hour, and nothing else', async () => {
    const dir = path.join(tempDir(), 'mail');
    fileAged(dir, 'old.notification@example.com.eml', 31 * DAY_MS);
    fileAged(dir, 'older.autoreply@example.com.eml', 400 * DAY_MS);
    fileAged(dir, 'recent.notification@example.com.eml', 29 * DAY_MS);
    fileAged(dir, '.tmp-crashed', 2 * 60 * 60 * 1000);
    fileAged(dir, '.tmp-being-written', 60 * 1000);
    fileAged(dir, 'README.txt', 400 * DAY_MS);
    fs.mkdirSync(path.join(dir, 'kept-folder.eml'));

    const sweep = await sweepMailFolder(dir, new Date(NOW.getTime() - 30 * DAY_MS), NOW);

    expect(sweep).to.deep.equal({ removed: 2, kept: 1, temporaries: 1 });
    expect(remaining(dir)).to.deep.equal(['.tmp-being-written', 'README.txt', 'kept-folder.eml', 'recent.notification@example.com.eml']);
  });

  it('sweeps a missing folder as an empty one, and a folder of thousands in turns of the event loop', async () => {
    expect(await sweepMailFolder(path.join(tempDir(), 'never-made'), NOW, NOW)).to.deep.equal({ removed: 0, kept: 0, temporaries: 0 });

    const dir = path.join(tempDir(), 'mail');
    for (let i = 0; i < 2_000; i++) fileAged(dir, `m${i}.notification@example.com.eml`, (i % 2 === 0 ? 40 : 10) * DAY_MS);
    let turns = 0;
    const ticker = setInterval(() => turns++, 0);
    const sweep = await sweepMailFolder(dir, new Date(NOW.getTime() - 30 * DAY_MS), NOW);
    clearInterval(ticker);
    expect(sweep).to.deep.equal({ removed: 1_000, kept: 1_000, temporaries: 0 });
    expect(remaining(dir)).to.have.length(1_000);
    expect(turns, 'timers ran during the sweep').to.be.greaterThan(0);
  });

  it('does not remove what the transport writes now, and stops between files when asked', async () => {
    const dir = path.join(tempDir(), 'mail');
    const transport = new EmlFileTransport(dir);
    await transport.send({ messageId: '<fresh.notification@example.com>', from: 'a@example.com', to: ['b@example.com'], subject: 's', text: 't', date: new Date() });
    const now = new Date();
    expect(await sweepMailFolder(dir, new Date(now.getTime() - DAY_MS), now)).to.deep.equal({ removed: 0, kept: 1, temporaries: 0 });
    expect(remaining(dir)).to.deep.equal(['fresh.notification@example.com.eml']);

    for (let i = 0; i < 50; i++) fileAged(dir, `old${i}.eml`, 40 * DAY_MS, now);
    expect(await sweepMailFolder(dir, now, now, () => true)).to.deep.equal({ removed: 0, kept: 0, temporaries: 0 });
    expect(remaining(dir)).to.have.length(51);
  });

  it('sweeps by the clock given, once started and then every period, until stopped', async () => {
    const dir = path.join(tempDir(), 'mail');
    const clock = new ManualClock(NOW);
    fileAged(dir, 'a.eml', 3 * DAY_MS);
    fileAged(dir, 'b.eml', 1.5 * DAY_MS);
    const retention = startMailFolderRetention({ dir, keepDays: 2, clock, logger: pino({ level: 'silent' }), everyMs: 20 });
    try {
      await until(() => !fs.existsSync(path.join(dir, 'a.eml')), FIRST_SWEEP_AFTER_MS + 2_000);
      expect(remaining(dir)).to.deep.equal(['b.eml']);
      clock.advance(DAY_MS);
      await until(() => !fs.existsSync(path.join(dir, 'b.eml')), 2_000);
    } finally {
      await retention.stop();
    }
    fileAged(dir, 'c.eml', 10 * DAY_MS, clock.now());
    // Five periods (20 ms) later.
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(remaining(dir), 'no sweep after stop').to.deep.equal(['c.eml']);
  });

  it('the service removes old notices from DATA_DIR/mail after its start, and keeps them all with MAIL_FOLDER_KEEP_DAYS=0', async function () {
    this.timeout(30_000);
    const clock = new ManualClock(NOW);
    const folders = ['7', '0'].map((days) => {
      const dataDir = path.join(tempDir(), 'data');
      const mail = path.join(dataDir, 'mail');
      fileAged(mail, 'old.review-submitted@localhost.eml', 8 * DAY_MS);
      fileAged(mail, 'recent.review-submitted@localhost.eml', 6 * DAY_MS);
      return { days, dataDir, mail };
    });
    const fixtures = await Promise.all(folders.map(({ days, dataDir }) => startAdminFixture({ dataDir, clock, env: { MAIL_FOLDER_KEEP_DAYS: days } })));
    try {
      await until(() => !fs.existsSync(path.join(folders[0]!.mail, 'old.review-submitted@localhost.eml')), FIRST_SWEEP_AFTER_MS + 10_000);
      expect(remaining(folders[0]!.mail)).to.deep.equal(['recent.review-submitted@localhost.eml']);
      expect(remaining(folders[1]!.mail)).to.deep.equal(['old.review-submitted@localhost.eml', 'recent.review-submitted@localhost.eml']);
    } finally {
      await Promise.all(fixtures.map((f) => f.stop()));
    }
  });
});
