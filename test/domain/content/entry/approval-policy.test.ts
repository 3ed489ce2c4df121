import { expect } from 'chai';
import type { EventActor } from '../../../../src/domain/decider.ts';
import type { EntryCommand, EntryContext } from '../../../../src/domain/content/entry/entry-decider.ts';
import type { EntryEvent } from '../../../../src/domain/content/entry/entry-events.ts';
import type { KeyIssuers } from '../../../../src/domain/access/people.ts';
import { ApprovalRefused } from '../../../../src/domain/approval-policy.ts';
import { ENTRY, FORM_SET, NOW, R1, R2, context, ev, given, scope, type PrincipalName } from './support.ts';

/**
 * The approval policy in the entry decider: four eyes between people (a key acts for the person who issued it),
 * what an approval records of the policy, the scheduled job checking an approval again under the policy in force,
 * and humanApproval over changes to live content.
 */
const ADMIN: EventActor = { type: 'user', id: 'u-admin' };
const OTHER_ADMIN: EventActor = { type: 'user', id: 'u-other-admin' };
const EDITOR: EventActor = { type: 'user', id: 'u-editor' };
/** Keys of the support principals: k-full issued by the admin, k-content by the other admin. */
const ISSUERS: KeyIssuers = new Map([
  ['k-full', { type: 'user', id: 'u-admin' }],
  ['k-schema', { type: 'user', id: 'u-admin' }],
  ['k-content', { type: 'user', id: 'u-other-admin' }],
]);
const key = (id: string): EventActor => ({ type: 'agent', id });
const by = (actor: EventActor, event: EntryEvent): EntryEvent => ({ ...event, actor });

const FOUR_EYES = { humanApproval: false, fourEyes: true };
const HUMAN = { humanApproval: true, fourEyes: false };
const OFF = { humanApproval: false, fourEyes: false };
const policy = (who: PrincipalName, approvalPolicy = FOUR_EYES, extra: Partial<EntryContext> = {}) => context(who, { approvalPolicy, keyIssuers: ISSUERS, ...extra });

/** A revision saved and submitted by `author` (and `submitter`), waiting for review. */
const inReview = (author: EventActor, submitter = author): EntryEvent[] => [by(EDITOR, ev.created()), by(author, ev.saved(R1, 1)), by(submitter, ev.submitted(R1, 1))];
const publish: EntryCommand = { type: 'publish', entryId: ENTRY, revisionId: R1, revision: 1 };
const approve: EntryCommand = { type: 'approve', entryId: ENTRY, revisionId: R1, revision: 1 };

describe('entry decider: the approval policy', () => {
  describe('fourEyes compares people, not credentials', () => {
    it("the bypass: a revision written and submitted with the admin's own key cannot be published by the admin's session", () => {
      const error = given(inReview(key('k-full'))).when(publish, policy('tenant_admin')).thenFails('FOUR_EYES_REQUIRED', /you are the last editor and the submitter of revision 1 \(counting what was written or submitted with agent keys/);
      expect(error).to.be.instanceOf(ApprovalRefused);
      expect(error.subject).to.deep.equal({ entryId: ENTRY, formSetId: FORM_SET, revisionId: R1, revision: 1 });
      expect(error.hint).to.contain('approvalPolicy.fourEyes');
    });

    it('nor approved by another key the same person issued', () => {
      given(inReview(key('k-full'))).when(approve, policy('agent(schema)')).thenFails('FOUR_EYES_REQUIRED', /this agent key acts for user u-admin, who issued it, and who is the last editor and the submitter/);
    });

    it("nor may a key publish what its issuer's session wrote", () => {
      given(inReview(ADMIN)).when(publish, policy('agent(full)')).thenFails('FOUR_EYES_REQUIRED', /acts for user u-admin/);
    });

    it('a key is its issuer even for one role: saved by the key, submitted by an editor', () => {
      given(inReview(key('k-full'), EDITOR)).when(publish, policy('tenant_admin')).thenFails('FOUR_EYES_REQUIRED', /you are the last editor of revision 1/);
    });

    it("another person may: another admin's session, or a key another person issued", () => {
      const events = given(inReview(key('k-full'))).when(publish, policy('agent(content)')).events();
      expect(events[0]).to.deep.include({ type: 'entry.revision-published' });
      expect(given(inReview(key('k-full'))).when(publish, context('tenant_admin', { approvalPolicy: FOUR_EYES, keyIssuers: new Map([['k-full', { type: 'user', id: 'u-editor' }]]) })).events()).to.have.length(1);
    });

    it('an agent key whose issuer is not known cannot establish four eyes, as approver or as author', () => {
      given(inReview(EDITOR)).when(publish, context('agent(full)', { approvalPolicy: FOUR_EYES, keyIssuers: new Map() })).thenFails('FOUR_EYES_REQUIRED', /the person who issued agent key k-full is not known, so four eyes cannot be established/);
      given(inReview(key('k-unknown'))).when(publish, policy('tenant_admin')).thenFails('FOUR_EYES_REQUIRED', /agent key k-unknown, the last editor of revision 1, is not known/);
    });

    it('an operator is a person of their own: a key issued at the command line is the operator’s', () => {
      const issuers: KeyIssuers = new Map([['k-full', { type: 'operator', id: 'root' }]]);
      expect(given(inReview(key('k-full'))).when(publish, context('tenant_admin', { approvalPolicy: FOUR_EYES, keyIssuers: issuers })).events()).to.have.length(1);
    });
  });

  describe('what an approval records of the policy', () => {
    it('the policy in force on every approval and publication, when the context carries one', () => {
      const [published] = given(inReview(EDITOR)).when(publish, policy('tenant_admin', OFF)).events();
      expect(published!.data).to.deep.include({ policyInForce: OFF });
      expect(published!.data).not.to.have.property('wouldHaveBeenRefusedBy');
      const [scheduled] = given(inReview(EDITOR)).when({ ...approve, publishAt: { at: '2026-07-01T00:00:00Z' } } as EntryCommand, policy('tenant_admin', OFF)).events();
      expect(scheduled!.data).to.deep.include({ policyInForce: OFF });
    });

    it('an approval made while a rule of the usual policy was off, which that rule would have refused, is flagged', () => {
      const ctx = policy('tenant_admin', OFF, { usualApprovalPolicy: { humanApproval: true, fourEyes: true } });
      const [own] = given(inReview(ADMIN)).when(publish, ctx).events();
      expect(own!.data).to.deep.include({ policyInForce: OFF, wouldHaveBeenRefusedBy: ['fourEyes'] });
      const [byKey] = given(inReview(key('k-full'))).when({ ...approve, publishAt: { at: '2026-07-01T00:00:00Z' } } as EntryCommand, policy('agent(full)', OFF, { usualApprovalPolicy: { humanApproval: true, fourEyes: true } })).events();
      expect(byKey!.data).to.deep.include({ wouldHaveBeenRefusedBy: ['humanApproval', 'fourEyes'] });
      // Someone else's approval is not flagged.
      const [fine] = given(inReview(EDITOR)).when(publish, ctx).events();
      expect(fine!.data).not.to.have.property('wouldHaveBeenRefusedBy');
    });

    it('nothing of it without a policy in the context (the spec workflow, as before)', () => {
      given(inReview(EDITOR)).when(publish, context('tenant_admin')).then([ev.published(R1, 1, 'publish')]);
    });
  });

  describe('the scheduled job checks the approval again, under the policy in force when it publishes', () => {
    const PUBLISH_AT = '2026-06-01T09:00:00.000Z';
    const scheduledBy = (approver: EventActor, author: EventActor = ADMIN) => [...inReview(author), by(approver, ev.approved(R1, 1, PUBLISH_AT))];
    const job: EntryCommand = { type: 'publishScheduled', entryId: ENTRY };

    it('an approval of one’s own revision (made while fourEyes was off) is rejected, not published, once fourEyes is on', () => {
      const [rejected] = given(scheduledBy(ADMIN)).when(job, policy('scheduler', FOUR_EYES)).events();
      expect(rejected).to.deep.include({ type: 'entry.revision-rejected' });
      expect(rejected!.data).to.deep.include({ ...scope, revisionId: R1, revision: 1, from: 'scheduled', rule: 'fourEyes' });
      expect((rejected!.data as { reason: string }).reason).to.match(/^Not published at 2026-06-01T09:00:00.000Z: .*four eyes .*the last editor and the submitter of revision 1/);
    });

    it('so is one approved with a key its author issued', () => {
      const [rejected] = given(scheduledBy(key('k-full'))).when(job, policy('scheduler', FOUR_EYES)).events();
      expect(rejected!.data).to.deep.include({ rule: 'fourEyes' });
    });

    it("an agent key's approval, once humanApproval is on", () => {
      const [rejected] = given(scheduledBy(key('k-content'))).when(job, policy('scheduler', HUMAN)).events();
      expect(rejected!.data).to.deep.include({ rule: 'humanApproval' });
      expect((rejected!.data as { reason: string }).reason).to.contain('approved by an agent key');
    });

    it("another person's approval is published, with the policy in force recorded", () => {
      const [published] = given(scheduledBy(OTHER_ADMIN)).when(job, policy('scheduler', { humanApproval: true, fourEyes: true })).events();
      expect(published).to.deep.include({ type: 'entry.revision-published' });
      expect(published!.data).to.deep.include({ trigger: 'schedule', policyInForce: { humanApproval: true, fourEyes: true } });
    });

    it('with the policy off it publishes, flagged when the usual policy would have refused the approval', () => {
      const [published] = given(scheduledBy(ADMIN)).when(job, policy('scheduler', OFF, { usualApprovalPolicy: FOUR_EYES })).events();
      expect(published!.data).to.deep.include({ trigger: 'schedule', policyInForce: OFF, wouldHaveBeenRefusedBy: ['fourEyes'] });
    });
  });

  describe('humanApproval covers changes to live content', () => {
    const live = [by(EDITOR, ev.created()), by(EDITOR, ev.saved(R1, 1)), by(EDITOR, ev.submitted(R1, 1)), by(ADMIN, ev.published(R1, 1, 'approve'))];
    const draftOnly = [by(EDITOR, ev.created()), by(EDITOR, ev.saved(R1, 1))];
    const human = (who: PrincipalName) => context(who, { approvalPolicy: HUMAN });
    const cases: Array<[string, EntryCommand, RegExp]> = [
      ['renaming', { type: 'rename', entryId: ENTRY, slug: 'new-slug' }, /to rename a live entry/],
      ['deleting', { type: 'delete', entryId: ENTRY }, /to delete a live entry/],
      ['changing the import path of', { type: 'setImportMetadata', entryId: ENTRY, importPath: '/news/moved' }, /import path or external id of a live entry/],
    ];
    for (const [what, command, message] of cases) {
      it(`${what} a live entry with an agent key is HUMAN_APPROVAL_REQUIRED naming the setting; a person may`, () => {
        const error = given(live).when(command, human('agent(full)')).thenFails('HUMAN_APPROVAL_REQUIRED', message);
        expect(error.hint).to.contain('approvalPolicy.humanApproval');
        expect(error.subject).to.deep.include({ entryId: ENTRY });
        expect(given(live).when(command, human('tenant_admin')).events()).to.have.length(1);
      });

      it(`${what} an entry that was never published stays an agent's to do`, () => {
        expect(given(draftOnly).when(command, human('agent(full)')).events()).to.have.length(1);
      });
    }

    it('withdrawing a scheduled revision (a person approved it) is refused to an agent key; withdrawing one in review is not', () => {
      const withdraw: EntryCommand = { type: 'withdraw', entryId: ENTRY, revisionId: R2 };
      const scheduled = [...live, by(EDITOR, ev.saved(R2, 2)), by(EDITOR, ev.submitted(R2, 2)), by(ADMIN, ev.approved(R2, 2, '2026-07-01T00:00:00.000Z'))];
      given(scheduled).when(withdraw, human('agent(full)')).thenFails('HUMAN_APPROVAL_REQUIRED', /withdraw a scheduled revision/);
      expect(given(scheduled).when(withdraw, human('tenant_user')).events()).to.have.length(1);
      const inReviewToo = [...live, by(EDITOR, ev.saved(R2, 2)), by(EDITOR, ev.submitted(R2, 2))];
      expect(given(inReviewToo).when(withdraw, human('agent(full)')).events()).to.have.length(1);
    });

    it('off, an agent key does all of it, as the spec says', () => {
      expect(given(live).when({ type: 'delete', entryId: ENTRY }, context('agent(full)', { approvalPolicy: OFF })).events()).to.have.length(1);
    });
  });

  it("a refusal by role names the entry and the revision it refused (the audit record files it in the entry's history)", () => {
    const error = given(inReview(EDITOR)).when(approve, context('tenant_user', { now: NOW })).thenFails('FORBIDDEN', /tenant_admin role/);
    expect(error.subject).to.deep.equal({ entryId: ENTRY, formSetId: FORM_SET, revisionId: R1, revision: 1 });
  });
});
