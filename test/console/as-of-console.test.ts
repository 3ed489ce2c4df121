/**
 * The console's "As of" view in Debian's Chromium through playwright-core, against a started service: a
 * tenant admin in Tokyo goes from an entry's history to the site as it was at one of its events, picks other
 * instants as dates and times in her own zone (by keyboard), sees the form set's list and the entry as the
 * public API served them then (values with the locale fallback, a renamed entry under its slug then, a
 * deleted one not on the site), with a banner that says it is a past view; in English and in Japanese; axe-core
 * finds no serious or critical violation.
 */
import { expect } from 'chai';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { ManualClock } from '../../src/clock.ts';
import { adminSession, startAdminFixture, type AdminFixture } from '../admin/support.ts';
import { chromium as chromiumProgram, needing, requireProgram } from '../support/system-program.ts';
import { CHROMIUM_ARGS, expectAccessible, requireConsoleBuild, screenshot, sessionCall, signIn, watchedPage } from './support.ts';

const PASSWORD = 'correct horse battery staple';
const HOUR = 3_600_000;
const ZONE = 'Asia/Tokyo';

/** An instant as a datetime-local value in Tokyo: what the admin types. */
const tokyoLocal = (ms: number) => new Intl.DateTimeFormat('sv-SE', { timeZone: ZONE, year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit', hourCycle: 'h23' }).format(new Date(ms)).replace(' ', 'T');

describe(needing(chromiumProgram, 'console: the "As of" view in headless Chromium'), function () {
  this.timeout(180_000);
  // The service's clock: hours apart between steps, the last one (7h) after the browser's now (about 6h05),
  // which is the view's default instant.
  const start = Math.floor((Date.now() - 6 * HOUR - 5 * 60_000) / 1000) * 1000;
  const clock = new ManualClock(new Date(start));
  const step = (hours: number) => clock.set(new Date(start + hours * HOUR));
  let f: AdminFixture;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let problems: string[];
  let launch: string;
  let notes: string;
  let formSetId: string;

  before(async function () {
    const executablePath = requireProgram(this, chromiumProgram);
    requireConsoleBuild();
    f = await startAdminFixture({ clock, plan: 'business' });
    const api = sessionCall(f, (await adminSession(f)).token);
    formSetId = (
      await api('POST', '/form-sets', {
        slug: 'news',
        name: 'News',
        fields: [
          { key: 'title', type: 'text', label: 'Title', required: true },
          { key: 'summary', type: 'textarea', label: 'Summary' },
        ],
      })
    ).body.id;
    const publishNew = async (slug: string, fields: Record<string, unknown>) => {
      const created = await api('POST', `/form-sets/${formSetId}/entries`, { slug, fields });
      expect(created.status, JSON.stringify(created.body)).to.equal(201);
      expect((await api('POST', `/revisions/${created.body.revision.id}/submit`, {})).status).to.equal(200);
      expect((await api('POST', `/revisions/${created.body.revision.id}/publish`, { revision: 1 })).status).to.equal(200);
      return created.body.entry.id as string;
    };
    step(1);
    launch = await publishNew('launch', { title: { en: 'Launch day', ja: 'ローンチの日' }, summary: { en: 'We open the doors.' } });
    step(2);
    notes = await publishNew('notes', { title: { en: 'Release notes' } });
    step(3);
    const saved = await api('POST', `/entries/${launch}/revisions`, { fields: { title: { en: 'Launch day, corrected' }, summary: { en: 'We open the doors at nine.' } } });
    expect((await api('POST', `/revisions/${saved.body.id}/submit`, {})).status).to.equal(200);
    expect((await api('POST', `/revisions/${saved.body.id}/publish`, { revision: 2 })).status).to.equal(200);
    step(4);
    expect((await api('PATCH', `/entries/${launch}/slug`, { slug: 'launch-2026' })).status).to.equal(200);
    step(5);
    expect((await api('DELETE', `/entries/${notes}`)).status).to.equal(204);
    step(7);
    browser = await chromium.launch({ executablePath, args: CHROMIUM_ARGS });
    context = await browser.newContext({ locale: 'en-US', timezoneId: ZONE, viewport: { width: 1280, height: 900 } });
    ({ page, problems } = await watchedPage(context));
    await signIn(page, `${f.service.url}/console/p/${f.project.projectId}/`, f.project.adminEmail, PASSWORD);
  });
  after(async () => {
    await browser?.close();
    await f?.stop();
  });

  const at = () => new URL(page.url()).searchParams.get('at');
  const banner = () => page.getByRole('note');
  /** The list's slugs once it has loaded (every list these tests read has an entry: its first row is waited for). */
  const listSlugs = async () => {
    const region = page.getByRole('region', { name: /Entries on the site then|当時サイトに公開されていた項目/ });
    await region.getByRole('row').nth(1).waitFor();
    return (await region.getByRole('row').allInnerTexts()).slice(1).map((row) => row.split('\t')[0]!.trim());
  };

  it('from the entry\'s history to the site at one of its events: a banner says it is the past, the entry and the list as served then', async () => {
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'News' }).click();
    await page.getByRole('link', { name: 'Launch day, corrected' }).click();
    await page.getByRole('link', { name: 'History', exact: true }).click();
    await page.getByRole('heading', { name: /^History of / }).waitFor();
    await expectAccessible(page, 'the entry history with its as-of links');
    await screenshot(page, 'as-of-history');
    // The events of the first publication (created, saved, submitted, published at 1h): their instant's link.
    const firstPublication = new Intl.DateTimeFormat('en', { dateStyle: 'medium', timeStyle: 'short', timeZone: ZONE }).format(new Date(start + HOUR));
    await page.getByRole('link', { name: `As of then: ${firstPublication}` }).last().click();
    await page.getByRole('heading', { name: 'As of: the site at an instant' }).waitFor();
    expect(at()).to.equal(new Date(start + HOUR).toISOString());
    await banner().waitFor();
    expect(await banner().innerText()).to.include('Past view').and.include('not the current content').and.include('GMT+9');
    const entry = page.getByRole('region', { name: 'Served at /launch' });
    await entry.getByText('Launch day').waitFor();
    expect(await entry.innerText()).to.include('Revision 1').and.include('We open the doors.').and.include('/form-sets/news/entries/launch');
    expect(await listSlugs()).to.deep.equal(['launch']);
    await expectAccessible(page, 'the as-of view');
    // Back to the history, by its link.
    await entry.getByRole('link', { name: 'History of this entry' }).click();
    await page.getByRole('heading', { name: /^History of / }).waitFor();
    await page.goBack();
    await entry.waitFor();
  });

  it('another instant, typed as a date and time in Tokyo by keyboard: the list in the public order, the update served', async () => {
    const input = page.getByLabel(`Date and time (${ZONE})`);
    await input.fill(tokyoLocal(start + 3.5 * HOUR));
    await input.focus();
    await page.keyboard.press('Enter');
    await page.waitForURL((url) => url.searchParams.get('at') === new Date(start + 3.5 * HOUR).toISOString());
    const entry = page.getByRole('region', { name: 'Served at /launch' });
    await entry.getByText('Launch day, corrected').waitFor();
    expect(await entry.innerText()).to.include('Revision 2').and.include('We open the doors at nine.');
    // First published order, newest first: notes (2h) before launch (1h), though launch was updated later.
    expect(await listSlugs()).to.deep.equal(['notes', 'launch']);
    await screenshot(page, 'as-of');
  });

  it('in Japanese, the values as the site served them in Japanese: a title without a Japanese value falls back to the default locale', async () => {
    await page.getByRole('combobox', { name: /^Locale/ }).selectOption('ja');
    await page.getByRole('button', { name: 'Show' }).click();
    await page.waitForURL((url) => url.searchParams.get('locale') === 'ja');
    const entry = page.getByRole('region', { name: 'Served at /launch' });
    await entry.getByText('Launch day, corrected').waitFor();
    expect(await entry.innerText()).to.match(/Locale served\s+ja/);
    // An instant before the update: the Japanese title then.
    const input = page.getByLabel(`Date and time (${ZONE})`);
    await input.fill(tokyoLocal(start + 1.5 * HOUR));
    await page.getByRole('button', { name: 'Show' }).click();
    await entry.getByText('ローンチの日').waitFor();
    await page.getByLabel('Language').selectOption('ja');
    await page.getByRole('heading', { name: '過去の時点：ある瞬間のサイト' }).waitFor();
    expect(await banner().innerText()).to.include('過去の表示').and.include('現在のコンテンツではなく');
    await expectAccessible(page, 'the as-of view in Japanese');
    await screenshot(page, 'as-of-ja');
    await page.getByLabel('言語').selectOption('en');
  });

  it('keyboard to an entry of the list; later, after the rename and the delete: the list under the slug then, the deleted entry said not on the site', async () => {
    const input = page.getByLabel(`Date and time (${ZONE})`);
    await input.fill(tokyoLocal(start + 4.5 * HOUR));
    await page.getByRole('combobox', { name: /^Locale/ }).selectOption('');
    await page.getByRole('button', { name: 'Show' }).click();
    await page.waitForURL((url) => url.searchParams.get('at') === new Date(start + 4.5 * HOUR).toISOString() && !url.searchParams.has('locale'));
    await page.getByRole('region', { name: 'Served at /launch-2026' }).waitFor();
    expect(await listSlugs()).to.deep.equal(['notes', 'launch-2026']);
    // Keyboard: the list's link opens the entry, and the entry's heading takes the focus.
    const link = page.getByRole('link', { name: 'Show notes as of this instant' });
    await link.focus();
    await page.keyboard.press('Enter');
    await page.waitForURL((url) => url.searchParams.get('entry') === notes);
    await page.getByRole('heading', { name: 'Served at /notes' }).waitFor();
    expect(await page.evaluate<string>('document.activeElement?.textContent')).to.equal('Served at /notes');
    // Half an hour after its deletion, the same entry: not on the site, and why; the list without it.
    await input.fill(tokyoLocal(start + 5.5 * HOUR));
    await page.getByRole('button', { name: 'Show' }).click();
    const status = page.getByRole('status').filter({ hasText: 'not on the site' });
    await status.waitFor();
    await status.getByText('It had been deleted.').waitFor();
    expect(new URL(page.url()).searchParams.get('entry')).to.equal(notes);
    await page.getByRole('heading', { name: 'Not on the site: /notes' }).waitFor();
    expect(await listSlugs()).to.deep.equal(['launch-2026']);
    await expectAccessible(page, 'the as-of view of an entry deleted then');
    await screenshot(page, 'as-of-deleted');
  });

  it('reached from the navigation with no instant yet: the picker, now by default; no CSP refusal or uncaught error anywhere', async () => {
    await page.getByRole('link', { name: 'As of', exact: true }).click();
    await page.getByRole('heading', { name: 'As of: the site at an instant' }).waitFor();
    expect(await banner().count()).to.equal(0);
    await page.getByRole('button', { name: 'Show' }).click();
    await banner().waitFor();
    expect(await listSlugs()).to.deep.equal(['launch-2026']);
    expect(problems).to.deep.equal([]);
  });
});
