import { expect } from 'chai';
import { chromium, type Browser, type Page } from 'playwright-core';
import { adminSession, PASSWORD, startAdminFixture, type AdminFixture } from '../admin/support.ts';
import { startFakeDeepL, type FakeDeepL } from '../translation/fake-deepl.ts';
import { chromium as chromiumProgram, needing, requireProgram } from '../support/system-program.ts';
import { eventually } from '../support/engine-fixture.ts';
import { CHROMIUM_ARGS, expectAccessible, requireConsoleBuild, screenshot, sessionCall, signIn, watchedPage } from './support.ts';

const doc = (text: string) => ({ type: 'doc', content: [{ type: 'paragraph', content: [{ type: 'text', text }] }] });

/**
 * Filling a locale from another in the entry editor (issue 44): copied in the editor, or machine-translated by the
 * service's provider (a DeepL-compatible stand-in on 127.0.0.1) into a new draft. Values the locale already has
 * are kept either way, and what was typed is saved before a translation starts.
 */
describe(needing(chromiumProgram, 'console: filling a locale from another, copied or translated, in headless Chromium'), function () {
  this.timeout(180_000);
  let f: AdminFixture;
  let deepl: FakeDeepL;
  let browser: Browser;
  let page: Page;
  let problems: string[];
  let admin: ReturnType<typeof sessionCall>;
  let formSetId: string;
  const ids: Record<string, string> = {};

  const latestFields = async (entryId: string) => {
    const entry = (await admin('GET', `/entries/${entryId}`)).body;
    const revision = (await admin('GET', `/revisions/${entry.latestRevision.revisionId}`)).body;
    return { revision: revision.revision as number, fields: revision.snapshot as Record<string, Record<string, unknown>> };
  };

  before(async function () {
    const executablePath = requireProgram(this, chromiumProgram);
    requireConsoleBuild();
    deepl = await startFakeDeepL();
    f = await startAdminFixture({ plan: 'business', env: { TRANSLATION_API_URL: deepl.url, OUTBOUND_ALLOWLIST: '127.0.0.1' } });
    admin = sessionCall(f, (await adminSession(f)).token);
    const formSet = await admin('POST', '/form-sets', {
      slug: 'articles',
      name: 'Articles',
      fields: [
        { key: 'title', type: 'text', label: 'Title', required: true },
        { key: 'summary', type: 'textarea', label: 'Summary' },
        { key: 'body', type: 'tiptap', label: 'Body' },
      ],
    });
    expect(formSet.status, JSON.stringify(formSet.body)).to.equal(201);
    formSetId = formSet.body.id;
    for (const slug of ['copied', 'translated']) {
      const created = await admin('POST', `/form-sets/${formSetId}/entries`, {
        slug,
        fields: { title: { en: `The ${slug} one`, ...(slug === 'copied' ? { ja: '既存のタイトル' } : {}) }, summary: { en: 'Three days of music.' }, body: { en: doc('The festival opens at dawn.') } },
      });
      expect(created.status, JSON.stringify(created.body)).to.equal(201);
      ids[slug] = created.body.entry.id;
    }
    browser = await chromium.launch({ executablePath, args: CHROMIUM_ARGS });
    const context = await browser.newContext({ locale: 'en-US', viewport: { width: 1280, height: 900 } });
    ({ page, problems } = await watchedPage(context));
    await signIn(page, `${f.service.url}/console/p/${f.project.projectId}/entries/${ids['copied']}`, f.project.adminEmail, PASSWORD);
  });
  after(async () => {
    await browser?.close();
    await f?.stop();
    await deepl?.close();
  });

  it('copies the empty fields of JA from EN in the editor, keeps the title JA already had, and saves it as the next revision', async () => {
    await page.locator('#field-title-en').waitFor();
    await page.getByRole('tab', { name: 'JA' }).click();
    const group = page.getByRole('group', { name: 'Fill the empty fields of JA' });
    expect(await group.getByLabel('From').inputValue()).to.equal('en');
    await group.getByRole('button', { name: 'Copy' }).click();
    await group.getByRole('status').getByText('Copied 2 fields from EN; 1 kept their own value.').waitFor();
    expect(await page.locator('#field-summary-ja').inputValue()).to.equal('Three days of music.');
    expect(await page.locator('#field-title-ja').inputValue()).to.equal('既存のタイトル');
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await page.getByText('Saved as revision 2').waitFor();
    const { fields } = await latestFields(ids['copied']!);
    expect(fields['summary']).to.deep.equal({ en: 'Three days of music.', ja: 'Three days of music.' });
    expect(fields['title']).to.deep.equal({ en: 'The copied one', ja: '既存のタイトル' });
    expect(fields['body']!['ja']).to.deep.equal(doc('The festival opens at dawn.'));
    // Copied again: nothing is empty any more, nothing changes.
    await group.getByRole('button', { name: 'Copy' }).click();
    await group.getByRole('status').getByText('Copied 0 fields from EN; 3 kept their own value.').waitFor();
    await expectAccessible(page, 'the editor with the locale fill tools');
    await screenshot(page, 'editor-locale-copy');
  });

  it('translates the empty fields of JA through the provider into a new draft, after saving what was just typed there', async () => {
    await page.goto(`${f.service.url}/console/p/${f.project.projectId}/entries/${ids['translated']}`);
    await page.locator('#field-title-en').waitFor();
    await page.getByRole('tab', { name: 'JA' }).click();
    // Typed, and Translate pressed before the autosave's pause is over: the typing is saved first, then kept.
    await page.locator('#field-title-ja').fill('手書きのタイトル');
    const group = page.getByRole('group', { name: 'Fill the empty fields of JA' });
    await group.getByRole('button', { name: 'Translate' }).click();
    await group.getByRole('status').getByText('Translated 2 fields from EN into a new draft; 1 left as they were.').waitFor();
    expect(await page.locator('#field-title-ja').inputValue()).to.equal('手書きのタイトル');
    expect(await page.locator('#field-summary-ja').inputValue()).to.equal('[JA] Three days of music.');
    await page.locator('#field-body-ja').getByText('[JA] The festival opens at dawn.').waitFor();
    const { revision, fields } = await latestFields(ids['translated']!);
    // Revision 2 is the typing, saved first; 3 the translation.
    expect(revision).to.equal(3);
    expect(fields['title']).to.deep.equal({ en: 'The translated one', ja: '手書きのタイトル' });
    expect(fields['summary']).to.deep.equal({ en: 'Three days of music.', ja: '[JA] Three days of music.' });
    expect(deepl.requests.map((r) => [r.body.source_lang, r.body.target_lang])).to.deep.include(['EN', 'JA']);
    // The editor starts from the new draft: typing now is kept on top of it, and saves revision 4, no conflict.
    await page.locator('#field-summary-ja').fill('[JA] 三日間の音楽。');
    await page.getByText(/Kept in your working copy at/).waitFor();
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await page.getByText('Saved as revision 4').waitFor();
    await eventually(async () => (await latestFields(ids['translated']!)).fields['summary']!['ja'], (ja) => ja === '[JA] 三日間の音楽。', 10_000);
    await screenshot(page, 'editor-locale-translate');
  });

  it('a translation the provider fails is said in place, with nothing saved', async () => {
    deepl.mode = 'status-500';
    const before = (await latestFields(ids['copied']!)).revision;
    await page.goto(`${f.service.url}/console/p/${f.project.projectId}/entries/${ids['copied']}`);
    await page.locator('#field-title-en').waitFor();
    await page.getByRole('tab', { name: 'JA' }).click();
    // Its JA summary emptied, so there is something to translate.
    await page.locator('#field-summary-ja').fill('');
    const group = page.getByRole('group', { name: 'Fill the empty fields of JA' });
    await group.getByRole('button', { name: 'Translate' }).click();
    await group.getByRole('alert').getByText('Nothing was saved; try again later.').waitFor();
    // The emptied field was saved before the translation was asked for; the translation saved nothing.
    expect((await latestFields(ids['copied']!)).revision).to.equal(before + 1);
    deepl.mode = 'ok';
  });

  it('no CSP refusal or uncaught error', () => {
    expect(problems).to.deep.equal([]);
  });
});
