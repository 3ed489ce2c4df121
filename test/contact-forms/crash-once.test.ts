import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { startAdminFixture } from '../admin/support.ts';
import { runEntry, startServiceProcess } from '../support/child-process.ts';
import { kill, startCrashingService } from '../support/crashing-service.ts';
import { eventually } from '../support/engine-fixture.ts';
import { tempDir } from '../support/temp-dir.ts';
import { startSmtpPeer, type SmtpPeer } from '../mail/smtp-peer.ts';
import { contactForm, PASSWORD } from './support.ts';

/**
 * What is promised for a crash between handing a notice over and recording that it was (the process
 * killed with SIGKILL at exactly that point, by test/contact-forms/crash-child.ts):
 * - SMTP: the notice is sent once more after the restart, with the same Message-ID (so a mail client or
 *   archive that deduplicates on it shows one message), and then recorded; never a third time: attempts are
 *   recorded before each send and bounded to two. Without a crash in that window: exactly once.
 * - .eml files (the embedded default): exactly once even then: the second attempt finds the file of that
 *   Message-ID and writes nothing.
 * - Neither a restart after the outcome was recorded nor a rebuild sends anything again.
 */
describe('contact forms: each notice once per submission across a crash between send and record', function () {
  this.timeout(180_000);

  interface Setup {
    dataDir: string;
    formId: string;
    projectId: string;
    adminEmail: string;
  }

  /**
   * A project with the contact form, on a data folder of its own: a copy of one made once (a service started
   * in this process, a project bootstrapped, the form created), as both tests start from the same.
   */
  let prepared: Promise<Setup> | undefined;
  async function setUp(): Promise<Setup> {
    prepared ??= prepare();
    const setup = await prepared;
    const dataDir = path.join(tempDir(), 'data');
    fs.cpSync(setup.dataDir, dataDir, { recursive: true });
    return { ...setup, dataDir };
  }

  async function prepare(): Promise<Setup> {
    const dataDir = path.join(tempDir(), 'data');
    const f = await startAdminFixture({ plan: 'standard', dataDir });
    try {
      const created = await f.call('POST', '/contact-forms', { body: contactForm({ notification_emails: ['team@example.com'] }) });
      expect(created.status).to.equal(201);
      return { dataDir, formId: created.body.id, projectId: f.project.projectId, adminEmail: f.project.adminEmail };
    } finally {
      await f.stop();
    }
  }

  async function submitTo(url: string, projectId: string): Promise<string> {
    const response = await fetch(`${url}/public/p/${projectId}/v1/contact-forms/contact/submit`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Crash Test', email: 'crash@example.org', message: 'Once, please.' }),
    });
    expect(response.status).to.equal(200);
    return ((await response.json()) as { submissionId: string }).submissionId;
  }

  /**
   * The console admin's session token on the service at `url`, signed in once per service: the polls below ask
   * every 20 ms, and a sign-in each time would hash the password (scrypt, ~0.1 s of CPU) as often, on the service
   * whose sending they wait for.
   */
  const tokens = new Map<string, Promise<string>>();
  function tokenFor(url: string, setup: Setup): Promise<string> {
    // By data folder too: a later service may get the port of an earlier one.
    const key = `${url} ${setup.dataDir}`;
    let token = tokens.get(key);
    if (!token) {
      token = (async () => {
        const login = await fetch(`${url}/admin/v1/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: setup.adminEmail, password: PASSWORD }) });
        expect(login.status, await login.clone().text()).to.equal(200);
        return ((await login.json()) as { token: string }).token;
      })();
      // Not kept when it failed: the next call signs in again.
      token.catch(() => tokens.delete(key));
      tokens.set(key, token);
    }
    return token;
  }

  async function deliveries(url: string, setup: Setup, submissionId: string): Promise<Record<string, { status: string; attempts: number; detail: string | null }>> {
    const token = await tokenFor(url, setup);
    const response = await fetch(`${url}/admin/v1/contact-forms/${setup.formId}/submissions/${submissionId}`, { headers: { authorization: `Bearer ${token}`, 'X-Project-Id': setup.projectId } });
    return ((await response.json()) as { deliveries: Record<string, { status: string; attempts: number; detail: string | null }> }).deliveries;
  }

  describe('SMTP (a real server on loopback)', () => {
    let smtp: SmtpPeer;
    before(async () => {
      smtp = await startSmtpPeer();
    });
    after(async () => {
      await smtp.close();
    });

    it('sends a notice killed between send and record once more after the restart, with the same Message-ID, then never again', async () => {
      const setup = await setUp();
      const env = { DATA_DIR: setup.dataDir, SMTP_URL: smtp.url, MAIL_FROM: 'Example Shop <shop@example.com>', CONSOLE_URL: 'https://console.example.com' };
      const ids = (id: string) => [`<${id}.autoreply@example.com>`, `<${id}.notification@example.com>`];

      // 1. The submission's two notices are handed to the SMTP server; the process dies before recording either.
      const crashing = await startCrashingService(env);
      const submissionId = await submitTo(crashing.url, setup.projectId);
      await eventually(async () => crashing.sent.length, (n) => n === 2, 30_000);
      await kill(crashing.child);
      expect(crashing.sent.sort()).to.deep.equal(ids(submissionId));
      expect(smtp.messages.map((m) => m.parsed.messageId).sort()).to.deep.equal(ids(submissionId));

      // 2. The real service restarts on the same data: each notice goes out once more, and is recorded.
      const restarted = await startServiceProcess({ ...env, LOG_LEVEL: 'info' });
      try {
        const done = await eventually(() => deliveries(restarted.url, setup, submissionId), (d) => d['notification']?.status === 'sent' && d['autoreply']?.status === 'sent', 30_000);
        expect(done['notification']!.attempts).to.equal(2);
        expect(done['autoreply']!.attempts).to.equal(2);
      } finally {
        expect((await restarted.stop()).code).to.equal(0);
      }
      const copies = (id: string) => smtp.messages.filter((m) => m.parsed.messageId === id);
      for (const id of ids(submissionId)) {
        expect(copies(id), id).to.have.length(2);
        // The second copy is the same message: same Message-ID, same content.
        expect(copies(id)[1]!.parsed.text).to.equal(copies(id)[0]!.parsed.text);
        expect(copies(id)[1]!.parsed.date?.toISOString()).to.equal(copies(id)[0]!.parsed.date?.toISOString());
      }
      expect(smtp.messages).to.have.length(4);

      // 3. Once recorded, neither another restart nor a full rebuild sends anything.
      const again = await startServiceProcess({ ...env, LOG_LEVEL: 'info' });
      try {
        const rebuilt = await runEntry('src/cli/main.ts', ['projections', 'rebuild', 'contact-forms', '--json'], { DATA_DIR: setup.dataDir, LOG_LEVEL: 'silent' });
        expect(rebuilt.code, rebuilt.stderr).to.equal(0);
        // Once the service reads the rebuilt generation, the notices of a later submission going out show that its
        // worker has polled that generation: a notice sent again would have gone out by then too.
        await eventually(async () => again.logs().some((l) => l['msg'] === 'following swapped-in generation' && l['projection'] === 'contact-forms'), Boolean, 30_000, 'the rebuilt generation followed');
        const later = await submitTo(again.url, setup.projectId);
        await eventually(async () => smtp.messages.filter((m) => ids(later).includes(m.parsed.messageId ?? '')).length, (n) => n === 2, 30_000);
        const after = await deliveries(again.url, setup, submissionId);
        expect(after['notification']).to.include({ status: 'sent', attempts: 2 });
      } finally {
        await again.stop();
      }
      expect(smtp.messages).to.have.length(6);
      expect(smtp.messages.filter((m) => ids(submissionId).includes(m.parsed.messageId ?? ''))).to.have.length(4);
    });
  });

  describe('.eml files (the embedded default)', () => {
    it('writes each notice exactly once, even when killed between writing it and recording it', async () => {
      const setup = await setUp();
      const env = { DATA_DIR: setup.dataDir, MAIL_FROM: 'Example Shop <shop@example.com>' };
      const mailDir = path.join(setup.dataDir, 'mail');
      const crashing = await startCrashingService(env);
      const submissionId = await submitTo(crashing.url, setup.projectId);
      await eventually(async () => crashing.sent.length, (n) => n === 2, 30_000);
      await kill(crashing.child);
      const files = () => fs.readdirSync(mailDir).filter((f) => f.endsWith('.eml')).sort();
      expect(files()).to.deep.equal([`${submissionId}.autoreply@example.com.eml`, `${submissionId}.notification@example.com.eml`]);
      const written = fs.readFileSync(path.join(mailDir, files()[1]!));

      const restarted = await startServiceProcess({ ...env, LOG_LEVEL: 'info' });
      try {
        const done = await eventually(() => deliveries(restarted.url, setup, submissionId), (d) => d['notification']?.status === 'sent' && d['autoreply']?.status === 'sent', 30_000);
        expect(done['notification']!.detail).to.match(/already delivered before/);
      } finally {
        await restarted.stop();
      }
      expect(files()).to.have.length(2);
      expect(fs.readFileSync(path.join(mailDir, files()[1]!)).equals(written)).to.equal(true);
    });
  });
});
