import { expect } from 'chai';
import { chromium, type Browser, type Page } from 'playwright-core';
import { adminSession, PASSWORD, startAdminFixture, type AdminFixture } from '../admin/support.ts';
import { chromium as chromiumProgram, needing, requireProgram } from '../support/system-program.ts';
import { CHROMIUM_ARGS, expectAccessible, requireConsoleBuild, screenshot, sessionCall, signIn, watchedPage } from './support.ts';

/**
 * Bulk actions in the entry list (issue 44): an editor submits the selected drafts at once, an administrator
 * approves, schedules and deletes selections; each entry is its own request, and what was skipped or refused
 * is named with the service's reason (here four eyes on the administrator's own entry).
 */
describe(needing(chromiumProgram, 'console: bulk actions in the entry list, in headless Chromium'), function () {
  this.timeout(180_000);
  let f: AdminFixture;
  let browser: Browser;
  let admin: ReturnType<typeof sessionCall>;
  let editor: ReturnType<typeof sessionCall>;
  let formSetId: string;
  let listUrl: string;
  const ids: Record<string, string> = {};
  const problems: string[][] = [];
  let editorPage: Page;
  let adminPage: Page;

  const latest = async (title: string) => {
    const entry = (await admin('GET', `/entries/${ids[title]}`)).body;
    return (await admin('GET', `/revisions/${entry.latestRevision.revisionId}`)).body as { status: string; publishAt: string | null };
  };

  before(async function () {
    const executablePath = requireProgram(this, chromiumProgram);
    requireConsoleBuild();
    f = await startAdminFixture({ plan: 'business' });
    admin = sessionCall(f, (await adminSession(f)).token);
    expect((await admin('PUT', '/project/approval-policy', { fourEyes: true })).status).to.equal(200);
    const editorEmail = `bulk-editor-${Math.random().toString(36).slice(2, 8)}@example.com`;
    expect((await admin('POST', '/users', { email: editorEmail, password: PASSWORD, role: 'tenant_user' })).status).to.equal(201);
    const login = await f.call('POST', '/auth/login', { body: { email: editorEmail, password: PASSWORD }, token: '' });
    expect(login.status).to.equal(200);
    editor = sessionCall(f, login.body.token as string);
    const formSet = await admin('POST', '/form-sets', { slug: 'notes', name: 'Notes', fields: [{ key: 'title', type: 'text', label: 'Title', required: true }] });
    expect(formSet.status, JSON.stringify(formSet.body)).to.equal(201);
    formSetId = formSet.body.id;
    // Three drafts the editor wrote, and one the administrator wrote and submitted.
    for (const title of ['Alpha note', 'Beta note', 'Gamma note']) {
      const created = await editor('POST', `/form-sets/${formSetId}/entries`, { slug: title.toLowerCase().replace(' ', '-'), fields: { title: { en: title } } });
      expect(created.status, JSON.stringify(created.body)).to.equal(201);
      ids[title] = created.body.entry.id;
    }
    const own = await admin('POST', `/form-sets/${formSetId}/entries`, { slug: 'admin-note', fields: { title: { en: 'Admin note' } } });
    ids['Admin note'] = own.body.entry.id;
    expect((await admin('POST', `/revisions/${own.body.revision.id}/submit`, {})).status).to.equal(200);
    listUrl = `${f.service.url}/console/p/${f.project.projectId}/content/${formSetId}`;
    browser = await chromium.launch({ executablePath, args: CHROMIUM_ARGS });
    const editorContext = await browser.newContext({ locale: 'en-US', timezoneId: 'Europe/Berlin', viewport: { width: 1280, height: 900 } });
    const watchedEditor = await watchedPage(editorContext);
    editorPage = watchedEditor.page;
    problems.push(watchedEditor.problems);
    await signIn(editorPage, listUrl, editorEmail, PASSWORD);
    const adminContext = await browser.newContext({ locale: 'en-US', timezoneId: 'Asia/Tokyo', viewport: { width: 1280, height: 900 } });
    const watchedAdmin = await watchedPage(adminContext);
    adminPage = watchedAdmin.page;
    problems.push(watchedAdmin.problems);
    await signIn(adminPage, listUrl, f.project.adminEmail, PASSWORD);
  });
  after(async () => {
    await browser?.close();
    await f?.stop();
  });

  it('an editor submits the selected drafts at once; an entry already in review is skipped and named; no administrator action is offered', async () => {
    const page = editorPage;
    await page.getByRole('link', { name: 'Gamma note' }).waitFor();
    await page.getByRole('checkbox', { name: 'Select Alpha note' }).check();
    await page.getByRole('checkbox', { name: 'Select Beta note' }).check();
    await page.getByRole('checkbox', { name: 'Select Admin note' }).check();
    const bar = page.getByRole('toolbar', { name: 'Actions on the 3 selected entries' });
    await bar.getByText('3 selected').waitFor();
    expect(await bar.getByRole('button').allInnerTexts()).to.deep.equal(['Submit for review', 'Clear the selection']);
    await bar.getByRole('button', { name: 'Submit for review' }).click();
    const report = page.getByRole('status').filter({ hasText: 'Submit for review: 2 done, 1 skipped, 0 refused.' });
    await report.waitFor();
    await report.getByText('“Admin note” was skipped: its status is In review.').waitFor();
    // The selection is cleared and the list shows the new states.
    await bar.waitFor({ state: 'detached' });
    await page.getByRole('row', { name: /Alpha note/ }).getByText('In review').waitFor();
    expect([(await latest('Alpha note')).status, (await latest('Beta note')).status, (await latest('Gamma note')).status]).to.deep.equal(['pending_review', 'pending_review', 'draft']);
    await expectAccessible(page, 'the entry list after a bulk submit');
  });

  it('an administrator approves every entry of the page at once: the ones in review are published, a draft is skipped, their own entry is refused by four eyes with the reason', async () => {
    const page = adminPage;
    await page.reload();
    await page.getByRole('row', { name: /Alpha note/ }).getByText('In review').waitFor();
    await page.getByRole('checkbox', { name: 'Select every entry on this page' }).check();
    const bar = page.getByRole('toolbar', { name: 'Actions on the 4 selected entries' });
    expect(await bar.getByRole('button').allInnerTexts()).to.deep.equal(['Submit for review', 'Approve and publish now', 'Approve for a later time', 'Delete…', 'Clear the selection']);
    // One unchecked: the page box shows a partial selection, and checking it again selects all.
    await page.getByRole('checkbox', { name: 'Select Gamma note' }).uncheck();
    expect(await page.getByRole('checkbox', { name: 'Select every entry on this page' }).evaluate((box) => (box as unknown as { indeterminate: boolean }).indeterminate)).to.equal(true);
    await page.getByRole('checkbox', { name: 'Select every entry on this page' }).check();
    await expectAccessible(page, 'the entry list with a selection');
    await screenshot(page, 'entry-list-bulk-selection');
    await bar.getByRole('button', { name: 'Approve and publish now' }).click();
    const report = page.getByRole('status').filter({ hasText: 'Approve and publish now: 2 done, 1 skipped, 1 refused.' });
    await report.waitFor();
    await report.getByText('“Gamma note” was skipped: its status is Draft.').waitFor();
    await report.getByText(/“Admin note” was refused: The project's approval policy requires four eyes \(fourEyes is on\).*someone else must/).waitFor();
    expect([(await latest('Alpha note')).status, (await latest('Beta note')).status, (await latest('Admin note')).status]).to.deep.equal(['published', 'published', 'pending_review']);
    // Published pages are served at once.
    const published = await fetch(`${f.service.url}/public/p/${f.project.projectId}/v1/form-sets/notes/entries?locale=en`);
    expect(((await published.json()) as { items: Array<{ entry: { slug: string } }> }).items.map((item) => item.entry.slug).sort()).to.deep.equal(['alpha-note', 'beta-note']);
    await expectAccessible(page, 'the entry list with a bulk approval report');
    await screenshot(page, 'entry-list-bulk-report');
  });

  it('approves the selected entries in review for a later time, one publish time for all, entered in the browser\'s time zone', async () => {
    expect((await editor('POST', `/revisions/${(await admin('GET', `/entries/${ids['Gamma note']}`)).body.latestRevision.revisionId}/submit`, {})).status).to.equal(200);
    const page = adminPage;
    await page.getByRole('button', { name: 'Dismiss' }).click();
    await page.reload();
    await page.getByRole('row', { name: /Gamma note/ }).getByText('In review').waitFor();
    await page.getByRole('checkbox', { name: 'Select Gamma note' }).check();
    await page.getByRole('toolbar', { name: 'Actions on the 1 selected entries' }).getByRole('button', { name: 'Approve for a later time' }).click();
    const dialog = page.getByRole('dialog', { name: 'Approve 1 entries for a later time' });
    await dialog.getByLabel('Publish at').fill('2031-03-01T08:00');
    await expectAccessible(page, 'the bulk schedule dialog');
    await dialog.getByRole('button', { name: 'Confirm' }).click();
    await page.getByRole('status').filter({ hasText: 'Approve for a later time: 1 done, 0 skipped, 0 refused.' }).waitFor();
    const gamma = await latest('Gamma note');
    expect([gamma.status, gamma.publishAt]).to.deep.equal(['scheduled', '2031-02-28T23:00:00.000Z']);
  });

  it('deletes the selected entries after a confirmation that names each; the public API answers 404 for them', async () => {
    const page = adminPage;
    await page.getByRole('checkbox', { name: 'Select Alpha note' }).check();
    await page.getByRole('checkbox', { name: 'Select Beta note' }).check();
    await page.getByRole('toolbar', { name: 'Actions on the 2 selected entries' }).getByRole('button', { name: 'Delete…' }).click();
    const dialog = page.getByRole('dialog', { name: 'Delete 2 entries?' });
    expect((await dialog.getByRole('listitem').allInnerTexts()).sort()).to.deep.equal(['Alpha note', 'Beta note']);
    // Cancelled first: nothing is deleted.
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    expect((await admin('GET', `/entries/${ids['Alpha note']}`)).status).to.equal(200);
    await page.getByRole('toolbar', { name: 'Actions on the 2 selected entries' }).getByRole('button', { name: 'Delete…' }).click();
    await dialog.getByRole('button', { name: 'Delete…' }).click();
    await page.getByRole('status').filter({ hasText: 'Delete: 2 done, 0 skipped, 0 refused.' }).waitFor();
    await page.getByRole('link', { name: 'Alpha note' }).waitFor({ state: 'detached' });
    for (const title of ['Alpha note', 'Beta note']) expect((await admin('GET', `/entries/${ids[title]}`)).status).to.equal(404);
    expect((await fetch(`${f.service.url}/public/p/${f.project.projectId}/v1/form-sets/notes/entries/alpha-note?locale=en`)).status).to.equal(404);
  });

  it('the editor offers Copy but not Translate between locales where the service has no translation provider', async () => {
    const page = adminPage;
    await page.goto(`${f.service.url}/console/p/${f.project.projectId}/entries/${ids['Admin note']}`);
    await page.getByRole('tab', { name: 'JA' }).click();
    const group = page.getByRole('group', { name: 'Fill the empty fields of JA' });
    await group.getByRole('button', { name: 'Copy' }).waitFor();
    expect(await group.getByRole('button').allInnerTexts()).to.deep.equal(['Copy']);
  });

  it('no CSP refusal or uncaught error on either page', () => {
    expect(problems.flat()).to.deep.equal([]);
  });
});
