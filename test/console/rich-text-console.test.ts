/**
 * Rich text in the console (issue 44, defects 1 and 2) and the error boundary, in Debian's Chromium through
 * playwright-core against a started service: entries whose rich text came through the API open with all of it
 * (no crash), content stored before the rich-text model shows as explicit unsupported blocks that are saved back
 * unchanged, the editor's toolbar writes every kind of node the model has (keyboard only, in English and
 * Japanese), and a page that fails shows an error in place of itself, with the navigation, and offers back what
 * was typed.
 */
import fs from 'node:fs';
import { expect } from 'chai';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { startAdminFixture, PASSWORD, type AdminFixture } from '../admin/support.ts';
import { chromium as chromiumProgram, needing, requireProgram } from '../support/system-program.ts';
import { tempDir } from '../support/temp-dir.ts';
import { plantLegacyRevision } from '../support/legacy-content.ts';
import { crashingBodies, everyNodeDocument } from '../support/rich-text-documents.ts';
import { AUTOSAVE_PAUSE_MS, CHROMIUM_ARGS, expectAccessible, fastForwardUntil, pngFile, requireConsoleBuild, screenshot, watchedPage } from './support.ts';

describe(needing(chromiumProgram, 'console: rich text and the error boundary in headless Chromium'), function () {
  this.timeout(180_000);
  let f: AdminFixture;
  let browser: Browser;
  let formSetId: string;
  let assetId: string;
  let base: string;
  let user: { context: BrowserContext; page: Page; problems: string[] };

  const createEntry = async (slug: string, fields: Record<string, unknown>) => {
    const created = await f.call('POST', `/form-sets/${formSetId}/entries`, { body: { slug, fields } });
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
    return created.body.entry.id as string;
  };
  const latest = async (entryId: string) => {
    const entry = (await f.call('GET', `/entries/${entryId}`)).body;
    return (await f.call('GET', `/revisions/${entry.latestRevision.revisionId}`)).body;
  };
  /** Opens an entry by its address, as a bookmark or a link would. */
  const openEntry = async (page: Page, entryId: string) => {
    await page.goto(`${base}entries/${entryId}`);
    const form = page.getByLabel('E-mail');
    const editor = page.locator('#field-title-en');
    const crashed = page.getByText('Unexpected Application Error');
    await form.or(editor).or(crashed).first().waitFor();
    if (await form.isVisible()) {
      await form.fill(f.project.adminEmail);
      await page.getByLabel('Password').fill(PASSWORD);
      await page.getByRole('button', { name: 'Sign in' }).click();
    }
    await editor.or(crashed).first().waitFor();
    expect(await crashed.count(), `the developer error page: ${await page.locator('body').innerText()}`.slice(0, 400)).to.equal(0);
  };
  const body = (page: Page) => page.locator('#field-body-en');

  before(async function () {
    const executablePath = requireProgram(this, chromiumProgram);
    requireConsoleBuild();
    f = await startAdminFixture({ plan: 'business' });
    base = `${f.service.url}/console/p/${f.project.projectId}/`;
    const formSet = await f.call('POST', '/form-sets', { body: { slug: 'stories', name: 'Stories', fields: [{ key: 'title', type: 'text', label: 'Title' }, { key: 'summary', type: 'textarea', label: 'Summary' }, { key: 'body', type: 'tiptap', label: 'Body' }] } });
    formSetId = formSet.body.id;
    const png = fs.readFileSync(await pngFile(tempDir(), 'blue.png', { r: 30, g: 60, b: 200 }));
    assetId = (await f.call('POST', '/media', { body: { base64: png.toString('base64'), fileName: 'blue.png', altText: 'A blue square' } })).body.id;
    browser = await chromium.launch({ executablePath, args: CHROMIUM_ARGS });
    const context = await browser.newContext({ locale: 'en-US', viewport: { width: 1280, height: 900 } });
    // On a clock the test moves: the pause in typing after which the editor keeps it takes no real time.
    await context.clock.install();
    user = { context, ...(await watchedPage(context)) };
  });
  afterEach(() => {
    expect(user?.problems ?? [], 'CSP refusals or page errors').to.deep.equal([]);
  });
  after(async () => {
    await browser?.close();
    await f?.stop();
  });

  it('defect 1: entries whose rich text came through the API open with all of it (a link, a quote with code, an image, a table, HTML), and are edited and saved', async () => {
    const { page, problems } = user;
    const bodies = crashingBodies(assetId);
    const shapes: Array<[string, unknown, string]> = [
      ['link', bodies['link']!.body, 'a[href="https://example.org/programme"]'],
      ['quote-with-code', bodies['quoteWithCode']!.body, 'blockquote pre'],
      ['image', bodies['image']!.body, 'img[alt="A red square"]'],
      ['table', bodies['table']!.body, 'table td'],
      ['html', '<p>Hello <strong>there</strong>, <a href="https://example.org/">friend</a>.</p>', 'strong'],
    ];
    for (const [slug, value, selector] of shapes) {
      const entryId = await createEntry(slug, { title: `Through the API: ${slug}`, body: value });
      await openEntry(page, entryId);
      await body(page).locator(selector).first().waitFor();
      expect(await page.getByText('Unexpected Application Error').count(), slug).to.equal(0);
      expect(problems, slug).to.deep.equal([]);
      // Edited in the editor (an image alone: the title) and saved: what came through the API is still there.
      if (slug === 'image') await page.locator('#field-title-en').fill('Through the API: image, edited');
      else {
        await body(page).click();
        await page.keyboard.press('Control+End');
        await page.keyboard.type(' Edited.');
      }
      await fastForwardUntil(page, AUTOSAVE_PAUSE_MS, page.getByText(/Kept in your working copy at/));
      await page.getByRole('button', { name: 'Save', exact: true }).click();
      await page.getByText('Saved as revision 2').waitFor();
      const saved = (await latest(entryId)).snapshot.body?.en;
      if (slug !== 'image') expect(JSON.stringify(saved ?? null), slug).to.include('Edited.');
      if (slug === 'link') expect(saved.content[0].content[1].marks[0].attrs.href).to.equal('https://example.org/programme');
      const block = (type: string) => saved.content.find((n: { type: string }) => n.type === type);
      if (slug === 'quote-with-code') expect(block('blockquote').content[0]).to.deep.include({ type: 'codeBlock', content: [{ type: 'text', text: 'npm start Edited.' }] });
      if (slug === 'image') expect(block('image').attrs).to.deep.include({ assetId, alt: 'A red square' });
      if (slug === 'table') expect(block('table').content[0].content[0].content[0].content[0].text).to.equal('Cell');
      if (slug === 'html') expect(saved.content[0].content.map((n: { text: string }) => n.text).join('')).to.equal('Hello there, friend. Edited.');
    }
  });

  it('defect 2: content stored before the model shows as explicit unsupported blocks, kept unchanged on save; one is turned into what the model holds', async () => {
    const { page } = user;
    const entryId = await createEntry('legacy', { title: 'Legacy' });
    const highlighted = { type: 'paragraph', content: [{ type: 'text', text: 'Highlighted words', marks: [{ type: 'highlight', attrs: { color: '#ff0' } }] }] };
    const callout = { type: 'callout', attrs: { tone: 'warning' }, content: [{ type: 'paragraph', content: [{ type: 'text', text: 'Mind the gap' }] }] };
    const legacy = { type: 'doc', content: [{ type: 'paragraph', content: [{ type: 'text', text: 'Plain words' }] }, highlighted, callout] };
    const legacyHtml = '<div class="promo" onclick="track()">Old <b>HTML</b></div>';
    await plantLegacyRevision(f.service, f.project.projectId, entryId, { title: { en: 'Legacy' }, body: { en: legacy, ja: legacyHtml } });
    await openEntry(page, entryId);
    const unsupported = body(page).getByRole('group', { name: 'Unsupported content' });
    await unsupported.first().waitFor();
    expect(await unsupported.count()).to.equal(2);
    expect(await unsupported.nth(0).innerText()).to.include('Highlighted words');
    expect(await unsupported.nth(1).innerText()).to.include('Mind the gap').and.include('callout');
    expect(await body(page).getByText('Plain words').count()).to.equal(1);
    await page.getByRole('tab', { name: 'JA' }).click();
    const html = page.locator('#field-body-ja').getByRole('group', { name: 'Unsupported content' });
    expect(await html.innerText()).to.include('<div class="promo" onclick="track()">Old <b>HTML</b></div>');
    await page.getByRole('tab', { name: 'EN' }).click();
    await expectAccessible(page, 'the editor with unsupported blocks');
    await screenshot(page, 'rich-text-unsupported');

    // Saved with another change: every stored block comes back exactly as it was.
    await page.locator('#field-title-en').fill('Legacy, retitled');
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await page.getByText('Saved as revision 3').waitFor();
    const kept = (await latest(entryId)).snapshot;
    expect([kept.title.en, kept.body.en, kept.body.ja]).to.deep.equal(['Legacy, retitled', legacy, legacyHtml]);

    // Asked to, the console keeps what the model holds of a block (the text without its unknown mark).
    await unsupported.nth(0).getByRole('button', { name: 'Keep only the supported parts' }).click();
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await page.getByText('Saved as revision 4').waitFor();
    const converted = (await latest(entryId)).snapshot.body.en;
    expect(converted.content[1]).to.deep.equal({ type: 'paragraph', content: [{ type: 'text', text: 'Highlighted words' }] });
    expect(converted.content[2]).to.deep.equal(callout);
    expect(await body(page).getByRole('group', { name: 'Unsupported content' }).count()).to.equal(1);
  });

  it('shows every node type and mark of the model', async () => {
    const { page } = user;
    const entryId = await createEntry('every-node', { title: 'Every node', body: everyNodeDocument(assetId) });
    await openEntry(page, entryId);
    const editor = body(page);
    await editor.getByRole('figure', { name: 'Video: https://www.youtube.com/watch?v=aqz-KE-bpKQ' }).waitFor();
    for (const selector of ['h2', 'h3', 'strong', 'em', 'u', 's', 'code', 'a[href="https://example.org/festival"]', 'a[href="mailto:press@example.org"]', 'br', 'ul > li', 'ol > li', 'blockquote', 'pre', 'hr', 'img[alt="A blue square"]', 'table th', 'table td']) {
      expect(await editor.locator(selector).count(), selector).to.be.greaterThan(0);
    }
    expect(await editor.getByRole('group', { name: 'Unsupported content' }).count()).to.equal(0);
    await expectAccessible(page, 'the editor with every node type');
    await screenshot(page, 'rich-text-every-node');
  });

  it('the toolbar writes every kind of content, keyboard only; the API takes what it writes; its labels speak Japanese too', async () => {
    const { page } = user;
    const entryId = await createEntry('toolbar', { title: 'Toolbar' });
    await openEntry(page, entryId);
    const editor = body(page);
    const toolbar = page.locator('[data-field="body"] [role="toolbar"]').first();
    /** Alt+F10 moves from the text to the toolbar, arrows move along it, Enter presses (a button's title is its label). */
    const press = async (label: string) => {
      if (!(await page.evaluate<boolean>('Boolean(document.activeElement?.closest(\'[role="toolbar"]\'))'))) await page.keyboard.press('Alt+F10');
      for (let i = 0; i < 40; i++) {
        if ((await page.evaluate<string | null>('document.activeElement?.getAttribute("title")')) === label) break;
        await page.keyboard.press('ArrowRight');
      }
      // On failure, where the focus was instead.
      expect(await page.evaluate<string | null>('document.activeElement?.getAttribute("title")'), `${label}; focus on ${await page.evaluate<string>('document.activeElement?.outerHTML.slice(0, 160) ?? "nothing"')}`).to.equal(label);
      await page.keyboard.press('Enter');
    };
    await editor.focus();
    await page.keyboard.type('Programme');
    await press('Heading 2');
    await editor.focus();
    await page.keyboard.press('End');
    await page.keyboard.press('Enter');
    await page.keyboard.type('Buy tickets');
    for (let i = 0; i < 'tickets'.length; i++) await page.keyboard.press('Shift+ArrowLeft');
    await press('Link');
    const dialog = page.getByRole('dialog');
    await dialog.getByLabel('Link address').fill('javascript:alert(1)');
    await page.keyboard.press('Enter');
    await dialog.getByText('http or https', { exact: false }).waitFor();
    await dialog.getByLabel('Link address').fill('https://example.org/tickets');
    await page.keyboard.press('Enter');
    await dialog.waitFor({ state: 'hidden' });
    await editor.locator('a[href="https://example.org/tickets"]').waitFor();
    await editor.focus();
    await page.keyboard.press('End');
    await page.keyboard.press('Enter');
    await press('Bulleted list');
    await page.keyboard.type('Friday');
    await page.keyboard.press('Enter');
    await page.keyboard.type('Saturday');
    await page.keyboard.press('Enter');
    await page.keyboard.press('Enter');
    await press('Quote');
    await page.keyboard.type('Bring a coat.');
    await page.keyboard.press('Enter');
    await page.keyboard.press('Enter');
    await press('Code block');
    await page.keyboard.type('npm start');
    await editor.focus();
    await page.keyboard.press('Control+End');
    await press('Horizontal rule');
    await press('Insert table');
    await page.keyboard.type('Day');
    await page.keyboard.press('Tab');
    await page.keyboard.type('Stage');
    await press('Add a row below');
    await press('Image from the media library');
    await page.getByRole('dialog').getByRole('button', { name: 'Select: blue.png' }).focus();
    await page.keyboard.press('Enter');
    await editor.locator('img[alt="A blue square"]').waitFor();
    await press('Video embed');
    await page.getByRole('dialog').getByLabel('Video address (YouTube or Vimeo)').fill('https://vimeo.com/76979871');
    await page.keyboard.press('Enter');
    await editor.locator('[data-embed-src="https://player.vimeo.com/video/76979871"]').waitFor();
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await page.getByText(/Saved as revision \d+/).waitFor();
    await expectAccessible(page, 'the editor after the toolbar');
    await screenshot(page, 'rich-text-toolbar');

    const saved = (await latest(entryId)).snapshot.body.en;
    const types = new Set<string>();
    const marks = new Set<string>();
    const walk = (node: { type: string; content?: unknown[]; marks?: Array<{ type: string }> }) => {
      types.add(node.type);
      for (const mark of node.marks ?? []) marks.add(mark.type);
      for (const child of (node.content ?? []) as Array<typeof node>) walk(child);
    };
    walk(saved);
    expect([...types]).to.include.members(['heading', 'paragraph', 'bulletList', 'listItem', 'blockquote', 'codeBlock', 'horizontalRule', 'table', 'tableRow', 'tableHeader', 'tableCell', 'image', 'embed']);
    expect([...marks], JSON.stringify(saved)).to.include('link');
    expect(JSON.stringify(saved)).to.include(assetId).and.include('https://vimeo.com/76979871').and.include('https://example.org/tickets');

    await page.locator('.language-switcher select').selectOption('ja');
    await toolbar.getByRole('button', { name: '太字' }).waitFor();
    for (const name of ['リンク', '引用', 'コードブロック', '表を挿入', 'メディアライブラリの画像', '動画の埋め込み']) expect(await toolbar.getByRole('button', { name }).count(), name).to.equal(1);
    await expectAccessible(page, 'the editor in Japanese');
    await page.locator('.language-switcher select').selectOption('en');
  });

  it('a page that fails shows the error in its place, with the navigation; what was typed is kept and offered back', async () => {
    const { page, problems } = user;
    const entryId = await createEntry('fragile', { title: 'Fragile' });
    await openEntry(page, entryId);
    // Keeping on the server is held back, so what is typed is only in the tab when the page fails.
    const held: Array<{ abort(): Promise<void> }> = [];
    await page.route('**/admin/v1/entries/*/working-copy', (route) => void (route.request().method() === 'PUT' ? held.push(route) : route.continue()));
    await page.locator('#field-summary-en').fill('Typed before the page failed.');
    // The next read of the entry comes back malformed (a title that is no text): rendering it fails.
    await page.route(`**/admin/v1/entries/${entryId}`, async (route) => {
      const response = await route.fetch();
      await route.fulfill({ response, json: { ...(await response.json()), title: { unexpected: true } } });
    });
    await page.getByLabel('Assignee').selectOption({ label: f.project.adminEmail });
    const failed = page.getByRole('alert').filter({ hasText: 'This page ran into a problem' });
    await failed.waitFor();
    expect(await page.getByText('Unexpected Application Error').count()).to.equal(0);
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Stories' }).waitFor();
    await expectAccessible(page, 'the error boundary');
    await screenshot(page, 'error-boundary');
    await page.unroute(`**/admin/v1/entries/${entryId}`);
    for (const route of held.splice(0)) await route.abort();
    await page.unroute('**/admin/v1/entries/*/working-copy');

    await failed.getByRole('button', { name: 'Try again' }).click();
    const offer = page.getByRole('region', { name: 'Kept changes' });
    await offer.getByText(/Changes typed at .* were not saved/).waitFor();
    await offer.getByRole('button', { name: 'Restore them' }).click();
    expect(await page.locator('#field-summary-en').inputValue()).to.equal('Typed before the page failed.');
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await page.getByText(/Saved as revision \d+/).waitFor();
    expect((await latest(entryId)).snapshot.summary).to.deep.equal({ en: 'Typed before the page failed.' });
    // Only the deliberate failure was reported.
    expect(problems.filter((p) => !p.includes('Objects are not valid as a React child'))).to.deep.equal([]);
    problems.length = 0;
  });
});
