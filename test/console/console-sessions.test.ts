/**
 * Console sessions (issue 44, defects 3 and 4), in Debian's Chromium through playwright-core against a started
 * service whose clock the test moves: a session survives reloads, new tabs and deep links (also from another
 * site's link), ends everywhere on sign-out; when it expires mid-typing, signing in again in the dialog keeps
 * every keystroke and the save that was waiting goes through with the new session.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { chromium, type Browser } from 'playwright-core';
import { ManualClock } from '../../src/clock.ts';
import { startAdminFixture, PASSWORD, type AdminFixture } from '../admin/support.ts';
import { chromium as chromiumProgram, needing, requireProgram } from '../support/system-program.ts';
import { AUTOSAVE_PAUSE_MS, CHROMIUM_ARGS, expectAccessible, fastForwardUntil, requireConsoleBuild, screenshot, signIn, watchedPage } from './support.ts';

describe(needing(chromiumProgram, 'console: sessions in headless Chromium'), function () {
  this.timeout(180_000);
  // Made when the suite starts, not when mocha loads the file: the cookie's expiry is on this clock, and Chromium
  // drops a cookie that expired by its own (real) clock. Loaded many minutes before it ran in a serial run, the
  // sessions were born expired.
  let clock: ManualClock;
  let f: AdminFixture;
  let browser: Browser;
  let base: string;
  let entryId: string;

  const latest = async () => {
    const entry = (await f.call('GET', `/entries/${entryId}`)).body;
    return (await f.call('GET', `/revisions/${entry.latestRevision.revisionId}`)).body;
  };

  before(async function () {
    const executablePath = requireProgram(this, chromiumProgram);
    requireConsoleBuild();
    clock = new ManualClock(new Date());
    f = await startAdminFixture({ plan: 'business', clock, env: { SESSION_TTL_MINUTES: '5' } });
    base = `${f.service.url}/console/p/${f.project.projectId}/`;
    const formSet = await f.call('POST', '/form-sets', { body: { slug: 'notes', name: 'Notes', fields: [{ key: 'title', type: 'text', label: 'Title' }, { key: 'summary', type: 'textarea', label: 'Summary' }] } });
    entryId = (await f.call('POST', `/form-sets/${formSet.body.id}/entries`, { body: { slug: 'minutes', fields: { title: 'Minutes' } } })).body.entry.id;
    browser = await chromium.launch({ executablePath, args: CHROMIUM_ARGS });
  });
  after(async () => {
    await browser?.close();
    await f?.stop();
  });

  it('defect 4: signed in across reloads, new tabs and deep links (also followed from another site); sign-out ends it in every tab and on the service', async () => {
    const context = await browser.newContext({ locale: 'en-US', viewport: { width: 1280, height: 900 } });
    const { page, problems } = await watchedPage(context);
    await signIn(page, base, f.project.adminEmail, PASSWORD);
    const signInForm = page.getByLabel('Password');

    await page.reload();
    await page.getByRole('navigation', { name: 'Main' }).or(signInForm).first().waitFor();
    expect(await signInForm.count(), 'a reload asks for no sign-in').to.equal(0);

    // The session is a cookie no script can read, sent to this site only.
    const [cookie] = (await context.cookies()).filter((c) => c.name === 'annals-session');
    expect(cookie).to.deep.include({ httpOnly: true, sameSite: 'Strict', path: '/' });
    expect(await page.evaluate<string>('document.cookie')).not.to.include('annals-session');

    const tab = (await watchedPage(context)).page;
    await tab.goto(`${base}entries/${entryId}`);
    await tab.getByRole('heading', { name: 'Minutes' }).waitFor();
    expect(await tab.getByLabel('Password').count(), 'a new tab on a deep link asks for no sign-in').to.equal(0);

    // A link in an e-mail or on another site (another site: localhost, not 127.0.0.1) opens the page signed in.
    const elsewhere = http.createServer((_req, res) => res.end(`<!doctype html><title>Mail</title><a href="${base}entries/${entryId}">Open the entry</a>`));
    await new Promise<void>((resolve) => elsewhere.listen(0, '127.0.0.1', resolve));
    try {
      const linkPage = (await watchedPage(context)).page;
      await linkPage.goto(`http://localhost:${(elsewhere.address() as AddressInfo).port}/`);
      await linkPage.getByRole('link', { name: 'Open the entry' }).click();
      await linkPage.getByRole('heading', { name: 'Minutes' }).waitFor();
      expect(await linkPage.getByLabel('Password').count()).to.equal(0);
      await linkPage.close();
    } finally {
      elsewhere.close();
    }

    // Signing out in one tab ends the session in the other at once, and on the service.
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
    await tab.getByRole('dialog').getByText('signed out').waitFor();
    const refused = await fetch(`${f.service.url}/admin/v1/form-sets`, { headers: { cookie: `annals-session=${cookie!.value}`, 'x-project-id': f.project.projectId } });
    expect(refused.status).to.equal(401);
    await page.reload();
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
    expect(problems).to.deep.equal([]);
    await context.close();
  });

  it('defect 3: the session expires mid-typing; signing in again in the dialog keeps every keystroke and saves with the new session', async () => {
    const context = await browser.newContext({ locale: 'en-US', viewport: { width: 1280, height: 900 } });
    // The page's own clock is moved too: a pause in typing takes no real time.
    await context.clock.install();
    const { page, problems } = await watchedPage(context);
    await signIn(page, `${base}entries/${entryId}`, f.project.adminEmail, PASSWORD);
    const summary = page.locator('#field-summary-en');
    await summary.click();
    await summary.pressSequentially('Agreed: ', { delay: 20 });
    // A pause in typing keeps it in the working copy on the service: no revision.
    const before = (await latest()).revision as number;
    await fastForwardUntil(page, AUTOSAVE_PAUSE_MS, page.getByText(/Kept in your working copy at/));

    // Typing on while the session runs out on the service.
    await summary.pressSequentially('the budget ', { delay: 20 });
    clock.advance(6 * 60_000);
    await summary.pressSequentially('passes as proposed.', { delay: 20 });
    const dialog = page.getByRole('dialog');
    await fastForwardUntil(page, AUTOSAVE_PAUSE_MS, dialog.getByText('Your session has expired'));
    expect(await summary.inputValue()).to.equal('Agreed: the budget passes as proposed.');
    expect(await dialog.getByLabel('E-mail').inputValue()).to.equal(f.project.adminEmail);
    await expectAccessible(page, 'the sign-in dialog');
    await screenshot(page, 're-sign-in-dialog');
    // A wrong password first: refused in the dialog, nothing else changes.
    await dialog.getByLabel('Password').fill('not the password');
    await dialog.getByRole('button', { name: 'Sign in' }).click();
    await dialog.getByText(/Sign-in refused/).waitFor();
    await dialog.getByLabel('Password').fill(PASSWORD);
    await dialog.getByRole('button', { name: 'Sign in' }).click();
    await dialog.waitFor({ state: 'hidden' });

    // The keep that was waiting went through with the new session, and a save makes the revision of every keystroke.
    await page.getByText(/Kept in your working copy at/).waitFor();
    expect((await latest()).revision).to.equal(before);
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await page.getByText(`Saved as revision ${before + 1}`).waitFor();
    expect(await summary.inputValue()).to.equal('Agreed: the budget passes as proposed.');
    expect((await latest()).snapshot.summary).to.deep.equal({ en: 'Agreed: the budget passes as proposed.' });
    expect(await page.getByText('The session was signed out').count()).to.equal(0);
    // And the new session goes on working.
    await summary.pressSequentially(' Minuted.', { delay: 20 });
    await fastForwardUntil(page, AUTOSAVE_PAUSE_MS, page.getByText(/Kept in your working copy at/));
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await page.getByText(`Saved as revision ${before + 2}`).waitFor();
    expect((await latest()).snapshot.summary).to.deep.equal({ en: 'Agreed: the budget passes as proposed. Minuted.' });
    expect(problems).to.deep.equal([]);
    await context.close();
  });
});
