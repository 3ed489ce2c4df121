import { expect } from 'chai';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { adminSession, OPERATOR, PASSWORD, startAdminFixture, type AdminFixture } from '../admin/support.ts';
import { chromium as chromiumProgram, needing, requireProgram } from '../support/system-program.ts';
import { eventually } from '../support/engine-fixture.ts';
import { AUTOSAVE_PAUSE_MS, CHROMIUM_ARGS, expectAccessible, fastForwardUntil, requireConsoleBuild, screenshot, sessionCall, signIn, watchedPage } from './support.ts';

/**
 * The editor keeps typing in a working copy on the server (issue 44): a pause in typing makes no revision; Save,
 * submitting and leaving the editor do. What was typed survives a closed tab and opens on another device; typing
 * on a revision someone else has saved over is merged field by field; and the editor says who else has unsaved
 * typing in the entry.
 */
describe(needing(chromiumProgram, 'console: working copies keep typing between revisions, in headless Chromium'), function () {
  this.timeout(180_000);
  let f: AdminFixture;
  let browser: Browser;
  let admin: ReturnType<typeof sessionCall>;
  let editorCall: ReturnType<typeof sessionCall>;
  let formSetId: string;
  const editorEmail = 'wc-console-editor@example.com';

  const entryUrl = (entryId: string) => `${f.service.url}/console/p/${f.project.projectId}/entries/${entryId}`;
  const latest = async (entryId: string) => {
    const entry = (await admin('GET', `/entries/${entryId}`)).body;
    return (await admin('GET', `/revisions/${entry.latestRevision.revisionId}`)).body as { revision: number; snapshot: Record<string, Record<string, string>> };
  };
  async function createEntry(slug: string): Promise<string> {
    const created = await admin('POST', `/form-sets/${formSetId}/entries`, { slug, fields: { title: { en: `The ${slug} one` }, summary: { en: 'As first written.' } } });
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
    return created.body.entry.id;
  }
  async function openAs(email: string, entryId: string): Promise<{ context: BrowserContext; page: Page; problems: string[] }> {
    const context = await browser.newContext({ locale: 'en-US', viewport: { width: 1280, height: 900 } });
    // On a clock the test moves: a pause in typing takes no real time where a test lets it pass.
    await context.clock.install();
    const { page, problems } = await watchedPage(context);
    await signIn(page, entryUrl(entryId), email, email === f.project.adminEmail ? PASSWORD : 'editor password 1');
    await page.locator('#field-title-en').waitFor();
    return { context, page, problems };
  }

  before(async function () {
    const executablePath = requireProgram(this, chromiumProgram);
    requireConsoleBuild();
    f = await startAdminFixture({ plan: 'business' });
    admin = sessionCall(f, (await adminSession(f)).token);
    const editor = await f.access.createUser(OPERATOR, { tenantId: f.project.tenantId, email: editorEmail, password: 'editor password 1', role: 'editor' });
    await f.service.supervisor!.waitFor(editor.position, 5000);
    const login = await fetch(`${f.service.url}/admin/v1/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: editorEmail, password: 'editor password 1' }) });
    editorCall = sessionCall(f, ((await login.json()) as { token: string }).token);
    const formSet = await admin('POST', '/form-sets', {
      slug: 'notes',
      name: 'Notes',
      fields: [
        { key: 'title', type: 'text', label: 'Title', required: true },
        { key: 'summary', type: 'textarea', label: 'Summary' },
      ],
    });
    expect(formSet.status, JSON.stringify(formSet.body)).to.equal(201);
    formSetId = formSet.body.id;
    browser = await chromium.launch({ executablePath, args: CHROMIUM_ARGS });
  });
  after(async () => {
    await browser?.close();
    await f?.stop();
  });

  it('a pause in typing keeps it on the server without a revision; on another device it is offered back and Save makes the revision', async () => {
    const entryId = await createEntry('devices');
    const laptop = await openAs(editorEmail, entryId);
    await laptop.page.locator('#field-summary-en').fill('Typed on the laptop.');
    await fastForwardUntil(laptop.page, AUTOSAVE_PAUSE_MS, laptop.page.getByText(/Kept in your working copy at/));
    expect((await latest(entryId)).revision, 'no revision for a pause in typing').to.equal(1);
    expect((await editorCall('GET', `/entries/${entryId}/working-copy`)).body.fields.summary).to.deep.equal({ en: 'Typed on the laptop.' });
    await screenshot(laptop.page, 'editor-working-copy-kept');
    await laptop.context.close();

    // Another browser (nothing in its storage): the server's working copy is offered.
    const desktop = await openAs(editorEmail, entryId);
    const offer = desktop.page.getByRole('region', { name: 'Kept changes' });
    await offer.getByText(/You have unsaved typing in this entry, kept in your working copy at .* \(on revision 1\)\./).waitFor();
    expect(await desktop.page.locator('#field-summary-en').inputValue(), 'offered, not imposed').to.equal('As first written.');
    await expectAccessible(desktop.page, 'the editor offering a working copy');
    await screenshot(desktop.page, 'editor-working-copy-offer');
    await offer.getByRole('button', { name: 'Restore them' }).click();
    expect(await desktop.page.locator('#field-summary-en').inputValue()).to.equal('Typed on the laptop.');
    await desktop.page.getByRole('button', { name: 'Save', exact: true }).click();
    await desktop.page.getByText('Saved as revision 2').waitFor();
    expect((await latest(entryId)).snapshot.summary).to.deep.equal({ en: 'Typed on the laptop.' });
    // The revision ended the working copy: nothing is offered any more.
    expect((await editorCall('GET', `/entries/${entryId}/working-copy`)).status).to.equal(404);
    expect(desktop.problems).to.deep.equal([]);
    await desktop.context.close();
  });

  it('typing sent as the tab closes, before the pause is over, is kept (a request that outlives the page)', async () => {
    const entryId = await createEntry('closed-tab');
    const { context, page } = await openAs(editorEmail, entryId);
    // Leaving the page asks first (the browser's own question); accepted here.
    page.on('dialog', (dialog) => void dialog.accept());
    await page.locator('#field-summary-en').fill('Typed just before closing.');
    await page.goto('about:blank');
    await eventually(async () => (await editorCall('GET', `/entries/${entryId}/working-copy`)).body?.fields?.summary?.en, (en) => en === 'Typed just before closing.', 10_000);
    expect((await latest(entryId)).revision).to.equal(1);
    await context.close();
  });

  it('typing kept on a revision someone has saved over since is merged: only the field both changed is asked about', async () => {
    const entryId = await createEntry('merged');
    const first = await openAs(editorEmail, entryId);
    await first.page.locator('#field-title-en').fill('The merged one, my title');
    await first.page.locator('#field-summary-en').fill('My summary.');
    await fastForwardUntil(first.page, AUTOSAVE_PAUSE_MS, first.page.getByText(/Kept in your working copy at/));
    await first.context.close();
    // Meanwhile someone else saves revision 2: another summary, the title untouched.
    const current = await latest(entryId);
    const theirs = await admin('POST', `/entries/${entryId}/revisions`, { fields: { ...current.snapshot, summary: { en: 'Their summary.' } }, expectedRevision: 1 });
    expect(theirs.status).to.equal(201);

    const again = await openAs(editorEmail, entryId);
    const offer = again.page.getByRole('region', { name: 'Kept changes' });
    await offer.getByText(/\(on revision 1\)\. Revision 2 was saved since: continuing asks you to merge/).waitFor();
    await offer.getByRole('button', { name: 'Restore them' }).click();
    const panel = again.page.getByRole('alertdialog', { name: 'Someone else saved this entry meanwhile' });
    await panel.getByRole('group', { name: 'Summary (en)' }).waitFor();
    expect(await panel.getByRole('group').count(), 'the title only I changed merges by itself').to.equal(1);
    await screenshot(again.page, 'editor-working-copy-merge');
    await panel.getByRole('group', { name: 'Summary (en)' }).getByRole('radio', { name: /^Theirs/ }).check();
    await panel.getByRole('button', { name: 'Load their version with my choices' }).click();
    await again.page.getByRole('button', { name: 'Save', exact: true }).click();
    await again.page.getByText('Saved as revision 3').waitFor();
    const merged = (await latest(entryId)).snapshot;
    expect([merged.title!.en, merged.summary!.en]).to.deep.equal(['The merged one, my title', 'Their summary.']);
    expect(again.problems).to.deep.equal([]);
    await again.context.close();
  });

  it('says who else has unsaved typing in the entry, and stops saying it once they have saved', async () => {
    const entryId = await createEntry('together');
    const theirs = await openAs(editorEmail, entryId);
    await theirs.page.locator('#field-summary-en').fill('The editor is typing.');
    await fastForwardUntil(theirs.page, AUTOSAVE_PAUSE_MS, theirs.page.getByText(/Kept in your working copy at/));

    const mine = await openAs(f.project.adminEmail, entryId);
    const notice = mine.page.getByRole('status').filter({ hasText: 'also has unsaved typing in this entry' });
    await notice.getByText(`${editorEmail} also has unsaved typing in this entry`, { exact: false }).waitFor();
    await expectAccessible(mine.page, 'the editor with another person typing');
    await screenshot(mine.page, 'editor-others-typing');
    await theirs.page.getByRole('button', { name: 'Save', exact: true }).click();
    await theirs.page.getByText('Saved as revision 2').waitFor();
    // Seen at the next look (every 20 s, and when the page is shown again).
    await mine.page.evaluate('window.dispatchEvent(new Event("visibilitychange"))');
    await notice.waitFor({ state: 'detached', timeout: 30_000 });
    await theirs.context.close();
    await mine.context.close();
  });
});
