import { grantsAllow } from '../domain/capabilities.ts';
import { grantsOfMember } from '../domain/access/custom-roles.ts';
import type { EventLog, PendingEvent } from '../event-store/event-log.ts';
import type { ReadModelReader } from '../read-models/read-model-reader.ts';
import type { OutboxDefinition } from '../outbox/outbox-worker.ts';
import { noticeRetryLater, postChatNotice, recordNoticeAttempt, sendNoticeMail, type ChatPoster } from '../outbox/notice-attempts.ts';
import type { MailTransport } from '../mail/mail-transport.ts';
import type { SecretBox } from '../security/secret-box.ts';
import { reviewNoticeAttemptsStream, reviewNoticeAttemptStarted, reviewNoticeCompleted } from '../domain/review-notice/review-notice-events.ts';
import type { UserDoc } from '../../projections/access.ts';
import { reviewQueue, type PolicyNoticeDoc, type ReviewNoticeDoc, type WorkflowNoticeDoc } from '../../projections/review-queue.ts';
import {
  auditLogConsoleLinkFor,
  composePolicyChatText,
  composePolicyMail,
  composeReviewChatText,
  composeReviewMail,
  reviewConsoleLinkFor,
  reviewMessageIdFor,
  type ReviewNoticeFacts,
} from './review-notice-messages.ts';
import type { MailMessage } from '../mail/mail-transport.ts';
import { openReviewChatUrl } from './review-chat-url.ts';
import { reviewQueueQueries, REVIEW_QUEUE_LISTS } from '../../projections/review-queue-queries.ts';
import { accessQueries } from '../../projections/access-queries.ts';
import type { Doc } from '../read-models/read-model-store.ts';

export interface ReviewNoticeOutcome {
  outcome: 'sent' | 'skipped';
  messageId: string | null;
  recipients: number;
  detail: string | null;
}

export interface ReviewNoticeOutboxDeps {
  log: EventLog;
  reader: ReadModelReader;
  mail: MailTransport;
  chat: ChatPoster;
  /** Opens the review chat webhook URL (SECRETS_KEY). */
  secrets: SecretBox;
  mailFrom: string;
  /** The web console's base URL (CONSOLE_URL, default the service's /console): notices link its review page. */
  consoleBase: () => string;
}

type Actor = { type: string; id: string };

/**
 * The outbox of review notices (projections/review-queue.ts `notices`), performed by the generic
 * OutboxWorker exactly as contact-form notices are: each hand-over recorded first (review-notice.attempt-
 * started, at most two, the same Message-ID each time), each notice completed by one review-notice.completed
 * on its own stream. Recipients are read when the notice is sent (the access read model): who is a
 * tenant_admin, who opted out, addresses. Nobody gets a notice about their own workflow action (such a notice
 * is not even queued: unreachableMailNotice). A change of the approval policy goes to every tenant_admin of the
 * tenant who is not disabled, the one who made it included and whatever their notice preference: nobody changes
 * the policy unseen.
 */
export function reviewNoticeOutbox(deps: ReviewNoticeOutboxDeps): OutboxDefinition<Doc<ReviewNoticeDoc>, ReviewNoticeOutcome> {
  const access = accessQueries(deps.reader);
  const reviewQueueModel = reviewQueueQueries(deps.reader);
  const user = (id: string) => access.user(id);
  const nameOf = async (actor: Actor): Promise<string> => {
    if (actor.type === 'user') return (await user(actor.id))?.email ?? `user ${actor.id}`;
    if (actor.type === 'agent') return `agent key "${(await access.agentKeyById(actor.id))?.name ?? actor.id}"`;
    if (actor.type === 'system') return 'the scheduled publisher';
    return `${actor.type} ${actor.id}`;
  };

  const tenantAdmins = async (projectId: string): Promise<Array<Doc<UserDoc>> | null> => {
    const project = await access.project(projectId);
    if (!project) return null;
    const users = await access.usersOfTenant(project.tenantId);
    return users.filter((u) => u.role === 'tenant_admin' && !u.disabled);
  };

  /** Who may approve a revision of the form set: tenant_admins, and members of a custom role that may there. */
  const reviewers = async (projectId: string, formSetId: string): Promise<Array<Doc<UserDoc>> | null> => {
    const project = await access.project(projectId);
    if (!project) return null;
    const [users, tenant] = await Promise.all([access.usersOfTenant(project.tenantId), access.tenant(project.tenantId)]);
    const roles = new Map((tenant?.roles ?? []).map((role) => [role.roleId, role]));
    return users.filter((u) => {
      if (u.disabled) return false;
      return grantsAllow(grantsOfMember(u, (roleId) => roles.get(roleId)), 'content.approve', formSetId);
    });
  };

  /** The addresses a notice goes to, or why it goes to nobody. */
  async function recipients(notice: ReviewNoticeDoc): Promise<{ to: string[] } | { none: string }> {
    if (notice.kind === 'policy-changed') {
      const admins = await tenantAdmins(notice.projectId);
      if (!admins) return { none: 'the project is gone' };
      return admins.length ? { to: admins.map((u) => u.email) } : { none: 'no tenant_admin to tell (every one is disabled)' };
    }
    if (notice.kind === 'submitted') {
      const approvers = await reviewers(notice.projectId, notice.formSetId);
      if (!approvers) return { none: 'the project is gone' };
      const to = approvers.filter((u) => u.reviewNotices !== false && !(notice.submittedBy.type === 'user' && notice.submittedBy.id === u.userId)).map((u) => u.email);
      return to.length ? { to } : { none: 'nobody who may approve it to tell (every one opted out, is disabled, or submitted it)' };
    }
    // The projection queues no author notice that can reach nobody (unreachableMailNotice): the author is a console user other than the actor.
    const doc = await user(notice.author.id);
    if (!doc || doc.disabled) return { none: 'the author\'s account is gone or disabled' };
    if (doc.reviewNotices === false) return { none: 'the author opted out of review notices' };
    return { to: [doc.email] };
  }

  /** What a notice of a workflow event says, by e-mail and in chat. */
  async function workflowMessages(notice: WorkflowNoticeDoc): Promise<{ mail(to: string[]): MailMessage; chat(): string }> {
    const facts: ReviewNoticeFacts = {
      eventId: notice.eventId,
      kind: notice.kind,
      title: notice.title,
      formSetName: notice.formSetName,
      entrySlug: notice.entrySlug,
      revision: notice.revision,
      actorName: await nameOf(notice.actor),
      submitterName: await nameOf(notice.submittedBy),
      reason: notice.reason,
      publishAt: notice.publishAt,
      occurredAt: notice.occurredAt,
      consoleLink: reviewConsoleLinkFor(deps.consoleBase(), notice.projectId, notice.revisionId),
    };
    return { mail: (to) => composeReviewMail(facts, to, deps.mailFrom), chat: () => composeReviewChatText(facts) };
  }

  /** What a notice of a policy change says. */
  async function policyMessages(notice: PolicyNoticeDoc): Promise<{ mail(to: string[]): MailMessage; chat(): string }> {
    const project = await access.project(notice.projectId);
    const facts = {
      eventId: notice.eventId,
      projectName: project?.name ?? notice.projectId,
      actorName: await nameOf(notice.actor),
      policy: notice.policy,
      previous: notice.previous,
      occurredAt: notice.occurredAt,
      consoleLink: auditLogConsoleLinkFor(deps.consoleBase(), notice.projectId),
    };
    return { mail: (to) => composePolicyMail(facts, to, deps.mailFrom), chat: () => composePolicyChatText(facts) };
  }

  return {
    name: 'review-notices',
    ...REVIEW_QUEUE_LISTS.notices,
    // An upgrade from a version without notices rebuilds review-queue in the background: wait for it.
    projectionVersion: reviewQueue.version,
    idOf: (notice) => notice.jobId,
    outcomeLabel: (outcome) => outcome.outcome,
    order: [['occurredAt', 'asc']],
    retryLater: noticeRetryLater,

    async perform(notice, signal) {
      const compose = notice.kind === 'policy-changed' ? await policyMessages(notice) : await workflowMessages(notice);
      let chatUrl: string | null = null;
      let to: string[] = [];
      if (notice.channel === 'chat') {
        const settings = await reviewQueueModel.noticeProject(notice.projectId);
        if (!settings?.chat) return { outcome: 'skipped', messageId: null, recipients: 0, detail: 'the review chat webhook was removed before the notice was sent' };
        chatUrl = openReviewChatUrl(deps.secrets, notice.projectId, settings.chat);
      } else {
        const who = await recipients(notice);
        if ('none' in who) return { outcome: 'skipped', messageId: null, recipients: 0, detail: who.none };
        to = who.to;
      }

      // Everything is ready: record the attempt, then hand the notice over.
      await recordNoticeAttempt(
        deps.log,
        reviewNoticeAttemptsStream(notice.jobId),
        (attempt): PendingEvent => ({ type: reviewNoticeAttemptStarted.type, data: { projectId: notice.projectId, jobId: notice.jobId, kind: notice.kind, channel: notice.channel, attempt } }),
        'outbox:review-notices',
      );
      if (chatUrl !== null) {
        return { outcome: 'sent', messageId: null, recipients: 0, detail: await postChatNotice(deps.chat, chatUrl, compose.chat(), signal) };
      }
      const message = compose.mail(to);
      return { outcome: 'sent', messageId: message.messageId, recipients: to.length, detail: await sendNoticeMail(deps.mail, message) };
    },

    completion(notice, result): PendingEvent {
      const base = { projectId: notice.projectId, jobId: notice.jobId, kind: notice.kind, channel: notice.channel };
      if (result.ok) return { type: reviewNoticeCompleted.type, data: { ...base, ...result.outcome } };
      const messageId = notice.channel === 'mail' ? reviewMessageIdFor(notice.eventId, notice.kind, deps.mailFrom) : null;
      return { type: reviewNoticeCompleted.type, data: { ...base, outcome: 'failed', messageId, recipients: 0, detail: result.error.slice(0, 2000) } };
    },
  };
}
