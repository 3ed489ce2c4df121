import type { ApprovalPolicy } from './access/project-decider.ts';
import { DomainError, type RefusalSubject } from './domain-error.ts';

/**
 * The project's approval policy (project-decider.ts ApprovalPolicy) as refusals every decider shares:
 *
 * - humanApproval: agent keys prepare content (save, submit for review); a person decides what the public site
 *   serves. Under it an agent key may not approve or publish a revision, nor change or remove what is live:
 *   rename or delete a live entry, withdraw a scheduled revision (a person approved it), change the import path
 *   or external id a live entry is found by, schedule in bulk, publish, unpublish or change a published master,
 *   delete media (every asset is served by its URL), change a form set with live entries, create or change a
 *   contact form (it takes submissions and sends its autoreply to the public from the moment it exists).
 * - fourEyes: whoever approves or publishes a revision is another person than its last editor and its submitter
 *   (people, not credentials: a key acts for the person who issued it; see access/people.ts).
 *
 * Each refusal is an ApprovalRefused (403 HUMAN_APPROVAL_REQUIRED or FOUR_EYES_REQUIRED) naming the rule and what
 * was refused; the application records it in the log (src/application/refusal-recorder.ts).
 */
export const APPROVAL_RULES = ['humanApproval', 'fourEyes'] as const;
export type ApprovalRule = (typeof APPROVAL_RULES)[number];

/** What the policy can refuse, in the words of the commands that do it. */
export type PolicyAction =
  | 'approve'
  | 'publish'
  | 'scheduled_publish'
  | 'bulk_schedule'
  | 'rename'
  | 'delete'
  | 'withdraw'
  | 'set_import_metadata'
  | 'update_form_set'
  | 'publish_master'
  | 'unpublish_master'
  | 'rename_master'
  | 'add_master_record'
  | 'delete_media'
  | 'create_contact_form'
  | 'update_contact_form';

const HUMAN_HINT = 'approvalPolicy.humanApproval: a tenant_admin does it in the console; a tenant_admin may turn the setting off with PUT /admin/v1/project/approval-policy.';

/** A refusal of the project's approval policy. The decision is the domain's; the application records it before answering 403. */
export class ApprovalRefused extends DomainError {
  override name = 'ApprovalRefused';
  constructor(
    readonly rule: ApprovalRule,
    readonly action: PolicyAction,
    subject: RefusalSubject,
    message: string,
    hint: string,
  ) {
    super(rule === 'humanApproval' ? 'HUMAN_APPROVAL_REQUIRED' : 'FOUR_EYES_REQUIRED', message, hint);
    this.subject = subject;
  }
}

/**
 * humanApproval for a change to what the public site serves: throws HUMAN_APPROVAL_REQUIRED when the caller is
 * an agent key and the rule is on. `what` completes "a person must …" ("rename a live entry").
 */
export function requirePersonFor(principal: { kind: string }, policy: ApprovalPolicy | undefined, action: PolicyAction, subject: RefusalSubject, what: string): void {
  if (!policy?.humanApproval || principal.kind !== 'agent') return;
  throw new ApprovalRefused(
    'humanApproval',
    action,
    subject,
    `The project's approval policy requires a person to ${what} (humanApproval is on): agent keys may prepare content (save revisions and submit them for review), not change what the public site serves.`,
    HUMAN_HINT,
  );
}
