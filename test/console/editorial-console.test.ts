/**
 * The editorial console (issue 18) end to end: Debian's Chromium through playwright-core against a started
 * service, one browser and one service for the file. An editor (tenant_user) and an admin (tenant_admin, in
 * Tokyo) work on one entry through its whole life; axe-core checks each main page.
 */
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { pino } from 'pino';
import { chromium, type Browser, type BrowserContext, type Page, type Request } from 'playwright-core';
import { OPERATOR, startAdminFixture, type AdminFixture } from '../admin/support.ts';
import { adminSession } from '../contact-forms/support.ts';
import { chromium as chromiumProgram, needing, requireProgram } from '../support/system-program.ts';
import { tempDir } from '../support/temp-dir.ts';
import { eventually } from '../support/engine-fixture.ts';
import { ManualClock } from '../../src/clock.ts';
import { ScheduledPublisher } from '../../src/application/scheduled-publisher.ts';
import { ReadModelReader } from '../../src/read-models/read-model-reader.ts';
import { PACKAGE_ROOT } from '../../src/package-root.ts';
import { AUTOSAVE_PAUSE_MS, CHROMIUM_ARGS, expectAccessible, fastForwardUntil, pngFile, requireConsoleBuild, screenshot, sessionCall, signIn, watchedPage } from './support.ts';

const PASSWORD = 'correct horse battery staple';


const FIELDS = [
  { key: 'title', type: 'text', label: 'Title', required: true },
  { key: 'summary', type: 'textarea', label: 'Summary' },
  { key: 'body', type: 'tiptap', label: 'Body' },
  { key: 'link', type: 'url', label: 'Link' },
  { key: 'rating', type: 'number', label: 'Rating', limits: { min: 0, max: 5 } },
  { key: 'featured', type: 'boolean', label: 'Featured' },
  { key: 'event_date', type: 'date', label: 'Event date' },
  { key: 'topic', type: 'select', label: 'Topic', masterEntityKey: 'topic' },
  { key: 'tone', type: 'radio', label: 'Tone', masterEntityKey: 'topic' },
  { key: 'tags', type: 'multiselect', label: 'Tags', masterEntityKey: 'topic' },
  { key: 'hero', type: 'image', label: 'Hero image' },
  { key: 'attachment', type: 'file', label: 'Attachment' },
  { key: 'gallery', type: 'image_gallery', label: 'Gallery' },
  { key: 'video', type: 'video_embed', label: 'Video' },
  { key: 'related', type: 'entry_ref', label: 'Related entry' },
  { key: 'credit', type: 'text', label: 'Credit', locale_shared: true },
];

describe(needing(chromiumProgram, 'console: the editorial console in headless Chromium'), function () {
  this.timeout(180_000);
  let f: AdminFixture;
  let browser: Browser;
  let adminToken: string;
  let api: ReturnType<typeof sessionCall>;
  let files: string;
  let formSetId: string;
  let relatedId: string;
  let entryId: string;
  let editorEmail: string;
  let secondProjectId: string;
  let consoleUrl: string;
  let author: { context: BrowserContext; page: Page; problems: string[] };
  let reviewer: { context: BrowserContext; page: Page; problems: string[] };

  const entry = async () => (await api('GET', `/entries/${entryId}`)).body;
  const latestSnapshot = async () => (await api('GET', `/revisions/${(await entry()).latestRevision.revisionId}`)).body;

  before(async function () {
    const executablePath = requireProgram(this, chromiumProgram);
    requireConsoleBuild();
    f = await startAdminFixture({ plan: 'business' });
    adminToken = (await adminSession(f)).token;
    api = sessionCall(f, adminToken);
    consoleUrl = `${f.service.url}/console/p/${f.project.projectId}/`;
    editorEmail = `editor-${Math.random().toString(36).slice(2, 8)}@example.com`;
    expect((await api('POST', '/users', { email: editorEmail, password: PASSWORD, role: 'tenant_user' })).status).to.equal(201);
    expect((await api('PUT', '/project/login-appearance', { message: 'Welcome to the newsroom', primaryColor: '#7c2d12' })).status).to.equal(200);
    const master = await f.call('POST', '/master-entities', {
      body: {
        key: 'topic',
        name: 'Topic',
        records: [
          { value: 'science', labels: { en: 'Science', ja: '科学' } },
          { value: 'culture', labels: { en: 'Culture', ja: '文化' } },
          { value: 'sports', labels: { en: 'Sports', ja: 'スポーツ' } },
        ],
      },
    });
    expect(master.status, JSON.stringify(master.body)).to.equal(201);
    const formSet = await f.call('POST', '/form-sets', { body: { slug: 'features', name: 'Features', fields: FIELDS } });
    expect(formSet.status, JSON.stringify(formSet.body)).to.equal(201);
    formSetId = formSet.body.id;
    const related = await f.call('POST', `/form-sets/${formSetId}/entries`, { body: { slug: 'background-piece', fields: { title: { en: 'Background piece' } } } });
    relatedId = related.body.entry.id;
    files = tempDir();
    const blue = fs.readFileSync(await pngFile(files, 'blue.png', { r: 30, g: 60, b: 200 }));
    expect((await f.call('POST', '/media', { body: { base64: blue.toString('base64'), fileName: 'blue.png', altText: 'A blue square' } })).status).to.equal(201);
    // A second project of the same tenant, for the project switcher.
    const second = await f.access.createProject(OPERATOR, { tenantId: f.project.tenantId, name: 'Zz second site', plan: 'free' });
    await f.service.supervisor!.waitFor(second.position, 5000);
    secondProjectId = second.projectId;
    browser = await chromium.launch({ executablePath, args: CHROMIUM_ARGS });
  });
  after(async () => {
    await browser?.close();
    await f?.stop();
  });

  it('serves the app at /console with a strict CSP, immutable hashed assets and no admin data; / and /admin lead a browser there', async () => {
    const page = await fetch(`${f.service.url}/console/`);
    expect(page.status).to.equal(200);
    const csp = page.headers.get('content-security-policy')!;
    expect(csp).to.include("script-src 'self'").and.include("style-src 'self'").and.include("frame-ancestors 'none'").and.not.include('unsafe-inline');
    const html = await page.text();
    expect(html).not.to.include(f.project.projectId);
    expect(html).not.to.include(f.project.adminEmail);
    expect((await fetch(`${f.service.url}/console/p/${f.project.projectId}/content/x`)).status).to.equal(200);
    for (const entry of ['/', '/admin']) {
      const response = await fetch(`${f.service.url}${entry}`, { headers: { accept: 'text/html' }, redirect: 'manual' });
      expect([response.status, response.headers.get('location')], entry).to.deep.equal([302, '/console/']);
      expect((await fetch(`${f.service.url}${entry}`, { headers: { accept: 'application/json' } })).status).to.equal(404);
    }
    // The first load: the entry script and what it preloads, at most 250 KB compressed.
    const scripts = [...html.matchAll(/(?:src|href)="(\/console\/assets\/[^"]+\.js)"/g)].map((m) => m[1]!);
    expect(scripts.length).to.be.at.least(1);
    let gzipped = 0;
    for (const script of scripts) {
      const response = await fetch(`${f.service.url}${script}`, { headers: { 'accept-encoding': 'gzip' } });
      expect(response.headers.get('cache-control')).to.equal('public, max-age=31536000, immutable');
      expect(response.headers.get('content-encoding')).to.equal('gzip');
      // As sent: the compressed length.
      gzipped += Number(response.headers.get('content-length'));
      await response.arrayBuffer();
    }
    expect(gzipped, 'initial JavaScript, gzip bytes').to.be.at.most(250 * 1024);
    // The rich-text editor is not part of it: a chunk of its own, loaded when a tiptap field shows.
    expect(fs.readdirSync(path.join(PACKAGE_ROOT, 'console', 'dist', 'assets')).some((name) => name.startsWith('rich-text-editor-'))).to.equal(true);
    expect(scripts.some((s) => s.includes('rich-text-editor'))).to.equal(false);
  });

  it('a tenant_user signs in on the branded page and writes an entry with every field type in two locales, then submits it', async () => {
    const context = await browser.newContext({ locale: 'en-US', timezoneId: 'Europe/Berlin', viewport: { width: 1280, height: 900 } });
    // The author's pages run on a clock the test can move: a pause in typing, a retry's back-off take no real time.
    await context.clock.install();
    author = { context, ...(await watchedPage(context)) };
    const { page } = author;
    await page.goto(consoleUrl);
    await page.getByText('Welcome to the newsroom').waitFor();
    await expectAccessible(page, 'the sign-in page');
    await screenshot(page, 'sign-in');
    await signIn(page, consoleUrl, editorEmail, PASSWORD);
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Features' }).click();
    await page.getByRole('link', { name: 'New entry' }).click();
    await page.locator('#entry-slug').fill('first-feature');
    // The service's validation errors show beside their fields.
    await page.getByRole('button', { name: 'Create' }).click();
    await page.locator('[data-field="title"] .field-error').first().waitFor();
    expect(await page.locator('[data-field="title"] .field-error').first().innerText()).to.include('required');
    // Localized fields, English tab first.
    await page.locator('#field-title-en').fill('Solar festival');
    await page.locator('#field-summary-en').fill('Three days of music.');
    await page.locator('#field-body-en').click();
    await page.keyboard.type('The festival opens at dawn.');
    await page.getByRole('tab', { name: 'JA' }).click();
    await page.locator('#field-title-ja').fill('太陽祭');
    await page.locator('#field-body-ja').click();
    await page.keyboard.type('祭りは夜明けに始まります。');
    // Fields shown once.
    await page.locator('#field-link').fill('https://example.org/festival');
    await page.locator('#field-rating').fill('4');
    await page.locator('#field-featured').check();
    await page.locator('[data-field="event_date"]').getByLabel('Date range').check();
    await page.locator('#field-event_date').fill('2026-07-01');
    await page.locator('#field-event_date-to').fill('2026-07-03');
    await page.locator('#field-topic').selectOption({ label: 'Culture' });
    await page.locator('[data-field="tone"]').getByLabel('Science').check();
    await page.locator('[data-field="tags"]').getByLabel('Culture').check();
    await page.locator('[data-field="tags"]').getByLabel('Sports').check();
    await page.locator('#field-hero-upload').setInputFiles(await pngFile(files, 'red.png', { r: 200, g: 30, b: 30 }));
    await page.locator('[data-field="hero"] img[alt="red.png"]').waitFor();
    await page.locator('[data-field="attachment"]').getByRole('button', { name: 'Choose from library' }).click();
    await page.getByRole('button', { name: 'Select: blue.png' }).click();
    await page.locator('[data-field="attachment"]').getByText('blue.png').waitFor();
    await page.locator('#field-gallery-upload').setInputFiles(await pngFile(files, 'one.png', { r: 10, g: 10, b: 10 }));
    await page.locator('[data-field="gallery"] li').nth(0).waitFor();
    await page.locator('#field-gallery-upload').setInputFiles(await pngFile(files, 'two.png', { r: 240, g: 240, b: 240 }));
    await page.locator('[data-field="gallery"] li').nth(1).waitFor();
    await page.getByLabel('Caption 1').fill('First picture');
    await page.getByLabel('Caption 2').fill('Second picture');
    await page.getByRole('button', { name: 'Move down 1' }).click();
    await page.locator('#field-video').fill('https://www.youtube.com/watch?v=aqz-KE-bpKQ');
    expect(await page.getByTitle('Video preview').getAttribute('src')).to.equal('https://www.youtube-nocookie.com/embed/aqz-KE-bpKQ');
    await page.locator('[data-field="related"]').getByRole('button', { name: 'Choose an entry' }).click();
    await page.getByRole('dialog').getByLabel('Search').fill('Background');
    await page.getByRole('button', { name: 'Select: Background piece' }).click();
    await page.locator('[data-field="related"]').getByText('Background piece (/background-piece)').waitFor();
    await page.locator('#field-credit').fill('Photo: A. Author');
    await page.getByRole('button', { name: 'Create' }).click();
    await page.getByRole('button', { name: 'Submit for review' }).waitFor();
    entryId = /\/entries\/([0-9a-f-]{36})/.exec(page.url())![1]!;
    await expectAccessible(page, 'the entry editor');
    await screenshot(page, 'entry-editor');
    // Role-aware: no approve, schedule or delete controls for a tenant_user.
    for (const name of ['Approve and publish now', 'Approve for a later time', 'Delete entry', 'Reject']) expect(await page.getByRole('button', { name }).count(), name).to.equal(0);
    // Typing is kept in the working copy as it pauses (no revision), and leaving the editor makes the revision.
    await page.locator('#field-credit').fill('Photo: A. Author (draft)');
    await fastForwardUntil(page, AUTOSAVE_PAUSE_MS, page.getByText(/Kept in your working copy at/));
    expect((await entry()).latestRevision.revision).to.equal(1);
    await page.locator('#field-credit').fill('Photo: A. Author');
    await page.getByRole('link', { name: 'Review desk' }).click();
    await page.getByRole('heading', { name: 'Review desk' }).waitFor();
    expect((await latestSnapshot())).to.deep.include({ revision: 2 });
    expect((await latestSnapshot()).snapshot.credit).to.equal('Photo: A. Author');
    await page.goBack();
    await page.getByText('Revision 2', { exact: true }).waitFor();
    // Preview (issue 44): the project's site has no preview of its own, so Preview opens the console's readable
    // draft page; the public API's link (JSON, valid 15 minutes) stays offered for a site or a developer.
    await page.getByRole('button', { name: 'Preview' }).click();
    const dialog = page.getByRole('dialog');
    const preview = await dialog.getByRole('link', { name: /public API/ }).getAttribute('href');
    expect(preview).to.match(new RegExp(`^${f.service.url}/public/p/${f.project.projectId}/v1/preview/revisions\\?token=`));
    expect((await fetch(preview!)).status).to.equal(200);
    const open = dialog.getByRole('link', { name: 'Open the preview: Revision 2' });
    expect(await open.getAttribute('target')).to.equal('_blank');
    // The new tab, with the author's session: opened in a context of its own, so that it cannot take the focus
    // of the author's page, which later steps use.
    const tabContext = await browser.newContext({ locale: 'en-US', timezoneId: 'Europe/Berlin', viewport: { width: 1280, height: 900 }, storageState: await author.context.storageState() });
    const { page: tab, problems: tabProblems } = await watchedPage(tabContext);
    await tab.goto(new URL((await open.getAttribute('href'))!, page.url()).href);
    await tab.getByRole('heading', { level: 1, name: 'Solar festival' }).waitFor();
    await tab.getByText('The festival opens at dawn.').waitFor();
    await tab.locator('.preview-image img').nth(2).waitFor();
    const article = tab.locator('article.draft-preview');
    const fieldText = async (label: string) => (await article.getByRole('region', { name: label, exact: true }).locator(':scope > :not(h2)').allInnerTexts()).join('\n').trim();
    expect(await article.getByRole('note').innerText()).to.match(/^DRAFT PREVIEW/i).and.include('Revision 2 · Draft');
    expect(await fieldText('Summary')).to.equal('Three days of music.');
    expect(await fieldText('Event date')).to.equal('July 1, 2026 – July 3, 2026');
    expect(await fieldText('Featured')).to.equal('Yes');
    expect(await fieldText('Tags')).to.equal('Culture, Sports');
    expect(await fieldText('Related entry')).to.equal('Background piece (/background-piece)');
    expect(await article.getByRole('region', { name: 'Gallery' }).locator('figcaption').allInnerTexts()).to.deep.equal(['Second picture', 'First picture']);
    // Every image loaded (from the media the editor chose), and nothing of the API's JSON shows.
    const loaded = await tab.locator('.preview-image img').evaluateAll((images) => images.map((i) => (i as unknown as { naturalWidth: number }).naturalWidth > 0));
    expect(loaded).to.deep.equal([true, true, true]);
    const text = await tab.locator('main').innerText();
    expect(text).to.not.match(/"type"|"snapshot"|mediaUrls|\{"/);
    expect(tab.url()).to.equal(`${consoleUrl}entries/${entryId}/preview/${(await entry()).latestRevision.revisionId}`);
    await expectAccessible(tab, 'the draft preview');
    await screenshot(tab, 'preview-default');
    expect(tabProblems).to.deep.equal([]);
    await tabContext.close();
    await dialog.getByRole('button', { name: 'Close' }).click();
    await page.getByRole('button', { name: 'Submit for review' }).click();
    await page.locator('.page-head .badge', { hasText: 'In review' }).waitFor();

    const saved = await latestSnapshot();
    expect(saved.status).to.equal('pending_review');
    const s = saved.snapshot;
    expect(s.title).to.deep.equal({ en: 'Solar festival', ja: '太陽祭' });
    expect(s.summary).to.deep.equal({ en: 'Three days of music.' });
    expect(s.body.en).to.deep.equal({ type: 'doc', content: [{ type: 'paragraph', content: [{ type: 'text', text: 'The festival opens at dawn.' }] }] });
    expect(s.body.ja.content[0].content[0].text).to.equal('祭りは夜明けに始まります。');
    expect([s.link, s.rating, s.featured, s.event_date, s.topic, s.tone, s.tags, s.video, s.related, s.credit]).to.deep.equal([
      'https://example.org/festival',
      4,
      true,
      { from: '2026-07-01', to: '2026-07-03' },
      'culture',
      'science',
      ['culture', 'sports'],
      'https://www.youtube.com/watch?v=aqz-KE-bpKQ',
      relatedId,
      'Photo: A. Author',
    ]);
    const asset = async (id: string) => (await api('GET', `/media/${id}`)).body.fileName;
    expect([await asset(s.hero), await asset(s.attachment)]).to.deep.equal(['red.png', 'blue.png']);
    expect(s.gallery.map((g: { caption: string }) => g.caption)).to.deep.equal(['Second picture', 'First picture']);
    expect(await Promise.all(s.gallery.map((g: { assetId: string }) => asset(g.assetId)))).to.deep.equal(['two.png', 'one.png']);

    // The list shows it with its locale coverage and status.
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Features' }).click();
    const row = page.getByRole('row', { name: /Solar festival/ });
    await row.waitFor();
    expect(await row.innerText()).to.include('In review').and.include('en, ja');
    await expectAccessible(page, 'the entry list');
    await screenshot(page, 'entry-list');
  });

  it('a tenant_admin in Tokyo finds it in the review queue, compares and rejects it with a reason', async () => {
    const context = await browser.newContext({ locale: 'en-US', timezoneId: 'Asia/Tokyo', viewport: { width: 1280, height: 900 } });
    reviewer = { context, ...(await watchedPage(context)) };
    const { page } = reviewer;
    await signIn(page, consoleUrl, f.project.adminEmail, PASSWORD);
    await page.getByRole('link', { name: 'Review desk' }).click();
    const row = page.getByRole('row', { name: /Solar festival/ });
    await row.waitFor();
    expect(await row.innerText()).to.include(editorEmail).and.include('In review');
    await expectAccessible(page, 'the review desk');
    await screenshot(page, 'review-desk');
    await row.getByRole('link', { name: 'Solar festival' }).click();
    await page.getByRole('heading', { name: 'Review: Solar festival' }).waitFor();
    expect(await page.getByRole('table').innerText()).to.include('Title (ja)').and.include('太陽祭');
    await expectAccessible(page, 'the review comparison');
    await screenshot(page, 'review-compare');
    await page.getByRole('button', { name: 'Reject' }).click();
    await page.getByLabel('Reason for rejecting').fill('Please name the venue.');
    await page.getByRole('dialog').getByRole('button', { name: 'Reject' }).click();
    await page.getByRole('heading', { name: 'Review desk' }).waitFor();
    expect((await latestSnapshot()).status).to.equal('rejected');
  });

  it('the author reads the reason, reopens, fixes (kept while typing, one revision on Save) and resubmits', async () => {
    const { page } = author;
    await page.getByRole('link', { name: 'Solar festival' }).click();
    await page.getByText('Rejected: Please name the venue.').waitFor();
    await page.getByRole('button', { name: 'Reopen as draft' }).click();
    await page.getByRole('button', { name: 'Submit for review' }).waitFor();
    const before = (await entry()).revisionCount;
    await page.locator('#field-summary-en').click();
    await page.keyboard.press('End');
    await page.locator('#field-summary-en').pressSequentially(' At the harbour.', { delay: 40 });
    await fastForwardUntil(page, AUTOSAVE_PAUSE_MS, page.getByText(/Kept in your working copy at/));
    expect((await entry()).revisionCount).to.equal(before);
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await page.getByText(`Saved as revision ${before + 1}`).waitFor();
    expect((await entry()).revisionCount).to.equal(before + 1);
    expect((await latestSnapshot()).snapshot.summary.en).to.equal('Three days of music. At the harbour.');
    await page.getByRole('button', { name: 'Submit for review' }).click();
    await page.locator('.page-head .badge', { hasText: 'In review' }).waitFor();
  });

  it('the admin schedules it in Asia/Tokyo (stored UTC, shown back in Tokyo time); the scheduled job publishes it and the public API serves it', async () => {
    const { page } = reviewer;
    await page.getByRole('link', { name: 'Media library' }).click();
    await page.getByRole('link', { name: 'Review desk' }).click();
    await page.getByRole('link', { name: 'Solar festival' }).click();
    await page.getByText('At the harbour.').first().waitFor();
    await page.getByRole('link', { name: /^Revision \d+$/ }).click();
    // Assigned to a reviewer (Business plan), as the lists show.
    await page.getByLabel('Assignee').selectOption({ label: f.project.adminEmail });
    const admin = (await api('GET', '/users')).body.items.find((u: { email: string }) => u.email === f.project.adminEmail);
    await eventually(entry, (e) => e.assignee === admin.id);
    await page.getByRole('button', { name: 'Approve for a later time' }).click();
    expect(await page.getByLabel('Time zone').inputValue()).to.equal('Asia/Tokyo');
    await page.getByLabel('Publish at').fill('2030-01-02T09:30');
    await page.getByRole('dialog').getByRole('button', { name: 'Confirm' }).click();
    await page.getByText('Scheduled to publish Jan 2, 2030, 9:30 AM (Asia/Tokyo)').waitFor();
    const scheduled = await latestSnapshot();
    expect([scheduled.status, scheduled.publishAt]).to.deep.equal(['scheduled', '2030-01-02T00:30:00.000Z']);

    const clock = new ManualClock('2030-01-02T00:31:00.000Z');
    const publisher = new ScheduledPublisher({ log: f.service.log, reader: new ReadModelReader(f.service.stores.readModels, { cacheMs: 0 }), clock, logger: pino({ level: 'silent' }), intervalMs: 1000 });
    expect(await publisher.runOnce()).to.equal(1);
    expect(await f.service.supervisor!.waitFor((await f.service.log.headPosition())!, 5000)).to.equal(true);
    const published = await fetch(`${f.service.url}/public/p/${f.project.projectId}/v1/form-sets/features/entries/first-feature?locale=ja`);
    expect(published.status).to.equal(200);
    expect(((await published.json()) as { data: { title: string } }).data.title).to.equal('太陽祭');
  });

  it('history shows every step with its actor and a diff; restoring a revision makes a new draft', async () => {
    const { page } = reviewer;
    await page.reload();
    await signIn(page, page.url(), f.project.adminEmail, PASSWORD);
    await page.getByRole('link', { name: 'History' }).click();
    await page.getByRole('heading', { name: 'History of Solar festival' }).waitFor();
    const rows = await page.locator('table.list').getByRole('row').allInnerTexts();
    const steps = rows.slice(1).map((r) => r.split('\t').map((c) => c.trim()));
    const who = (what: string) => steps.filter((s) => s[2] === what).map((s) => s[1]);
    expect(who('submitted for review')).to.deep.equal([editorEmail, editorEmail]);
    expect(who('rejected')).to.deep.equal([f.project.adminEmail]);
    expect(who('reopened')).to.deep.equal([editorEmail]);
    // Created, saved on leaving the editor before submitting, saved after reopening.
    expect(who('revision saved')).to.deep.equal([editorEmail, editorEmail, editorEmail]);
    expect(steps.map((s) => s[2])).to.include.members(['created', 'approved and scheduled', 'published']);
    // The diff of the two revisions: the summary changed.
    const diff = page.locator('table.diff');
    await diff.waitFor();
    expect(await diff.innerText()).to.include('Summary (en)').and.include('At the harbour.');
    await expectAccessible(page, 'the entry history');
    await screenshot(page, 'history');
    await page.getByRole('button', { name: 'Restore as new draft: Revision 1' }).click();
    await page.getByText(/Restored as revision 4/).waitFor();
    const restored = await latestSnapshot();
    expect([restored.revision, restored.status, restored.snapshot.summary]).to.deep.equal([4, 'draft', { en: 'Three days of music.' }]);
    // The history says where the restored revision came from (issue 44); the ordinary saves stay "revision saved".
    const history = page.locator('table.list');
    await history.getByRole('row', { name: /restored from revision 1/ }).waitFor();
    const after = (await history.getByRole('row').allInnerTexts()).slice(1).map((r) => r.split('\t').map((c) => c.trim()));
    expect(after.filter((s) => /restored/.test(s[2]!)).map((s) => [s[1], s[2], s[3]])).to.deep.equal([[f.project.adminEmail, 'restored from revision 1', '4']]);
    expect(after.filter((s) => s[2] === 'revision saved')).to.have.length(3);
    await expectAccessible(page, 'the entry history with a restore');
    await screenshot(page, 'history-restored');

    // The project's audit log, filtered to the entry.
    await page.getByRole('link', { name: 'Audit log' }).click();
    await page.getByLabel('Entry id').fill(entryId);
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.locator('table.list').getByRole('row', { name: /rejected/ }).waitFor();
    const audit = await page.locator('table.list').innerText();
    expect(audit).to.include('revision saved').and.include(f.project.adminEmail).and.include(editorEmail).and.not.include('contact');
    await expectAccessible(page, 'the audit log');
    await screenshot(page, 'audit-log');
  });

  it('the audit log flags an approval made while fourEyes was off and shows refused writes with their count', async () => {
    const { page } = reviewer;
    expect((await api('PUT', '/project/approval-policy', { fourEyes: true })).status).to.equal(200);
    expect((await api('PUT', '/project/approval-policy', { fourEyes: false })).status).to.equal(200);
    const own = await api('POST', `/form-sets/${formSetId}/entries`, { slug: 'own-approval', fields: { title: { en: 'Own approval' } } });
    expect((await api('POST', `/revisions/${own.body.revision.id}/submit`, {})).status).to.equal(200);
    expect((await api('POST', `/revisions/${own.body.revision.id}/publish`, { revision: 1 })).status).to.equal(200);
    for (let i = 0; i < 3; i++) expect((await f.call('PUT', '/project/approval-policy', { body: { fourEyes: true } })).status).to.equal(403);

    await page.getByRole('link', { name: 'Audit log' }).click();
    await page.getByLabel('Entry id').fill('');
    await page.getByRole('button', { name: 'Filter' }).click();
    const flagged = page.locator('table.list').getByRole('row', { name: /approved while fourEyes was off/ });
    await flagged.waitFor();
    expect(await flagged.innerText()).to.include('published').and.include(f.project.adminEmail);
    const refused = page.locator('table.list').getByRole('row', { name: /write refused/ });
    expect(await refused.first().innerText()).to.include('setApprovalPolicy → FORBIDDEN (scope), 1×');
    await expectAccessible(page, 'the audit log with flags');
    await screenshot(page, 'audit-log-flags');
  });

  it('media library: upload with progress, edit the alt text, search (sent once the typing pauses); the upload is then offered by the picker', async () => {
    const { page } = reviewer;
    await page.getByRole('link', { name: 'Media library' }).click();
    await page.locator('.drop-zone input[type="file"]').setInputFiles(await pngFile(files, 'green.png', { r: 20, g: 160, b: 60 }));
    await page.getByRole('button', { name: 'Details: green.png' }).click();
    await page.getByRole('dialog').getByLabel('Alternative text').fill('A green square');
    await page.getByRole('dialog').getByRole('button', { name: 'Save details' }).click();
    await page.getByRole('dialog').waitFor({ state: 'hidden' });
    const media = (await api('GET', '/media?name=green')).body.items;
    expect(media.map((m: { altText: string }) => m.altText)).to.deep.equal(['A green square']);
    // Typed a key at a time, faster than the search waits: the search waits for the word.
    const searches: string[] = [];
    const onRequest = (request: Request) => {
      const url = new URL(request.url());
      if (url.pathname === '/admin/v1/media' && url.searchParams.has('name')) searches.push(url.searchParams.get('name')!);
    };
    page.on('request', onRequest);
    await page.getByLabel('Search by file name').pressSequentially('green', { delay: 60 });
    await page.locator('ul.media-grid li').filter({ hasText: 'blue.png' }).waitFor({ state: 'detached' });
    await page.locator('ul.media-grid li').filter({ hasText: 'green.png' }).waitFor();
    expect(await page.locator('ul.media-grid li').allInnerTexts()).to.have.length(1);
    // The list may already show green.png from a prefix's search ('gree' finds it too): the whole word's search
    // comes once the typing's pause has passed the debounce.
    await eventually(() => searches.at(-1), (last) => last === 'green', 5_000, 'the search for the whole word');
    await page.waitForTimeout(100);
    page.off('request', onRequest);
    // Fewer searches than keys, the last for the whole word: on a busy machine a pause between two keys may pass
    // the debounce and send a prefix; without the debounce every key sends one (five).
    expect(searches.at(-1)).to.equal('green');
    expect(searches.length, JSON.stringify(searches)).to.be.below(4);
    await expectAccessible(page, 'the media library');
    await page.getByLabel('Search by file name').fill('');
    await page.locator('ul.media-grid li').filter({ hasText: 'blue.png' }).waitFor();
    await screenshot(page, 'media-library');
  });

  it('a stale revision: the editor explains the conflict and merges the other save with what was typed', async () => {
    const { page } = author;
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Features' }).click();
    await page.getByRole('link', { name: 'Solar festival' }).click();
    await page.locator('#field-title-en').waitFor();
    // Someone else saves meanwhile (an agent, through the API).
    const current = await latestSnapshot();
    const other = await f.call('POST', `/entries/${entryId}/revisions`, { body: { fields: { ...current.snapshot, credit: 'Photo: Agency' }, expectedRevision: current.revision } });
    expect(other.status, JSON.stringify(other.body)).to.equal(201);
    await page.locator('#field-title-en').click();
    await page.keyboard.press('End');
    await page.locator('#field-title-en').pressSequentially(' 2026');
    // Told once the typing pauses and is kept: the service answers that a newer revision exists.
    await fastForwardUntil(page, AUTOSAVE_PAUSE_MS, page.getByRole('heading', { name: 'Someone else saved this entry meanwhile' }));
    await expectAccessible(page, 'the editor with a conflict');
    await screenshot(page, 'conflict');
    await page.getByRole('button', { name: 'Load their version and keep my changes' }).click();
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await page.getByText(`Saved as revision ${other.body.revision + 1}`).waitFor();
    const merged = (await latestSnapshot()).snapshot;
    expect([merged.title.en, merged.credit]).to.deep.equal(['Solar festival 2026', 'Photo: Agency']);
  });

  it('a same-field conflict: the panel names each value both changed, shows both versions and saves the one chosen for each', async () => {
    const { page } = author;
    const current = await latestSnapshot();
    const theirs = { ...current.snapshot, title: { ...current.snapshot.title, en: 'Solar festival (their title)' }, summary: { ...current.snapshot.summary, en: 'Their summary.' }, credit: 'Photo: Desk' };
    const other = await f.call('POST', `/entries/${entryId}/revisions`, { body: { fields: theirs, expectedRevision: current.revision } });
    expect(other.status, JSON.stringify(other.body)).to.equal(201);
    await page.locator('#field-title-en').fill('Solar festival (my title)');
    await page.locator('#field-summary-en').fill('My summary.');
    const panel = page.getByRole('alertdialog', { name: 'Someone else saved this entry meanwhile' });
    await fastForwardUntil(page, AUTOSAVE_PAUSE_MS, panel.getByRole('group', { name: 'Summary (en)' }));
    expect(await panel.locator('#conflict-body').innerText()).to.match(/You both changed: (Title \(en\), Summary \(en\)|Summary \(en\), Title \(en\))\./);
    expect(await panel.getByRole('group').count(), 'only the values both changed: not the credit only they changed').to.equal(2);
    const title = panel.getByRole('group', { name: 'Title (en)' });
    const sides = (await title.locator('label').allInnerTexts()).map((text) => text.replace(/\s+/g, ' ').trim());
    expect(sides).to.deep.equal([`Theirs (revision ${other.body.revision}) Solar festival (their title)`, 'Mine Solar festival (my title)']);
    const apply = panel.getByRole('button', { name: 'Load their version with my choices' });
    expect(await apply.isDisabled(), 'nothing is chosen for the user').to.equal(true);
    await expectAccessible(page, 'the editor with a same-field conflict');
    await title.getByRole('radio', { name: /^Theirs/ }).check();
    expect(await apply.isDisabled(), 'the summary is still to choose').to.equal(true);
    await panel.getByRole('group', { name: 'Summary (en)' }).getByRole('radio', { name: /^Mine/ }).check();
    await screenshot(page, 'conflict-fields');
    await apply.click();
    await panel.waitFor({ state: 'detached' });
    expect(await page.locator('#field-title-en').inputValue()).to.equal('Solar festival (their title)');
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await page.getByText(`Saved as revision ${other.body.revision + 1}`).waitFor();
    const merged = (await latestSnapshot()).snapshot;
    expect([merged.title.en, merged.summary.en, merged.credit, merged.title.ja]).to.deep.equal(['Solar festival (their title)', 'My summary.', 'Photo: Desk', theirs.title.ja]);
  });

  it('an expired session: sign in again over the page, nothing typed is lost, the working copy is kept after', async () => {
    const { page } = author;
    // What the service answers once a session token has expired.
    await page.route('**/admin/v1/entries/*/working-copy', (route) => route.fulfill({ status: 401, contentType: 'application/json', body: JSON.stringify({ error: { code: 'UNAUTHORIZED', message: 'The session has expired: sign in again.' } }) }), { times: 1 });
    await page.locator('#field-summary-en').fill('Typed while the session ran out.');
    const dialog = page.getByRole('dialog');
    await fastForwardUntil(page, AUTOSAVE_PAUSE_MS, dialog.getByText('Your session has expired'));
    expect(await dialog.getByLabel('E-mail').inputValue()).to.equal(editorEmail);
    await dialog.getByLabel('Password').fill(PASSWORD);
    await dialog.getByRole('button', { name: 'Sign in' }).click();
    await dialog.waitFor({ state: 'hidden' });
    expect(await page.locator('#field-summary-en').inputValue()).to.equal('Typed while the session ran out.');
    await page.getByText(/Kept in your working copy at/).waitFor();
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await page.getByText(/Saved as revision \d+/).waitFor();
    expect((await latestSnapshot()).snapshot.summary.en).to.equal('Typed while the session ran out.');
  });

  it('duplicate, rename the slug (the old URL redirects), delete with confirmation', async () => {
    const { page } = reviewer;
    await page.getByRole('link', { name: 'Features' }).click();
    // The list filtered by assignee (the server filters): only the entry assigned to the admin.
    await page.getByLabel('Assignee').selectOption({ label: f.project.adminEmail });
    await page.getByRole('link', { name: 'Background piece' }).waitFor({ state: 'detached' });
    // The filtered page may replace the table after the other row is gone: count once the admin's entry shows.
    await page.getByRole('link', { name: 'Solar festival' }).waitFor();
    expect(await page.locator('table.list tbody tr').count()).to.equal(1);
    await page.getByRole('link', { name: 'Solar festival' }).click();
    await page.getByRole('button', { name: 'Duplicate' }).click();
    await page.getByText('/first-feature-copy').waitFor();
    await page.getByRole('button', { name: 'Change slug' }).click();
    expect(await page.getByRole('dialog').innerText()).to.include('The old URL /first-feature-copy will keep working');
    await page.getByRole('dialog').getByLabel('Slug').fill('second-feature');
    await page.getByRole('dialog').getByRole('button', { name: 'Confirm' }).click();
    await page.getByText('/second-feature ·').waitFor();
    const copyId = /\/entries\/([0-9a-f-]{36})/.exec(page.url())![1]!;
    await page.getByRole('button', { name: 'Delete entry' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Delete entry' }).click();
    await page.getByRole('link', { name: 'New entry' }).waitFor();
    expect((await api('GET', `/entries/${copyId}`)).status).to.equal(404);
  });

  it('the review desk schedules selected entries at once', async () => {
    const waiting: string[] = [];
    for (const slug of ['bulk-one', 'bulk-two']) {
      const created = await f.call('POST', `/form-sets/${formSetId}/entries`, { body: { slug, fields: { title: { en: `Bulk ${slug}` } } } });
      expect((await f.call('POST', `/revisions/${created.body.revision.id}/submit`, { body: {} })).status).to.equal(200);
      waiting.push(created.body.revision.id);
    }
    const { page } = reviewer;
    await page.getByRole('link', { name: 'Media library' }).click();
    await page.getByRole('link', { name: 'Review desk' }).click();
    await page.getByRole('checkbox', { name: 'Select Bulk bulk-one' }).check();
    await page.getByRole('checkbox', { name: 'Select Bulk bulk-two' }).check();
    await page.getByLabel('Publish at').fill('2031-03-01T08:00');
    await page.getByRole('button', { name: /^Schedule the selected entries/ }).click();
    await page.getByText('2 scheduled, 0 not scheduled').waitFor();
    for (const id of waiting) {
      const revision = (await api('GET', `/revisions/${id}`)).body;
      expect([revision.status, revision.publishAt]).to.deep.equal(['scheduled', '2031-02-28T23:00:00.000Z']);
    }
  });

  it('the project switcher lists the projects of the tenant and switches between them', async () => {
    expect((await api('GET', '/projects')).body.items.map((p: { id: string }) => p.id)).to.deep.equal([f.project.projectId, secondProjectId]);
    const { page } = reviewer;
    await page.getByLabel('Project').selectOption({ label: 'Zz second site' });
    await page.waitForURL(`**/console/p/${secondProjectId}/`);
    // The second project has no form sets yet; the first one's are gone from the navigation.
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Features' }).waitFor({ state: 'detached' });
    await page.getByLabel('Project').selectOption({ label: (await api('GET', '/project')).body.name });
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Features' }).waitFor();
  });

  it('speaks Japanese on request, keyboard first: the language is switched from the header; sign-out ends the session', async () => {
    const { page } = reviewer;
    await page.getByLabel('Language').selectOption('ja');
    await page.getByRole('link', { name: 'レビューデスク' }).waitFor();
    expect(await page.locator('html').getAttribute('lang')).to.equal('ja');
    await page.getByRole('link', { name: 'レビューデスク' }).focus();
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'レビューデスク' }).waitFor();
    await expectAccessible(page, 'the review desk in Japanese');
    // Events are named in the UI language too.
    await page.getByRole('link', { name: '監査ログ' }).click();
    await page.getByLabel('エントリー ID').fill(entryId);
    await page.getByRole('button', { name: '絞り込む' }).click();
    await page.locator('table.list').getByRole('row', { name: /差し戻し/ }).first().waitFor();
    await page.getByLabel('言語').selectOption('en');
    // Sign-out: the service refuses the session's cookie from then on.
    const [cookie] = (await reviewer.context.cookies()).filter((c) => c.name === 'annals-session');
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
    const after = await fetch(`${f.service.url}/admin/v1/form-sets`, { headers: { cookie: `annals-session=${cookie!.value}`, 'x-project-id': f.project.projectId } });
    expect(after.status).to.equal(401);
  });

  it('a new entry: the slug is proposed from the title until the user edits it; a single date is named by its field', async () => {
    const { page } = author;
    await signIn(page, consoleUrl, editorEmail, PASSWORD);
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Features' }).click();
    await page.getByRole('link', { name: 'New entry' }).click();
    await page.locator('#field-title-en').fill('Été à Tokyo: the 2026 night market');
    expect(await page.locator('#entry-slug').inputValue()).to.equal('ete-a-tokyo-the-2026-night-market');
    expect(await page.locator('#entry-slug-help').innerText()).to.include('Proposed from the title until you change it.');
    // A date on its own (not a range) is named by its field's label.
    expect(await page.getByLabel('Event date', { exact: true }).getAttribute('type')).to.equal('date');
    await expectAccessible(page, 'a new entry');
    await screenshot(page, 'new-entry-slug');
    await page.locator('#entry-slug').fill('night-market');
    await page.locator('#field-title-en').fill('Night market, renamed');
    expect(await page.locator('#entry-slug').inputValue(), 'an edited slug stays as the user left it').to.equal('night-market');
    await page.getByRole('button', { name: 'Create' }).click();
    await page.getByRole('heading', { name: 'Night market, renamed' }).waitFor();
    await page.getByText('/night-market ·').waitFor();
  });

  it('after a navigation, focus is on the new page’s heading', async () => {
    const { page } = author;
    // Evaluated through the DevTools protocol: the page's CSP admits no eval, so no waitForFunction.
    const focused = () => page.evaluate(`document.activeElement.tagName + ' ' + document.activeElement.textContent`) as Promise<string>;
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Media library' }).click();
    await eventually(focused, (f) => f === 'H1 Media library', 10_000);
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Review desk' }).click();
    await eventually(focused, (f) => f === 'H1 Review desk', 10_000);
    // The keyboard goes on from the heading: the next Tab lands in the page, not back at the top. (Once the desk's
    // list has loaded: until then nothing after the heading takes focus, and Tab would wrap to the top.)
    await page.locator('main table.list a').first().waitFor();
    expect(await focused()).to.equal('H1 Review desk');
    await page.keyboard.press('Tab');
    expect(await page.evaluate(`document.querySelector('main').contains(document.activeElement)`)).to.equal(true);
    await expectAccessible(page, 'the review desk after navigation');
  });

  it('an editor who opens an administrator’s page by its URL is told it needs an administrator, with no admin controls', async () => {
    const { page } = author;
    for (const [area, name] of [
      ['people', 'People and keys'],
      ['webhooks', 'Webhooks'],
      ['settings', 'Project settings'],
      ['operations', 'Operations'],
      ['audit', 'Audit log'],
    ] as const) {
      await page.goto(`${consoleUrl}${area}`);
      await page.getByRole('heading', { name: 'This page needs an administrator' }).waitFor();
      expect(await page.locator('main').innerText(), area).to.include(`${name} is for the project’s administrators; you are signed in as ${editorEmail}`);
      expect(await page.locator('main').getByRole('button').count(), `${area}: no controls`).to.equal(0);
      expect(await page.locator('main form, main table').count(), `${area}: no forms or lists`).to.equal(0);
    }
    await expectAccessible(page, 'the page that needs an administrator');
    await screenshot(page, 'needs-administrator');
    await page.getByRole('link', { name: 'Go to the review desk' }).click();
    await page.getByRole('heading', { name: 'Review desk' }).waitFor();
  });

  it('a service that cannot be reached is said so in plain words, with a retry that loads the page once it is back', async () => {
    const { page } = author;
    await page.route('**/admin/v1/media**', (route) => route.abort('connectionrefused'));
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Media library' }).click();
    const alert = page.getByRole('alert').filter({ hasText: 'The service cannot be reached' });
    // Said after the console's retries (1 s, then 2 s apart), which the clock runs through.
    await fastForwardUntil(page, 2000, alert);
    expect(await page.locator('main').innerText()).not.to.include('Failed to fetch');
    await expectAccessible(page, 'the unreachable service message');
    await screenshot(page, 'service-unreachable');
    await page.unroute('**/admin/v1/media**');
    await alert.getByRole('button', { name: 'Try again' }).click();
    await page.locator('ul.media-grid li').filter({ hasText: 'blue.png' }).waitFor();
    await alert.waitFor({ state: 'detached' });
  });

  it('a 200-character unbroken title wraps in the list instead of widening the page', async () => {
    const { page } = author;
    const long = 'Unbroken'.repeat(25);
    expect((await api('POST', `/form-sets/${formSetId}/entries`, { slug: 'long-title', fields: { title: { en: long } } })).status).to.equal(201);
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Features' }).click();
    await page.getByRole('link', { name: long }).waitFor();
    const widths = (await page.evaluate(`[document.documentElement.scrollWidth, window.innerWidth, document.querySelector('table.list').getBoundingClientRect().right]`)) as number[];
    expect(widths[0], 'page width').to.be.at.most(widths[1]!);
    expect(widths[2], 'the list ends inside the window').to.be.at.most(widths[1]!);
    await expectAccessible(page, 'the entry list with a long title');
    await screenshot(page, 'entry-list-long-title');
  });

  it('the audit log: every event by a label, filtered by the 8 characters it shows, by a chosen entry or by e-mail', async () => {
    const { page } = reviewer;
    await signIn(page, `${consoleUrl}audit`, f.project.adminEmail, PASSWORD);
    await page.getByRole('heading', { name: 'Audit log' }).waitFor();
    const rows = page.locator('table.list tbody tr');
    await rows.first().waitFor();
    const what = await page.locator('table.list tbody td:nth-child(3)').allInnerTexts();
    expect(what.filter((text) => /(^|\s)[a-z-]+\.[a-z-]+($|\s)/.test(text)), 'raw event types').to.deep.equal([]);
    // The 8 characters shown for the entry filter to it.
    await page.getByLabel('Entry id').fill(entryId.slice(0, 8));
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.locator('table.list').getByRole('row', { name: /rejected/ }).waitFor();
    expect([...new Set(await page.locator('table.list tbody td:nth-child(4)').allInnerTexts())]).to.deep.equal([entryId.slice(0, 8)]);
    await expectAccessible(page, 'the audit log filtered by an id prefix');
    await screenshot(page, 'audit-log-prefix');
    // A prefix no row shows is explained, not sent.
    await page.getByLabel('Entry id').fill('ffffffff');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.getByRole('alert').getByText('No single entry in the rows shown starts with “ffffffff”').waitFor();
    // Or the entry is chosen by its title.
    await page.getByRole('button', { name: 'Choose an entry' }).click();
    await page.getByRole('dialog').getByRole('searchbox').fill('Night market');
    await page.getByRole('dialog').getByRole('button', { name: 'Select: Night market, renamed' }).click();
    const chosen = await page.getByLabel('Entry id').inputValue();
    expect(chosen).to.match(/^[0-9a-f-]{36}$/);
    await eventually(async () => [...new Set(await page.locator('table.list tbody td:nth-child(4)').allInnerTexts())], (ids) => ids.length === 1 && ids[0] === chosen.slice(0, 8), 10_000);
    expect(await page.locator('table.list').getByRole('row', { name: /created/ }).count()).to.equal(1);
    // People are named by e-mail in the log: the actor filter takes one.
    await page.getByLabel('Entry id').fill('');
    await page.getByLabel('Actor id').fill(editorEmail);
    await page.getByRole('button', { name: 'Filter' }).click();
    await eventually(async () => [...new Set(await page.locator('table.list tbody td:nth-child(2)').allInnerTexts())], (who) => who.length === 1 && who[0] === editorEmail, 10_000);
  });

  it('the draft preview shows a hostile title as text, in the console\'s language (issue 44)', async () => {
    const hostile = '<img src=x onerror=alert(1)>';
    const created = await f.call('POST', `/form-sets/${formSetId}/entries`, { body: { slug: 'hostile-preview', fields: { title: { en: hostile, ja: `${hostile} 日本語` }, summary: { en: '<script>alert(2)</script>' }, event_date: '2026-12-24' } } });
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
    const context = await browser.newContext({ locale: 'en-US', viewport: { width: 1280, height: 900 } });
    try {
      const { page, problems } = await watchedPage(context);
      const dialogs: string[] = [];
      page.on('dialog', (d) => {
        dialogs.push(d.message());
        void d.dismiss();
      });
      const url = `${consoleUrl}entries/${created.body.entry.id}/preview/${created.body.revision.id}`;
      await signIn(page, url, editorEmail, PASSWORD);
      const heading = page.getByRole('heading', { level: 1 });
      await heading.waitFor();
      expect(await heading.innerText()).to.equal(hostile);
      expect(await page.getByRole('region', { name: 'Summary' }).innerText()).to.include('<script>alert(2)</script>');
      expect(await page.locator('main img').count()).to.equal(0);
      expect(await page.locator('main script').count()).to.equal(0);
      // The console in Japanese: the page, its dates and the content language chosen on it.
      await page.evaluate("localStorage.setItem('annals.console.language', 'ja')");
      await page.goto(`${url}?locale=ja`);
      await page.getByText('下書きプレビュー').waitFor();
      expect(await page.getByRole('heading', { level: 1 }).innerText()).to.equal(`${hostile} 日本語`);
      expect(await page.getByRole('region', { name: 'Event date' }).innerText()).to.include('2026年12月24日');
      expect(await page.getByRole('note').innerText()).to.include('リビジョン 1 · 下書き');
      await expectAccessible(page, 'the draft preview in Japanese');
      await screenshot(page, 'preview-default-ja');
      expect([dialogs, problems]).to.deep.equal([[], []]);
    } finally {
      await context.close();
    }
  });

  it('no CSP refusal or uncaught error on any page', () => {
    expect(author.problems).to.deep.equal([]);
    expect(reviewer.problems).to.deep.equal([]);
  });

  it('the console IP allowlist: project pages are refused from an address it does not admit, as is the API', async () => {
    const added = await f.call('POST', '/project/ip-allowlist', { body: { cidr: '203.0.113.0/24', label: 'office' } });
    expect(added.status, JSON.stringify(added.body)).to.equal(201);
    const refused = await fetch(consoleUrl);
    expect(refused.status).to.equal(403);
    expect(await refused.text()).to.include('Console access refused');
    // A browser sees a styled page (its one inline style admitted by hash) naming the address the service saw.
    const context = await browser.newContext({ locale: 'en-US', viewport: { width: 1280, height: 900 } });
    try {
      const { page, problems } = await watchedPage(context);
      const answer = await page.goto(consoleUrl);
      expect(answer?.status()).to.equal(403);
      await page.getByRole('heading', { name: 'Console access refused' }).waitFor();
      expect(await page.locator('dd').textContent()).to.match(/^(::ffff:)?127\.0\.0\.1$/);
      expect(await page.evaluate<string>("getComputedStyle(document.querySelector('main')).borderTopWidth"), 'the inline style applied').to.equal('4px');
      await expectAccessible(page, 'the console refusal page');
      await screenshot(page, 'console-ip-refused');
      expect(problems).to.deep.equal([]);
    } finally {
      await context.close();
    }
    expect((await fetch(`${f.service.url}/console/`)).status).to.equal(200);
    expect((await api('GET', '/form-sets')).status).to.equal(403);
    expect((await f.call('DELETE', `/project/ip-allowlist/${added.body.id}`)).status).to.equal(204);
    expect((await fetch(consoleUrl)).status).to.equal(200);
  });
});
