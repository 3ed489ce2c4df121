import path from 'node:path';
import { expect } from 'chai';
import { articleFormSet, startAdminFixture } from '../admin/support.ts';
import { runEntry, startServiceProcess } from '../support/child-process.ts';
import { kill, startCrashingService } from '../support/crashing-service.ts';
import { eventually } from '../support/engine-fixture.ts';
import { tempDir } from '../support/temp-dir.ts';
import { startSmtpPeer, type SmtpPeer } from '../mail/smtp-peer.ts';
import { SqliteEventStore } from '../../src/event-store/sqlite-event-store.ts';
import { collect } from '../../src/event-store/event-store.ts';

/**
 * A review notice killed (SIGKILL) between handing the e-mail to a real SMTP server and recording that it
 * did: sent once more after the restart with the same Message-ID and content, then recorded, never a third
 * time; neither a later restart nor a rebuild of the projection that lists notices sends anything again.
 */
describe('review notices: once per workflow event across a crash between send and record', function () {
  this.timeout(180_000);
  let smtp: SmtpPeer;
  before(async () => {
    smtp = await startSmtpPeer();
  });
  after(async () => {
    await smtp.close();
  });

  /** The notice's events on its attempts and completion streams, read from the SQLite file. */
  async function recorded(dataDir: string, jobId: string): Promise<{ attempts: number; completion: any[] }> {
    const store = SqliteEventStore.open(path.join(dataDir, 'events.sqlite'));
    try {
      const read = async (stream: string) => collect(store.readStream(stream)).catch(() => []);
      return { attempts: (await read(`review-notice-attempts-${jobId}`)).length, completion: (await read(`outbox-review-notices-${jobId}`)).map((e) => e.data) };
    } finally {
      await store.close();
    }
  }

  it('sends the submitted notice once more after the restart, with the same Message-ID, then never again', async () => {
    const dataDir = path.join(tempDir(), 'data');
    const f = await startAdminFixture({ plan: 'standard', dataDir });
    const formSet = await f.call('POST', '/form-sets', { body: articleFormSet });
    expect(formSet.status).to.equal(201);
    const agentKey = f.project.agentKey.key;
    await f.stop();
    const env = { DATA_DIR: dataDir, SMTP_URL: smtp.url, MAIL_FROM: 'Annals <annals@example.com>', CONSOLE_URL: 'https://console.example.com' };
    const call = async (url: string, route: string, body: unknown) => {
      const response = await fetch(`${url}/admin/v1${route}`, { method: 'POST', headers: { authorization: `Bearer ${agentKey}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
      expect(response.status).to.be.oneOf([200, 201]);
      return (await response.json()) as any;
    };

    // 1. An agent key submits a revision; the notice to the tenant_admin is handed to the SMTP server, and the process dies before recording it.
    const crashing = await startCrashingService(env);
    const created = await call(crashing.url, `/form-sets/${formSet.body.id}/entries`, { slug: 'crash', fields: { title: 'Crash course' } });
    await call(crashing.url, `/revisions/${created.revision.id}/submit`, {});
    await eventually(async () => crashing.sent.length, (n) => n === 1, 30_000);
    await kill(crashing.child);
    const messageId = crashing.sent[0]!;
    const eventId = /^<([0-9a-f-]{36})\.review-submitted@example\.com>$/.exec(messageId)?.[1];
    expect(eventId, messageId).to.be.a('string');
    const jobId = `${eventId}.mail`;
    expect(smtp.messages.map((m) => m.parsed.messageId)).to.deep.equal([messageId]);
    expect(await recorded(dataDir, jobId)).to.deep.equal({ attempts: 1, completion: [] });

    // 2. The real service restarts on the same data: the notice goes out once more, the same message, and is recorded.
    const restarted = await startServiceProcess({ ...env, LOG_LEVEL: 'info' });
    try {
      await smtp.waitForCount(2, 30_000);
    } finally {
      expect((await restarted.stop()).code).to.equal(0);
    }
    const copies = smtp.messages.filter((m) => m.parsed.messageId === messageId);
    expect(copies).to.have.length(2);
    expect(copies[1]!.parsed.text).to.equal(copies[0]!.parsed.text);
    expect(copies[1]!.parsed.date?.toISOString()).to.equal(copies[0]!.parsed.date?.toISOString());
    expect(copies[1]!.envelope.to).to.deep.equal([f.project.adminEmail]);
    const after = await recorded(dataDir, jobId);
    expect(after.attempts).to.equal(2);
    expect(after.completion).to.have.length(1);
    expect(after.completion[0]).to.include({ outcome: 'sent', messageId, recipients: 1 });

    // 3. Once recorded, neither another restart nor a full rebuild of the notices' projection sends anything.
    const again = await startServiceProcess({ ...env, LOG_LEVEL: 'info' });
    try {
      const rebuilt = await runEntry('src/cli/main.ts', ['projections', 'rebuild', 'review-queue', '--json'], { DATA_DIR: dataDir, LOG_LEVEL: 'silent' });
      expect(rebuilt.code, rebuilt.stderr).to.equal(0);
      // Once the service reads the rebuilt generation, the notice of a later submission going out shows that its
      // worker has polled that generation: the notice sent again would have gone out by then too.
      await eventually(async () => again.logs().some((l) => l['msg'] === 'following swapped-in generation' && l['projection'] === 'review-queue'), Boolean, 30_000, 'the rebuilt generation followed');
      const later = await call(again.url, `/form-sets/${formSet.body.id}/entries`, { slug: 'later', fields: { title: 'Later course' } });
      await call(again.url, `/revisions/${later.revision.id}/submit`, {});
      await smtp.waitForCount(3, 30_000);
    } finally {
      await again.stop();
    }
    expect(smtp.messages).to.have.length(3);
    expect(smtp.messages.filter((m) => m.parsed.messageId === messageId)).to.have.length(2);
    expect((await recorded(dataDir, jobId)).completion).to.have.length(1);
  });
});
