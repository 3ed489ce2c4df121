import { expect } from 'chai';
import { REVIEW_NOTICE_KINDS, unreachableMailNotice } from '../../../src/domain/review-notice/review-notice-events.ts';

describe('unreachableMailNotice: which e-mail notices are not queued, known from the workflow event', () => {
  const reviewer = { type: 'user', id: 'u-reviewer' };
  const author = { type: 'user', id: 'u-author' };

  it('queues every author-directed notice to a console user who did not act', () => {
    for (const kind of REVIEW_NOTICE_KINDS) expect(unreachableMailNotice(kind, reviewer, author), kind).to.equal(null);
  });

  it('queues no author-directed notice to the user who acted, nor to an author who is not a console user', () => {
    for (const kind of REVIEW_NOTICE_KINDS.filter((k) => k !== 'submitted' && k !== 'policy-changed')) {
      expect(unreachableMailNotice(kind, author, author), kind).to.equal('the author did it themselves');
      expect(unreachableMailNotice(kind, reviewer, { type: 'operator', id: 'importer' })).to.equal('the author is an operator, not a console user');
      expect(unreachableMailNotice(kind, reviewer, { type: 'agent', id: 'k1' })).to.equal('the author is an agent key, not a console user');
      expect(unreachableMailNotice(kind, { type: 'system', id: 'scheduler' }, { type: 'system', id: 'scheduler' })).to.equal('the author is the system, not a console user');
      expect(unreachableMailNotice(kind, reviewer, { type: 'robot', id: 'r' })).to.equal('the author is a robot, not a console user');
    }
  });

  it('leaves a submission to the tenant_admins, whoever submitted it: who they are is read when it is sent', () => {
    expect(unreachableMailNotice('submitted', author, author)).to.equal(null);
    expect(unreachableMailNotice('submitted', { type: 'agent', id: 'k1' }, { type: 'agent', id: 'k1' })).to.equal(null);
  });

  it('leaves a change of the approval policy to the tenant_admins, the one who made it included', () => {
    expect(unreachableMailNotice('policy-changed', author, author)).to.equal(null);
    expect(unreachableMailNotice('policy-changed', { type: 'operator', id: 'ops' }, { type: 'operator', id: 'ops' })).to.equal(null);
  });

  it('tells a user apart from another actor of the same id', () => {
    expect(unreachableMailNotice('approved', { type: 'agent', id: 'u-author' }, author)).to.equal(null);
  });
});
