import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { contactForms } from '../../projections/contact-forms.ts';
import type { ContactFormSettings } from '../../src/domain/contact-form/contact-form-settings.ts';
import { projectionHarness } from '../support/projection-harness.ts';

const projectId = randomUUID();
const formId = randomUUID();
const settings = (overrides: Partial<ContactFormSettings> = {}): ContactFormSettings => ({
  slug: 'contact',
  name: 'Contact',
  notification_emails: ['team@example.com'],
  reply_to_field: 'email',
  honeypot_enabled: true,
  honeypot_field: 'website',
  fields: [{ key: 'email', type: 'email', label: 'E-mail', required: true }],
  autoreply_enabled: true,
  autoreply_to_field: 'email',
  autoreply_subject: { en: 'Thanks' },
  autoreply_body: { en: 'We got it.' },
  email_signature: null,
  hosted_page_enabled: false,
  chat_webhook: null,
  ...overrides,
});
const actor = { actor: { type: 'user' as const, id: 'u-1' } };

describe('projection contact-forms: given these events, these documents', () => {
  it('folds forms, submissions with their sealed values, and one outbox job per notice with the settings of that moment', async () => {
    const h = projectionHarness(contactForms);
    try {
      await h.log.append(`contact-form-${formId}`, [{ type: 'contact-form.created', data: { projectId, formId, version: 1, settings: settings() } }], 'no_stream', actor);
      h.clock.advance(1000);
      const submissionId = randomUUID();
      await h.log.append(`contact-submission-${submissionId}`, [{ type: 'contact-submission.received', data: { projectId, formId, submissionId, formVersion: 1, locale: 'en', sealedValues: 'v1.sealed', notices: ['notification', 'autoreply'] } }], 'no_stream', { actor: { type: 'public', id: 'contact-form' } });
      // A later change of the form does not change the notices already due.
      h.clock.advance(1000);
      await h.log.append(`contact-form-${formId}`, [{ type: 'contact-form.updated', data: { projectId, formId, version: 2, settings: settings({ slug: 'renamed', notification_emails: ['other@example.com'] }), changed: ['slug', 'notification_emails'] } }], 0n, actor);
      await h.project();

      expect(await h.doc('forms', formId)).to.deep.include({ formId, projectId, slug: 'renamed', version: 2, deleted: false, createdAt: '2026-11-22T09:00:00.000Z', updatedAt: '2026-11-22T09:00:02.000Z' });
      expect(await h.doc('submissions', submissionId)).to.deep.equal({
        submissionId, projectId, formId, formVersion: 1, locale: 'en', receivedAt: '2026-11-22T09:00:01.000Z', read: false, erased: false, erasedAt: null, sealedValues: 'v1.sealed', notes: [],
        notices: {
          notification: { status: 'pending', attempts: 0, messageId: null, detail: null, completedAt: null },
          autoreply: { status: 'pending', attempts: 0, messageId: null, detail: null, completedAt: null },
        },
      });
      const job = await h.doc('jobs', `${submissionId}.notification`);
      expect(job).to.deep.include({ status: 'pending', kind: 'notification', attempts: 0, locale: 'en' });
      expect((job!['form'] as ContactFormSettings).notification_emails).to.deep.equal(['team@example.com']);

      // Attempts, completion, read flag, a note, erasure, deletion of the form.
      await h.log.append(`contact-notice-attempts-${submissionId}.notification`, [{ type: 'contact-notice.attempt-started', data: { projectId, submissionId, jobId: `${submissionId}.notification`, kind: 'notification', attempt: 1 } }], 'no_stream', actor);
      await h.log.append(`outbox-contact-notices-${submissionId}.notification`, [{ type: 'contact-notice.completed', data: { projectId, submissionId, jobId: `${submissionId}.notification`, kind: 'notification', outcome: 'sent', messageId: `<${submissionId}.notification@example.com>`, detail: null } }], 'no_stream', actor);
      await h.log.append(`contact-submission-${submissionId}`, [
        { type: 'contact-submission.read-changed', data: { projectId, submissionId, read: true } },
        { type: 'contact-submission.note-added', data: { projectId, submissionId, noteId: randomUUID(), sealedText: 'v1.note' } },
      ], 0n, actor);
      h.clock.advance(1000);
      await h.log.append(`contact-submission-${submissionId}`, [{ type: 'contact-submission.erased', data: { projectId, formId, submissionId } }], 2n, actor);
      await h.log.append(`contact-form-${formId}`, [{ type: 'contact-form.deleted', data: { projectId, formId, slug: 'renamed' } }], 1n, actor);
      await h.project();

      const after = await h.doc('submissions', submissionId);
      expect(after).to.deep.include({ read: true, erased: true, erasedAt: '2026-11-22T09:00:03.000Z', sealedValues: null });
      expect((after!['notes'] as Array<{ sealedText: unknown }>)[0]!.sealedText).to.equal(null);
      expect((after!['notices'] as Record<string, unknown>)['notification']).to.deep.include({ status: 'sent', attempts: 1, messageId: `<${submissionId}.notification@example.com>` });
      expect(await h.doc('jobs', `${submissionId}.notification`)).to.deep.include({ status: 'sent', attempts: 1 });
      expect(await h.doc('jobs', `${submissionId}.autoreply`)).to.deep.include({ status: 'pending' });
      expect(await h.doc('forms', formId)).to.deep.include({ deleted: true });
      expect((await h.find('jobs', { filter: { status: 'pending' } })).map((j) => j['jobId'])).to.deep.equal([`${submissionId}.autoreply`]);
    } finally {
      await h.close();
    }
  });
});
