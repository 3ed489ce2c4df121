import { expect } from 'chai';
import { chromium, type Browser } from 'playwright-core';
import { PASSWORD, startAdminFixture, type AdminFixture } from '../admin/support.ts';
import { chromium as chromiumProgram, needing, requireProgram } from '../support/system-program.ts';
import { startOidcProvider, type TestOidcProvider } from '../support/oidc-provider.ts';
import { CHROMIUM_ARGS, expectAccessible, requireConsoleBuild, screenshot, watchedPage } from './support.ts';

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

  before(async function () {
    const executablePath = requireProgram(this, chromiumProgram);
    requireConsoleBuild();
    f = await startAdminFixture({ plan: 'business', env: { OUTBOUND_ALLOWLIST: '127.0.0.1' } });
    idp = await startOidcProvider({ redirectUri: `${f.service.url}/admin/v1/auth/oidc/callback` });
    const login = await fetch(`${f.service.url}/admin/v1/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: f.project.adminEmail, password: PASSWORD }) });
    const { token } = (await login.json()) as { token: string };
    const configured = await f.call('PUT', '/sign-in/oidc', { token, body: { issuer: idp.issuer, clientId: idp.clientId, clientSecret: idp.clientSecret, allowedEmailDomains: ['staff.example'], adminGroups: ['cms-admins'], userGroups: ['cms-editors'] } });
    expect(configured.status, JSON.stringify(configured.body)).to.equal(200);
    browser = await chromium.launch({ executablePath, args: CHROMIUM_ARGS });
  });
  after(async () => {
    await browser?.close();
    await f?.stop();
    await idp?.close();
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

    // The provider's own login and consent pages.
    await page.waitForURL((url) => url.origin === idp.issuer);
    await page.locator('input[name="login"]').fill('grace');
    await page.locator('input[name="password"]').fill('whatever the provider checks');
    await page.getByRole('button', { name: 'Sign-in' }).click();
    await page.getByRole('button', { name: 'Continue' }).click();

    await page.waitForURL(`${f.service.url}/console/p/${f.project.projectId}/**`);
    await page.getByRole('navigation', { name: 'Main' }).waitFor();
    await page.getByText('Signed in as grace@staff.example').waitFor();
    const session = (await page.evaluate(`fetch('/admin/v1/auth/session').then((r) => r.json())`)) as { user: { email: string; role: string }; cookie: boolean };
    expect(session).to.deep.include({ cookie: true });
    expect(session.user).to.deep.include({ email: 'grace@staff.example', role: 'tenant_user' });
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
