import { z } from 'zod';
import { defineEvent } from '../../event-store/event-catalog.ts';

/**
 * Review notices: e-mails (and optional chat posts) telling people about the review workflow. One notice
 * per workflow event and channel, performed by an outbox (src/review-notices/review-notice-outbox.ts):
 *
 * - submitted (entry.revision-submitted): to the project's tenant_admins, not the submitter;
 * - approved (entry.revision-published by approve), scheduled (entry.revision-approved), rejected
 *   (entry.revision-rejected, with the reason), published (entry.revision-published by publish or by the
 *   scheduled job): to the revision's author (who saved it; the submitter when an agent key saved it),
 *   unless the author did it themselves; no e-mail notice is queued when the author is not a console user
 *   or did it themselves (unreachableMailNotice);
 * - policy-changed (project.approval-policy-changed): to every tenant_admin of the project's tenant, the one who
 *   changed it included, whatever their notice preference (the point is that nobody changes the policy unseen).
 *
 * Streams:
 * - `review-notices`: review-notices.started, once: notices are due for workflow events after it only, so a
 *   log that existed before review notices does not send one for every old event when it is upgraded;
 * - `review-notices-policy-changes`: review-notices.policy-changes-started, once: the same for policy changes,
 *   notified from the first start of a version that notifies them;
 * - `review-notice-attempts-{jobId}`: one attempt-started before each hand-over (at most two);
 * - `outbox-review-notices-{jobId}`: the notice's completion (sent, failed, skipped).
 */
export const REVIEW_NOTICES_STREAM = 'review-notices';
export const reviewNoticeAttemptsStream = (jobId: string): string => `review-notice-attempts-${jobId}`;

export const REVIEW_NOTICES_POLICY_CHANGES_STREAM = 'review-notices-policy-changes';

export const REVIEW_NOTICE_KINDS = ['submitted', 'approved', 'scheduled', 'rejected', 'published', 'policy-changed'] as const;
export type ReviewNoticeKind = (typeof REVIEW_NOTICE_KINDS)[number];
export const REVIEW_NOTICE_CHANNELS = ['mail', 'chat'] as const;
export type ReviewNoticeChannel = (typeof REVIEW_NOTICE_CHANNELS)[number];

/** Who acted or wrote a revision: a console user, an agent key, an operator, the system, a public caller. */
export interface NoticeActor {
  type: string;
  id: string;
}

/** Who else than a console user can have saved a revision, as unreachableMailNotice names them. */
const AUTHOR_KINDS: Record<string, string> = { agent: 'an agent key', operator: 'an operator', system: 'the system', public: 'a public caller' };

/**
 * Why an e-mail notice of `kind` can reach nobody, known from the workflow event alone; null when it may
 * reach someone (who exactly is read when it is sent: opt-outs, disabled accounts, the tenant_admins). An
 * author-directed notice (every kind but submitted) goes to the revision's author, who must be a console user
 * other than the one who acted. Such a notice is not queued at all: it would cost an outbox item, its
 * completion event and stream in the log, and their audit records, to tell nobody.
 */
export function unreachableMailNotice(kind: ReviewNoticeKind, actor: NoticeActor, author: NoticeActor): string | null {
  if (kind === 'submitted' || kind === 'policy-changed') return null;
  if (author.type !== 'user') return `the author is ${AUTHOR_KINDS[author.type] ?? `a ${author.type}`}, not a console user`;
  if (actor.type === author.type && actor.id === author.id) return 'the author did it themselves';
  return null;
}

/** The outbox item of one notice: the workflow event it tells about, and the channel. */
export const reviewNoticeJobId = (eventId: string, channel: ReviewNoticeChannel): string => `${eventId}.${channel}`;

const scope = { projectId: z.uuid(), jobId: z.string().min(1).max(100), kind: z.enum(REVIEW_NOTICE_KINDS), channel: z.enum(REVIEW_NOTICE_CHANNELS) };

/** Review notices begin: workflow events after this one are notified. Appended once, at the first start. */
export const reviewNoticesStarted = defineEvent({
  type: 'review-notices.started',
  version: 1,
  schema: z.object({}),
});

/** Policy changes begin to be notified: changes after this one are. Appended once, at the first start of a version that notifies them. */
export const reviewNoticesPolicyChangesStarted = defineEvent({
  type: 'review-notices.policy-changes-started',
  version: 1,
  schema: z.object({}),
});

export const reviewNoticeAttemptStarted = defineEvent({
  type: 'review-notice.attempt-started',
  version: 1,
  schema: z.object({ ...scope, attempt: z.int().min(1) }),
});

export const reviewNoticeCompleted = defineEvent({
  type: 'review-notice.completed',
  version: 1,
  schema: z.object({
    ...scope,
    /** sent; failed (with the error); skipped (nobody to tell when it was due: every recipient opted out, the author's account is disabled). */
    outcome: z.enum(['sent', 'failed', 'skipped']),
    /** The Message-ID of an e-mail. */
    messageId: z.string().nullable(),
    /** How many addresses the e-mail went to. */
    recipients: z.int().min(0),
    detail: z.string().max(2000).nullable(),
  }),
});

export const reviewNoticeEvents = [reviewNoticesStarted, reviewNoticesPolicyChangesStarted, reviewNoticeAttemptStarted, reviewNoticeCompleted];

export type ReviewNoticeEvent =
  | { type: 'review-notices.started'; data: z.output<typeof reviewNoticesStarted.schema> }
  | { type: 'review-notices.policy-changes-started'; data: z.output<typeof reviewNoticesPolicyChangesStarted.schema> }
  | { type: 'review-notice.attempt-started'; data: z.output<typeof reviewNoticeAttemptStarted.schema> }
  | { type: 'review-notice.completed'; data: z.output<typeof reviewNoticeCompleted.schema> };
