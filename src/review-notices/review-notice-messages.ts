import type { MailMessage } from '../mail/mail-transport.ts';
import { mailDomain } from '../contact-forms/notice-messages.ts';
import { escapeHtml } from '../html-escape.ts';
import type { ReviewNoticeKind } from '../domain/review-notice/review-notice-events.ts';
import type { ApprovalPolicy } from '../domain/access/project-decider.ts';

/**
 * The texts of review notices. Pure: everything comes in the arguments. No field values beyond the entry's
 * title (the notice goes to people who may read the revision anyway, but mailboxes and chat channels are
 * read more widely than the console). The Message-ID is fixed per workflow event, so a notice sent again
 * after a crash is recognisably the same message.
 */
export interface ReviewNoticeFacts {
  eventId: string;
  kind: Exclude<ReviewNoticeKind, 'policy-changed'>;
  title: string;
  formSetName: string | null;
  entrySlug: string;
  revision: number;
  /** Who did it, as people know them: an e-mail address, "agent key NAME", "the scheduled publisher". */
  actorName: string;
  submitterName: string;
  reason: string | null;
  publishAt: string | null;
  occurredAt: string;
  /** The revision's review in the console: {console base}/p/{projectId}/review/{revisionId}. */
  consoleLink: string;
}

export function reviewMessageIdFor(eventId: string, kind: ReviewNoticeKind, mailFrom: string): string {
  return `<${eventId}.review-${kind}@${mailDomain(mailFrom)}>`;
}

/** The console page that reviews a revision (compared with the live one), after sign-in: console/src/app.tsx routes /p/:projectId/review/:revisionId. */
export function reviewConsoleLinkFor(consoleBase: string, projectId: string, revisionId: string): string {
  return `${consoleBase.replace(/\/+$/, '')}/p/${encodeURIComponent(projectId)}/review/${encodeURIComponent(revisionId)}`;
}

/** The subject line, also the chat text's first words. */
function headline(facts: ReviewNoticeFacts): string {
  const what = `"${facts.title || facts.entrySlug}"`;
  switch (facts.kind) {
    case 'submitted':
      return `Review requested: ${what}`;
    case 'approved':
      return `Approved and published: ${what}`;
    case 'scheduled':
      return `Approved, scheduled for ${facts.publishAt}: ${what}`;
    case 'rejected':
      return `Rejected: ${what}`;
    case 'published':
      return `Published: ${what}`;
  }
}

function sentence(facts: ReviewNoticeFacts): string {
  const revision = `Revision ${facts.revision} of "${facts.title || facts.entrySlug}"`;
  switch (facts.kind) {
    case 'submitted':
      return `${revision} was submitted for review by ${facts.submitterName}.`;
    case 'approved':
      return `${revision} was approved and published by ${facts.actorName}.`;
    case 'scheduled':
      return `${revision} was approved by ${facts.actorName} and will be published at ${facts.publishAt}.`;
    case 'rejected':
      return `${revision} was rejected by ${facts.actorName}.`;
    case 'published':
      return `${revision} was published by ${facts.actorName}.`;
  }
}

export function composeReviewMail(facts: ReviewNoticeFacts, to: string[], mailFrom: string): MailMessage {
  const rows: Array<[string, string]> = [
    ['Entry', facts.title || '(untitled)'],
    ['Form set', facts.formSetName ?? '(deleted form set)'],
    ['Slug', facts.entrySlug],
    ['Revision', String(facts.revision)],
    ['Submitted by', facts.submitterName],
    ...(facts.kind === 'submitted' ? [] : ([['By', facts.actorName]] as Array<[string, string]>)),
    ...(facts.publishAt && facts.kind === 'scheduled' ? ([['Publish at', facts.publishAt]] as Array<[string, string]>) : []),
    ...(facts.kind === 'rejected' ? ([['Reason', facts.reason ?? '(no reason given)']] as Array<[string, string]>) : []),
    ['When', facts.occurredAt],
  ];
  const action = facts.kind === 'submitted' ? 'Review it in the console' : 'Open it in the console';
  const text = [sentence(facts), '', ...rows.map(([label, value]) => `${label}: ${value}`), '', `${action}: ${facts.consoleLink}`, ''].join('\n');
  const html = [
    '<!doctype html>',
    `<html><head><meta charset="utf-8"><title>${escapeHtml(headline(facts))}</title></head>`,
    '<body>',
    `<p>${escapeHtml(sentence(facts))}</p>`,
    '<table cellpadding="6" style="border-collapse:collapse">',
    ...rows.map(([label, value]) => `<tr><th align="left" valign="top">${escapeHtml(label)}</th><td>${escapeHtml(value).replace(/\r?\n/g, '<br>')}</td></tr>`),
    '</table>',
    `<p><a href="${escapeHtml(facts.consoleLink)}">${escapeHtml(action)}</a></p>`,
    '</body></html>',
    '',
  ].join('\n');
  return {
    messageId: reviewMessageIdFor(facts.eventId, facts.kind, mailFrom),
    from: mailFrom,
    to,
    subject: headline(facts).replace(/[\r\n]+/g, ' ').slice(0, 300),
    text,
    html,
    date: new Date(facts.occurredAt),
    headers: { 'X-Review-Notice': facts.kind, 'Auto-Submitted': 'auto-generated' },
  };
}

/** A change of the project's approval policy, as a notice tells it. */
export interface PolicyNoticeFacts {
  eventId: string;
  projectName: string;
  /** Who changed it, as people know them (an e-mail address; an operator by name). */
  actorName: string;
  policy: ApprovalPolicy;
  previous: ApprovalPolicy;
  occurredAt: string;
  /** The project's audit log in the console. */
  consoleLink: string;
}

const RULE_WORDS: Readonly<Record<keyof ApprovalPolicy, string>> = {
  humanApproval: 'humanApproval (a person approves and publishes; agent keys may not, nor change live content)',
  fourEyes: 'fourEyes (whoever approves or publishes a revision is another person than its author and submitter)',
};

/** "fourEyes turned off, humanApproval turned on" (or "unchanged"). */
function policyChange(facts: PolicyNoticeFacts): string {
  const changes = (['humanApproval', 'fourEyes'] as const).filter((rule) => facts.policy[rule] !== facts.previous[rule]).map((rule) => `${rule} turned ${facts.policy[rule] ? 'on' : 'off'}`);
  return changes.length > 0 ? changes.join(', ') : 'unchanged';
}

/** The e-mail to every tenant_admin when the approval policy changes: what changed, who, when, and the audit log. */
export function composePolicyMail(facts: PolicyNoticeFacts, to: string[], mailFrom: string): MailMessage {
  const subject = `Approval policy changed in "${facts.projectName}": ${policyChange(facts)}`;
  const sentence = `The approval policy of "${facts.projectName}" was changed by ${facts.actorName}: ${policyChange(facts)}.`;
  const relaxed = (['humanApproval', 'fourEyes'] as const).filter((rule) => facts.previous[rule] && !facts.policy[rule]);
  const rows: Array<[string, string]> = [
    ...(['humanApproval', 'fourEyes'] as const).map((rule): [string, string] => [RULE_WORDS[rule], `${facts.policy[rule] ? 'on' : 'off'}${facts.policy[rule] === facts.previous[rule] ? ' (unchanged)' : ` (was ${facts.previous[rule] ? 'on' : 'off'})`}`]),
    ['By', facts.actorName],
    ['When', facts.occurredAt],
  ];
  const note = relaxed.length > 0 ? `While ${relaxed.join(' and ')} ${relaxed.length > 1 ? 'are' : 'is'} off, every approval ${relaxed.length > 1 ? 'they' : 'it'} would have refused is flagged in the audit log.` : null;
  const action = 'See the audit log';
  const text = [sentence, '', ...rows.map(([label, value]) => `${label}: ${value}`), '', ...(note ? [note, ''] : []), `${action}: ${facts.consoleLink}`, ''].join('\n');
  const html = [
    '<!doctype html>',
    `<html><head><meta charset="utf-8"><title>${escapeHtml(subject)}</title></head>`,
    '<body>',
    `<p>${escapeHtml(sentence)}</p>`,
    '<table cellpadding="6" style="border-collapse:collapse">',
    ...rows.map(([label, value]) => `<tr><th align="left" valign="top">${escapeHtml(label)}</th><td>${escapeHtml(value)}</td></tr>`),
    '</table>',
    ...(note ? [`<p>${escapeHtml(note)}</p>`] : []),
    `<p><a href="${escapeHtml(facts.consoleLink)}">${escapeHtml(action)}</a></p>`,
    '</body></html>',
    '',
  ].join('\n');
  return {
    messageId: reviewMessageIdFor(facts.eventId, 'policy-changed', mailFrom),
    from: mailFrom,
    to,
    subject: subject.replace(/[\r\n]+/g, ' ').slice(0, 300),
    text,
    html,
    date: new Date(facts.occurredAt),
    headers: { 'X-Review-Notice': 'policy-changed', 'Auto-Submitted': 'auto-generated' },
  };
}

export function composePolicyChatText(facts: PolicyNoticeFacts): string {
  return `The approval policy of "${facts.projectName}" was changed by ${facts.actorName}: ${policyChange(facts)}. ${facts.consoleLink}`;
}

/** The project's audit log in the console: console/src/app.tsx routes /p/:projectId/audit. */
export function auditLogConsoleLinkFor(consoleBase: string, projectId: string): string {
  return `${consoleBase.replace(/\/+$/, '')}/p/${encodeURIComponent(projectId)}/audit`;
}

/** The chat post: the headline, who, and the console link (no reason: chat channels are read widely). */
export function composeReviewChatText(facts: ReviewNoticeFacts): string {
  return `${sentence(facts)} ${facts.consoleLink}`;
}
