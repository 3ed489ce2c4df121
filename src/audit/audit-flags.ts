import { APPROVAL_RULES, type ApprovalRule } from '../domain/approval-policy.ts';

/**
 * What the audit log and the audit export flag of an event, from the event alone (pure):
 * - `approved-while-policy-off`: an approval or publication made while a rule of the project's usual approval
 *   policy was off, which that rule would have refused (the event's wouldHaveBeenRefusedBy): the "turn four eyes
 *   off, approve one's own revision, turn it on again" an auditor asks about;
 * - `write-refused`: a write refused by a role, a key's scope or the approval policy (write.refused, and the
 *   entry.revision-approval-refused of earlier versions);
 * - `publication-refused`: a scheduled revision the policy in force refused to publish (rejected by the job).
 */
export const AUDIT_FLAG_KINDS = ['approved-while-policy-off', 'write-refused', 'publication-refused'] as const;
export type AuditFlagKind = (typeof AUDIT_FLAG_KINDS)[number];

export interface AuditFlag {
  kind: AuditFlagKind;
  /** The rules concerned: those that would have refused, or the one that refused. */
  rules: ApprovalRule[];
}

export function auditFlagOf(type: string, data: unknown): AuditFlag | null {
  const d = (data !== null && typeof data === 'object' ? data : {}) as Record<string, unknown>;
  switch (type) {
    case 'entry.revision-published':
    case 'entry.revision-approved': {
      const rules = rulesIn(d['wouldHaveBeenRefusedBy']);
      return rules.length > 0 ? { kind: 'approved-while-policy-off', rules } : null;
    }
    case 'entry.revision-rejected':
      return typeof d['rule'] === 'string' ? { kind: 'publication-refused', rules: rulesIn([d['rule']]) } : null;
    case 'write.refused':
    case 'entry.revision-approval-refused':
      return { kind: 'write-refused', rules: rulesIn([d['rule']]) };
    default:
      return null;
  }
}

function rulesIn(value: unknown): ApprovalRule[] {
  return Array.isArray(value) ? value.filter((rule): rule is ApprovalRule => (APPROVAL_RULES as readonly unknown[]).includes(rule)) : [];
}
