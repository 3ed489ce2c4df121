import type { Logger } from 'pino';
import type { EventLog, PendingEvent } from '../event-store/event-log.ts';
import { NotLeaderError, StreamNotFoundError, UnavailableError, WrongExpectedVersionError } from '../event-store/errors.ts';
import { collect } from '../event-store/event-store.ts';
import type { ReadModelReader } from '../read-models/read-model-reader.ts';
import { ReadModelUnavailableError } from '../read-models/read-model-store.ts';
import type { OutboxDefinition } from '../outbox/outbox-worker.ts';
import type { KeyStore } from '../key-store/key-store.ts';
import type { MailTransport } from '../mail/mail-transport.ts';
import type { SecretBox } from '../security/secret-box.ts';
import { noticeAttemptsStream, noticeAttemptStarted, noticeCompleted } from '../domain/contact-form/contact-form-events.ts';
import type { NoticeJobDoc, SubmissionDoc } from '../../projections/contact-forms.ts';
import type { ProjectDoc } from '../../projections/access.ts';
import { openValues } from './submission-crypto.ts';
import { composeAutoreply, composeChatText, composeNotification, consoleLinkFor, messageIdFor, type NoticeContext } from './notice-messages.ts';
import { openChatUrl } from './contact-form-service.ts';

/** Posts a chat message (the webhook sender: HTTPS only, SSRF guard at check and connect time, timeout). */
export interface ChatPoster {
  send(url: string, body: Buffer, headers: Record<string, string>, signal?: AbortSignal): Promise<{ ok: boolean; status: number | null; error: string | null }>;
}

export interface NoticeOutcome {
  outcome: 'sent' | 'skipped';
  messageId: string | null;
  detail: string | null;
}

/**
 * How many times a notice is handed to the mail server or chat at most. An attempt is recorded in the log
 * (contact-notice.attempt-started) before each try; a try whose outcome was never recorded (the process
 * died between sending and recording) is followed by one more on restart, with the same Message-ID. A
 * notice whose attempts are all used up without a recorded outcome is recorded as failed, not sent again.
 */
export const MAX_NOTICE_ATTEMPTS = 2;

/** A concurrent worker claimed the same attempt: leave the job to it. */
class AttemptClaimedElsewhere extends Error {
  override name = 'AttemptClaimedElsewhere';
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
 * are recorded as skipped. A store that cannot be reached leaves the job pending for a later try.
 */
export function noticeOutbox(deps: NoticeOutboxDeps): OutboxDefinition<NoticeJobDoc & Record<string, unknown>, NoticeOutcome> {
  return {
    name: 'contact-notices',
    projection: 'contact-forms',
    collection: 'jobs',
    idOf: (job) => job.jobId,
    outcomeLabel: (outcome) => outcome.outcome,
    order: [['receivedAt', 'asc']],
    retryLater: (error) =>
      error instanceof AttemptClaimedElsewhere ||
      error instanceof ReadModelUnavailableError ||
      error instanceof UnavailableError ||
      error instanceof NotLeaderError ||
      /^Mongo(Network|ServerSelection|NotConnected)/.test((error as Error)?.name ?? ''),

    async perform(job, signal) {
      if (!job.form) throw new Error('the contact form was unknown when the submission arrived');
      const submission = await deps.reader.get<SubmissionDoc & Record<string, unknown>>('contact-forms', 'submissions', job.submissionId);
      const key = submission && !submission.erased && submission.sealedValues !== null ? await deps.keyStore.get(job.submissionId) : null;
      if (!submission || !key) return { outcome: 'skipped', messageId: null, detail: 'the submission was erased before the notice was sent' };
      const values = openValues(key, job.submissionId, submission.sealedValues!);
      const project = await deps.reader.get<ProjectDoc & Record<string, unknown>>('access', 'projects', job.projectId);
      const context: NoticeContext = {
        formId: job.formId,
        submissionId: job.submissionId,
        receivedAt: job.receivedAt,
        locale: job.locale,
        defaultLocale: project?.contentLocales.defaultLocale ?? job.locale,
        mailFrom: deps.mailFrom,
        consoleLink: consoleLinkFor(deps.consoleBase(), job.formId, job.submissionId),
      };

      // Everything is ready: record the attempt, then hand the notice over.
      await recordAttempt(deps.log, job);
      switch (job.kind) {
        case 'notification':
        case 'autoreply': {
          const message = job.kind === 'notification' ? composeNotification(job.form, values, context) : composeAutoreply(job.form, values, context);
          if (!message) return { outcome: 'skipped', messageId: null, detail: 'the submission holds no address in the autoreply field' };
          if (message.to.length === 0) return { outcome: 'skipped', messageId: null, detail: 'no recipients' };
          const receipt = await deps.mail.send(message);
          const details = [
            receipt.duplicate ? 'already delivered before (same Message-ID); not written again' : null,
            receipt.rejected.length ? `the server refused ${receipt.rejected.length} of ${message.to.length} recipients: ${receipt.rejected.join(', ')}` : null,
          ].filter(Boolean);
          return { outcome: 'sent', messageId: message.messageId, detail: details.length ? details.join('; ') : null };
        }
        case 'chat': {
          if (!job.form.chat_webhook) return { outcome: 'skipped', messageId: null, detail: 'no chat webhook configured' };
          const url = openChatUrl(deps.secrets, job.formId, job.form.chat_webhook);
          const result = await deps.chat.send(url, Buffer.from(JSON.stringify({ text: composeChatText(job.form, context) })), { 'Content-Type': 'application/json' }, signal);
          if (!result.ok) throw new Error(`chat notification failed: ${result.error ?? `HTTP ${result.status}`}`);
          return { outcome: 'sent', messageId: null, detail: result.status === null ? null : `HTTP ${result.status}` };
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

/** Appends the next attempt of a job, or throws when the attempts are used up (recorded as failed). */
async function recordAttempt(log: EventLog, job: NoticeJobDoc): Promise<void> {
  const stream = noticeAttemptsStream(job.jobId);
  let previous: number;
  try {
    previous = (await collect(log.readStream(stream))).length;
  } catch (error) {
    if (!(error instanceof StreamNotFoundError)) throw error;
    previous = 0;
  }
  if (previous >= MAX_NOTICE_ATTEMPTS) {
    throw new Error(`not sent again: ${previous} earlier attempts were interrupted before their outcome was recorded (the message may have been delivered; its Message-ID is the same each time)`);
  }
  try {
    await log.append(stream, [{ type: noticeAttemptStarted.type, data: { projectId: job.projectId, submissionId: job.submissionId, jobId: job.jobId, kind: job.kind, attempt: previous + 1 } }], previous === 0 ? 'no_stream' : BigInt(previous - 1), {
      actor: { type: 'system', id: 'outbox:contact-notices' },
    });
  } catch (error) {
    if (error instanceof WrongExpectedVersionError) throw new AttemptClaimedElsewhere(`attempt ${previous + 1} of ${job.jobId} was claimed by another worker`);
    throw error;
  }
}
