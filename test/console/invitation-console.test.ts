import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { simpleParser } from 'mailparser';
import { chromium, type Browser } from 'playwright-core';
import { PASSWORD, startAdminFixture, type AdminFixture } from '../admin/support.ts';
import { chromium as chromiumProgram, needing, requireProgram } from '../support/system-program.ts';
import { eventually } from '../support/engine-fixture.ts';
import { tempDir } from '../support/temp-dir.ts';
import { CHROMIUM_ARGS, expectAccessible, requireConsoleBuild, screenshot, signIn, watchedPage } from './support.ts';

/** The link in the newest invitation e-mail to `to` (DATA_DIR/mail, no SMTP_URL). */
async function invitationLink(dataDir: string, to: string): Promise<string | undefined> {
  const dir = path.join(dataDir, 'mail');
  const found: Array<{ at: number; link: string }> = [];
  for (const name of fs.existsSync(dir) ? fs.readdirSync(dir).filter((n) => n.endsWith('.eml')) : []) {
    const parsed = await simpleParser(fs.readFileSync(path.join(dir, name)));
    const link = /(https?:\/\/\S+\/accept-invitation#\S+)/.exec(parsed.text ?? '')?.[1];
    if (link && (parsed.to as { text: string }).text === to) found.push({ at: fs.statSync(path.join(dir, name)).mtimeMs, link });
  }
  return found.sort((a, b) => a.at - b.at).at(-1)?.link;
}

/**
 * Invitations by e-mail in the console (issue 44): an administrator invites by address and role, the person
 * opens the mailed link in their own browser, chooses a password and is signed in.
 */
describe(needing(chromiumProgram, 'console: inviting people by e-mail, in headless Chromium'), function () {
  this.timeout(180_000);
  let f: AdminFixture;
  let dataDir: string;
  let browser: Browser;

  before(async function () {
    const executablePath = requireProgram(this, chromiumProgram);
    requireConsoleBuild();
    dataDir = path.join(tempDir(), 'data');
    f = await startAdminFixture({ dataDir, plan: 'business' });
    browser = await chromium.launch({ executablePath, args: CHROMIUM_ARGS });
  });
  after(async () => {
    await browser?.close();
    await f?.stop();
  });

  it('the administrator invites by e-mail; the person chooses a password from the link and is signed in; the link is spent', async () => {
    const adminContext = await browser.newContext({ locale: 'en-US', viewport: { width: 1280, height: 900 } });
    const { page, problems } = await watchedPage(adminContext);
    await signIn(page, `${f.service.url}/console/p/${f.project.projectId}/people`, f.project.adminEmail, PASSWORD);
    const users = page.getByRole('region', { name: 'Console users' });
    await users.getByLabel('E-mail').fill('invited.editor@example.com');
    expect(await users.getByLabel('How they sign in').inputValue(), 'by e-mail unless chosen otherwise').to.equal('email');
    expect(await users.getByLabel('First password').count(), 'no password to make up').to.equal(0);
    await users.getByRole('combobox', { name: /^Role(?! of)/ }).selectOption({ label: 'editor' });
    await users.getByRole('button', { name: 'Add user' }).click();
    await users.getByRole('status').getByText('Invitation sent to invited.editor@example.com: the link works once, for 7 days.').waitFor();
    const row = users.getByRole('row', { name: /invited\.editor@example\.com/ });
    await row.getByText(/^invited \(link until /).waitFor();
    await expectAccessible(page, 'people with an invitation');
    await screenshot(page, 'admin-people-invited');
    // Sent again: a new link; the first one no longer works.
    const first = (await eventually(() => invitationLink(dataDir, 'invited.editor@example.com'), (link) => link !== undefined, 10_000))!;
    await row.getByRole('button', { name: 'Send again the invitation to invited.editor@example.com' }).click();
    const link = (await eventually(() => invitationLink(dataDir, 'invited.editor@example.com'), (l) => l !== undefined && l !== first, 10_000))!;

    const theirs = await browser.newContext({ locale: 'en-US', viewport: { width: 1280, height: 900 } });
    const { page: invitee, problems: inviteeProblems } = await watchedPage(theirs);
    const url = new URL(link);
    await invitee.goto(`${f.service.url}${url.pathname}${url.hash}`);
    await invitee.getByRole('heading', { name: 'Welcome to annals' }).waitFor();
    await expectAccessible(invitee, 'the invitation page');
    await screenshot(invitee, 'invitation-accept');
    await invitee.getByLabel('New password').fill('my own long password');
    await invitee.getByLabel('The same password again').fill('my own long passw0rd');
    await invitee.getByRole('button', { name: 'Set my password' }).click();
    await invitee.getByRole('alert').getByText('The two passwords differ.').waitFor();
    await invitee.getByLabel('The same password again').fill('my own long password');
    await invitee.getByRole('button', { name: 'Set my password' }).click();
    await invitee.getByText('Your password is set. Sign in as invited.editor@example.com.').waitFor();
    expect(invitee.url(), 'the spent token leaves the address bar').to.not.include('#');
    await invitee.getByLabel('Password').fill('my own long password');
    await invitee.getByRole('button', { name: 'Sign in' }).click();
    await invitee.getByText('Signed in as invited.editor@example.com').waitFor();
    expect(inviteeProblems).to.deep.equal([]);

    // The first link, tried after all, says it is not valid.
    const stale = await browser.newContext({ locale: 'en-US' });
    const { page: again } = await watchedPage(stale);
    const firstUrl = new URL(first);
    await again.goto(`${f.service.url}${firstUrl.pathname}${firstUrl.hash}`);
    await again.getByLabel('New password').fill('another long password');
    await again.getByLabel('The same password again').fill('another long password');
    await again.getByRole('button', { name: 'Set my password' }).click();
    await again.getByRole('alert').getByText(/This invitation link is not valid/).waitFor();

    // And the administrator's list shows them active.
    await page.reload();
    await users.getByRole('row', { name: /invited\.editor@example\.com/ }).getByRole('cell', { name: 'active', exact: true }).waitFor();
    expect(problems).to.deep.equal([]);
    await Promise.all([adminContext.close(), theirs.close(), stale.close()]);
  });
});
