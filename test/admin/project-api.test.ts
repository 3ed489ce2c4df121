import { expect } from 'chai';
import { until } from '../webhooks/support.ts';
import { collect } from '../../src/event-store/event-store.ts';
import type { BootstrapResult } from '../../src/application/access-service.ts';
import { articleFormSet, OPERATOR, startAdminFixture, type AdminFixture } from './support.ts';

const PASSWORD = 'correct horse battery staple';

describe('admin API: project settings, console login, keys and members over HTTP', function () {
  this.timeout(60_000);
  let f: AdminFixture;
  let session: string;
  /** Calls as the bootstrapped tenant_admin, in the fixture's project. */
  const asAdmin = (method: string, route: string, body?: unknown) =>
    f.call(method, route, { token: session, headers: { 'x-project-id': f.project.projectId }, ...(body === undefined ? {} : { body }) });

  async function login(email: string, password: string, projectId?: string): Promise<{ status: number; body: any }> {
    return f.call('POST', '/auth/login', { body: { email, password, ...(projectId ? { projectId } : {}) } });
  }

  async function sessionFor(project: BootstrapResult): Promise<string> {
    const signedIn = await login(project.adminEmail, PASSWORD);
    expect(signedIn.status, JSON.stringify(signedIn.body)).to.equal(200);
    return signedIn.body.token as string;
  }

  async function otherProject(plan: string): Promise<BootstrapResult> {
    const suffix = Math.random().toString(36).slice(2, 8);
    const project = await f.access.bootstrap(OPERATOR, { projectName: `Other ${suffix}`, plan, adminEmail: `other-${suffix}@example.com`, adminPassword: PASSWORD });
    await f.service.supervisor!.waitFor(project.position, 5000);
    return project;
  }

  before(async () => {
    f = await startAdminFixture({ plan: 'business' });
    session = await sessionFor(f.project);
  });
  after(async () => {
    await f.stop();
  });

  it('answers the project overview and the public API info for an agent key and a session', async () => {
    const overview = await f.call('GET', '/project');
    expect(overview.status, JSON.stringify(overview.body)).to.equal(200);
    expect(overview.body).to.include({ id: f.project.projectId, slug: f.project.projectSlug, plan: 'business' });
    expect(overview.body.contentLocales).to.deep.equal({ locales: ['en', 'ja'], defaultLocale: 'en' });
    expect(overview.body.customDomains).to.deep.equal([]);
    expect(overview.body.siteSettings).to.deep.equal({ siteUrl: null, siteName: null, description: null });
    expect(overview.body.publicApi).to.include({ projectId: f.project.projectId, publicBase: `/public/p/${f.project.projectId}/v1` });

    const info = await asAdmin('GET', '/project/public-api-info');
    expect(info.status).to.equal(200);
    expect(info.body).to.include({ projectId: f.project.projectId, publicBase: `/public/p/${f.project.projectId}/v1` });

    const noProject = await f.call('GET', '/project', { token: session });
    expect(noProject.status).to.equal(400);
    expect(noProject.body.error.message).to.match(/X-Project-Id/);
  });

  it('reads content locales with any credentials and patches them with a tenant_admin session only', async () => {
    const read = await f.call('GET', '/project/content-locales');
    expect(read.body).to.deep.equal({ locales: ['en', 'ja'], defaultLocale: 'en' });

    const byAgent = await f.call('PATCH', '/project/content-locales', { body: { locales: ['en', 'ja', 'fr'] } });
    expect(byAgent.status).to.equal(403);
    expect(byAgent.body.error.code).to.equal('FORBIDDEN');
    expect(byAgent.body.error.message).to.match(/a user session is required/);

    const patched = await asAdmin('PATCH', '/project/content-locales', { locales: ['en', 'ja', 'fr'], defaultLocale: 'ja' });
    expect(patched.status, JSON.stringify(patched.body)).to.equal(200);
    expect(patched.body).to.deep.equal({ locales: ['en', 'ja', 'fr'], defaultLocale: 'ja' });
    // Read your writes, by the agent key too.
    expect((await f.call('GET', '/project/content-locales')).body).to.deep.equal({ locales: ['en', 'ja', 'fr'], defaultLocale: 'ja' });

    const dropDefault = await asAdmin('PATCH', '/project/content-locales', { locales: ['en'] });
    expect(dropDefault.status).to.equal(400);
    expect(dropDefault.body.error.message).to.match(/default locale/);
    const restored = await asAdmin('PATCH', '/project/content-locales', { locales: ['en', 'ja'], defaultLocale: 'en' });
    expect(restored.body).to.deep.equal({ locales: ['en', 'ja'], defaultLocale: 'en' });
  });

  it('answers a locale change once the public API serves the new locale, however many live entries it re-shapes', async () => {
    // With many live entries, the public read model's re-shaping takes longer than the project record's
    // change: an answer given when only the record had it left the new locale's entries 404 for a moment.
    const formSet = await asAdmin('POST', '/form-sets', { ...articleFormSet, slug: 'locale-change' });
    expect(formSet.status, JSON.stringify(formSet.body)).to.equal(201);
    const slugs = Array.from({ length: 80 }, (_, i) => `entry-${i}`);
    for (const slug of slugs) {
      const created = await asAdmin('POST', `/form-sets/${formSet.body.id}/entries`, { slug, fields: { title: { en: `Title ${slug}` } } });
      expect(created.status, JSON.stringify(created.body)).to.equal(201);
      expect((await asAdmin('POST', `/revisions/${created.body.revision.id}/submit`, {})).status).to.equal(200);
      expect((await asAdmin('POST', `/revisions/${created.body.revision.id}/publish`, { revision: 1 })).status).to.equal(200);
    }
    const publicEntry = (slug: string, locale: string) => fetch(`${f.service.url}/public/p/${f.project.projectId}/v1/form-sets/locale-change/entries/${slug}?locale=${locale}`);
    expect((await publicEntry('entry-0', 'de')).status).to.equal(400);

    const patched = await asAdmin('PATCH', '/project/content-locales', { locales: ['en', 'ja', 'de'] });
    expect(patched.status, JSON.stringify(patched.body)).to.equal(200);
    const statuses = await Promise.all(slugs.map(async (slug) => (await publicEntry(slug, 'de')).status));
    expect(statuses.filter((status) => status !== 200), 'entries not served in the new locale right after the answer').to.deep.equal([]);

    const restored = await asAdmin('PATCH', '/project/content-locales', { locales: ['en', 'ja'] });
    expect(restored.status).to.equal(200);
    expect((await publicEntry('entry-0', 'de')).status).to.equal(400);
  });

  it('serves the login branding without credentials once the appearance is updated', async () => {
    const open = async (projectId: string) => {
      const response = await fetch(`${f.service.url}/admin/v1/projects/${projectId}/login-branding`);
      return { status: response.status, body: (await response.json()) as any };
    };
    const before = await open(f.project.projectId);
    expect(before.status).to.equal(200);
    expect(before.body).to.include({ logoUrl: null, primaryColor: null, message: null });

    const updated = await asAdmin('PUT', '/project/login-appearance', { logoUrl: 'https://cdn.example.com/logo.png', primaryColor: '#1A73E8', accentColor: '#f80', message: 'Welcome back' });
    expect(updated.status, JSON.stringify(updated.body)).to.equal(200);
    expect(updated.body).to.include({ primaryColor: '#1a73e8', accentColor: '#f80', message: 'Welcome back' });

    const after = await open(f.project.projectId);
    expect(after.status).to.equal(200);
    const { name } = (await f.call('GET', '/project')).body as { name: string };
    expect(after.body).to.deep.equal({
      projectId: f.project.projectId,
      projectName: name,
      logoUrl: 'https://cdn.example.com/logo.png',
      primaryColor: '#1a73e8',
      accentColor: '#f80',
      message: 'Welcome back',
    });
    expect((await f.call('GET', '/project/login-appearance')).body).to.include({ message: 'Welcome back' });

    const cleared = await f.call('PUT', '/project/login-appearance', { body: { message: null } });
    expect(cleared.status, JSON.stringify(cleared.body)).to.equal(200);
    expect((await open(f.project.projectId)).body).to.include({ message: null, primaryColor: '#1a73e8' });

    const badColour = await asAdmin('PUT', '/project/login-appearance', { primaryColor: 'blue' });
    expect(badColour.status).to.equal(400);
    expect(badColour.body.error.message).to.match(/primaryColor/);
    expect((await open('00000000-0000-4000-8000-000000000000')).status).to.equal(404);
    expect((await open('not-a-project')).status).to.equal(404);
  });

  it('adds, lists and deletes console IP allowlist entries; a bad CIDR is 400; a session cannot lock itself out', async () => {
    const added = await asAdmin('POST', '/project/ip-allowlist', { cidr: '127.0.0.1/8', label: 'loopback' });
    expect(added.status, JSON.stringify(added.body)).to.equal(201);
    expect(added.body).to.include({ cidr: '127.0.0.0/8', label: 'loopback' });
    const listed = await asAdmin('GET', '/project/ip-allowlist');
    expect(listed.body.items).to.deep.equal([added.body]);
    expect(listed.body.enforced).to.equal(true);
    // Still admitted: 127.0.0.1 is in the list.
    expect((await asAdmin('GET', '/project')).status).to.equal(200);

    const bad = await asAdmin('POST', '/project/ip-allowlist', { cidr: '300.1.2.3/8' });
    expect(bad.status).to.equal(400);
    expect(bad.body.error.code).to.equal('VALIDATION_ERROR');
    expect(bad.body.error.message).to.match(/cidr/);

    const deleted = await asAdmin('DELETE', `/project/ip-allowlist/${added.body.id}`);
    expect(deleted.status).to.equal(204);
    expect((await asAdmin('GET', '/project/ip-allowlist')).body.items).to.deep.equal([]);
    expect((await asAdmin('DELETE', `/project/ip-allowlist/${added.body.id}`)).status).to.equal(404);

    const lockout = await asAdmin('POST', '/project/ip-allowlist', { cidr: '192.0.2.0/24', label: 'office' });
    expect(lockout.status).to.equal(400);
    expect(lockout.body.error.message).to.match(/block your own address/);
  });

  it('refuses a session from an address outside a non-empty allowlist on its next request, and admits it again once an operator removes the entry', async () => {
    // An agent key (not subject to the console allowlist) adds a range that excludes 127.0.0.1.
    const added = await f.call('POST', '/project/ip-allowlist', { body: { cidr: '10.0.0.0/8', label: 'office VPN' } });
    expect(added.status, JSON.stringify(added.body)).to.equal(201);

    const refused = await asAdmin('GET', '/project');
    expect(refused.status).to.equal(403);
    expect(refused.body.error.code).to.equal('FORBIDDEN');
    const loginRefused = await login(f.project.adminEmail, PASSWORD, f.project.projectId);
    expect(loginRefused.status).to.equal(403);
    expect((await f.call('GET', '/project')).status).to.equal(200);

    const removed = await f.access.removeIpAllowlistEntry(OPERATOR, f.project.projectId, added.body.id);
    await f.service.supervisor!.waitFor(removed.position, 5000);
    expect((await asAdmin('GET', '/project')).status).to.equal(200);
  });

  it('answers PLAN_REQUIRED for the IP allowlist below Business', async () => {
    const standard = await otherProject('standard');
    const response = await f.call('POST', '/project/ip-allowlist', { token: standard.agentKey.key, body: { cidr: '10.0.0.0/8' } });
    expect(response.status).to.equal(403);
    expect(response.body.error.code).to.equal('PLAN_REQUIRED');
    expect(response.body.error.message).to.match(/Business/);
  });

  it('issues, lists and revokes keys with a session: the key is shown once, a revoked key is 401', async () => {
    const before = await asAdmin('GET', '/keys');
    expect(before.status, JSON.stringify(before.body)).to.equal(200);
    expect(before.body.items.map((k: { id: string }) => k.id)).to.have.members([f.project.agentKey.keyId, f.project.publicKey.keyId]);

    const issued = await asAdmin('POST', '/keys', { type: 'agent', scope: 'content', name: 'ci bot' });
    expect(issued.status, JSON.stringify(issued.body)).to.equal(201);
    expect(issued.body.key).to.match(/^sk-agent-/);
    expect(issued.body).to.include({ type: 'agent', scope: 'content', name: 'ci bot', revokedAt: null });
    expect(issued.body.key.startsWith(issued.body.prefix)).to.equal(true);
    expect((await f.call('GET', '/project', { token: issued.body.key })).status).to.equal(200);

    const pub = await asAdmin('POST', '/keys', { type: 'public' });
    expect(pub.status).to.equal(201);
    expect(pub.body.key).to.match(/^service_pub_/);

    const listed = await asAdmin('GET', '/keys');
    const text = JSON.stringify(listed.body);
    for (const secret of [issued.body.key, pub.body.key, f.project.agentKey.key, f.project.publicKey.key]) expect(text).not.to.include(secret);
    expect(text).not.to.match(/"hash"|"key"/);
    const listedNew = listed.body.items.find((k: { id: string }) => k.id === issued.body.id);
    expect(listedNew).to.deep.include({ type: 'agent', prefix: issued.body.prefix, scope: 'content', name: 'ci bot', revokedAt: null });
    expect(listedNew.createdAt).to.be.a('string');

    // Used before it is revoked (authentication keeps what it read of the key while the read model stays as it was).
    expect((await f.call('GET', '/project', { token: issued.body.key })).status).to.equal(200);
    const revoked = await asAdmin('DELETE', `/keys/${issued.body.id}`);
    expect(revoked.status, JSON.stringify(revoked.body)).to.equal(200);
    expect(revoked.body.revokedAt).to.be.a('string');
    const after = await f.call('GET', '/project', { token: issued.body.key });
    expect(after.status).to.equal(401);
    expect(after.body.error.code).to.equal('UNAUTHORIZED');
    expect((await asAdmin('GET', '/keys')).body.items.find((k: { id: string }) => k.id === issued.body.id).revokedAt).to.be.a('string');
    expect((await asAdmin('DELETE', '/keys/00000000-0000-4000-8000-000000000000')).status).to.equal(404);
  });

  it("shows each agent key's last use, recorded at most once per 10 minutes per key (agent-key.used on the key's own stream)", async () => {
    const issued = await asAdmin('POST', '/keys', { type: 'agent', scope: 'full', name: 'last use' });
    const listedBefore = (await asAdmin('GET', '/keys')).body.items;
    expect(listedBefore.find((k: { id: string }) => k.id === issued.body.id).lastUsedAt).to.equal(null);
    expect(listedBefore.find((k: { id: string }) => k.id === f.project.publicKey.keyId).lastUsedAt).to.equal(null);
    const beforeUse = Date.now();
    for (let i = 0; i < 3; i++) expect((await f.call('GET', '/form-sets', { token: issued.body.key })).status).to.equal(200);
    const used = await until(
      async () => (await asAdmin('GET', '/keys')).body.items.find((k: { id: string }) => k.id === issued.body.id).lastUsedAt as string | null,
      (at) => at !== null,
      5_000,
      'lastUsedAt',
    );
    expect(Date.parse(used!)).to.be.within(beforeUse - 1000, Date.now());
    const events = await collect(f.service.log.readStream(`agent-key-usage-${issued.body.id}`));
    expect(events.map((e) => [e.type, e.data, e.metadata.actor])).to.deep.equal([['agent-key.used', { keyId: issued.body.id, projectId: f.project.projectId, usedAt: used }, { type: 'agent', id: issued.body.id }]]);
  });

  it('refuses every key route to agent keys with 403 FORBIDDEN', async () => {
    const issue = await f.call('POST', '/keys', { body: { type: 'agent' } });
    expect(issue.status).to.equal(403);
    expect(issue.body.error.code).to.equal('FORBIDDEN');
    expect(issue.body.error.message).to.match(/issue other API keys/);
    expect((await f.call('POST', '/keys', { body: { type: 'public' } })).status).to.equal(403);
    expect((await f.call('GET', '/keys')).status).to.equal(403);
    expect((await f.call('DELETE', `/keys/${f.project.publicKey.keyId}`)).status).to.equal(403);
  });

  it('answers PLAN_REQUIRED for a second active agent key on the Free plan', async () => {
    const free = await otherProject('free');
    const freeSession = await sessionFor(free);
    const second = await f.call('POST', '/keys', { token: freeSession, headers: { 'x-project-id': free.projectId }, body: { type: 'agent' } });
    expect(second.status).to.equal(403);
    expect(second.body.error.code).to.equal('PLAN_REQUIRED');
    // A public key is not limited.
    expect((await f.call('POST', '/keys', { token: freeSession, headers: { 'x-project-id': free.projectId }, body: { type: 'public' } })).status).to.equal(201);
  });

  it('creates and lists members with a tenant_admin session; agent keys may never invite; an e-mail clash is 409', async () => {
    const email = `editor-${Math.random().toString(36).slice(2, 8)}@example.com`;
    const created = await f.call('POST', '/users', { token: session, body: { email, password: PASSWORD, role: 'editor' } });
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
    expect(created.body).to.include({ email, role: 'tenant_user', tenantId: f.project.tenantId });

    const listed = await f.call('GET', '/users', { token: session });
    expect(listed.status).to.equal(200);
    expect(listed.body.items.map((u: { email: string }) => u.email)).to.have.members([f.project.adminEmail, email]);
    expect(JSON.stringify(listed.body)).not.to.match(/passwordHash|scrypt/);
    // The new member can sign in.
    expect((await login(email, PASSWORD)).status).to.equal(200);

    const clash = await f.call('POST', '/users', { token: session, body: { email: email.toUpperCase(), password: PASSWORD, role: 'tenant_user' } });
    expect(clash.status).to.equal(409);
    expect(clash.body.error.code).to.equal('CONFLICT');

    const byAgent = await f.call('POST', '/users', { body: { email: `agent-${email}`, password: PASSWORD, role: 'tenant_user' } });
    expect(byAgent.status).to.equal(403);
    expect(byAgent.body.error.code).to.equal('FORBIDDEN');
    expect(byAgent.body.error.message).to.match(/may never invite members|can never invite members/);
    expect((await f.call('GET', '/users')).status).to.equal(403);

    const editor = (await login(email, PASSWORD)).body.token as string;
    const byEditor = await f.call('POST', '/users', { token: editor, body: { email: `x-${email}`, password: PASSWORD, role: 'tenant_user' } });
    expect(byEditor.status).to.equal(403);
  });

  it("changes a member's role and disables a member with a tenant_admin session: never one's own account, never by an editor or an agent key", async () => {
    const email = `member-${Math.random().toString(36).slice(2, 8)}@example.com`;
    const created = await f.call('POST', '/users', { token: session, body: { email, password: PASSWORD, role: 'tenant_user' } });
    const userId = created.body.id as string;
    const member = (await login(email, PASSWORD)).body.token as string;
    // An editor may not manage members; an agent key never.
    expect((await f.call('PATCH', `/users/${f.project.userId}`, { token: member, body: { role: 'tenant_user' } })).status).to.equal(403);
    expect((await f.call('PATCH', `/users/${userId}`, { body: { role: 'tenant_admin' } })).status).to.equal(403);

    const promoted = await f.call('PATCH', `/users/${userId}`, { token: session, body: { role: 'tenant_admin' } });
    expect(promoted.status, JSON.stringify(promoted.body)).to.equal(200);
    expect(promoted.body).to.deep.equal({ id: userId, tenantId: f.project.tenantId, email, role: 'tenant_admin', roleId: null, disabled: false });
    const listed = await f.call('GET', '/users', { token: session });
    expect(listed.body.items.find((u: { id: string }) => u.id === userId)).to.include({ role: 'tenant_admin', disabled: false });

    const own = await f.call('PATCH', `/users/${f.project.userId}`, { token: session, body: { disabled: true } });
    expect([own.status, own.body.error.code]).to.deep.equal([403, 'FORBIDDEN']);
    expect(own.body.error.message).to.equal('You cannot disable your own account.');
    const both = await f.call('PATCH', `/users/${userId}`, { token: session, body: { role: 'tenant_user', disabled: true } });
    expect([both.status, both.body.error.code]).to.deep.equal([400, 'VALIDATION_ERROR']);
    expect((await f.call('PATCH', `/users/${userId}`, { token: session, body: { disabled: false } })).status).to.equal(400);
    expect((await f.call('PATCH', '/users/00000000-0000-4000-8000-000000000000', { token: session, body: { disabled: true } })).status).to.equal(404);

    const disabled = await f.call('PATCH', `/users/${userId}`, { token: session, body: { disabled: true } });
    expect(disabled.status, JSON.stringify(disabled.body)).to.equal(200);
    expect(disabled.body.disabled).to.equal(true);
    expect((await login(email, PASSWORD)).status).to.equal(403);
    expect((await f.call('GET', '/form-sets', { token: member, headers: { 'x-project-id': f.project.projectId } })).status).to.be.oneOf([401, 403]);
  });

  it('sets site settings and custom domains; a domain another project holds is 409 until released', async () => {
    const settings = await asAdmin('PUT', '/project/site-settings', { siteUrl: 'https://www.example.com/', siteName: 'Example' });
    expect(settings.status, JSON.stringify(settings.body)).to.equal(200);
    expect(settings.body).to.deep.equal({ siteUrl: 'https://www.example.com', siteName: 'Example', description: null });
    expect((await asAdmin('PUT', '/project/site-settings', { siteUrl: 'http://insecure.example.com' })).status).to.equal(400);
    expect((await f.call('PUT', '/project/site-settings', { body: { siteName: 'By agent' } })).status).to.equal(403);

    const host = `www.annals-${Math.random().toString(36).slice(2, 8)}.example`;
    const mine = await asAdmin('PUT', '/project/custom-domains', { domains: [host.toUpperCase(), 'docs.example.org'] });
    expect(mine.status, JSON.stringify(mine.body)).to.equal(200);
    expect(mine.body.domains).to.deep.equal([host, 'docs.example.org']);
    const overview = (await f.call('GET', '/project')).body;
    expect(overview.customDomains).to.deep.equal([host, 'docs.example.org']);
    expect(overview.siteSettings).to.include({ siteUrl: 'https://www.example.com' });

    const other = await otherProject('standard');
    const otherSession = await sessionFor(other);
    const asOther = (domains: string[]) => f.call('PUT', '/project/custom-domains', { token: otherSession, headers: { 'x-project-id': other.projectId }, body: { domains } });
    const clash = await asOther([host]);
    expect(clash.status).to.equal(409);
    expect(clash.body.error.code).to.equal('CONFLICT');
    expect(clash.body.error.message).to.include(host);
    expect((await asOther([`docs.${host}`, host])).status).to.equal(409);

    // The refused request released the host it had claimed: the first project can take it.
    const both = await asAdmin('PUT', '/project/custom-domains', { domains: [host, 'docs.example.org', `docs.${host}`] });
    expect(both.status, JSON.stringify(both.body)).to.equal(200);

    // Released when the first project drops them.
    expect((await asAdmin('PUT', '/project/custom-domains', { domains: ['docs.example.org'] })).body.domains).to.deep.equal(['docs.example.org']);
    const taken = await asOther([host, `docs.${host}`]);
    expect(taken.status, JSON.stringify(taken.body)).to.equal(200);
    expect((await asAdmin('PUT', '/project/custom-domains', { domains: [host] })).status).to.equal(409);
    expect((await asAdmin('PUT', '/project/custom-domains', { domains: ['not a host'] })).status).to.equal(400);
  });
});

describe('admin API: the console IP allowlist behind a trusted proxy (TRUST_PROXY=true)', function () {
  this.timeout(60_000);
  let f: AdminFixture;
  before(async () => {
    f = await startAdminFixture({ env: { TRUST_PROXY: 'true' } });
  });
  after(() => f.stop());

  it('checks the address the proxy saw (the last X-Forwarded-For entry), not the ones the client wrote before it', async () => {
    const added = await f.call('POST', '/project/ip-allowlist', { body: { cidr: '203.0.113.0/24', label: 'office' } });
    expect(added.status, JSON.stringify(added.body)).to.equal(201);
    const login = (forwardedFor: string) =>
      f.call('POST', '/auth/login', { body: { email: f.project.adminEmail, password: PASSWORD, projectId: f.project.projectId }, headers: { 'x-forwarded-for': forwardedFor } });
    // A client outside the office claiming an office address first is refused.
    expect((await login('203.0.113.5, 198.51.100.7')).status).to.equal(403);
    expect((await login('198.51.100.7, 203.0.113.5')).status).to.equal(200);
  });
});
