import { expect } from 'chai';
import { CAPABILITIES, type Capability } from '../../src/domain/capabilities.ts';
import { articleFormSet, PASSWORD, startAdminFixture, type AdminFixture } from './support.ts';

/** A 1×1 PNG. */
const PNG_BASE64 = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';

type Caller = { token: string; headers: Record<string, string> };
type FormSet = 'A' | 'B';

/** A role of the matrix: a spec role, or a custom role defined through POST /roles. */
interface MatrixRole {
  name: string;
  builtIn?: 'tenant_admin' | 'tenant_user';
  capabilities: readonly Capability[];
  /** The form sets the content capabilities are limited to. */
  formSets?: readonly FormSet[];
}

/** An operation of the matrix: what it needs, what it answers when allowed, and the request (made fresh for each cell). */
interface Operation {
  name: string;
  needs: Capability | 'member' | 'tenant_admin';
  /** The form set the operation acts in (content capabilities are limited by form set). */
  formSet?: FormSet;
  status: number;
  request(): Promise<{ method: string; path: string; body?: unknown }>;
}

const ROLES: readonly MatrixRole[] = [
  { name: 'tenant_admin', builtIn: 'tenant_admin', capabilities: CAPABILITIES },
  { name: 'tenant_user', builtIn: 'tenant_user', capabilities: ['content.write', 'content.submit', 'submissions.handle'] },
  { name: 'Writer (A only)', capabilities: ['content.write', 'content.submit'], formSets: ['A'] },
  { name: 'Reviewer', capabilities: ['content.approve'] },
  { name: 'Reviewer (A only)', capabilities: ['content.approve'], formSets: ['A'] },
  { name: 'People manager', capabilities: ['people.manage'] },
  { name: 'Auditor', capabilities: ['audit.read'] },
  { name: 'Reader', capabilities: [] },
  { name: 'Site administrator', capabilities: ['content.delete', 'schema.manage', 'media.manage', 'contact-forms.manage', 'submissions.handle', 'webhooks.manage', 'settings.manage'] },
];

const CONTENT: readonly Capability[] = ['content.write', 'content.submit', 'content.approve', 'content.delete'];

function allowed(role: MatrixRole, operation: Operation): boolean {
  if (operation.needs === 'member') return true;
  if (operation.needs === 'tenant_admin') return role.builtIn === 'tenant_admin';
  if (!role.capabilities.includes(operation.needs)) return false;
  if (!role.formSets || !operation.formSet || !CONTENT.includes(operation.needs)) return true;
  return role.formSets.includes(operation.formSet);
}

/**
 * Roles with separated duties over HTTP (issue 47): every role of the table against every operation of the
 * table, each cell a fresh request against a started service, answered with the operation's status when the
 * role holds what it needs (in the operation's form set) and 403 FORBIDDEN when not. Then what the table cannot
 * show: nobody grants what they may not do, a role's change applies to the next request, four eyes between
 * people still holds, and every change is in the audit log.
 */
describe('roles with separated duties: the role × operation matrix over HTTP', function () {
  this.timeout(120_000);
  let f: AdminFixture;
  let admin: Caller;
  const formSetIds: Record<FormSet, string> = { A: '', B: '' };
  const roleIds = new Map<string, string>();
  const callers = new Map<string, Caller>();
  let unique = 0;
  const next = () => `${Date.now().toString(36)}-${++unique}`;

  const as = (caller: Caller) => ({ token: caller.token, headers: caller.headers });
  const setup = async (method: string, path: string, body?: unknown) => {
    const answer = await f.call(method, path, body === undefined ? {} : { body });
    if (answer.status >= 300) throw new Error(`${method} ${path}: ${answer.status} ${JSON.stringify(answer.body)}`);
    return answer.body;
  };
  const login = async (email: string): Promise<Caller> => {
    const answer = await f.call('POST', '/auth/login', { token: '', body: { email, password: PASSWORD } });
    expect(answer.status, JSON.stringify(answer.body)).to.equal(200);
    return { token: answer.body.token, headers: { 'X-Project-Id': f.project.projectId } };
  };
  /** An entry made by the project's agent key in the form set: its ids, in draft or submitted for review. */
  const entryIn = async (formSet: FormSet, submitted: boolean) => {
    const created = await setup('POST', `/form-sets/${formSetIds[formSet]}/entries`, { slug: `matrix-${next()}`, fields: { title: 'Matrix' } });
    if (submitted) await setup('POST', `/revisions/${created.revision.id}/submit`, {});
    return { entryId: created.entry.id as string, revisionId: created.revision.id as string };
  };

  const OPERATIONS: readonly Operation[] = [
    { name: 'read form sets', needs: 'member', status: 200, request: async () => ({ method: 'GET', path: '/form-sets' }) },
    { name: 'create an entry in A', needs: 'content.write', formSet: 'A', status: 201, request: async () => ({ method: 'POST', path: `/form-sets/${formSetIds.A}/entries`, body: { slug: `cell-${next()}`, fields: { title: 'Cell' } } }) },
    { name: 'create an entry in B', needs: 'content.write', formSet: 'B', status: 201, request: async () => ({ method: 'POST', path: `/form-sets/${formSetIds.B}/entries`, body: { slug: `cell-${next()}`, fields: { title: 'Cell' } } }) },
    { name: 'save a revision in B', needs: 'content.write', formSet: 'B', status: 201, request: async () => ({ method: 'POST', path: `/entries/${(await entryIn('B', false)).entryId}/revisions`, body: { fields: { title: 'Saved' } } }) },
    { name: 'submit for review in A', needs: 'content.submit', formSet: 'A', status: 200, request: async () => ({ method: 'POST', path: `/revisions/${(await entryIn('A', false)).revisionId}/submit`, body: {} }) },
    { name: 'approve in A', needs: 'content.approve', formSet: 'A', status: 200, request: async () => ({ method: 'POST', path: `/revisions/${(await entryIn('A', true)).revisionId}/approve`, body: {} }) },
    { name: 'approve in B', needs: 'content.approve', formSet: 'B', status: 200, request: async () => ({ method: 'POST', path: `/revisions/${(await entryIn('B', true)).revisionId}/approve`, body: {} }) },
    { name: 'reject in A', needs: 'content.approve', formSet: 'A', status: 200, request: async () => ({ method: 'POST', path: `/revisions/${(await entryIn('A', true)).revisionId}/reject`, body: { reason: 'Not yet' } }) },
    { name: 'publish in B', needs: 'content.approve', formSet: 'B', status: 200, request: async () => ({ method: 'POST', path: `/revisions/${(await entryIn('B', true)).revisionId}/publish`, body: {} }) },
    { name: 'delete an entry in A', needs: 'content.delete', formSet: 'A', status: 204, request: async () => ({ method: 'DELETE', path: `/entries/${(await entryIn('A', false)).entryId}` }) },
    { name: 'create a form set', needs: 'schema.manage', status: 201, request: async () => ({ method: 'POST', path: '/form-sets', body: { ...articleFormSet, slug: `set-${next()}`, name: 'Set' } }) },
    { name: 'delete media', needs: 'media.manage', status: 204, request: async () => ({ method: 'DELETE', path: `/media/${(await setup('POST', '/media', { base64: PNG_BASE64, fileName: 'pixel.png' })).id}` }) },
    { name: 'create a contact form', needs: 'contact-forms.manage', status: 201, request: async () => ({ method: 'POST', path: '/contact-forms', body: { name: 'Contact', slug: `contact-${next()}`, fields: [{ key: 'email', type: 'email', label: 'E-mail' }] } }) },
    { name: 'read contact form submissions', needs: 'submissions.handle', status: 200, request: async () => ({ method: 'GET', path: `/contact-forms/${(await setup('POST', '/contact-forms', { name: 'Inbox', slug: `inbox-${next()}`, fields: [{ key: 'email', type: 'email', label: 'E-mail' }] })).id}/submissions` }) },
    { name: 'list webhooks', needs: 'webhooks.manage', status: 200, request: async () => ({ method: 'GET', path: '/webhooks' }) },
    { name: 'list API keys', needs: 'people.manage', status: 200, request: async () => ({ method: 'GET', path: '/keys' }) },
    { name: 'invite a reader', needs: 'people.manage', status: 201, request: async () => ({ method: 'POST', path: '/users', body: { email: `invited-${next()}@example.com`, password: PASSWORD, role: 'tenant_user', roleId: roleIds.get('Reader') } }) },
    { name: 'change site settings', needs: 'settings.manage', status: 200, request: async () => ({ method: 'PUT', path: '/project/site-settings', body: { siteName: `Site ${next()}` } }) },
    { name: 'change the approval policy', needs: 'settings.manage', status: 200, request: async () => ({ method: 'PUT', path: '/project/approval-policy', body: { humanApproval: false } }) },
    { name: 'read the audit log', needs: 'audit.read', status: 200, request: async () => ({ method: 'GET', path: '/audit-log?limit=1' }) },
    { name: 'define a role', needs: 'tenant_admin', status: 201, request: async () => ({ method: 'POST', path: '/roles', body: { name: `Role ${next()}`, capabilities: [] } }) },
    { name: 'change the second-factor policy', needs: 'tenant_admin', status: 200, request: async () => ({ method: 'PUT', path: '/sign-in/second-factor', body: { required: false } }) },
    { name: 'list roles', needs: 'member', status: 200, request: async () => ({ method: 'GET', path: '/roles' }) },
  ];

  before(async () => {
    f = await startAdminFixture();
    admin = await login(f.project.adminEmail);
    formSetIds.A = (await setup('POST', '/form-sets', { ...articleFormSet, slug: 'set-a', name: 'Set A' })).id;
    formSetIds.B = (await setup('POST', '/form-sets', { ...articleFormSet, slug: 'set-b', name: 'Set B' })).id;
    callers.set('tenant_admin', admin);
    for (const role of ROLES) {
      if (role.builtIn === 'tenant_admin') continue;
      let roleId: string | undefined;
      if (!role.builtIn) {
        const body = { name: role.name, capabilities: role.capabilities, ...(role.formSets ? { formSetIds: role.formSets.map((set) => formSetIds[set]) } : {}) };
        const defined = await f.call('POST', '/roles', { ...as(admin), body });
        expect(defined.status, JSON.stringify(defined.body)).to.equal(201);
        roleId = defined.body.id;
        roleIds.set(role.name, roleId!);
      }
      const email = `${role.name.toLowerCase().replace(/[^a-z]+/g, '-')}-${next()}@example.com`;
      const created = await f.call('POST', '/users', { ...as(admin), body: { email, password: PASSWORD, role: 'tenant_user', ...(roleId ? { roleId } : {}) } });
      expect(created.status, JSON.stringify(created.body)).to.equal(201);
      expect(created.body.roleId ?? null).to.equal(roleId ?? null);
      callers.set(role.name, await login(email));
    }
  });
  after(async () => {
    await f?.stop();
  });

  for (const role of ROLES) {
    it(`${role.name}: ${role.capabilities.length === CAPABILITIES.length ? 'every capability' : role.capabilities.join(', ') || 'reading only'}${role.formSets ? ` (content in ${role.formSets.join(', ')} only)` : ''}`, async () => {
      const caller = callers.get(role.name)!;
      const session = await f.call('GET', '/auth/session', as(caller));
      expect(session.body.grants.capabilities).to.deep.equal(role.capabilities.length === CAPABILITIES.length ? [...CAPABILITIES] : CAPABILITIES.filter((c) => role.capabilities.includes(c)));
      const wrong: string[] = [];
      for (const operation of OPERATIONS) {
        const { method, path, body } = await operation.request();
        const answer = await f.call(method, path, { ...as(caller), ...(body === undefined ? {} : { body }) });
        const expected = allowed(role, operation) ? operation.status : 403;
        const code = answer.body?.error?.code;
        if (answer.status !== expected || (expected === 403 && code !== 'FORBIDDEN')) wrong.push(`${operation.name}: expected ${expected}, got ${answer.status} ${JSON.stringify(answer.body).slice(0, 200)}`);
      }
      expect(wrong).to.deep.equal([]);
    });
  }

  describe('beyond the table', () => {
    it('nobody grants what they may not do: a people manager gives only roles within theirs, never tenant_admin, issues no key that may do more, and acts on nobody who may do more', async () => {
      const manager = callers.get('People manager')!;
      const invited = await f.call('POST', '/users', { ...as(admin), body: { email: `target-${next()}@example.com`, password: PASSWORD, role: 'tenant_user', roleId: roleIds.get('Reader') } });
      const target = invited.body.id as string;
      const refusals: Array<[string, { status: number; body: any }]> = [
        ['make a member tenant_admin', await f.call('PATCH', `/users/${target}`, { ...as(manager), body: { role: 'tenant_admin' } })],
        ['give the Reviewer role', await f.call('PATCH', `/users/${target}`, { ...as(manager), body: { roleId: roleIds.get('Reviewer') } })],
        ['make a member tenant_user (content.write beyond theirs)', await f.call('PATCH', `/users/${target}`, { ...as(manager), body: { role: 'tenant_user' } })],
        ['invite a tenant_admin', await f.call('POST', '/users', { ...as(manager), body: { email: `admin-${next()}@example.com`, password: PASSWORD, role: 'tenant_admin' } })],
        ['disable the tenant_admin', await f.call('PATCH', `/users/${f.project.userId}`, { ...as(manager), body: { disabled: true } })],
        ['issue a content key (it may approve)', await f.call('POST', '/keys', { ...as(manager), body: { type: 'agent', scope: 'content', name: 'Mine' } })],
        ['define a role', await f.call('POST', '/roles', { ...as(manager), body: { name: 'Everything', capabilities: [...CAPABILITIES] } })],
      ];
      for (const [what, answer] of refusals) expect(answer.status, `${what}: ${JSON.stringify(answer.body)}`).to.equal(403);
      expect(refusals[1]![1].body.error.message).to.match(/content\.approve/);
      // Within their own grants they may: a reader stays a reader, and a reader may be disabled.
      expect((await f.call('PATCH', `/users/${target}`, { ...as(manager), body: { roleId: roleIds.get('Reader') } })).status).to.equal(200);
      expect((await f.call('PATCH', `/users/${target}`, { ...as(manager), body: { disabled: true } })).status).to.equal(200);
      // And never their own role.
      const me = (await f.call('GET', '/auth/session', as(manager))).body.user.id;
      expect((await f.call('PATCH', `/users/${me}`, { ...as(manager), body: { roleId: roleIds.get('Reader') } })).status).to.equal(403);
    });

    it('defining roles: names unique and not built-in, known capabilities only, a form-set limit needs a content capability; a role held is not removed', async () => {
      const define = (body: unknown) => f.call('POST', '/roles', { ...as(admin), body });
      expect((await define({ name: 'Tenant_Admin', capabilities: [] })).status).to.equal(400);
      expect((await define({ name: 'reviewer', capabilities: [] })).status).to.equal(409);
      expect((await define({ name: 'REVIEWER (A ONLY)', capabilities: [] })).status).to.equal(409);
      const unknown = await define({ name: 'Unknown', capabilities: ['content.everything'] });
      expect(unknown.status).to.equal(400);
      expect(unknown.body.error.code).to.equal('VALIDATION_ERROR');
      expect((await define({ name: 'Limited media', capabilities: ['media.manage'], formSetIds: [formSetIds.A] })).status).to.equal(400);
      const listed = await f.call('GET', '/roles', as(callers.get('Reader')!));
      expect(listed.status).to.equal(200);
      const reviewer = listed.body.items.find((r: { name: string }) => r.name === 'Reviewer');
      expect(reviewer).to.include({ members: 1 });
      expect(reviewer.capabilities).to.deep.equal(['content.approve']);
      expect(listed.body.capabilities.map((c: { capability: string }) => c.capability)).to.deep.equal([...CAPABILITIES]);
      const held = await f.call('DELETE', `/roles/${reviewer.id}`, as(admin));
      expect(held.status).to.equal(409);
      expect(held.body.error.message).to.match(/1 member holds/);
      const spare = await define({ name: `Spare ${next()}`, capabilities: ['audit.read'] });
      expect((await f.call('DELETE', `/roles/${spare.body.id}`, as(admin))).status).to.equal(204);
      expect((await f.call('DELETE', `/roles/${spare.body.id}`, as(admin))).status).to.equal(204);
      expect((await f.call('PUT', `/roles/${spare.body.id}`, { ...as(admin), body: { name: 'Back', capabilities: [] } })).status).to.equal(404);
    });

    it("a role's change applies to its members' next request; a member of a role that is gone reads only", async () => {
      const defined = await f.call('POST', '/roles', { ...as(admin), body: { name: `Publisher ${next()}`, capabilities: ['content.approve'] } });
      const email = `publisher-${next()}@example.com`;
      const member = await f.call('POST', '/users', { ...as(admin), body: { email, password: PASSWORD, role: 'tenant_user', roleId: defined.body.id } });
      const publisher = await login(email);
      expect((await f.call('POST', `/revisions/${(await entryIn('A', true)).revisionId}/approve`, { ...as(publisher), body: {} })).status).to.equal(200);
      const narrowed = await f.call('PUT', `/roles/${defined.body.id}`, { ...as(admin), body: { name: defined.body.name, capabilities: ['content.approve'], formSetIds: [formSetIds.B] } });
      expect(narrowed.status).to.equal(200);
      expect(narrowed.body.formSetIds).to.deep.equal([formSetIds.B]);
      const refused = await f.call('POST', `/revisions/${(await entryIn('A', true)).revisionId}/approve`, { ...as(publisher), body: {} });
      expect(refused.status).to.equal(403);
      expect(refused.body.error.message).to.match(/limited to other form sets/);
      expect((await f.call('POST', `/revisions/${(await entryIn('B', true)).revisionId}/approve`, { ...as(publisher), body: {} })).status).to.equal(200);
      // Taken away (role alone) and removed: the member reads, nothing more.
      expect((await f.call('PATCH', `/users/${member.body.id}`, { ...as(admin), body: { role: 'tenant_user' } })).body.roleId).to.equal(null);
      expect((await f.call('DELETE', `/roles/${defined.body.id}`, as(admin))).status).to.equal(204);
      const session = await f.call('GET', '/auth/session', as(publisher));
      expect(session.body.grants).to.include({ roleId: null, roleName: null });
    });

    it('four eyes still holds between people whatever their roles: a custom role that writes and approves cannot approve its own submission', async () => {
      const both = await f.call('POST', '/roles', { ...as(admin), body: { name: `Writer and approver ${next()}`, capabilities: ['content.write', 'content.submit', 'content.approve'] } });
      const emails = [`one-${next()}@example.com`, `two-${next()}@example.com`];
      for (const email of emails) await f.call('POST', '/users', { ...as(admin), body: { email, password: PASSWORD, role: 'tenant_user', roleId: both.body.id } });
      const [one, two] = [await login(emails[0]!), await login(emails[1]!)];
      expect((await f.call('PUT', '/project/approval-policy', { ...as(admin), body: { fourEyes: true } })).status).to.equal(200);
      try {
        const created = await f.call('POST', `/form-sets/${formSetIds.A}/entries`, { ...as(one), body: { slug: `eyes-${next()}`, fields: { title: 'Eyes' } } });
        expect((await f.call('POST', `/revisions/${created.body.revision.id}/submit`, { ...as(one), body: {} })).status).to.equal(200);
        const own = await f.call('POST', `/revisions/${created.body.revision.id}/approve`, { ...as(one), body: {} });
        expect(own.status).to.equal(403);
        expect(own.body.error.code).to.equal('FOUR_EYES_REQUIRED');
        expect((await f.call('POST', `/revisions/${created.body.revision.id}/approve`, { ...as(two), body: {} })).status).to.equal(200);
      } finally {
        await f.call('PUT', '/project/approval-policy', { ...as(admin), body: { fourEyes: false } });
      }
    });

    it('every role change is in the audit log with who made it', async () => {
      const log = await f.call('GET', '/audit-log?limit=100', as(callers.get('Auditor')!));
      expect(log.status).to.equal(200);
      const types = new Set(log.body.items.map((item: { type?: string; eventType?: string }) => item.type ?? item.eventType));
      for (const type of ['tenant.role-defined', 'tenant.role-changed', 'tenant.role-removed', 'user.role-changed']) expect(types, type).to.include(type);
    });
  });
});
