import { expect } from 'chai';
import { Secret, TOTP } from 'otpauth';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { PASSWORD, startAdminFixture, OPERATOR, type AdminFixture } from '../admin/support.ts';
import { chromium as chromiumProgram, needing, requireProgram } from '../support/system-program.ts';
import { CHROMIUM_ARGS, expectAccessible, requireConsoleBuild, screenshot, signIn, watchedPage } from './support.ts';

const MEMBER_PASSWORD = 'a member password';

/** The code an authenticator app shows now for `secret`, as the person would read it off their phone. */
const codeOf = (secret: string) => new TOTP({ secret: Secret.fromBase32(secret) }).generate();

/** A code no authenticator of `secret` shows around now (one step either side is taken). */
function wrongCodeOf(secret: string): string {
  const totp = new TOTP({ secret: Secret.fromBase32(secret) });
  const taken = new Set([-30_000, 0, 30_000].map((offset) => totp.generate({ timestamp: Date.now() + offset })));
  return ['000000', '111111', '222222', '333333'].find((code) => !taken.has(code))!;
}

/**
 * A second factor for password sign-in in the console, in headless Chromium: setting up an authenticator app and a
 * passkey (the DevTools virtual authenticator) under "Your account", the sign-in's second step with a code, a
 * recovery code or the passkey, the organisation's requirement with the app set up on the way in, and an
 * administrator's reset from the People page. WebAuthn takes no IP address for a relying party, so the pages are
 * opened at http://localhost (a secure context, as 127.0.0.1 is) on the service's port.
 */
describe(needing(chromiumProgram, 'console: second factor for password sign-in, in headless Chromium'), function () {
  this.timeout(180_000);
  let f: AdminFixture;
  let browser: Browser;
  let base: string;
  let home: string;

  before(async function () {
    const executablePath = requireProgram(this, chromiumProgram);
    requireConsoleBuild();
    f = await startAdminFixture({ plan: 'business' });
    base = f.service.url.replace('//127.0.0.1:', '//localhost:');
    home = `${base}/console/p/${f.project.projectId}/`;
    browser = await chromium.launch({ executablePath, args: CHROMIUM_ARGS });
  });
  after(async () => {
    await browser?.close();
    await f?.stop();
  });

  async function member(email: string): Promise<void> {
    const created = await f.access.createUser(OPERATOR, { tenantId: f.project.tenantId, email, password: MEMBER_PASSWORD, role: 'editor' });
    await f.service.supervisor!.waitFor(created.position, 5000);
  }

  /** Sets up an authenticator app over the API, as the member would under Your account: its secret and recovery codes. */
  async function appOverApi(email: string): Promise<{ secret: string; recoveryCodes: string[] }> {
    const login = await f.call('POST', '/auth/login', { body: { email, password: MEMBER_PASSWORD } });
    expect(login.status, JSON.stringify(login.body)).to.equal(200);
    const token: string = login.body.token;
    const setup = await f.call('POST', '/me/second-factor/totp/setup', { token });
    const enrolled = await f.call('POST', '/me/second-factor/totp', { token, body: { setupToken: setup.body.setupToken, code: codeOf(setup.body.secret) } });
    expect(enrolled.status, JSON.stringify(enrolled.body)).to.equal(200);
    return { secret: setup.body.secret, recoveryCodes: enrolled.body.recoveryCodes };
  }

  async function newPage(): Promise<{ context: BrowserContext; page: Page; problems: string[] }> {
    const context = await browser.newContext({ locale: 'en-US', viewport: { width: 1280, height: 900 } });
    return { context, ...(await watchedPage(context)) };
  }

  /** The password step on the sign-in page (signed out), which answers with the second step. */
  async function password(page: Page, email: string, secret = MEMBER_PASSWORD): Promise<void> {
    await page.getByLabel('E-mail').fill(email);
    await page.getByLabel('Password').fill(secret);
    await page.getByRole('button', { name: 'Sign in' }).click();
  }

  async function signOut(page: Page): Promise<void> {
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('E-mail').waitFor();
  }

  /** Reads the key beside the QR code (what someone types into an app that cannot scan). */
  async function keyShown(page: Page): Promise<string> {
    await page.getByRole('img', { name: 'QR code to scan with your authenticator app' }).waitFor();
    return page.getByLabel('Key, for an app that cannot scan').inputValue();
  }

  /** The recovery codes shown once, then put away with "I have saved them". */
  async function recoveryCodesShown(page: Page, what: string): Promise<string[]> {
    const list = page.getByRole('list', { name: 'Recovery codes' });
    await list.waitFor();
    const codes = (await list.getByRole('listitem').allTextContents()).map((code) => code.trim());
    expect(codes).to.have.length(10);
    await page.getByRole('button', { name: 'Download as text' }).waitFor();
    await expectAccessible(page, what);
    return codes;
  }

  async function openAccount(page: Page): Promise<void> {
    await page.getByRole('link', { name: 'Your account' }).click();
    await page.getByRole('heading', { name: 'Your account', level: 1 }).waitFor();
  }

  async function setUpAppOnAccount(page: Page): Promise<void> {
    const app = page.getByRole('region', { name: 'Authenticator app' });
    await app.getByRole('button', { name: 'Set up an authenticator app' }).click();
    const secret = await keyShown(page);
    await app.getByLabel('Code from your authenticator app').fill(codeOf(secret));
    await app.getByRole('button', { name: 'Turn on' }).click();
    await app.getByText('Sign-in asks for the code your authenticator app shows.').waitFor();
  }

  it('a member sets up an authenticator app under Your account, then signs in with its code; a wrong code is refused', async () => {
    await member('ada@example.com');
    const { context, page, problems } = await newPage();
    await signIn(page, home, 'ada@example.com', MEMBER_PASSWORD);
    await openAccount(page);
    await page.getByText('Recovery codes come with your first second factor.').waitFor();
    await expectAccessible(page, 'your account without a second factor');

    const app = page.getByRole('region', { name: 'Authenticator app' });
    await app.getByRole('button', { name: 'Set up an authenticator app' }).click();
    const secret = await keyShown(page);
    await expectAccessible(page, 'setting up an authenticator app');
    await app.getByLabel('Code from your authenticator app').fill(wrongCodeOf(secret));
    await app.getByRole('button', { name: 'Turn on' }).click();
    await app.getByRole('alert').getByText(/That code was not accepted/).waitFor();
    expect(await page.getByRole('dialog').count(), 'a wrong code is answered on the page, not by signing in again').to.equal(0);
    await app.getByLabel('Code from your authenticator app').fill(codeOf(secret));
    await app.getByRole('button', { name: 'Turn on' }).click();
    const dialog = page.getByRole('dialog', { name: 'Your recovery codes' });
    const codes = await recoveryCodesShown(page, 'recovery codes shown once');
    for (const code of codes) expect(code).to.match(/^[A-Z2-7]{4}(-[A-Z2-7]{4}){3}$/);
    await screenshot(page, 'second-factor-recovery-codes');
    await dialog.getByRole('button', { name: 'I have saved them' }).click();
    await dialog.waitFor({ state: 'hidden' });
    await app.getByText('Sign-in asks for the code your authenticator app shows.').waitFor();
    await page.getByRole('region', { name: 'Recovery codes' }).getByText('10 recovery codes left.', { exact: false }).waitFor();

    await signOut(page);
    await password(page, 'ada@example.com');
    await page.getByRole('heading', { name: 'Confirm it is you' }).waitFor();
    expect(await page.evaluate("document.activeElement?.getAttribute('autocomplete')"), 'the code field has the focus').to.equal('one-time-code');
    const field = page.getByLabel('Code from your authenticator app');
    expect(await field.getAttribute('inputmode')).to.equal('numeric');
    await field.fill(wrongCodeOf(secret));
    await page.getByRole('button', { name: 'Verify' }).click();
    await page.getByRole('alert').getByText(/That code was not accepted/).waitFor();
    await expectAccessible(page, 'the code step with a wrong code');
    await screenshot(page, 'second-factor-code-step');
    await field.fill(codeOf(secret));
    await page.getByRole('button', { name: 'Verify' }).click();
    await page.getByRole('navigation', { name: 'Main' }).waitFor();
    await page.getByText('Signed in as ada@example.com').waitFor();
    expect(problems).to.deep.equal([]);
    await context.close();
  });

  it('signs in once with a recovery code, and "Start again" goes back to the password', async () => {
    await member('grace@example.com');
    const { recoveryCodes } = await appOverApi('grace@example.com');
    const { context, page, problems } = await newPage();
    await page.goto(home);
    await password(page, 'grace@example.com');
    await page.getByRole('button', { name: 'Use a recovery code' }).click();
    await page.getByLabel('Recovery code').fill(recoveryCodes[0]!);
    await expectAccessible(page, 'the recovery code step');
    await page.getByRole('button', { name: 'Verify' }).click();
    await page.getByRole('navigation', { name: 'Main' }).waitFor();
    await openAccount(page);
    await page.getByText('9 recovery codes left.', { exact: false }).waitFor();

    await signOut(page);
    await password(page, 'grace@example.com');
    await page.getByRole('button', { name: 'Use a recovery code' }).click();
    await page.getByLabel('Recovery code').fill(recoveryCodes[0]!);
    await page.getByRole('button', { name: 'Verify' }).click();
    await page.getByRole('alert').getByText(/That code was not accepted/).waitFor();
    await page.getByRole('button', { name: 'Use your authenticator app' }).click();
    await page.getByLabel('Code from your authenticator app').waitFor();
    await page.getByRole('button', { name: 'Start again' }).click();
    await page.getByLabel('Password').waitFor();
    expect(await page.getByLabel('Password').inputValue(), 'the password is typed again').to.equal('');
    expect(problems).to.deep.equal([]);
    await context.close();
  });

  it('after repeated wrong codes, says how long to wait (the service\'s Retry-After)', async () => {
    await member('alan@example.com');
    const { secret } = await appOverApi('alan@example.com');
    const { context, page, problems } = await newPage();
    await page.goto(home);
    await password(page, 'alan@example.com');
    await page.getByLabel('Code from your authenticator app').fill(wrongCodeOf(secret));
    let status = 0;
    for (let tries = 0; tries < 10 && status !== 429; tries++) {
      const [answer] = await Promise.all([page.waitForResponse((r) => r.url().endsWith('/admin/v1/auth/login/second-factor')), page.getByRole('button', { name: 'Verify' }).click()]);
      status = answer.status();
      await page.getByRole('button', { name: 'Verify' }).and(page.locator(':enabled')).waitFor();
    }
    expect(status, 'the throttle answers once the free tries are spent').to.equal(429);
    await page.getByRole('alert').getByText(/^Too many wrong tries\. Wait \d+ seconds? before trying again\.$/).waitFor();
    await screenshot(page, 'second-factor-too-many');
    expect(problems).to.deep.equal([]);
    await context.close();
  });

  it('a member adds a passkey (and an app) under Your account, then signs in with the passkey', async () => {
    await member('linus@example.com');
    const { context, page, problems } = await newPage();
    const cdp = await context.newCDPSession(page);
    await cdp.send('WebAuthn.enable');
    await cdp.send('WebAuthn.addVirtualAuthenticator', {
      options: { protocol: 'ctap2', transport: 'internal', hasResidentKey: true, hasUserVerification: true, isUserVerified: true, automaticPresenceSimulation: true, defaultBackupEligibility: true, defaultBackupState: true },
    });
    await signIn(page, home, 'linus@example.com', MEMBER_PASSWORD);
    await openAccount(page);
    const passkeys = page.getByRole('region', { name: 'Passkeys' });
    await passkeys.getByText('No passkeys yet.').waitFor();
    await passkeys.getByLabel('Name of a new passkey').fill('Work laptop');
    await passkeys.getByRole('button', { name: 'Add a passkey' }).click();
    await recoveryCodesShown(page, 'recovery codes after the first passkey');
    await page.getByRole('dialog').getByRole('button', { name: 'I have saved them' }).click();
    const item = passkeys.getByRole('listitem').filter({ hasText: 'Work laptop' });
    await item.waitFor();
    await item.getByText('synced').waitFor();
    // A second factor besides: no new recovery codes.
    await setUpAppOnAccount(page);
    expect(await page.getByRole('dialog').count()).to.equal(0);
    await expectAccessible(page, 'your account with an app and a passkey');
    await screenshot(page, 'second-factor-account');

    await signOut(page);
    await password(page, 'linus@example.com');
    const usePasskey = page.getByRole('button', { name: 'Use your passkey' });
    await usePasskey.waitFor();
    expect(await page.evaluate('document.activeElement?.textContent'), 'the passkey first').to.equal('Use your passkey');
    await page.getByLabel('Code from your authenticator app').waitFor();
    await expectAccessible(page, 'the second step with a passkey');
    await screenshot(page, 'second-factor-passkey-step');
    await usePasskey.click();
    await page.getByRole('navigation', { name: 'Main' }).waitFor();
    await page.getByText('Signed in as linus@example.com').waitFor();
    expect(problems).to.deep.equal([]);
    await context.close();
  });

  it("an administrator sees each member's second factor on the People page and resets a member's", async () => {
    await member('hedy@example.com');
    await appOverApi('hedy@example.com');
    const { context, page, problems } = await newPage();
    await signIn(page, `${home}people`, f.project.adminEmail, PASSWORD);
    const users = page.getByRole('region', { name: 'Console users' });
    await users.getByRole('columnheader', { name: 'Second factor' }).waitFor();
    const hedy = users.getByRole('row', { name: /hedy@example\.com/ });
    await hedy.getByRole('cell', { name: 'App', exact: true }).waitFor();
    const own = users.getByRole('row', { name: new RegExp(f.project.adminEmail.replace(/[.]/g, '\\.')) });
    await own.getByRole('cell', { name: 'none', exact: true }).waitFor();
    expect(await own.getByRole('button', { name: /Reset second factor/ }).count(), 'never on one’s own row').to.equal(0);
    await expectAccessible(page, 'people with their second factors');
    await screenshot(page, 'second-factor-people');

    await hedy.getByRole('button', { name: 'Reset second factor of hedy@example.com' }).click();
    const dialog = page.getByRole('dialog', { name: 'Reset the second factor of hedy@example.com?' });
    await dialog.getByText(/Their authenticator app, passkeys and recovery codes are removed/).waitFor();
    await expectAccessible(page, 'the reset confirmation');
    await dialog.getByRole('button', { name: 'Reset second factor' }).click();
    await dialog.waitFor({ state: 'hidden' });
    await hedy.getByRole('cell', { name: 'none', exact: true }).waitFor();
    const login = await f.call('POST', '/auth/login', { body: { email: 'hedy@example.com', password: MEMBER_PASSWORD } });
    expect(login.body.token, 'the password alone signs in again').to.be.a('string');
    expect(problems).to.deep.equal([]);
    await context.close();
  });

  it('the organisation requires a second factor: refused until the administrator has one; a member without one sets up an app as they sign in', async () => {
    await member('mary@example.com');
    const { context, page, problems } = await newPage();
    await signIn(page, `${home}people`, f.project.adminEmail, PASSWORD);
    const policy = page.getByRole('region', { name: 'Second factor' });
    const require = policy.getByRole('switch', { name: 'Require a second factor for password sign-in' });
    await require.click();
    await policy.getByRole('alert').getByText('Requiring a second factor needs your own set up first.').waitFor();
    expect(await require.isChecked()).to.equal(false);
    await expectAccessible(page, 'the policy refused');
    await policy.getByRole('link', { name: 'Set up your own second factor under Your account' }).click();
    await page.getByRole('heading', { name: 'Your account', level: 1 }).waitFor();
    await setUpAppOnAccount(page);
    await page.getByRole('dialog').getByRole('button', { name: 'I have saved them' }).click();
    await page.getByRole('link', { name: 'People and keys' }).click();
    await require.click();
    await policy.getByText(/Everyone who signs in with a password gives a code/).waitFor();
    expect(await require.isChecked()).to.equal(true);

    const theirs = await newPage();
    const their = theirs.page;
    await their.goto(home);
    await password(their, 'mary@example.com');
    await their.getByRole('heading', { name: 'Set up a second factor' }).waitFor();
    const secret = await keyShown(their);
    await expectAccessible(their, 'setting up an app on the way in');
    await screenshot(their, 'second-factor-enrolment');
    await their.getByLabel('Code from your authenticator app').fill(wrongCodeOf(secret));
    await their.getByRole('button', { name: 'Set up and sign in' }).click();
    await their.getByRole('alert').getByText(/That code was not accepted/).waitFor();
    await their.getByLabel('Code from your authenticator app').fill(codeOf(secret));
    await their.getByRole('button', { name: 'Set up and sign in' }).click();
    await their.getByRole('heading', { name: 'Your recovery codes' }).waitFor();
    await recoveryCodesShown(their, 'recovery codes on the way in');
    await screenshot(their, 'second-factor-enrolment-codes');
    expect(await their.getByRole('navigation', { name: 'Main' }).count(), 'the console waits for the codes to be saved').to.equal(0);
    await their.getByRole('button', { name: 'I have saved them' }).click();
    await their.getByRole('navigation', { name: 'Main' }).waitFor();
    await their.getByText('Signed in as mary@example.com').waitFor();
    expect(theirs.problems).to.deep.equal([]);

    // Back as it was for the other tests of this file.
    await require.click();
    await policy.getByText(/Each person chooses whether to set up a second factor/).waitFor();
    expect(problems).to.deep.equal([]);
    await Promise.all([context.close(), theirs.context.close()]);
  });
});
