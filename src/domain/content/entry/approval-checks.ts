import type { EventActor } from '../../decider.ts';
import type { ApprovalPolicy } from '../../access/project-decider.ts';
import { describePerson, personOf, samePerson, type KeyIssuers, type Person } from '../../access/people.ts';
import type { ApprovalRule } from '../../approval-policy.ts';

/**
 * What each rule of the approval policy says of one approval (an approve, a publish, or the scheduled job
 * publishing what someone approved): pure, from who approves and who wrote and submitted the revision.
 * The entry decider refuses on the objections of the rules in force, and records on the approval event which
 * rules of the project's usual policy, off at the time, would have refused it.
 */
export interface ApprovedRevision {
  revision: number;
  /** Who saved it (its last editor); null when the log does not say. */
  savedBy: EventActor | null;
  /** Who submitted it for review; null when the log does not say. */
  submittedBy: EventActor | null;
}

export interface FourEyesObjection {
  /** The approver as a person; 'unknown' for an agent key whose issuer is not known (or an approver the log does not name). */
  approver: Person | 'unknown';
  /** The roles the approver's person holds on the revision: last editor, submitter. */
  roles: Array<'last editor' | 'submitter'>;
  /** A role was held through another credential of the same person (an agent key they issued, or their session). */
  throughOtherCredential: boolean;
  /** Why four eyes cannot be established, when it cannot (a person behind a key is not known). */
  unknown: string | null;
}

export interface Objections {
  /** humanApproval: the approver is an agent key (or not known), not a person. */
  humanApproval: boolean;
  fourEyes: FourEyesObjection | null;
}

/** What humanApproval and fourEyes would say of `approver` approving `target` (whatever the policy in force). */
export function objectionsTo(approver: EventActor | null, target: ApprovedRevision, issuers: KeyIssuers): Objections {
  return { humanApproval: approver === null || approver.type === 'agent', fourEyes: fourEyesObjection(approver, target, issuers) };
}

function fourEyesObjection(approver: EventActor | null, target: ApprovedRevision, issuers: KeyIssuers): FourEyesObjection | null {
  const person = approver === null ? 'unknown' : personOf(approver, issuers);
  // The system (the scheduled job) approves nothing of its own.
  if (person === null) return null;
  if (person === 'unknown') {
    const unknown = approver === null ? 'the log does not say who approved it' : `the person who issued agent key ${approver.id} is not known`;
    return { approver: 'unknown', roles: [], throughOtherCredential: false, unknown };
  }
  const roles: FourEyesObjection['roles'] = [];
  let throughOtherCredential = false;
  for (const [role, actor] of [['last editor', target.savedBy], ['submitter', target.submittedBy]] as const) {
    if (actor === null) continue;
    const author = personOf(actor, issuers);
    if (author === 'unknown') {
      return { approver: person, roles: [], throughOtherCredential: false, unknown: `the person who issued agent key ${actor.id}, the ${role} of revision ${target.revision}, is not known` };
    }
    if (author === null || !samePerson(author, person)) continue;
    roles.push(role);
    if (actor.type !== approver!.type || actor.id !== approver!.id) throughOtherCredential = true;
  }
  return roles.length === 0 ? null : { approver: person, roles, throughOtherCredential, unknown: null };
}

/** The rules that would refuse, among those on in `policy`. */
export function refusingRules(objections: Objections, policy: ApprovalPolicy): ApprovalRule[] {
  const rules: ApprovalRule[] = [];
  if (policy.humanApproval && objections.humanApproval) rules.push('humanApproval');
  if (policy.fourEyes && objections.fourEyes !== null) rules.push('fourEyes');
  return rules;
}

/**
 * What an approval event records of the policy: the policy in force, and the rules of the project's usual
 * policy (each rule on once it has been on) that were off then and would have refused it. The second is the
 * audit log's flag: an approval made while a rule was off that the project otherwise applies.
 */
export function policyRecord(objections: Objections, inForce: ApprovalPolicy, usual: ApprovalPolicy): { policyInForce: ApprovalPolicy; wouldHaveBeenRefusedBy?: ApprovalRule[] } {
  const off: ApprovalPolicy = { humanApproval: usual.humanApproval && !inForce.humanApproval, fourEyes: usual.fourEyes && !inForce.fourEyes };
  const rules = refusingRules(objections, off);
  return { policyInForce: { humanApproval: inForce.humanApproval, fourEyes: inForce.fourEyes }, ...(rules.length > 0 ? { wouldHaveBeenRefusedBy: rules } : {}) };
}

/** The four-eyes objection as a sentence whose subject is `who` ("you are", "this agent key acts for user …, who is"). */
export function fourEyesSentence(objection: FourEyesObjection, revision: number): string {
  if (objection.unknown !== null) return `${objection.unknown}, so four eyes cannot be established`;
  const through = objection.throughOtherCredential ? ' (counting what was written or submitted with agent keys the same person issued, or in their session)' : '';
  return `the ${objection.roles.join(' and the ')} of revision ${revision}${through}`;
}

/** Who the approver is, as the start of a four-eyes message. */
export function approverPhrase(principalKind: 'user' | 'agent', objection: FourEyesObjection): string {
  if (objection.unknown !== null || objection.approver === 'unknown') return '';
  return principalKind === 'user' ? 'you are ' : `this agent key acts for ${describePerson(objection.approver)}, who issued it, and who is `;
}
