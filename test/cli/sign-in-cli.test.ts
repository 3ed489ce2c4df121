import path from 'node:path';
import { expect } from 'chai';
import { OPERATOR, PASSWORD, startAdminFixture, type AdminFixture } from '../admin/support.ts';
import { runEntry } from '../support/child-process.ts';
import { eventually } from '../support/eventually.ts';
import { tempDir } from '../support/temp-dir.ts';
import { IDP_CERT } from '../support/saml-idp.ts';

/**
 * The operator's way back in (issue 47): with single sign-on only on and the provider out of reach, nobody signs
 * in; `annals sign-in allow-passwords` lets passwords in again beside a running service, and `remove` removes
 * single sign-on, each recorded as the operator's change.
 */
describe('operator CLI: sign-in show | allow-passwords | remove | reset-second-factor | second-factor', function () {
  this.timeout(120_000);
  let f: AdminFixture;
  let dataDir: string;
  const cli = (args: string[]) => runEntry('src/cli/main.ts', ['sign-in', ...args], { DATA_DIR: dataDir, LOG_LEVEL: 'silent' }, 60_000);
  const login = () => fetch(`${f.service.url}/admin/v1/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: f.project.adminEmail, password: PASSWORD }) });

  before(async () => {
    dataDir = path.join(tempDir(), 'data');
    f = await startAdminFixture({ dataDir });
    // Single sign-on only, with a provider nobody can reach (the secret as sealed by the service: opaque here).
    const configured = await f.access.signIn.configureOidc(OPERATOR, f.project.tenantId, { issuer: 'https://login.unreachable.example', clientId: 'annals', sealedClientSecret: 'v1.k.iv.tag.sealed', allowedEmailDomains: ['example.com'], groupsClaim: 'groups', adminGroups: ['cms-admins'], userGroups: [], ssoOnly: true });
    await f.service.supervisor!.waitFor(configured.position, 5_000);
  });
  after(async () => {
    await f?.stop();
  });

  it('shows the settings without the secret, lets passwords in again, and removes single sign-on', async () => {
    expect((await login()).status, 'passwords refused').to.equal(403);

    const show = await cli(['show', '--tenant', f.project.tenantId, '--json']);
    expect(show.code, show.stderr).to.equal(0);
    const shown = JSON.parse(show.stdout) as { oidc: Record<string, unknown> };
    expect(shown.oidc).to.deep.include({ issuer: 'https://login.unreachable.example', clientSecretSet: true, ssoOnly: true });
    expect(show.stdout).to.not.include('v1.k.iv');

    const allow = await cli(['allow-passwords', '--tenant', f.project.tenantId, '--json']);
    expect(allow.code, allow.stderr).to.equal(0);
    expect((JSON.parse(allow.stdout) as { oidc: { ssoOnly: boolean } }).oidc.ssoOnly).to.equal(false);
    await eventually(async () => (await login()).status, (status) => status === 200, 10_000, 'a password sign-in');
    // Saved again without the secret, when the one recorded does not open here (sealed under another SECRETS_KEY;
    // here not sealed by this service at all): asked for again, not a 500.
    const { token } = (await (await login()).json()) as { token: string };
    const unchanged = await f.call('PUT', '/sign-in/oidc', { token, body: { issuer: 'https://login.unreachable.example', clientId: 'annals', allowedEmailDomains: ['example.com'], adminGroups: ['cms-admins'] } });
    expect(unchanged.status, JSON.stringify(unchanged.body)).to.equal(400);
    expect(unchanged.body.error.message).to.match(/does not open with this service's SECRETS_KEY/);

    const remove = await cli(['remove', '--tenant', f.project.tenantId, '--json']);
    expect(remove.code, remove.stderr).to.equal(0);
    expect(JSON.parse(remove.stdout)).to.deep.equal({ tenantId: f.project.tenantId, oidc: null, saml: null, removed: true });
    const events: Array<{ type: string; actor: unknown }> = [];
    for await (const e of f.service.log.readStream(`tenant-${f.project.tenantId}`)) events.push({ type: e.type, actor: e.metadata.actor });
    expect(events.slice(-2).map((e) => e.type)).to.deep.equal(['tenant.oidc-configured', 'tenant.oidc-removed']);
    expect(events.at(-1)!.actor).to.deep.include({ type: 'operator' });
  });

  it('lets passwords in again, and removes single sign-on, for a SAML provider too', async () => {
    const configured = await f.access.signIn.configureSaml(OPERATOR, f.project.tenantId, { idpEntityId: 'https://sts.unreachable.example/adfs', ssoUrl: 'https://sts.unreachable.example/adfs/ls/', sloUrl: null, idpCertificates: [IDP_CERT], allowedEmailDomains: ['example.com'], emailAttribute: 'email', groupsAttribute: 'groups', adminGroups: ['cms-admins'], userGroups: [], ssoOnly: true });
    await f.service.supervisor!.waitFor(configured.position, 5_000);
    expect((await login()).status, 'passwords refused').to.equal(403);
    const allow = await cli(['allow-passwords', '--tenant', f.project.tenantId, '--json']);
    expect(allow.code, allow.stderr).to.equal(0);
    expect((JSON.parse(allow.stdout) as { saml: { ssoOnly: boolean; idpEntityId: string } }).saml).to.deep.include({ ssoOnly: false, idpEntityId: 'https://sts.unreachable.example/adfs' });
    await eventually(async () => (await login()).status, (status) => status === 200, 10_000, 'a password sign-in');
    const remove = await cli(['remove', '--tenant', f.project.tenantId, '--json']);
    expect(JSON.parse(remove.stdout)).to.deep.equal({ tenantId: f.project.tenantId, oidc: null, saml: null, removed: true });
  });

  it("resets the second factor of an admin who lost theirs, and sets the tenant's policy", async () => {
    const admin = { kind: 'user', userId: f.project.userId, tenantId: f.project.tenantId, role: 'tenant_admin' } as const;
    const enrolled = await f.access.secondFactor.enrolTotp(admin, f.project.userId, 'v1.k.iv.tag.sealed', ['a'.repeat(64)]);
    await f.service.supervisor!.waitFor(enrolled.position, 5_000);
    const challenged = (await (await login()).json()) as { token?: string; secondFactor?: unknown };
    expect(challenged.token, 'a password alone no longer signs in').to.equal(undefined);
    expect(challenged.secondFactor).to.not.equal(undefined);

    const reset = await cli(['reset-second-factor', '--user', f.project.userId, '--json']);
    expect(reset.code, reset.stderr).to.equal(0);
    expect(JSON.parse(reset.stdout)).to.deep.equal({ userId: f.project.userId, email: f.project.adminEmail, reset: true });
    await eventually(async () => ((await (await login()).json()) as { token?: string }).token, (token) => typeof token === 'string', 10_000, 'a password sign-in');

    const policy = await cli(['second-factor', '--tenant', f.project.tenantId, '--required', 'true', '--json']);
    expect(policy.code, policy.stderr).to.equal(0);
    expect(JSON.parse(policy.stdout)).to.deep.equal({ tenantId: f.project.tenantId, secondFactorRequired: true });
    const events: Array<{ type: string; actor: { type: string } }> = [];
    for await (const e of f.service.log.readStream(`user-${f.project.userId}`)) events.push({ type: e.type, actor: e.metadata.actor as { type: string } });
    expect(events.find((e) => e.type === 'user.second-factor-reset')?.actor.type).to.equal('operator');
    expect((await cli(['second-factor', '--tenant', f.project.tenantId, '--required', 'maybe'])).code).to.equal(2);
  });

  it('says what is wrong: no such tenant, a missing --tenant', async () => {
    const unknown = await cli(['show', '--tenant', '00000000-0000-4000-8000-000000000000', '--json']);
    expect(unknown.code).to.equal(1);
    expect((JSON.parse(unknown.stdout) as { error: { code: string } }).error.code).to.equal('NOT_FOUND');
    const missing = await cli(['allow-passwords']);
    expect(missing.code).to.equal(2);
    expect(missing.stderr).to.include('--tenant');
  });
});
