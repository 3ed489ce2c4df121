import type { Logger } from 'pino';
import type { EventLog, PendingEvent } from '../event-store/event-log.ts';
import type { ReadModelReader } from '../read-models/read-model-reader.ts';
import type { OutboxDefinition } from '../outbox/outbox-worker.ts';
import { noticeRetryLater, postChatNotice, recordNoticeAttempt, sendNoticeMail, type ChatPoster } from '../outbox/notice-attempts.ts';
import type { KeyStore } from '../key-store/key-store.ts';
import type { MailTransport } from '../mail/mail-transport.ts';
import type { SecretBox } from '../security/secret-box.ts';
import { noticeAttemptsStream, noticeAttemptStarted, noticeCompleted } from '../domain/contact-form/contact-form-events.ts';
import type { NoticeJobDoc } from '../../projections/contact-forms.ts';
import { openValues } from './submission-crypto.ts';
import { composeAutoreply, composeChatText, composeNotification, consoleLinkFor, messageIdFor, type NoticeContext } from './notice-messages.ts';
import { openChatUrl } from './contact-form-service.ts';
import { contactFormQueries, CONTACT_FORM_LISTS } from '../../projections/contact-forms-queries.ts';
import { accessQueries } from '../../projections/access-queries.ts';

export interface NoticeOutcome {
  outcome: 'sent' | 'skipped';
  messageId: string | null;
  detail: string | null;
}

export interface NoticeOutboxDeps {
  log: EventLog;
  reader: ReadModelReader;
  keyStore: KeyStore;
  mail: MailTransport;
  chat: ChatPoster;
  /** Opens chat webhook URLs (SECRETS_KEY). */
  secrets: SecretBox;
  mailFrom: string;
  /** Base of the console links in notices. */
  consoleBase: () => string;
  logger: Logger;
}

/**
 * The outbox of contact-form notices (projections/contact-forms.ts `jobs`), performed by the generic
 * OutboxWorker: the notification, the autoreply and the chat post of each submission, each completed by
 * one contact-notice.completed event on its own stream. Values are opened with the submission's key only
 * here, at send time; a submission erased before its notices went out has no key any more: its notices
 * are recorded as skipped. A store that cannot be reached leaves the job pending for a later try. Each hand-over
 * is recorded first (contact-notice.attempt-started, see src/outbox/notice-attempts.ts).
 */
export function noticeOutbox(deps: NoticeOutboxDeps): OutboxDefinition<NoticeJobDoc & Record<string, unknown>, NoticeOutcome> {
  const accessModel = accessQueries(deps.reader);
  const contactModel = contactFormQueries(deps.reader);
  return {
    name: 'contact-notices',
    ...CONTACT_FORM_LISTS.jobs,
    idOf: (job) => job.jobId,
    outcomeLabel: (outcome) => outcome.outcome,
    order: [['receivedAt', 'asc']],
    retryLater: noticeRetryLater,

    async perform(job, signal) {
      if (!job.form) throw new Error('the contact form was unknown when the submission arrived');
      const submission = await contactModel.submission(job.submissionId);
      const key = submission && !submission.erased && submission.sealedValues !== null ? await deps.keyStore.get(job.submissionId) : null;
      if (!submission || !key) return { outcome: 'skipped', messageId: null, detail: 'the submission was erased before the notice was sent' };
      const values = openValues(key, job.submissionId, submission.sealedValues!);
      const project = await accessModel.project(job.projectId);
      const context: NoticeContext = {
        formId: job.formId,
        submissionId: job.submissionId,
        receivedAt: job.receivedAt,
        locale: job.locale,
        defaultLocale: project?.contentLocales.defaultLocale ?? job.locale,
        mailFrom: deps.mailFrom,
        consoleLink: consoleLinkFor(deps.consoleBase(), job.projectId, job.formId, job.submissionId),
      };

      // Everything is ready: record the attempt, then hand the notice over.
      await recordNoticeAttempt(
        deps.log,
        noticeAttemptsStream(job.jobId),
        (attempt) => ({ type: noticeAttemptStarted.type, data: { projectId: job.projectId, submissionId: job.submissionId, jobId: job.jobId, kind: job.kind, attempt } }),
        'outbox:contact-notices',
      );
      switch (job.kind) {
        case 'notification':
        case 'autoreply': {
          const message = job.kind === 'notification' ? composeNotification(job.form, values, context) : composeAutoreply(job.form, values, context);
          if (!message) return { outcome: 'skipped', messageId: null, detail: 'the submission holds no address in the autoreply field' };
          if (message.to.length === 0) return { outcome: 'skipped', messageId: null, detail: 'no recipients' };
          return { outcome: 'sent', messageId: message.messageId, detail: await sendNoticeMail(deps.mail, message) };
        }
        case 'chat': {
          if (!job.form.chat_webhook) return { outcome: 'skipped', messageId: null, detail: 'no chat webhook configured' };
          const url = openChatUrl(deps.secrets, job.formId, job.form.chat_webhook);
          return { outcome: 'sent', messageId: null, detail: await postChatNotice(deps.chat, url, composeChatText(job.form, context), signal) };
        }
      }
    },

    completion(job, result): PendingEvent {
      const base = { projectId: job.projectId, submissionId: job.submissionId, jobId: job.jobId, kind: job.kind };
      if (result.ok) return { type: noticeCompleted.type, data: { ...base, outcome: result.outcome.outcome, messageId: result.outcome.messageId, detail: result.outcome.detail } };
      const messageId = job.kind === 'chat' ? null : messageIdFor(job.submissionId, job.kind, deps.mailFrom);
      return { type: noticeCompleted.type, data: { ...base, outcome: 'failed', messageId, detail: result.error.slice(0, 2000) } };
    },
  };
}
