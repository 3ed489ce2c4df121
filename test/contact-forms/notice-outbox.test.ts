import fs from 'node:fs';
import path from 'node:path';
import { randomBytes, randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { simpleParser } from 'mailparser';
import { ManualClock } from '../../src/clock.ts';
import { EventLog } from '../../src/event-store/event-log.ts';
import { SqliteEventStore } from '../../src/event-store/sqlite-event-store.ts';
import { SqliteReadModelStore } from '../../src/read-models/sqlite-read-model-store.ts';
import { ReadModelReader } from '../../src/read-models/read-model-reader.ts';
import { ProjectionSupervisor } from '../../src/projection-engine/projection-supervisor.ts';
import { OutboxWorker } from '../../src/outbox/outbox-worker.ts';
import { SecretBox } from '../../src/security/secret-box.ts';
import { serviceEventCatalog } from '../../src/service/event-catalog.ts';
import { SqliteKeyStore } from '../../src/key-store/sqlite-key-store.ts';
import { EmlFileTransport } from '../../src/mail/eml-file-transport.ts';
import { noticeOutbox } from '../../src/contact-forms/notice-outbox.ts';
import { MAX_NOTICE_ATTEMPTS } from '../../src/outbox/notice-attempts.ts';
import { sealValues } from '../../src/contact-forms/submission-crypto.ts';
import { contactForms } from '../../projections/contact-forms.ts';
import { eventually, silentLogger } from '../support/engine-fixture.ts';
import { tempDir } from '../support/temp-dir.ts';

describe('contact forms: the notice outbox', function () {
  this.timeout(30_000);

  it(`hands a notice over at most ${MAX_NOTICE_ATTEMPTS} times: after that many interrupted attempts it records a failure instead of sending; an erased submission's notices are skipped`, async () => {
    const dir = tempDir();
    const events = SqliteEventStore.open(path.join(dir, 'events.sqlite'), { pollIntervalMs: 20 });
    const store = SqliteReadModelStore.open(path.join(dir, 'read-models.sqlite'));
    const clock = new ManualClock('2026-11-22T10:00:00.000Z');
    const log = new EventLog(events, serviceEventCatalog(), clock);
    const keyStore = SqliteKeyStore.open(path.join(dir, 'keys.sqlite'));
    const mailDir = path.join(dir, 'mail');
    const supervisor = new ProjectionSupervisor({ projections: [contactForms], log, store, clock, logger: silentLogger, watchIntervalMs: 50, projector: { flushIntervalMs: 5 } });
    await supervisor.start();
    const projectId = randomUUID();
    const formId = randomUUID();
    const actor = { actor: { type: 'user' as const, id: 'u' } };
    await log.append(`contact-form-${formId}`, [{ type: 'contact-form.created', data: { projectId, formId, version: 1, settings: {
      slug: 'contact', name: 'Contact', notification_emails: ['team@example.com'], reply_to_field: null, honeypot_enabled: true, honeypot_field: 'website',
      fields: [{ key: 'email', type: 'email', label: 'E-mail', required: true }], autoreply_enabled: false, autoreply_to_field: null, autoreply_subject: {}, autoreply_body: {},
      email_signature: null, hosted_page_enabled: false, chat_webhook: null,
    } } }], 'no_stream', actor);
    const receive = async () => {
      const submissionId = randomUUID();
      const key = randomBytes(32);
      await keyStore.put(submissionId, key);
      await log.append(`contact-submission-${submissionId}`, [{ type: 'contact-submission.received', data: { projectId, formId, submissionId, formVersion: 1, locale: 'en', sealedValues: sealValues(key, submissionId, { email: 'x@example.org' }), notices: ['notification'] } }], 'no_stream', { actor: { type: 'public', id: 'contact-form' } });
      return submissionId;
    };
    const interrupted = await receive();
    for (let attempt = 1; attempt <= MAX_NOTICE_ATTEMPTS; attempt++) {
      await log.append(`contact-notice-attempts-${interrupted}.notification`, [{ type: 'contact-notice.attempt-started', data: { projectId, submissionId: interrupted, jobId: `${interrupted}.notification`, kind: 'notification', attempt } }], attempt === 1 ? 'no_stream' : BigInt(attempt - 2), actor);
    }
    const normal = await receive();
    const erased = await receive();
    await keyStore.destroy(erased);

    const reader = new ReadModelReader(store, { cacheMs: 0 });
    const worker = new OutboxWorker(
      noticeOutbox({ log, reader, keyStore, mail: new EmlFileTransport(mailDir), chat: { send: async () => ({ ok: true, status: 200, error: null }) }, secrets: new SecretBox(randomBytes(32)), mailFrom: 'shop@example.com', consoleBase: () => 'https://console.example.com', logger: silentLogger }),
      { log, reader, logger: silentLogger, pollIntervalMs: 20 },
    );
    worker.start();
    try {
      const status = async (id: string) => ((await reader.get('contact-forms', 'submissions', id))?.['notices'] as Record<string, { status: string; detail: string | null; attempts: number }> | undefined)?.['notification'] ?? { status: 'pending', detail: null, attempts: 0 };
      await eventually(async () => Promise.all([interrupted, normal, erased].map(status)), (s) => s.every((n) => n.status !== 'pending'));
      expect(await status(interrupted)).to.deep.include({ status: 'failed', attempts: 2 });
      expect((await status(interrupted)).detail).to.match(/^not sent again: 2 earlier attempts were interrupted/);
      expect(await status(normal)).to.deep.include({ status: 'sent', attempts: 1 });
      expect(await status(erased)).to.deep.include({ status: 'skipped', detail: 'the submission was erased before the notice was sent', attempts: 0 });
      expect(fs.readdirSync(mailDir)).to.deep.equal([`${normal}.notification@example.com.eml`]);
      expect((await simpleParser(fs.readFileSync(path.join(mailDir, fs.readdirSync(mailDir)[0]!)))).text).to.contain(`https://console.example.com/p/${projectId}/contact-forms/${formId}/submissions/${normal}`);
    } finally {
      await worker.stop();
      await supervisor.stop();
      await keyStore.close();
      await events.close();
      await store.close();
    }
  });
});
