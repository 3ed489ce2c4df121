import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { denial, type Action } from '../../src/domain/access/permissions.ts';
import { startAdminFixture, type AdminFixture } from './support.ts';
import { adminSession, issueAgentKey } from '../mcp/support.ts';

/**
 * Routes whose permission moved from their service into the route registry: a caller without it still gets 403
 * FORBIDDEN with the permission table's message (naming the action), before anything is looked up.
 */
describe('admin API: the route declares the permission, the registry refuses without it', function () {
  this.timeout(60_000);
  let f: AdminFixture;
  let contentKey: string;
  let fullKey: string;

  before(async () => {
    f = await startAdminFixture();
    const session = await adminSession(f);
    contentKey = await issueAgentKey(f, session, 'content');
    fullKey = await issueAgentKey(f, session, 'full');
  });
  after(() => f.stop());

  const refused = async (method: string, route: string, token: string, scope: 'content' | 'full', action: Action, body?: unknown) => {
    const answer = await f.call(method, route, { token, ...(body === undefined ? {} : { body }) });
    expect(answer.status, `${method} ${route}: ${JSON.stringify(answer.body)}`).to.equal(403);
    expect(answer.body.error.code).to.equal('FORBIDDEN');
    const expected = denial({ kind: 'agent', scope } as never, action)!;
    expect(answer.body.error.message).to.equal(expected.message);
    expect(answer.body.error.message).to.include(`(${action})`);
  };

  it('contact forms and their submissions', async () => {
    await refused('GET', '/contact-forms', contentKey, 'content', 'contact-forms.read');
    await refused('GET', `/contact-forms/${randomUUID()}`, contentKey, 'content', 'contact-forms.read');
    await refused('POST', '/contact-forms', contentKey, 'content', 'contact-forms.write', { slug: 'contact', name: 'Contact' });
    await refused('DELETE', `/contact-forms/${randomUUID()}`, fullKey, 'full', 'contact-forms.delete');
    // Checked before the form is looked up: 403, not 404, for a form that does not exist.
    await refused('GET', `/contact-forms/${randomUUID()}/submissions`, fullKey, 'full', 'submissions.read');
    await refused('DELETE', `/contact-forms/${randomUUID()}/submissions/${randomUUID()}`, fullKey, 'full', 'submissions.erase');
  });

  it('webhooks, media, entries, working copies and the audit log', async () => {
    await refused('GET', '/webhooks', fullKey, 'full', 'webhooks.read');
    await refused('POST', `/webhooks/${randomUUID()}/test`, fullKey, 'full', 'webhooks.manage', {});
    await refused('DELETE', `/media/${randomUUID()}`, contentKey, 'content', 'media.delete');
    await refused('DELETE', `/entries/${randomUUID()}`, contentKey, 'content', 'entries.delete');
    await refused('GET', `/entries/${randomUUID()}/working-copy`, fullKey, 'full', 'working-copies.keep');
    await refused('GET', '/audit-log', fullKey, 'full', 'audit.read');
  });
});
