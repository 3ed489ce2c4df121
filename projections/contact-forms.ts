import { defineProjection, type ProjectionView } from '../src/projection-engine/projection.ts';
import { contactFormEvents, noticeJobId, type ContactFormEvent, type NoticeEvent, type NoticeKind, type SubmissionEvent } from '../src/domain/contact-form/contact-form-events.ts';
import type { ContactFormSettings } from '../src/domain/contact-form/contact-form-settings.ts';
import type { Doc } from '../src/read-models/read-model-store.ts';

/**
 * Contact forms, their submissions, and the notices (e-mails, chat posts) the submissions ask for.
 *
 * Collections (times are event times):
 * - `forms`, id formId: the settings (the chat URL sealed), version, `deleted` (a deleted form keeps its
 *   document so its submissions stay filed; every lookup by slug skips it).
 * - `submissions`, id submissionId: the form, time, locale, read flag, the values still sealed
 *   (`sealedValues`; null once erased), the internal notes sealed the same way, and the state of each
 *   notice. Values are never decrypted here: a projection does no I/O and must come out the same on every
 *   rebuild, while a key can be destroyed at any time. The admin API opens them at read time with the key
 *   store (src/contact-forms/submission-service.ts), so an erased submission reads `values: null` from
 *   this read model, from any rebuild of it, and from the log itself.
 * - `jobs`, id `{submissionId}.{kind}`: the outbox of notices (src/contact-forms/notice-outbox.ts). Each job
 *   carries the form's settings as they were when the submission arrived (recipients, texts, fields), so a
 *   later change of the form does not change a notice that was due. Status pending until its completion
 *   event (sent, failed, skipped) is folded: a rebuild arrives at the same statuses and sends nothing again.
 */
export interface ContactFormDoc {
  formId: string;
  projectId: string;
  slug: string;
  settings: ContactFormSettings;
  version: number;
  deleted: boolean;
  createdAt: string;
  updatedAt: string;
}

export type NoticeStatus = 'pending' | 'sent' | 'failed' | 'skipped';

export interface NoticeState {
  status: NoticeStatus;
  attempts: number;
  messageId: string | null;
  detail: string | null;
  completedAt: string | null;
}

export interface SubmissionDoc {
  submissionId: string;
  projectId: string;
  formId: string;
  formVersion: number;
  locale: string;
  receivedAt: string;
  read: boolean;
  erased: boolean;
  erasedAt: string | null;
  sealedValues: string | null;
  notes: Array<{ noteId: string; sealedText: string | null; addedAt: string; actor: { type: string; id: string } }>;
  notices: Partial<Record<NoticeKind, NoticeState>>;
}

export interface NoticeJobDoc {
  jobId: string;
  submissionId: string;
  projectId: string;
  formId: string;
  kind: NoticeKind;
  status: NoticeStatus;
  attempts: number;
  locale: string;
  receivedAt: string;
  /** The form's settings when the submission arrived; null if the form was unknown (the job then fails). */
  form: ContactFormSettings | null;
}


export const contactForms = defineProjection({
  name: 'contact-forms',
  version: 1,
  description: 'Contact forms, their submissions (values sealed) and the outbox of notification, autoreply and chat notices.',
  collections: {
    forms: { indexes: [{ name: 'by_project_slug', fields: [['projectId', 1], ['slug', 1]] }] },
    submissions: {
      indexes: [
        { name: 'by_form_time', fields: [['formId', 1], ['receivedAt', -1]] },
        { name: 'by_form_read_time', fields: [['formId', 1], ['read', 1], ['receivedAt', -1]] },
        { name: 'by_project_time', fields: [['projectId', 1], ['receivedAt', -1]] },
      ],
    },
    jobs: { indexes: [{ name: 'by_status', fields: [['status', 1], ['receivedAt', 1]] }] },
  },
  filter: { eventTypes: contactFormEvents.map((d) => d.type) },

  async apply(recorded, view) {
    const at = recorded.metadata.occurredAt;
    const event = { type: recorded.type, data: recorded.data } as ContactFormEvent | SubmissionEvent | NoticeEvent;
    switch (event.type) {
      case 'contact-form.created': {
        const d = event.data;
        const doc: ContactFormDoc = { formId: d.formId, projectId: d.projectId, slug: d.settings.slug, settings: d.settings as ContactFormSettings, version: 1, deleted: false, createdAt: at, updatedAt: at };
        view.put('forms', d.formId, { ...doc });
        return;
      }
      case 'contact-form.updated': {
        const d = event.data;
        const current = await view.get<Doc<ContactFormDoc>>('forms', d.formId);
        if (!current) return;
        view.put('forms', d.formId, { ...current, slug: d.settings.slug, settings: d.settings, version: d.version, updatedAt: at });
        return;
      }
      case 'contact-form.deleted': {
        const current = await view.get<Doc<ContactFormDoc>>('forms', event.data.formId);
        if (!current) return;
        view.put('forms', event.data.formId, { ...current, deleted: true, updatedAt: at });
        return;
      }
      case 'contact-submission.received': {
        const d = event.data;
        const form = await view.get<Doc<ContactFormDoc>>('forms', d.formId);
        const notices: SubmissionDoc['notices'] = {};
        for (const kind of d.notices) {
          notices[kind] = { status: 'pending', attempts: 0, messageId: null, detail: null, completedAt: null };
          const job: NoticeJobDoc = {
            jobId: noticeJobId(d.submissionId, kind),
            submissionId: d.submissionId,
            projectId: d.projectId,
            formId: d.formId,
            kind,
            status: 'pending',
            attempts: 0,
            locale: d.locale,
            receivedAt: at,
            form: form ? form.settings : null,
          };
          view.put('jobs', job.jobId, { ...job });
        }
        const doc: SubmissionDoc = {
          submissionId: d.submissionId,
          projectId: d.projectId,
          formId: d.formId,
          formVersion: d.formVersion,
          locale: d.locale,
          receivedAt: at,
          read: false,
          erased: false,
          erasedAt: null,
          sealedValues: d.sealedValues,
          notes: [],
          notices,
        };
        view.put('submissions', d.submissionId, { ...doc });
        return;
      }
      case 'contact-submission.read-changed': {
        const current = await view.get<Doc<SubmissionDoc>>('submissions', event.data.submissionId);
        if (current) view.put('submissions', current.submissionId, { ...current, read: event.data.read });
        return;
      }
      case 'contact-submission.note-added': {
        const current = await view.get<Doc<SubmissionDoc>>('submissions', event.data.submissionId);
        if (!current || current.notes.some((n) => n.noteId === event.data.noteId)) return;
        const note = { noteId: event.data.noteId, sealedText: current.erased ? null : event.data.sealedText, addedAt: at, actor: recorded.metadata.actor };
        view.put('submissions', current.submissionId, { ...current, notes: [...current.notes, note] });
        return;
      }
      case 'contact-submission.erased': {
        const current = await view.get<Doc<SubmissionDoc>>('submissions', event.data.submissionId);
        if (!current) return;
        view.put('submissions', current.submissionId, {
          ...current,
          erased: true,
          erasedAt: current.erasedAt ?? at,
          sealedValues: null,
          notes: current.notes.map((n) => ({ ...n, sealedText: null })),
        });
        return;
      }
      case 'contact-notice.attempt-started': {
        const d = event.data;
        const job = await view.get<Doc<NoticeJobDoc>>('jobs', d.jobId);
        if (job) view.put('jobs', d.jobId, { ...job, attempts: Math.max(job.attempts, d.attempt) });
        await updateNotice(view, d.submissionId, d.kind, (n) => ({ ...n, attempts: Math.max(n.attempts, d.attempt) }));
        return;
      }
      case 'contact-notice.completed': {
        const d = event.data;
        const job = await view.get<Doc<NoticeJobDoc>>('jobs', d.jobId);
        if (job) view.put('jobs', d.jobId, { ...job, status: d.outcome });
        await updateNotice(view, d.submissionId, d.kind, (n) => ({ ...n, status: d.outcome, messageId: d.messageId, detail: d.detail, completedAt: at }));
        return;
      }
    }
  },
});

async function updateNotice(
  view: ProjectionView,
  submissionId: string,
  kind: NoticeKind,
  change: (notice: NoticeState) => NoticeState,
): Promise<void> {
  const current = await view.get<Doc<SubmissionDoc>>('submissions', submissionId);
  if (!current) return;
  const notice = current.notices[kind] ?? { status: 'pending', attempts: 0, messageId: null, detail: null, completedAt: null };
  view.put('submissions', submissionId, { ...current, notices: { ...current.notices, [kind]: change(notice) } });
}
