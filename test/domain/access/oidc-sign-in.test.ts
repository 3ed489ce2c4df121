import { expect } from 'chai';
import { DomainError } from '../../../src/domain/domain-error.ts';
import { decideOidcSignIn, roleOf, type OidcSignInInput, type OidcUser } from '../../../src/domain/access/oidc-sign-in.ts';
import { oidcSettingsValue, issuerValue, type OidcSettings } from '../../../src/domain/access/oidc-settings.ts';
import { tenantDecider } from '../../../src/domain/access/tenant-decider.ts';
import { userDecider } from '../../../src/domain/access/user-decider.ts';
import { ADMIN_ID, admin, agent, editor, foreignAdmin, given, operator, OTHER_TENANT, TENANT } from './support.ts';

const ISSUER = 'https://login.example.com/realms/staff';
const settings: OidcSettings = { issuer: ISSUER, clientId: 'annals', sealedClientSecret: 'v1.k.iv.tag.data', allowedEmailDomains: ['example.com'], groupsClaim: 'groups', adminGroups: ['cms-admins'], userGroups: ['cms-editors'], ssoOnly: false };
const project = { tenantId: TENANT, plan: 'business' as const, consoleIpAllowlist: [] };
const person = (overrides: Partial<OidcUser> = {}): OidcUser => ({ id: ADMIN_ID, tenantId: TENANT, email: 'ann@example.com', role: 'tenant_user', disabled: false, linkedSubject: null, ...overrides });
const input = (overrides: Partial<OidcSignInInput> = {}): OidcSignInInput => ({
  tenantId: TENANT,
  settings,
  claims: { subject: 'sub-1', email: 'Ann@Example.com', emailVerified: true, groups: ['cms-editors'] },
  linkedUser: null,
  userWithEmail: null,
  project,
  ...overrides,
});
const refusal = (run: () => unknown): DomainError => {
  try {
    run();
  } catch (error) {
    if (error instanceof DomainError) return error;
    throw error;
  }
  throw new Error('expected a refusal');
};

describe('OpenID Connect settings', () => {
  it('accepts https issuers, and http only on this machine', () => {
    expect(issuerValue(ISSUER)).to.equal(ISSUER);
    expect(issuerValue('http://127.0.0.1:8080')).to.equal('http://127.0.0.1:8080');
    expect(issuerValue('http://localhost:8080/')).to.equal('http://localhost:8080/');
    for (const wrong of ['http://login.example.com', 'ftp://x.example', 'https://x.example/?a=1', 'https://user:pw@x.example', 'not a url']) {
      expect(() => issuerValue(wrong), wrong).to.throw(DomainError);
    }
  });

  it('normalises domains and groups, and refuses settings that would let anyone in or nobody administer', () => {
    const value = oidcSettingsValue({ ...settings, allowedEmailDomains: [' Example.COM', '@example.com', 'staff.example.org'], adminGroups: [' cms-admins ', 'cms-admins'] });
    expect(value.allowedEmailDomains).to.deep.equal(['example.com', 'staff.example.org']);
    expect(value.adminGroups).to.deep.equal(['cms-admins']);
    expect(refusal(() => oidcSettingsValue({ ...settings, allowedEmailDomains: [] })).message).to.match(/at least one e-mail domain/);
    expect(refusal(() => oidcSettingsValue({ ...settings, allowedEmailDomains: ['exa mple.com'] })).message).to.match(/not a domain name/);
    expect(refusal(() => oidcSettingsValue({ ...settings, adminGroups: [] })).message).to.match(/adminGroups/);
    expect(refusal(() => oidcSettingsValue({ ...settings, sealedClientSecret: 'the-secret' })).message).to.match(/sealed/);
  });
});

describe('decideOidcSignIn', () => {
  it('provisions a person new here with the role their groups give', () => {
    expect(decideOidcSignIn(input())).to.deep.equal({ kind: 'provision', email: 'ann@example.com', role: 'tenant_user', roleId: null });
    expect(decideOidcSignIn(input({ claims: { subject: 's', email: 'ann@example.com', emailVerified: true, groups: ['cms-editors', 'cms-admins'] } }))).to.include({ role: 'tenant_admin' });
  });

  it('gives tenant_user to everyone of an allowed domain when no user groups are set, and refuses those in no allowed group otherwise', () => {
    expect(roleOf({ ...settings, userGroups: [] }, undefined)).to.deep.equal({ role: 'tenant_user', roleId: null });
    expect(roleOf(settings, 'cms-admins')).to.deep.equal({ role: 'tenant_admin', roleId: null });
    expect(refusal(() => roleOf(settings, ['sales'])).code).to.equal('FORBIDDEN');
    expect(refusal(() => roleOf(settings, { groups: ['cms-admins'] })).code).to.equal('FORBIDDEN');
  });

  it('signs in the linked user, with the role the groups give now', () => {
    const decision = decideOidcSignIn(input({ linkedUser: person({ email: 'old@example.com', role: 'tenant_admin', linkedSubject: 'sub-1' }) }));
    expect(decision).to.deep.equal({ kind: 'existing', userId: ADMIN_ID, role: 'tenant_user', roleId: null, email: 'old@example.com', link: false, roleChange: { role: 'tenant_user', roleId: null } });
  });

  it('links an existing user of the tenant by the verified address', () => {
    expect(decideOidcSignIn(input({ userWithEmail: person({ role: 'tenant_user' }) }))).to.deep.equal({ kind: 'existing', userId: ADMIN_ID, role: 'tenant_user', roleId: null, email: 'ann@example.com', link: true, roleChange: null });
  });

  describe("the organisation's own roles from groups", () => {
    const LEGAL = '11111111-1111-4111-8111-111111111111';
    const PRESS = '22222222-2222-4222-8222-222222222222';
    const mapped = { ...settings, roleGroups: [{ group: 'legal', roleId: LEGAL }, { group: 'press', roleId: PRESS }] };
    const claims = (groups: string[]) => ({ subject: 'sub-1', email: 'ann@example.com', emailVerified: true, groups });

    it('gives the first matching group\'s role, lets its members in without a user group, and admin groups come first', () => {
      expect(roleOf(mapped, ['press', 'legal'])).to.deep.equal({ role: 'tenant_user', roleId: LEGAL });
      expect(roleOf(mapped, ['press'])).to.deep.equal({ role: 'tenant_user', roleId: PRESS });
      expect(roleOf(mapped, ['legal', 'cms-admins'])).to.deep.equal({ role: 'tenant_admin', roleId: null });
      expect(roleOf(mapped, ['cms-editors'])).to.deep.equal({ role: 'tenant_user', roleId: null });
      expect(refusal(() => roleOf(mapped, ['sales'])).code).to.equal('FORBIDDEN');
      expect(decideOidcSignIn(input({ settings: mapped, claims: claims(['legal']) }))).to.deep.include({ kind: 'provision', role: 'tenant_user', roleId: LEGAL });
    });

    it('with role groups the provider decides custom roles: one given in the console is taken away when no group gives it', () => {
      const linked = (roleId: string | null) => person({ linkedSubject: 'sub-1', roleId });
      expect(decideOidcSignIn(input({ settings: mapped, claims: claims(['press']), linkedUser: linked(LEGAL) }))).to.deep.include({ roleId: PRESS, roleChange: { role: 'tenant_user', roleId: PRESS } });
      expect(decideOidcSignIn(input({ settings: mapped, claims: claims(['cms-editors']), linkedUser: linked(LEGAL) }))).to.deep.include({ roleId: null, roleChange: { role: 'tenant_user', roleId: null } });
      expect(decideOidcSignIn(input({ settings: mapped, claims: claims(['legal']), linkedUser: linked(LEGAL) }))).to.deep.include({ roleId: LEGAL, roleChange: null });
    });

    it('without role groups a custom role given in the console stays while the groups keep the person tenant_user, and goes with tenant_admin', () => {
      const linked = person({ linkedSubject: 'sub-1', roleId: LEGAL });
      expect(decideOidcSignIn(input({ claims: claims(['cms-editors']), linkedUser: linked }))).to.deep.include({ roleId: LEGAL, roleChange: null });
      expect(decideOidcSignIn(input({ claims: claims(['cms-admins']), linkedUser: linked }))).to.deep.include({ role: 'tenant_admin', roleId: null, roleChange: { role: 'tenant_admin', roleId: null } });
    });

    it('settings name each group once, with a role the organisation has; a role single sign-on gives is not removed', () => {
      expect(refusal(() => oidcSettingsValue({ ...settings, roleGroups: [{ group: 'legal', roleId: LEGAL }, { group: ' legal ', roleId: PRESS }] })).message).to.match(/named twice/);
      expect(refusal(() => oidcSettingsValue({ ...settings, roleGroups: [{ group: 'legal', roleId: 'admin' }] })).message).to.match(/not a role id/);
      const created = { type: 'tenant.created' as const, data: { tenantId: TENANT, name: 'Acme' } };
      const legal = { type: 'tenant.role-defined' as const, data: { tenantId: TENANT, roleId: LEGAL, name: 'Legal', description: '', capabilities: ['content.approve' as const], formSetIds: null } };
      given(tenantDecider, [created, legal]).when({ type: 'configure-oidc', settings: mapped }, { caller: admin }).thenFails('VALIDATION_ERROR', /no role 22222222.* "press"/);
      const press = { ...legal, data: { ...legal.data, roleId: PRESS, name: 'Press' } };
      const configured = { type: 'tenant.oidc-configured' as const, data: { tenantId: TENANT, ...mapped } };
      given(tenantDecider, [created, legal, press]).when({ type: 'configure-oidc', settings: mapped }, { caller: admin }).then([configured]);
      given(tenantDecider, [created, legal, press, configured]).when({ type: 'remove-role', roleId: LEGAL, holders: 0 }, { caller: admin }).thenFails('CONFLICT', /Single sign-on gives the role "Legal"/);
    });
  });

  it('refuses an address of another tenant, an account linked to another person, and a linked user of another tenant, alike', () => {
    for (const overrides of [{ userWithEmail: person({ tenantId: OTHER_TENANT }) }, { userWithEmail: person({ linkedSubject: 'someone-else' }) }, { linkedUser: person({ tenantId: OTHER_TENANT }) }, { project: { ...project, tenantId: OTHER_TENANT } }]) {
      const error = refusal(() => decideOidcSignIn(input(overrides)));
      expect(error.code).to.equal('UNAUTHORIZED');
      expect(error.message).to.equal('Single sign-on did not sign you in to this organisation.');
    }
  });

  it('refuses a missing or unverified address, a domain not allowed, and a disabled account', () => {
    expect(refusal(() => decideOidcSignIn(input({ claims: { subject: 's', emailVerified: true } }))).message).to.match(/no e-mail address/);
    expect(refusal(() => decideOidcSignIn(input({ claims: { subject: 's', email: 'ann@example.com', emailVerified: 'true' } }))).message).to.match(/verified/);
    expect(refusal(() => decideOidcSignIn(input({ claims: { subject: 's', email: 'ann@example.com.evil.org', emailVerified: true, groups: ['cms-admins'] } }))).code).to.equal('FORBIDDEN');
    expect(refusal(() => decideOidcSignIn(input({ userWithEmail: person({ disabled: true }) }))).message).to.match(/disabled/);
    expect(refusal(() => decideOidcSignIn(input({ linkedUser: person({ disabled: true, linkedSubject: 'sub-1' }) }))).message).to.match(/disabled/);
  });

  it("applies the project's console IP allowlist", () => {
    const listed = { ...project, consoleIpAllowlist: [{ id: 'e', cidr: '10.0.0.0/8', label: '' }] };
    expect(refusal(() => decideOidcSignIn(input({ project: listed, clientIp: '192.0.2.1' }))).code).to.equal('FORBIDDEN');
    expect(decideOidcSignIn(input({ project: listed, clientIp: '10.1.2.3' })).kind).to.equal('provision');
  });
});

describe('tenant decider: OpenID Connect settings', () => {
  const created = { type: 'tenant.created' as const, data: { tenantId: TENANT, name: 'Acme' } };

  it('records the settings as a whole for a tenant_admin, and nothing when they do not change', () => {
    given(tenantDecider, [created]).when({ type: 'configure-oidc', settings }, { caller: admin }).then([{ type: 'tenant.oidc-configured', data: { tenantId: TENANT, ...settings } }]);
    given(tenantDecider, [created, { type: 'tenant.oidc-configured', data: { tenantId: TENANT, ...settings } }]).when({ type: 'configure-oidc', settings }, { caller: admin }).thenNothing();
    given(tenantDecider, [created, { type: 'tenant.oidc-configured', data: { tenantId: TENANT, ...settings } }]).when({ type: 'remove-oidc' }, { caller: admin }).then([{ type: 'tenant.oidc-removed', data: { tenantId: TENANT } }]);
    given(tenantDecider, [created]).when({ type: 'remove-oidc' }, { caller: admin }).thenNothing();
  });

  it('is for tenant_admin sessions of the tenant only', () => {
    given(tenantDecider, [created]).when({ type: 'configure-oidc', settings }, { caller: editor }).thenFails('FORBIDDEN');
    given(tenantDecider, [created]).when({ type: 'configure-oidc', settings }, { caller: agent('full') }).thenFails('FORBIDDEN');
    given(tenantDecider, [created]).when({ type: 'configure-oidc', settings }, { caller: foreignAdmin }).thenFails('NOT_FOUND');
  });
});

describe('user decider: identities and sign-ins', () => {
  const created = { type: 'user.created' as const, data: { userId: ADMIN_ID, tenantId: TENANT, email: 'ann@example.com', role: 'tenant_admin' as const, passwordHash: 'scrypt$16384$8$1$c2FsdA$aGFzaA' } };
  const linked = { type: 'user.identity-linked' as const, data: { userId: ADMIN_ID, protocol: 'oidc' as const, issuer: ISSUER, subject: 'sub-1' } };

  it('links an identity on the sign-in\'s word only, once, and never to a second person at the same provider', () => {
    given(userDecider, [created]).when({ type: 'link-identity', issuer: ISSUER, subject: 'sub-1' }, { caller: operator }).then([linked]);
    given(userDecider, [created, linked]).when({ type: 'link-identity', issuer: ISSUER, subject: 'sub-1' }, { caller: operator }).thenNothing();
    given(userDecider, [created, linked]).when({ type: 'link-identity', issuer: ISSUER, subject: 'sub-2' }, { caller: operator }).thenFails('CONFLICT');
    given(userDecider, [created]).when({ type: 'link-identity', issuer: ISSUER, subject: 'sub-1' }, { caller: admin }).thenFails('FORBIDDEN');
  });

  it("ends a session on the provider's logout only (an operator caller), never on a person's word", () => {
    const end = { type: 'end-session' as const, sessionId: 'b1111111-1111-4111-8111-111111111111', expiresAt: '2026-12-08T00:00:00.000Z' };
    given(userDecider, [created]).when(end, { caller: operator }).then([{ type: 'user.session-revoked', data: { userId: ADMIN_ID, sessionId: end.sessionId, expiresAt: end.expiresAt } }]);
    given(userDecider, [created]).when(end, { caller: admin }).thenFails('FORBIDDEN');
  });

  it('records a sign-in, with a password or through a provider (and then which), by the person who signed in', () => {
    const command = { type: 'record-sign-in' as const, sessionId: 'b1111111-1111-4111-8111-111111111111', method: 'oidc' as const, issuer: ISSUER, idpSessionId: 'sid-9', expiresAt: '2026-12-08T00:00:00.000Z' };
    given(userDecider, [created]).when(command, { caller: admin }).then([{ type: 'user.signed-in', data: { userId: ADMIN_ID, sessionId: command.sessionId, method: 'oidc', issuer: ISSUER, idpSessionId: 'sid-9', expiresAt: command.expiresAt } }]);
    given(userDecider, [created]).when(command, { caller: editor }).thenFails('FORBIDDEN');
    const password = { type: 'record-sign-in' as const, sessionId: command.sessionId, method: 'password' as const, expiresAt: command.expiresAt };
    given(userDecider, [created]).when(password, { caller: admin }).then([{ type: 'user.signed-in', data: { userId: ADMIN_ID, sessionId: command.sessionId, method: 'password', expiresAt: command.expiresAt } }]);
    given(userDecider, [created]).when({ ...password, issuer: ISSUER }, { caller: admin }).thenFails('VALIDATION_ERROR');
    given(userDecider, [created]).when({ ...command, issuer: undefined }, { caller: admin }).thenFails('VALIDATION_ERROR');
  });
});
