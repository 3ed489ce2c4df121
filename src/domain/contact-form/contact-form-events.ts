import { z } from 'zod';
import { defineEvent } from '../../event-store/event-catalog.ts';
import { contactFieldSchema } from './contact-form-fields.ts';

/**
 * Contact forms, their submissions and the notices each submission asks for.
 *
 * Streams:
 * - `contact-form-{formId}`: created, updated (the full settings after the change), deleted;
 * - `contact-submission-{submissionId}`: received, read-changed, note-added, erased;
 * - `contact-notice-attempts-{jobId}`: one attempt-started per try at sending a notice (at most two);
 * - `outbox-contact-notices-{jobId}`: the notice's completion (sent, failed or skipped), appended by the
 *   outbox worker with the expectation "no stream".
 *
 * Personal data never appears in clear: a submission's values and its internal notes are sealed with the
 * submission's own key (AES-256-GCM, src/contact-forms/submission-crypto.ts), which lives in the key store,
 * outside the log. Erasing a submission destroys that key; the events stay, unreadable, and the erased
 * event records that the submission existed and was erased. A chat webhook URL (a credential) is sealed
 * with SECRETS_KEY.
 */
export const contactFormStream = (formId: string): string => `contact-form-${formId}`;
export const submissionStream = (submissionId: string): string => `contact-submission-${submissionId}`;
export const noticeAttemptsStream = (jobId: string): string => `contact-notice-attempts-${jobId}`;

export const NOTICE_KINDS = ['notification', 'autoreply', 'chat'] as const;
export type NoticeKind = (typeof NOTICE_KINDS)[number];
/** The outbox item of one notice of one submission. */
export const noticeJobId = (submissionId: string, kind: NoticeKind): string => `${submissionId}.${kind}`;

const localizedText = z.record(z.string(), z.string());

export const contactFormSettingsSchema = z.object({
  slug: z.string(),
  name: z.string(),
  notification_emails: z.array(z.string()),
  reply_to_field: z.string().nullable(),
  honeypot_enabled: z.boolean(),
  honeypot_field: z.string(),
  fields: z.array(contactFieldSchema),
  autoreply_enabled: z.boolean(),
  autoreply_to_field: z.string().nullable(),
  autoreply_subject: localizedText,
  autoreply_body: localizedText,
  email_signature: z.string().nullable(),
  hosted_page_enabled: z.boolean(),
  chat_webhook: z.object({ sealedUrl: z.string(), display: z.string() }).nullable(),
});

export const contactFormCreated = defineEvent({
  type: 'contact-form.created',
  version: 1,
  schema: z.object({ projectId: z.uuid(), formId: z.uuid(), version: z.literal(1), settings: contactFormSettingsSchema }),
});

export const contactFormUpdated = defineEvent({
  type: 'contact-form.updated',
  version: 1,
  schema: z.object({
    projectId: z.uuid(),
    formId: z.uuid(),
    version: z.int().min(2),
    /** The full settings after the update. */
    settings: contactFormSettingsSchema,
    /** Names of the settings the update changed, for the audit trail. */
    changed: z.array(z.string()),
  }),
});

export const contactFormDeleted = defineEvent({
  type: 'contact-form.deleted',
  version: 1,
  schema: z.object({ projectId: z.uuid(), formId: z.uuid(), slug: z.string() }),
});

export const submissionReceived = defineEvent({
  type: 'contact-submission.received',
  version: 1,
  schema: z.object({
    projectId: z.uuid(),
    formId: z.uuid(),
    submissionId: z.uuid(),
    /** The form's version the values were checked against. */
    formVersion: z.int().min(1),
    /** The submission's language (autoreply), one of the project's content locales. */
    locale: z.string(),
    /** The submitted values as JSON, sealed with the submission's key. */
    sealedValues: z.string(),
    /** The notices this submission asks for, decided when it arrived. */
    notices: z.array(z.enum(NOTICE_KINDS)),
  }),
});

export const submissionReadChanged = defineEvent({
  type: 'contact-submission.read-changed',
  version: 1,
  schema: z.object({ projectId: z.uuid(), submissionId: z.uuid(), read: z.boolean() }),
});

export const submissionNoteAdded = defineEvent({
  type: 'contact-submission.note-added',
  version: 1,
  schema: z.object({ projectId: z.uuid(), submissionId: z.uuid(), noteId: z.uuid(), sealedText: z.string() }),
});

export const submissionErased = defineEvent({
  type: 'contact-submission.erased',
  version: 1,
  schema: z.object({ projectId: z.uuid(), formId: z.uuid(), submissionId: z.uuid() }),
});

export const noticeAttemptStarted = defineEvent({
  type: 'contact-notice.attempt-started',
  version: 1,
  schema: z.object({ projectId: z.uuid(), submissionId: z.uuid(), jobId: z.string(), kind: z.enum(NOTICE_KINDS), attempt: z.int().min(1) }),
});

export const noticeCompleted = defineEvent({
  type: 'contact-notice.completed',
  version: 1,
  schema: z.object({
    projectId: z.uuid(),
    submissionId: z.uuid(),
    jobId: z.string(),
    kind: z.enum(NOTICE_KINDS),
    /** sent; failed (with the error); skipped (nothing to send: the submission was erased first). */
    outcome: z.enum(['sent', 'failed', 'skipped']),
    /** The Message-ID of a mail notice. */
    messageId: z.string().nullable(),
    /** Why it failed or was skipped; never holds submitted values or credentials. */
    detail: z.string().max(2000).nullable(),
  }),
});

export const contactFormEvents = [
  contactFormCreated,
  contactFormUpdated,
  contactFormDeleted,
  submissionReceived,
  submissionReadChanged,
  submissionNoteAdded,
  submissionErased,
  noticeAttemptStarted,
  noticeCompleted,
];

export type ContactFormSettingsData = z.output<typeof contactFormSettingsSchema>;
export type ContactFormEvent =
  | { type: 'contact-form.created'; data: z.output<typeof contactFormCreated.schema> }
  | { type: 'contact-form.updated'; data: z.output<typeof contactFormUpdated.schema> }
  | { type: 'contact-form.deleted'; data: z.output<typeof contactFormDeleted.schema> };
export type SubmissionEvent =
  | { type: 'contact-submission.received'; data: z.output<typeof submissionReceived.schema> }
  | { type: 'contact-submission.read-changed'; data: z.output<typeof submissionReadChanged.schema> }
  | { type: 'contact-submission.note-added'; data: z.output<typeof submissionNoteAdded.schema> }
  | { type: 'contact-submission.erased'; data: z.output<typeof submissionErased.schema> };
export type NoticeEvent =
  | { type: 'contact-notice.attempt-started'; data: z.output<typeof noticeAttemptStarted.schema> }
  | { type: 'contact-notice.completed'; data: z.output<typeof noticeCompleted.schema> };
