import { execFileSync } from 'node:child_process';
import { expect } from 'chai';
import { chromium, type Browser, type Page } from 'playwright-core';
import { adminSession, PASSWORD, startAdminFixture, type AdminFixture } from '../admin/support.ts';
import { chromium as chromiumProgram, needing, openssl, requireProgram } from '../support/system-program.ts';
import { IDP_CERT, startSamlIdp, type TestSamlIdp } from '../support/saml-idp.ts';
import { eventually } from '../support/eventually.ts';
import { CHROMIUM_ARGS, expectAccessible, requireConsoleBuild, screenshot, signIn, watchedPage } from './support.ts';

/**
 * Single sign-on through a SAML 2.0 provider, in headless Chromium against a real one (samlify in the provider's
 * role, test/support/saml-idp.ts, whose page signs in the account whose button is pressed and posts the signed
 * answer to the service): an administrator sets it up on the People page and tests it, and a person signs in
 * from the project's login page through the provider's page.
 */
describe(needing(chromiumProgram, 'console: single sign-on through a SAML 2.0 provider, in headless Chromium'), function () {
  this.timeout(120_000);
  let f: AdminFixture;
  let idp: TestSamlIdp;
  let browser: Browser;
  let spEntityId: string;
  let acsUrl: string;
  let sloServiceUrl: string;

  /** The People page, signed in as the project's administrator, and its single sign-on section. */
  async function peoplePage(page: Page) {
    await signIn(page, `${f.service.url}/console/p/${f.project.projectId}/people`, f.project.adminEmail, PASSWORD);
    return page.getByRole('region', { name: 'Single sign-on' });
  }

  before(async function () {
    const executablePath = requireProgram(this, chromiumProgram);
    requireConsoleBuild();
    f = await startAdminFixture({ plan: 'business' });
    spEntityId = `${f.service.url}/admin/v1/auth/saml/metadata/${f.project.tenantId}`;
    acsUrl = `${f.service.url}/admin/v1/auth/saml/acs`;
    sloServiceUrl = `${f.service.url}/admin/v1/auth/saml/slo/${f.project.tenantId}`;
    idp = await startSamlIdp({ tenantId: f.project.tenantId, spEntityId: (tenantId) => `${f.service.url}/admin/v1/auth/saml/metadata/${tenantId}`, acsUrl });
    browser = await chromium.launch({ executablePath, args: CHROMIUM_ARGS });
  });
  after(async () => {
    await browser?.close();
    await f?.stop();
    await idp?.close();
  });

  it("lets an administrator set up SAML on the People page, with a custom role by group, shows what to register at the provider (this service's certificate too), tests it without signing anyone in, requires encrypted assertions and makes a new key pair", async () => {
    idp.accounts.set('hal', { email: 'hal@staff.example', groups: ['cms-editors'] });
    const admin = await adminSession(f);
    const press = await f.call('POST', '/roles', { token: admin.token, headers: admin.headers, body: { name: 'Press officer', capabilities: ['content.write', 'content.submit'] } });
    expect(press.status, JSON.stringify(press.body)).to.equal(201);
    const context = await browser.newContext({ locale: 'en-US', viewport: { width: 1280, height: 900 } });
    const { page, problems } = await watchedPage(context);
    const sso = await peoplePage(page);

    // Nothing set up: the protocol is chosen first.
    const samlChoice = sso.getByRole('radio', { name: 'SAML 2.0' });
    await samlChoice.waitFor();
    expect(await sso.getByRole('radio', { name: 'OpenID Connect' }).isChecked()).to.equal(true);
    await samlChoice.check();
    await sso.getByLabel('Identity provider entity ID').waitFor();
    // What to register at the provider shows before anything is saved: providers ask for it first.
    expect(await sso.locator('code').allTextContents(), 'the addresses before the settings exist').to.deep.equal([spEntityId, acsUrl, sloServiceUrl]);
    await expectAccessible(page, 'the choice of protocol and the empty SAML form');
    expect(await sso.getByLabel('E-mail attribute').inputValue(), 'the default attribute').to.equal('email');
    expect(await sso.getByLabel('Groups attribute').inputValue()).to.equal('groups');

    await sso.getByLabel('Identity provider entity ID').fill(idp.entityId);
    await sso.getByLabel('Single sign-on URL').fill(idp.ssoUrl);
    await sso.getByLabel(/^Signing certificate \(PEM\)/).fill(IDP_CERT);
    await sso.getByLabel('Allowed e-mail domains').fill('staff.example');
    await sso.getByLabel('Administrator groups').fill('cms-admins');
    await sso.getByLabel('Editor groups').fill('cms-editors');
    const roleGroups = sso.getByRole('group', { name: 'Roles from groups' });
    await roleGroups.getByRole('button', { name: 'Add a group' }).click();
    await roleGroups.getByLabel('Group 1', { exact: true }).fill(' cms-press ');
    await roleGroups.getByLabel('Role of group 1').selectOption({ label: 'Press officer' });
    await expectAccessible(page, 'the SAML form with a role group');
    await sso.getByRole('button', { name: 'Save single sign-on' }).click();
    await sso.getByRole('status').getByText('Single sign-on saved.').waitFor();

    // Set up: no more choice, the addresses to register at the provider, and what the certificate says.
    await sso.getByText(acsUrl, { exact: true }).waitFor();
    expect(await sso.getByRole('radio').count(), 'the protocol is no longer chosen').to.equal(0);
    expect(await sso.locator('code').allTextContents()).to.deep.equal([spEntityId, acsUrl, sloServiceUrl]);
    expect(await sso.getByRole('link', { name: 'Open the metadata (XML)' }).getAttribute('href'), 'the metadata URL').to.equal(spEntityId);
    const certificates = sso.getByRole('listitem').filter({ hasText: 'CN=annals test idp' });
    await certificates.getByText(/valid until/).waitFor();
    expect(await sso.locator('.cert-warning').count(), 'a certificate valid for long is not flagged').to.equal(0);
    expect(await sso.getByLabel(/^Signing certificate \(PEM\)/).inputValue(), 'what was pasted stays for the next save').to.equal(IDP_CERT);
    await sso.getByText(/Paste it again each time you save/).waitFor();
    const metadata = await fetch(spEntityId);
    expect(await metadata.text(), 'the metadata URL shown serves the metadata').to.include(acsUrl);
    const settings = await f.call('GET', '/sign-in/saml', { token: admin.token });
    expect(settings.body).to.deep.include({ idpEntityId: idp.entityId, ssoUrl: idp.ssoUrl, allowedEmailDomains: ['staff.example'], adminGroups: ['cms-admins'], userGroups: ['cms-editors'], emailAttribute: 'email', groupsAttribute: 'groups', ssoOnly: false });
    expect(settings.body.roleGroups, 'the group trimmed, with its role').to.deep.equal([{ group: 'cms-press', roleId: press.body.id }]);
    expect(await roleGroups.getByLabel('Group 1', { exact: true }).inputValue()).to.equal('cms-press');
    // This service's certificate, among what to register at the provider: the one the settings answer and the metadata carries.
    const spCertificate = settings.body.spCertificate as { fingerprint256: string; pem: string } | null;
    expect(spCertificate, 'a key pair made when SAML is set up').to.not.equal(null);
    const fingerprint = spCertificate!.fingerprint256;
    const shownFingerprint = sso.locator('.sp-fingerprint');
    expect(await shownFingerprint.textContent(), 'the fingerprint shown').to.equal(fingerprint);
    expect(await sso.getByLabel("This service's certificate (PEM)").inputValue()).to.equal(spCertificate!.pem);
    expect(await sso.getByLabel("This service's certificate (PEM)").getAttribute('readonly')).to.not.equal(null);
    await sso.getByText(/The metadata URL carries it too/).waitFor();
    const certificateBody = (pem: string) => pem.replace(/-----[A-Z ]+-----|\s/g, '');
    expect((await (await fetch(spEntityId)).text()).replace(/\s/g, ''), 'the metadata carries the certificate shown').to.include(certificateBody(spCertificate!.pem));
    expect(await sso.getByRole('checkbox', { name: 'Require encrypted assertions' }).isChecked()).to.equal(false);
    await expectAccessible(page, "the SAML settings, set up, with this service's certificate");
    await screenshot(page, 'admin-single-sign-on-saml');

    // Test sign-in: the provider's page in a new tab, then what a sign-in would do.
    const [tab] = await Promise.all([context.waitForEvent('page'), sso.getByRole('link', { name: 'Test sign-in' }).click()]);
    await tab.waitForURL((url) => url.href.startsWith(idp.ssoUrl));
    await tab.getByRole('button', { name: 'hal' }).click();
    await tab.getByRole('heading', { name: 'Single sign-on test' }).waitFor();
    await tab.getByRole('row', { name: /Subject/ }).getByText('hal', { exact: true }).waitFor();
    await tab.getByText('A sign-in would create a new user, as tenant_user.').waitFor();
    await expectAccessible(tab, 'the SAML test page');
    const users = await f.call('GET', '/users', { token: admin.token });
    expect(users.body.items.map((u: { email: string }) => u.email), 'the test made nobody').to.not.include('hal@staff.example');
    await tab.close();

    // Encrypted assertions required: saved with every other field, and the key pair kept.
    const readSettings = () => f.call('GET', '/sign-in/saml', { token: admin.token });
    await sso.getByRole('checkbox', { name: 'Require encrypted assertions' }).check();
    await sso.getByText(/register the certificate at the provider, and have it encrypt, first/).waitFor();
    await sso.getByRole('button', { name: 'Save single sign-on' }).click();
    const encrypted = await eventually(readSettings, (r) => r.body.wantAssertionsEncrypted === true, 10_000, 'encrypted assertions required');
    expect(encrypted.body.spCertificate.fingerprint256, 'a save keeps the key pair').to.equal(fingerprint);
    expect(encrypted.body.roleGroups, 'a save keeps the role groups').to.deep.equal([{ group: 'cms-press', roleId: press.body.id }]);
    await sso.getByRole('status').getByText('Single sign-on saved.').waitFor();
    expect(await shownFingerprint.textContent()).to.equal(fingerprint);

    // A new key pair, after the confirmation that says the provider must be given the new certificate.
    await sso.getByRole('button', { name: 'Make a new key pair' }).click();
    const confirm = page.getByRole('dialog', { name: 'Make a new key pair for this service?' });
    await confirm.getByText(/Give the provider the new certificate/).waitFor();
    await expectAccessible(page, 'the confirmation of a new key pair');
    await confirm.getByRole('button', { name: 'Make a new key pair' }).click();
    await sso.getByRole('status').getByText('Single sign-on saved with a new key pair: give the provider the new certificate.').waitFor();
    const renewed = await eventually(readSettings, (r) => r.body.spCertificate?.fingerprint256 !== fingerprint, 10_000, 'a new key pair');
    expect(renewed.body).to.deep.include({ wantAssertionsEncrypted: true, ssoOnly: false, adminGroups: ['cms-admins'] });
    expect(renewed.body.roleGroups).to.deep.equal([{ group: 'cms-press', roleId: press.body.id }]);
    await eventually(() => shownFingerprint.textContent(), (text) => text === renewed.body.spCertificate.fingerprint256, 10_000, 'the new fingerprint shown');
    expect(await sso.getByLabel("This service's certificate (PEM)").inputValue()).to.equal(renewed.body.spCertificate.pem);
    expect(await sso.getByRole('checkbox', { name: 'Require encrypted assertions' }).isChecked()).to.equal(true);
    await expectAccessible(page, "the SAML settings with this service's new certificate");

    // The provider given the new certificate (through the metadata): it checks the signed request and encrypts the assertion, which the test takes.
    idp.register(await (await fetch(spEntityId)).text(), { signedRequests: true, encrypt: true });
    try {
      const [encryptedTab] = await Promise.all([context.waitForEvent('page'), sso.getByRole('link', { name: 'Test sign-in' }).click()]);
      await encryptedTab.getByRole('button', { name: 'hal' }).click();
      await encryptedTab.getByRole('heading', { name: 'Single sign-on test' }).waitFor();
      await encryptedTab.getByText('A sign-in would create a new user, as tenant_user.').waitFor();
      await encryptedTab.close();
    } finally {
      idp.register(null);
    }

    // Back to assertions in clear, which the provider of the later tests sends.
    await sso.getByRole('checkbox', { name: 'Require encrypted assertions' }).uncheck();
    await sso.getByRole('button', { name: 'Save single sign-on' }).click();
    const reset = await eventually(readSettings, (r) => r.body.wantAssertionsEncrypted === false, 10_000, 'encrypted assertions no longer required');
    expect(reset.body.spCertificate.fingerprint256).to.equal(renewed.body.spCertificate.fingerprint256);
    await sso.getByRole('status').getByText('Single sign-on saved.').waitFor();
    expect(problems).to.deep.equal([]);
    await context.close();
  });

  it("offers the organisation's SAML provider on the project's login page, and signs the person in through its page", async () => {
    idp.accounts.set('grace', { email: 'grace@staff.example', groups: ['cms-editors'] });
    const context = await browser.newContext({ locale: 'en-US', viewport: { width: 1280, height: 900 } });
    const { page, problems } = await watchedPage(context);
    await page.goto(`${f.service.url}/console/p/${f.project.projectId}/`);
    const sso = page.getByRole('link', { name: 'Sign in with single sign-on' });
    await sso.waitFor();
    await page.getByText('or with your e-mail and password').waitFor();
    await expectAccessible(page, 'the login page with SAML single sign-on');
    await sso.click();

    await page.waitForURL((url) => url.href.startsWith(idp.ssoUrl));
    await page.getByRole('button', { name: 'grace' }).click();

    await page.waitForURL(`${f.service.url}/console/p/${f.project.projectId}/**`);
    await page.getByRole('navigation', { name: 'Main' }).waitFor();
    await page.getByText('Signed in as grace@staff.example').waitFor();
    const session = (await page.evaluate(`fetch('/admin/v1/auth/session').then((r) => r.json())`)) as { user: { email: string; role: string }; cookie: boolean };
    expect(session).to.deep.include({ cookie: true });
    expect(session.user).to.deep.include({ email: 'grace@staff.example', role: 'tenant_user' });
    expect(problems).to.deep.equal([]);
    await context.close();
  });

  it('signs in again through the provider in a tab of its own when a session ends over a page, which then goes on', async () => {
    idp.accounts.set('ivy', { email: 'ivy@staff.example', groups: ['cms-editors'] });
    const context = await browser.newContext({ locale: 'en-US', viewport: { width: 1280, height: 900 } });
    const { page, problems } = await watchedPage(context);
    await page.goto(`${f.service.url}/console/p/${f.project.projectId}/`);
    await page.getByRole('link', { name: 'Sign in with single sign-on' }).click();
    await page.getByRole('button', { name: 'ivy' }).click();
    await page.getByText('Signed in as ivy@staff.example').waitFor();
    const here = page.url();

    // The session ends on the service (signed out elsewhere): the page's next call opens the dialog over it.
    const cookie = (await context.cookies(f.service.url)).find((c) => c.name === 'annals-session')!;
    expect((await fetch(`${f.service.url}/admin/v1/auth/logout`, { method: 'POST', headers: { authorization: `Bearer ${cookie.value}` } })).status).to.equal(204);
    const dialog = page.getByRole('dialog');
    const again = dialog.getByRole('link', { name: 'Sign in with single sign-on' });
    if (!(await dialog.isVisible())) await page.getByRole('link', { name: 'Review desk' }).click({ timeout: 5_000 }).catch(() => undefined);
    await again.waitFor();
    expect(await again.getAttribute('target'), 'the page stays where it is').to.equal('_blank');

    // The provider's page in the new tab; signed in there, the page underneath goes on.
    const [tab] = await Promise.all([context.waitForEvent('page'), again.click()]);
    await tab.getByRole('button', { name: 'ivy' }).click();
    await tab.getByText('Signed in as ivy@staff.example').waitFor();
    await dialog.waitFor({ state: 'hidden' });
    expect(page.url().startsWith(here.replace(/\/$/, '')), 'the page was not left').to.equal(true);
    expect(problems).to.deep.equal([]);
    await context.close();
  });

  it("takes a second certificate while the provider changes keys, and flags one that ends within 30 days", async function () {
    const opensslPath = requireProgram(this, openssl);
    // The provider's next certificate, valid for ten days.
    const next = execFileSync(opensslPath, ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', '/dev/null', '-days', '10', '-subj', '/CN=annals next idp', '-out', '-'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
    const context = await browser.newContext({ locale: 'en-US', viewport: { width: 1280, height: 900 } });
    const { page, problems } = await watchedPage(context);
    const sso = await peoplePage(page);
    await eventually(() => sso.getByLabel('Identity provider entity ID').inputValue(), (value) => value === idp.entityId, 10_000, 'the entity ID in the form');
    // A page opened anew cannot hold the certificate's text: it is pasted again.
    const first = sso.getByLabel(/^Signing certificate \(PEM\)/);
    expect(await first.inputValue()).to.equal('');
    await first.fill(IDP_CERT);
    await sso.getByRole('button', { name: 'Add a second certificate' }).click();
    await sso.getByLabel('Second signing certificate (PEM)').fill(next);
    await sso.getByRole('button', { name: 'Save single sign-on' }).click();
    await sso.getByRole('status').getByText('Single sign-on saved.').waitFor();
    const soon = sso.getByRole('listitem').filter({ hasText: 'CN=annals next idp' });
    await soon.getByText(/^Expires on .*, within 30 days/).waitFor();
    expect(await sso.getByRole('listitem').filter({ hasText: 'CN=annals test idp' }).locator('.cert-warning').count()).to.equal(0);
    await expectAccessible(page, 'two certificates, one near its end');

    // The change done: back to one certificate.
    await sso.getByRole('button', { name: 'Remove the second certificate' }).click();
    await sso.getByRole('button', { name: 'Save single sign-on' }).click();
    await eventually(() => sso.getByRole('listitem').filter({ hasText: 'CN=annals' }).count(), (n) => n === 1, 10_000, 'one certificate in use');
    const settings = await f.call('GET', '/sign-in/saml', { token: (await adminSession(f)).token });
    expect(settings.body.idpCertificates.map((c: { subject: string }) => c.subject)).to.deep.equal(['CN=annals test idp']);
    expect(settings.body.roleGroups.map((r: { group: string }) => r.group), 'a save from the page keeps the role groups').to.deep.equal(['cms-press']);
    expect(problems).to.deep.equal([]);
    await context.close();
  });
});
