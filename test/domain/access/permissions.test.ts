import { expect } from 'chai';
import { DomainError } from '../../../src/domain/domain-error.ts';
import { ACTIONS, assertCan, can, denial, PERMISSIONS, type Action } from '../../../src/domain/access/permissions.ts';
import { admin, agent, editor, operator } from './support.ts';

function forbiddenError(run: () => void): DomainError {
  try {
    run();
  } catch (error) {
    expect(error).to.be.instanceOf(DomainError);
    expect((error as DomainError).code).to.equal('FORBIDDEN');
    return error as DomainError;
  }
  throw new Error('expected FORBIDDEN');
}

const CONTENT_SCOPE: Action[] = [
  'project.read',
  'locales.read',
  'login-appearance.read',
  'approval-policy.read',
  'help.read',
  'form-sets.read',
  'masters.read',
  'entries.read',
  'entries.write',
  'entries.translate',
  'entries.history.read',
  'revisions.read',
  'revisions.save',
  'revisions.submit',
  'revisions.withdraw',
  'revisions.reopen',
  'revisions.approve',
  'revisions.publish',
  'revisions.schedule',
  'entries.assign',
  'media.list',
];

const TENANT_USER: Action[] = [
  'project.read',
  'locales.read',
  'login-appearance.read',
  'approval-policy.read',
  'help.read',
  'members.list',
  'roles.read',
  'form-sets.read',
  'entries.read',
  'entries.write',
  'entries.translate',
  'entries.assign',
  'entries.history.read',
  'revisions.read',
  'revisions.save',
  'working-copies.keep',
  'revisions.submit',
  'revisions.withdraw',
  'revisions.reopen',
  'preview.issue',
  'media.list',
  'media.upload',
  'masters.read',
  'masters.records.create',
  'masters.records.update',
  'masters.tree.update',
  'contact-forms.read',
  'submissions.read',
  'submissions.update',
  'blueprints.validate',
];

/** Spec section 5 rule 5, action by action, with the wording of the refusal. */
const NEVER: Array<[Action, RegExp]> = [
  ['form-sets.delete', /Agent keys can never delete form sets or contact forms/],
  ['contact-forms.delete', /Agent keys can never delete form sets or contact forms/],
  ['form-blocks.delete', /Agent keys can never delete form blocks or field definitions/],
  ['fields.delete', /Agent keys can never delete form blocks or field definitions/],
  ['keys.issue', /Agent keys can never issue other API keys/],
  ['members.invite', /Agent keys can never invite members/],
  ['billing.change', /Agent keys can never change billing or social settings/],
  ['social-settings.change', /Agent keys can never change billing or social settings/],
];

describe('permissions', () => {
  it('has a rule for every action', () => {
    expect(Object.keys(PERMISSIONS).sort()).to.deep.equal([...ACTIONS].sort());
  });

  it('lets operators do everything', () => {
    for (const action of ACTIONS) expect(can(operator, action), action).to.equal(true);
  });

  it('lets a tenant_admin do everything but create tenants', () => {
    for (const action of ACTIONS) expect(can(admin, action), action).to.equal(action !== 'tenants.create');
    expect(denial(admin, 'tenants.create')?.message).to.match(/only an operator/);
  });

  it('lets a tenant_user create, edit and submit for review, and nothing that approves, publishes, deletes or configures', () => {
    for (const action of ACTIONS) expect(can(editor, action), action).to.equal(TENANT_USER.includes(action));
    for (const action of ['revisions.approve', 'revisions.publish', 'revisions.reject', 'revisions.schedule', 'entries.delete', 'locales.patch', 'keys.issue'] as const) {
      expect(forbiddenError(() => assertCan(editor, action)).message).to.contain(`(${action})`).and.to.match(/Only a tenant_admin can .*this session has the tenant_user role/);
    }
  });

  describe('agent keys', () => {
    for (const scope of ['full', 'schema', 'content'] as const) {
      for (const [action, wording] of NEVER) {
        it(`refuses ${action} to a ${scope}-scope key, whatever its scope`, () => {
          const error = forbiddenError(() => assertCan(agent(scope), action));
          expect(error.message).to.match(wording).and.to.contain(`(${action})`).and.to.contain('whatever their scope');
          expect(error.hint).to.match(/console/);
        });
      }
    }

    it('gives the content scope exactly: read schema, create and update entries, save and publish revisions (and the workflow around it), list media', () => {
      for (const action of ACTIONS) expect(can(agent('content'), action), action).to.equal(CONTENT_SCOPE.includes(action));
    });

    it('refuses blueprint application to a content-scope key, naming the scope it needs', () => {
      const error = forbiddenError(() => assertCan(agent('content'), 'blueprints.apply'));
      expect(error.message).to.equal('A content-scope agent key cannot apply blueprints or templates (blueprints.apply); it needs the full or schema scope.');
      expect(error.hint).to.match(/scope full/);
    });

    it('gives full scope entries, media, form sets, contact forms and blueprints', () => {
      const expected: Action[] = [
        'entries.write',
        'entries.delete',
        'revisions.publish',
        'revisions.approve',
        'media.upload',
        'media.delete',
        'form-sets.write',
        'contact-forms.read',
        'contact-forms.write',
        'blueprints.apply',
        'masters.write',
        'masters.publish',
        'masters.records.create',
      ];
      for (const action of expected) expect(can(agent('full'), action), action).to.equal(true);
    });

    it('gives schema exactly the rights of full', () => {
      for (const action of ACTIONS) expect(can(agent('schema'), action), action).to.equal(can(agent('full'), action));
    });

    for (const action of ['locales.patch', 'masters.records.update', 'masters.tree.update'] as const) {
      it(`refuses ${action} to every key: a user session is required`, () => {
        for (const scope of ['full', 'schema', 'content'] as const) {
          const error = forbiddenError(() => assertCan(agent(scope), action));
          expect(error.message).to.contain('a user session is required').and.to.contain(`(${action})`);
        }
      });
    }

    it('refuses what no scope covers (keys, members, webhooks, project settings, audit log)', () => {
      for (const action of ['keys.list', 'keys.revoke', 'members.manage', 'webhooks.manage', 'project.settings.change', 'audit.read', 'submissions.read', 'revisions.reject'] as const) {
        expect(forbiddenError(() => assertCan(agent('full'), action)).message).to.match(/not part of any agent key scope/);
      }
    });
  });
});
