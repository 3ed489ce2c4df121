import { expect } from 'chai';
import { chromium, type Browser, type Page } from 'playwright-core';
import { adminSession, PASSWORD, startAdminFixture, type AdminFixture } from '../admin/support.ts';
import { chromium as chromiumProgram, needing, requireProgram } from '../support/system-program.ts';
import { startOidcProvider, type TestOidcProvider } from '../support/oidc-provider.ts';
import { eventually } from '../support/eventually.ts';
import { CHROMIUM_ARGS, expectAccessible, requireConsoleBuild, screenshot, signIn, watchedPage } from './support.ts';

/**
 * Single sign-on from the console's login page (issue 47), in headless Chromium against a real OpenID provider
 * (oidc-provider, started in the test): the page offers the organisation's provider, the person signs in on the
 * provider's own pages and lands in the project, signed in with the role their groups give.
 */
describe(needing(chromiumProgram, 'console: single sign-on through an OpenID provider, in headless Chromium'), function () {
  this.timeout(120_000);
  let f: AdminFixture;
  let idp: TestOidcProvider;
  let browser: Browser;

  /** The provider's own login and consent pages, as `login`, on a page the service sent there. */
  async function signInAtProvider(page: Page, login: string): Promise<void> {
    await page.waitForURL((url) => url.origin === idp.issuer);
    await page.locator('input[name="login"]').fill(login);
    await page.locator('input[name="password"]').fill('whatever the provider checks');
    await page.getByRole('button', { name: 'Sign-in' }).click();
    await page.getByRole('button', { name: 'Continue' }).click();
  }

  before(async function () {
    const executablePath = requireProgram(this, chromiumProgram);
    requireConsoleBuild();
    f = await startAdminFixture({ plan: 'business', env: { OUTBOUND_ALLOWLIST: '127.0.0.1' } });
    idp = await startOidcProvider({ redirectUri: `${f.service.url}/admin/v1/auth/oidc/callback` });
    const { token } = await adminSession(f);
    const configured = await f.call('PUT', '/sign-in/oidc', { token, body: { issuer: idp.issuer, clientId: idp.clientId, clientSecret: idp.clientSecret, allowedEmailDomains: ['staff.example'], adminGroups: ['cms-admins'], userGroups: ['cms-editors'] } });
    expect(configured.status, JSON.stringify(configured.body)).to.equal(200);
    browser = await chromium.launch({ executablePath, args: CHROMIUM_ARGS });
  });
  after(async () => {
    await browser?.close();
    await f?.stop();
    await idp?.close();
  });

  it('lets an administrator change the settings on the People page, give a custom role by group, and test them without signing anyone in', async () => {
    idp.accounts.set('hal', { email: 'hal@staff.example', groups: ['cms-reviewers'] });
    const admin = await adminSession(f);
    const legal = await f.call('POST', '/roles', { token: admin.token, headers: admin.headers, body: { name: 'Legal reviewer', capabilities: ['content.approve'] } });
    expect(legal.status, JSON.stringify(legal.body)).to.equal(201);
    const context = await browser.newContext({ locale: 'en-US', viewport: { width: 1280, height: 900 } });
    const { page, problems } = await watchedPage(context);
    await signIn(page, `${f.service.url}/console/p/${f.project.projectId}/people`, f.project.adminEmail, PASSWORD);
    const sso = page.getByRole('region', { name: 'Single sign-on' });
    await sso.getByText(`${f.service.url}/admin/v1/auth/oidc/callback`).waitFor();
    // The form is filled from the settings once they have loaded.
    await eventually(() => sso.getByLabel('Issuer URL').inputValue(), (value) => value === idp.issuer, 10_000, 'the issuer in the form');
    await sso.getByText(`${f.service.url}/admin/v1/auth/oidc/backchannel-logout/${f.project.tenantId}`).waitFor();
    expect(await sso.getByLabel('Client secret').inputValue(), 'the secret is never shown').to.equal('');
    await sso.getByLabel('Editor groups').fill('cms-editors, cms-reviewers');

    // Roles from groups: a group named twice is refused by the service, which says why; one row is taken.
    const roleGroups = sso.getByRole('group', { name: 'Roles from groups' });
    await roleGroups.getByText(/the provider decides the organisation's own roles/).waitFor();
    await roleGroups.getByText('No group gives a role', { exact: false }).waitFor();
    for (const n of [1, 2]) {
      await roleGroups.getByRole('button', { name: 'Add a group' }).click();
      await roleGroups.getByLabel(`Group ${n}`, { exact: true }).fill('cms-reviewers');
      await roleGroups.getByLabel(`Role of group ${n}`).selectOption({ label: 'Legal reviewer' });
    }
    await sso.getByRole('button', { name: 'Save single sign-on' }).click();
    await sso.getByRole('alert').getByText(/the group "cms-reviewers" is named twice/).waitFor();
    await roleGroups.getByRole('button', { name: 'Remove group 2' }).click();
    expect(await roleGroups.getByRole('row').count(), 'the header and one group').to.equal(2);
    await sso.getByRole('button', { name: 'Save single sign-on' }).click();
    await sso.getByRole('status').getByText('Single sign-on saved.').waitFor();
    expect(await sso.getByRole('alert').count(), 'the refusal is gone').to.equal(0);
    const settings = await f.call('GET', '/sign-in/oidc', { token: admin.token });
    expect(settings.body).to.deep.include({ userGroups: ['cms-editors', 'cms-reviewers'], roleGroups: [{ group: 'cms-reviewers', roleId: legal.body.id }] });
    // Read again from the settings, the row shows the role by its name.
    await eventually(() => roleGroups.getByLabel('Role of group 1').locator('option:checked').textContent(), (name) => name === 'Legal reviewer', 10_000, 'the saved role in the row');
    await expectAccessible(page, 'single sign-on settings with a role group');
    await screenshot(page, 'admin-single-sign-on');

    // Test sign-in: the provider's pages in a new tab, then what a sign-in would do.
    const [tab] = await Promise.all([context.waitForEvent('page'), sso.getByRole('link', { name: 'Test sign-in' }).click()]);
    await signInAtProvider(tab, 'hal');
    await tab.getByRole('heading', { name: 'Single sign-on test' }).waitFor();
    await tab.getByText('A sign-in would create a new user, as tenant_user with the role "Legal reviewer".').waitFor();
    await expectAccessible(tab, 'the single sign-on test page');
    await screenshot(tab, 'admin-single-sign-on-test');
    const users = await f.call('GET', '/users', { token: admin.token });
    expect(users.body.items.map((u: { email: string }) => u.email), 'the test made nobody').to.not.include('hal@staff.example');
    expect(problems).to.deep.equal([]);
    await context.close();
  });

  it("offers the organisation's provider on the project's login page, and signs the person in through its pages", async () => {
    idp.accounts.set('grace', { email: 'grace@staff.example', groups: ['cms-editors'] });
    const context = await browser.newContext({ locale: 'en-US', viewport: { width: 1280, height: 900 } });
    const { page, problems } = await watchedPage(context);
    await page.goto(`${f.service.url}/console/p/${f.project.projectId}/`);
    const sso = page.getByRole('link', { name: 'Sign in with single sign-on' });
    await sso.waitFor();
    await page.getByText('or with your e-mail and password').waitFor();
    await expectAccessible(page, 'the login page with single sign-on');
    await screenshot(page, 'sign-in-sso');
    await sso.click();

    await signInAtProvider(page, 'grace');

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
    await signInAtProvider(page, 'ivy');
    await page.getByText('Signed in as ivy@staff.example').waitFor();
    const here = page.url();

    // The session ends on the service (signed out elsewhere): the page's next call opens the dialog over it.
    const cookie = (await context.cookies(f.service.url)).find((c) => c.name === 'annals-session')!;
    expect((await fetch(`${f.service.url}/admin/v1/auth/logout`, { method: 'POST', headers: { authorization: `Bearer ${cookie.value}` } })).status).to.equal(204);
    const dialog = page.getByRole('dialog');
    const again = dialog.getByRole('link', { name: 'Sign in with single sign-on' });
    // The page's own polls may find it first; otherwise a move to another page does.
    if (!(await dialog.isVisible())) await page.getByRole('link', { name: 'Review desk' }).click({ timeout: 5_000 }).catch(() => undefined);
    await again.waitFor();
    expect(await again.getAttribute('target'), 'the page stays where it is').to.equal('_blank');

    // The provider still knows the browser: the new tab comes back signed in, and the page goes on.
    const [tab] = await Promise.all([context.waitForEvent('page'), again.click()]);
    await tab.getByText('Signed in as ivy@staff.example').waitFor();
    await dialog.waitFor({ state: 'hidden' });
    expect(page.url().startsWith(here.replace(/\/$/, '')), 'the page was not left').to.equal(true);
    expect(problems).to.deep.equal([]);
    await context.close();
  });

  it('says why a sign-in failed on a page of its own, with the way back', async () => {
    const context = await browser.newContext({ locale: 'en-US', viewport: { width: 1280, height: 900 } });
    const { page, problems } = await watchedPage(context);
    // The provider's answer reaching a browser that never started the sign-in (a forwarded link, a second tab).
    const answer = await page.goto(`${f.service.url}/admin/v1/auth/oidc/callback?code=stolen&state=guessed`);
    expect(answer?.status()).to.equal(401);
    await page.getByRole('heading', { name: 'Sign-in failed' }).waitFor();
    await page.getByText(/It was not started in this browser, was finished already, or took too long/).waitFor();
    await expectAccessible(page, 'the failed sign-in page');
    await screenshot(page, 'sign-in-sso-failed');
    await page.getByRole('link', { name: 'Back to the login page' }).click();
    await page.getByLabel('E-mail').waitFor();
    expect(problems).to.deep.equal([]);
    await context.close();
  });
});
