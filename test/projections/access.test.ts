import { expect } from 'chai';
import { projectionHarness } from '../support/projection-harness.ts';
import { handleCommand } from '../../src/application/command-handler.ts';
import { projectKeysStream, projectStream, tenantStream, userStream } from '../../src/domain/access/access-streams.ts';
import type { Caller } from '../../src/domain/access/caller.ts';
import { keyDecider, type KeyCommand } from '../../src/domain/access/key-decider.ts';
import { projectDecider, type ProjectCommand } from '../../src/domain/access/project-decider.ts';
import { tenantDecider } from '../../src/domain/access/tenant-decider.ts';
import { userDecider, type UserCommand } from '../../src/domain/access/user-decider.ts';
import type { Plan } from '../../src/domain/plans.ts';
import type { Projection } from '../../src/projection-engine/projection.ts';
import { startRebuild } from '../../src/projection-engine/rebuild.ts';
import { newApiKey } from '../../src/security/api-keys.ts';
import { hashPassword } from '../../src/security/password-hashing.ts';
import { access } from '../../projections/access.ts';
import { silentLogger } from '../support/engine-fixture.ts';
import { dumpReadModels } from '../support/dump-read-models.ts';

const TENANT = '0b7e4c6a-6f3e-4d5c-9a51-3b1f9f5b2c01';
const PROJECT = '7d2a9c1e-2b44-4e8a-8f0a-6c1d2e3f4a01';
const OTHER_PROJECT = '7d2a9c1e-2b44-4e8a-8f0a-6c1d2e3f4a02';
const ADMIN = 'a1111111-1111-4111-8111-111111111111';
const EDITOR = 'a2222222-2222-4222-8222-222222222222';
const KEY_1 = 'f1111111-1111-4111-8111-111111111111';
const KEY_2 = 'f2222222-2222-4222-8222-222222222222';
const PUB_1 = 'e1111111-1111-4111-8111-111111111111';
const ALLOW_1 = 'c1111111-1111-4111-8111-111111111111';
const ALLOW_2 = 'c2222222-2222-4222-8222-222222222222';
const T0 = '2026-11-22T12:00:00.000Z';

const operator: Caller = { kind: 'operator', operatorId: 'ops' };
/** Cheap scrypt parameters: the hash only has to be a real hash, not a slow one. */
const FAST_SCRYPT = { N: 1024, r: 8, p: 1 };

function harness(projection: Projection) {
  return projectionHarness(projection, { start: T0, batchSize: 3 });
}

describe('access projection', () => {
  let h: ReturnType<typeof harness>;
  beforeEach(() => {
    h = harness(access);
  });
  afterEach(async () => {
    await h.close();
  });

  /** Each command one second after the last, so every time in the documents tells which event set it. */
  const tick = (): string => {
    h.clock.advance(1000);
    return h.clock.now().toISOString();
  };
  const actor = { actor: { type: 'operator' as const, id: 'ops' } };
  const project = async (command: ProjectCommand, projectId = PROJECT) => {
    tick();
    return handleCommand(h.log, projectStream(projectId), projectDecider, command, { caller: operator }, actor);
  };
  const user = async (userId: string, command: UserCommand) => {
    tick();
    return handleCommand(h.log, userStream(userId), userDecider, command, { caller: operator }, actor);
  };
  const keys = async (command: KeyCommand, plan: Plan = 'business') => {
    tick();
    return handleCommand(h.log, projectKeysStream(PROJECT), keyDecider, command, { caller: operator, project: { id: PROJECT, tenantId: TENANT, plan }, now: h.clock.now() }, actor);
  };

  async function tenantAndProject(): Promise<{ tenantAt: string; projectAt: string }> {
    const tenantAt = tick();
    await handleCommand(h.log, tenantStream(TENANT), tenantDecider, { type: 'create-tenant', tenantId: TENANT, name: 'Acme' }, { caller: operator }, actor);
    await project({ type: 'create-project', projectId: PROJECT, tenantId: TENANT, name: 'Acme site', slug: 'acme-site', plan: 'business', contentLocales: { locales: ['en', 'ja'], defaultLocale: 'en' } });
    return { tenantAt, projectAt: h.clock.now().toISOString() };
  }

  it('files tenants and projects, with every setting a project starts with', async () => {
    const { tenantAt, projectAt } = await tenantAndProject();
    await h.project();
    expect(await h.doc('tenants', TENANT)).to.deep.equal({ tenantId: TENANT, name: 'Acme', createdAt: tenantAt });
    expect(await h.doc('projects', PROJECT)).to.deep.equal({
      projectId: PROJECT,
      tenantId: TENANT,
      name: 'Acme site',
      slug: 'acme-site',
      plan: 'business',
      contentLocales: { locales: ['en', 'ja'], defaultLocale: 'en' },
      customDomains: [],
      siteSettings: { siteUrl: null, siteName: null, description: null },
      loginBranding: { logoUrl: null, primaryColor: null, accentColor: null, message: null },
      ipAllowlist: [],
      approvalPolicy: { humanApproval: false, fourEyes: false },
      usualApprovalPolicy: { humanApproval: false, fourEyes: false },
      reviewNoticeChat: null,
      createdAt: projectAt,
      updatedAt: projectAt,
    });
    expect((await h.find('projects', { filter: { slug: 'acme-site' } })).map((p) => p['projectId'])).to.deep.equal([PROJECT]);
    expect((await h.find('projects', { filter: { tenantId: TENANT } })).map((p) => p['projectId'])).to.deep.equal([PROJECT]);
  });

  it('follows every project settings change, and resolves custom domains to their project', async () => {
    const { projectAt } = await tenantAndProject();
    await project({ type: 'rename-project', name: 'Acme corporate site' });
    await project({ type: 'change-plan', plan: 'enterprise' });
    await project({ type: 'patch-content-locales', locales: ['en', 'ja', 'de'], defaultLocale: 'ja' });
    await project({ type: 'set-custom-domains', domains: ['www.acme.example', 'blog.acme.example'] });
    await h.project();
    expect(await h.doc('domains', 'www.acme.example')).to.deep.equal({ host: 'www.acme.example', projectId: PROJECT });
    expect(await h.doc('domains', 'blog.acme.example')).to.deep.equal({ host: 'blog.acme.example', projectId: PROJECT });

    await project({ type: 'set-custom-domains', domains: ['www.acme.example', 'news.acme.example'] });
    await project({ type: 'update-site-settings', siteUrl: 'https://www.acme.example', siteName: 'Acme' });
    await project({ type: 'update-site-settings', description: 'All about Acme' });
    await project({ type: 'update-login-appearance', logoUrl: 'https://cdn.acme.example/logo.png', primaryColor: '#112233', message: 'Welcome back' });
    await project({ type: 'add-ip-allowlist-entry', entryId: ALLOW_1, cidr: '203.0.113.0/24', label: 'Office' });
    await project({ type: 'add-ip-allowlist-entry', entryId: ALLOW_2, cidr: '198.51.100.7', label: 'VPN' });
    await project({ type: 'set-approval-policy', fourEyes: true });
    await project({ type: 'remove-ip-allowlist-entry', entryId: ALLOW_1 });
    const lastAt = h.clock.now().toISOString();
    await h.project();

    expect(await h.doc('projects', PROJECT)).to.deep.equal({
      projectId: PROJECT,
      tenantId: TENANT,
      name: 'Acme corporate site',
      slug: 'acme-site',
      plan: 'enterprise',
      contentLocales: { locales: ['en', 'ja', 'de'], defaultLocale: 'ja' },
      customDomains: ['www.acme.example', 'news.acme.example'],
      siteSettings: { siteUrl: 'https://www.acme.example', siteName: 'Acme', description: 'All about Acme' },
      loginBranding: { logoUrl: 'https://cdn.acme.example/logo.png', primaryColor: '#112233', accentColor: null, message: 'Welcome back' },
      ipAllowlist: [{ id: ALLOW_2, cidr: '198.51.100.7/32', label: 'VPN' }],
      approvalPolicy: { humanApproval: false, fourEyes: true },
      usualApprovalPolicy: { humanApproval: false, fourEyes: true },
      reviewNoticeChat: null,
      createdAt: projectAt,
      updatedAt: lastAt,
    });
    // A removed domain stops resolving; the kept and added ones resolve.
    expect(await h.doc('domains', 'blog.acme.example')).to.equal(null);
    expect((await h.find('domains', { filter: { projectId: PROJECT } })).map((d) => d['host'])).to.deep.equal(['news.acme.example', 'www.acme.example']);
  });

  it('resolves a host released by one project and taken by another to the new owner', async () => {
    await tenantAndProject();
    await project({ type: 'set-custom-domains', domains: ['shop.acme.example'] });
    await project(
      { type: 'create-project', projectId: OTHER_PROJECT, tenantId: TENANT, name: 'Shop', slug: 'acme-shop', plan: 'business' },
      OTHER_PROJECT,
    );
    // The first project releases the host and the second takes it, all folded in one run.
    await project({ type: 'set-custom-domains', domains: [] });
    await project({ type: 'set-custom-domains', domains: ['shop.acme.example'] }, OTHER_PROJECT);
    await h.project();
    expect(await h.doc('domains', 'shop.acme.example')).to.deep.equal({ host: 'shop.acme.example', projectId: OTHER_PROJECT });
    expect((await h.doc('projects', OTHER_PROJECT))?.['contentLocales']).to.deep.equal({ locales: ['en'], defaultLocale: 'en' });
  });

  it('files console users by id and e-mail, following role, password and disabling', async () => {
    await tenantAndProject();
    const adminHash = await hashPassword('correct horse battery', FAST_SCRYPT);
    const editorHash = await hashPassword('another good password', FAST_SCRYPT);
    await user(ADMIN, { type: 'create-user', userId: ADMIN, tenantId: TENANT, email: '  Admin@Acme.Example ', role: 'tenant_admin', passwordHash: adminHash });
    const adminAt = h.clock.now().toISOString();
    await user(EDITOR, { type: 'create-user', userId: EDITOR, tenantId: TENANT, email: 'editor@acme.example', role: 'editor', passwordHash: editorHash });
    const editorAt = h.clock.now().toISOString();
    await h.project();
    expect(await h.doc('users', ADMIN)).to.deep.equal({
      userId: ADMIN,
      tenantId: TENANT,
      email: 'admin@acme.example',
      role: 'tenant_admin',
      passwordHash: adminHash,
      disabled: false,
      reviewNotices: true,
      createdAt: adminAt,
      updatedAt: adminAt,
    });
    expect(await h.doc('users', EDITOR)).to.include({ role: 'tenant_user', email: 'editor@acme.example', disabled: false });
    // Sign-in looks users up by e-mail.
    expect((await h.find('users', { filter: { email: 'admin@acme.example' } })).map((u) => u['userId'])).to.deep.equal([ADMIN]);

    const newHash = await hashPassword('a brand new password', FAST_SCRYPT);
    await user(EDITOR, { type: 'change-role', role: 'tenant_admin' });
    await user(EDITOR, { type: 'change-password', passwordHash: newHash });
    await user(EDITOR, { type: 'disable-user' });
    const disabledAt = h.clock.now().toISOString();
    await h.project();
    expect(await h.doc('users', EDITOR)).to.deep.equal({
      userId: EDITOR,
      tenantId: TENANT,
      email: 'editor@acme.example',
      role: 'tenant_admin',
      passwordHash: newHash,
      disabled: true,
      reviewNotices: true,
      createdAt: editorAt,
      updatedAt: disabledAt,
    });
    expect((await h.find('users', { filter: { tenantId: TENANT } })).length).to.equal(2);
  });

  it('keeps a user\'s signed-out sessions until they expire (issue 12 item 6)', async () => {
    await tenantAndProject();
    await user(ADMIN, { type: 'create-user', userId: ADMIN, tenantId: TENANT, email: 'admin@acme.example', role: 'tenant_admin', passwordHash: await hashPassword('correct horse battery', FAST_SCRYPT) });
    const self: Caller = { kind: 'user', userId: ADMIN, tenantId: TENANT, role: 'tenant_admin' };
    const signOut = async (sessionId: string, expiresInMs: number) => {
      tick();
      const expiresAt = new Date(h.clock.now().getTime() + expiresInMs).toISOString();
      await handleCommand(h.log, userStream(ADMIN), userDecider, { type: 'revoke-session', sessionId, expiresAt }, { caller: self }, actor);
      return expiresAt;
    };
    const s1 = 'b1111111-1111-4111-8111-111111111111';
    const s2 = 'b2222222-2222-4222-8222-222222222222';
    const s3 = 'b3333333-3333-4333-8333-333333333333';
    await signOut(s1, 500); // expired by the time of the next sign-out (a second later)
    const e2 = await signOut(s2, 60_000);
    await h.project();
    expect((await h.doc('users', ADMIN))!['revokedSessions']).to.deep.equal([{ sessionId: s2, expiresAt: e2 }]);
    const e3 = await signOut(s3, 60_000);
    await h.project();
    expect((await h.doc('users', ADMIN))!['revokedSessions']).to.deep.equal([{ sessionId: s2, expiresAt: e2 }, { sessionId: s3, expiresAt: e3 }]);
  });

  it('files keys by hash (to authenticate) and by id (to list and revoke); a revoked key keeps its document with revokedAt', async () => {
    await tenantAndProject();
    const first = newApiKey('agent');
    const second = newApiKey('agent');
    const pub = newApiKey('public');
    await keys({ type: 'issue-agent-key', keyId: KEY_1, scope: 'full', name: 'Bootstrap', prefix: first.prefix, hash: first.hash });
    const firstAt = h.clock.now().toISOString();
    await keys({ type: 'issue-agent-key', keyId: KEY_2, scope: 'content', name: 'Writer bot', prefix: second.prefix, hash: second.hash });
    await keys({ type: 'issue-public-key', keyId: PUB_1, prefix: pub.prefix, hash: pub.hash });
    const pubAt = h.clock.now().toISOString();
    await h.project();

    const issued = {
      keyId: KEY_1,
      hash: first.hash,
      projectId: PROJECT,
      tenantId: TENANT,
      scope: 'full',
      name: 'Bootstrap',
      prefix: first.prefix,
      createdAt: firstAt,
      revokedAt: null,
      issuedBy: { type: 'operator', id: 'ops' },
    };
    expect(await h.doc('agent_keys', first.hash)).to.deep.equal(issued);
    expect(await h.doc('agent_keys_by_id', KEY_1)).to.deep.equal(issued);
    expect(await h.doc('agent_keys', second.hash)).to.include({ keyId: KEY_2, scope: 'content', revokedAt: null });
    const publicKey = { keyId: PUB_1, hash: pub.hash, projectId: PROJECT, tenantId: TENANT, prefix: pub.prefix, createdAt: pubAt, revokedAt: null };
    expect(await h.doc('public_keys', pub.hash)).to.deep.equal(publicKey);
    expect(await h.doc('public_keys_by_id', PUB_1)).to.deep.equal(publicKey);
    // Nothing of a key but its hash and prefix reaches a document.
    expect(JSON.stringify(await h.find('agent_keys'))).not.to.include(first.key);
    expect((await h.find('agent_keys', { filter: { projectId: PROJECT }, sort: [['createdAt', 'asc']] })).map((k) => k['keyId'])).to.deep.equal([KEY_1, KEY_2]);

    await keys({ type: 'revoke-agent-key', keyId: KEY_1 });
    const revokedAt = h.clock.now().toISOString();
    await keys({ type: 'revoke-public-key', keyId: PUB_1 });
    const pubRevokedAt = h.clock.now().toISOString();
    await h.project();
    expect(await h.doc('agent_keys', first.hash)).to.deep.equal({ ...issued, revokedAt });
    expect(await h.doc('agent_keys_by_id', KEY_1)).to.deep.equal({ ...issued, revokedAt });
    expect(await h.doc('agent_keys', second.hash)).to.include({ revokedAt: null });
    expect(await h.doc('public_keys', pub.hash)).to.deep.equal({ ...publicKey, revokedAt: pubRevokedAt });
    expect(await h.doc('public_keys_by_id', PUB_1)).to.deep.equal({ ...publicKey, revokedAt: pubRevokedAt });
    const active = (await h.find('agent_keys_by_id', { filter: { projectId: PROJECT, revokedAt: null } })).map((k) => k['keyId']);
    expect(active).to.deep.equal([KEY_2]);
  });

  it("keeps the project's usual approval policy: a rule stays in it once it has been on, whatever the policy now", async () => {
    await tenantAndProject();
    await project({ type: 'set-approval-policy', fourEyes: true });
    await project({ type: 'set-approval-policy', fourEyes: false, humanApproval: true });
    await project({ type: 'set-approval-policy', humanApproval: false });
    await h.project();
    expect(await h.doc('projects', PROJECT)).to.deep.include({
      approvalPolicy: { humanApproval: false, fourEyes: false },
      usualApprovalPolicy: { humanApproval: true, fourEyes: true },
    });
  });

  it("names the person a key acts for: the event's issuedBy, or for a key issued before it was recorded, the issuing event's actor", async () => {
    await tenantAndProject();
    const admin: Caller = { kind: 'user', userId: ADMIN, tenantId: TENANT, role: 'tenant_admin' };
    const byAdmin = newApiKey('agent');
    tick();
    await handleCommand(h.log, projectKeysStream(PROJECT), keyDecider, { type: 'issue-agent-key', keyId: KEY_1, scope: 'full', name: 'Admin bot', prefix: byAdmin.prefix, hash: byAdmin.hash }, { caller: admin, project: { id: PROJECT, tenantId: TENANT, plan: 'business' }, now: h.clock.now() }, { actor: { type: 'user', id: ADMIN } });
    // A key issued by an earlier version: no issuedBy in the event, the admin's session as its actor.
    const legacy = newApiKey('agent');
    tick();
    await h.log.append(projectKeysStream(PROJECT), [{ type: 'agent-key.issued', data: { keyId: KEY_2, projectId: PROJECT, tenantId: TENANT, scope: 'content', name: 'Old bot', prefix: legacy.prefix, hash: legacy.hash, issuedAt: h.clock.now().toISOString() } }], 'any', { actor: { type: 'user', id: EDITOR } });
    await h.project();
    expect(await h.doc('agent_keys_by_id', KEY_1)).to.deep.include({ issuedBy: { type: 'user', id: ADMIN } });
    expect(await h.doc('agent_keys_by_id', KEY_2)).to.deep.include({ issuedBy: { type: 'user', id: EDITOR } });
    expect(await h.doc('agent_keys', legacy.hash)).to.deep.include({ issuedBy: { type: 'user', id: EDITOR } });
  });

  it('a rebuild from the log gives the same documents as the live projector', async () => {
    await tenantAndProject();
    await project({ type: 'set-custom-domains', domains: ['a.acme.example', 'b.acme.example'] });
    await project({ type: 'add-ip-allowlist-entry', entryId: ALLOW_1, cidr: '203.0.113.0/24', label: 'Office' });
    await project({ type: 'set-custom-domains', domains: ['b.acme.example'] });
    await project({ type: 'update-login-appearance', accentColor: '#abcdef' });
    await user(ADMIN, { type: 'create-user', userId: ADMIN, tenantId: TENANT, email: 'admin@acme.example', role: 'tenant_admin', passwordHash: await hashPassword('correct horse battery', FAST_SCRYPT) });
    await user(ADMIN, { type: 'disable-user' });
    const key = newApiKey('agent');
    await keys({ type: 'issue-agent-key', keyId: KEY_1, scope: 'schema', name: 'Schema bot', prefix: key.prefix, hash: key.hash });
    await h.project();
    await keys({ type: 'revoke-agent-key', keyId: KEY_1 });
    const pub = newApiKey('public');
    await keys({ type: 'issue-public-key', keyId: PUB_1, prefix: pub.prefix, hash: pub.hash });
    await h.project();

    const live = await dumpReadModels(h.store, [access]);
    const result = await startRebuild({ projection: access, log: h.log, store: h.store, clock: h.clock, logger: silentLogger, dropGraceMs: 0 }).result;
    expect(result).to.include({ generation: 2, previousGeneration: 1 });
    expect(await h.store.activeGeneration('access')).to.equal(2);
    const rebuilt = await dumpReadModels(h.store, [access]);
    expect(rebuilt).to.deep.equal(live);
    expect((rebuilt['access'] as { collections: Record<string, unknown[]> }).collections['domains']).to.have.length(1);
  });
});
