import { expect } from 'chai';
import { chromium, type Browser, type Page } from 'playwright-core';
import { PASSWORD, startAdminFixture, type AdminFixture } from '../admin/support.ts';
import { chromium as chromiumProgram, needing, requireProgram } from '../support/system-program.ts';
import { eventually } from '../support/engine-fixture.ts';
import { tempDir } from '../support/temp-dir.ts';
import { uploadMultipart } from '../media/support.ts';
import { CHROMIUM_ARGS, expectAccessible, pngFile, requireConsoleBuild, screenshot, signIn, watchedPage } from './support.ts';

/**
 * The media library's folders and an image's focal point in the console (issue 44): browse by folder, upload into
 * the folder shown, move an asset, and place a focal point by clicking the image or typing percentages.
 */
describe(needing(chromiumProgram, 'console: media folders and focal points, in headless Chromium'), function () {
  this.timeout(180_000);
  let f: AdminFixture;
  let browser: Browser;
  let page: Page;
  let problems: string[];
  const ids: Record<string, string> = {};
  const files = tempDir();
  const asset = async (id: string) => (await f.call('GET', `/media/${id}`)).body as { folder: string; focalPoint: { x: number; y: number } | null; fileName: string };

  before(async function () {
    const executablePath = requireProgram(this, chromiumProgram);
    requireConsoleBuild();
    f = await startAdminFixture({ plan: 'business' });
    const fs = await import('node:fs');
    for (const [name, folder, colour] of [['harbour.png', 'Press', { r: 20, g: 90, b: 160 }], ['portrait.png', 'People', { r: 160, g: 90, b: 20 }]] as const) {
      const up = await uploadMultipart(f, fs.readFileSync(await pngFile(files, name, colour)), { fileName: name, fields: { folder } });
      expect(up.status, JSON.stringify(up.body)).to.equal(201);
      ids[name] = up.body.id;
    }
    browser = await chromium.launch({ executablePath, args: CHROMIUM_ARGS });
    const context = await browser.newContext({ locale: 'en-US', viewport: { width: 1280, height: 900 } });
    ({ page, problems } = await watchedPage(context));
    await signIn(page, `${f.service.url}/console/p/${f.project.projectId}/media`, f.project.adminEmail, PASSWORD);
  });
  after(async () => {
    await browser?.close();
    await f?.stop();
  });

  const grid = () => page.locator('ul.media-grid li .file-name').allInnerTexts();

  it('browses by folder, and uploads into the folder shown', async () => {
    await page.locator('ul.media-grid li').first().waitFor();
    const folder = page.getByLabel('Folder');
    expect(await folder.locator('option').allInnerTexts()).to.deep.equal(['All folders', 'Top of the library', 'People (1)', 'Press (1)']);
    await folder.selectOption({ label: 'Press (1)' });
    await eventually(grid, (names) => names.join() === 'harbour.png', 10_000);
    await page.getByLabel('Drop files here, or choose them').setInputFiles(await pngFile(files, 'quay.png', { r: 50, g: 50, b: 50 }));
    await eventually(grid, (names) => names.join() === 'quay.png,harbour.png', 10_000);
    await expectAccessible(page, 'the media library in a folder');
    await screenshot(page, 'media-library-folder');
    const listed = (await f.call('GET', '/media?folder=Press')).body.items.map((i: { fileName: string }) => i.fileName);
    expect(listed).to.deep.equal(['quay.png', 'harbour.png']);
  });

  it('moves an image to another folder and places its focal point by a click, then fine-tunes it by keyboard', async () => {
    await page.getByRole('button', { name: 'Details: harbour.png' }).click();
    const dialog = page.getByRole('dialog', { name: 'harbour.png' });
    const image = dialog.locator('.focal-point-image img');
    await image.waitFor();
    const box = (await image.boundingBox())!;
    await image.click({ position: { x: box.width * 0.25, y: box.height * 0.75 } });
    const x = Number(await dialog.getByLabel('From the left (%)').inputValue());
    const y = Number(await dialog.getByLabel('From the top (%)').inputValue());
    expect(x).to.be.within(23, 27);
    expect(y).to.be.within(73, 77);
    await dialog.getByLabel('From the left (%)').fill('30');
    expect(await dialog.locator('.crop-square').evaluate((img) => (img as unknown as { style: { objectPosition: string } }).style.objectPosition)).to.match(/^30% 7\d(\.\d)?%$/);
    await dialog.getByLabel('Folder').fill('Press/Archive');
    await expectAccessible(page, 'the asset details with its focal point');
    await screenshot(page, 'media-focal-point');
    await dialog.getByRole('button', { name: 'Save details' }).click();
    await dialog.waitFor({ state: 'detached' });
    const saved = await asset(ids['harbour.png']!);
    expect(saved.folder).to.equal('Press/Archive');
    expect(saved.focalPoint!.x).to.equal(0.3);
    expect(saved.focalPoint!.y).to.be.within(0.73, 0.77);
    await eventually(grid, (names) => names.join() === 'quay.png', 10_000);
    expect(await page.getByLabel('Folder').locator('option').allInnerTexts()).to.include('Press/Archive (1)');
    expect(problems).to.deep.equal([]);
  });

  it('clears a focal point', async () => {
    await page.getByLabel('Folder').selectOption({ label: 'Press/Archive (1)' });
    await page.getByRole('button', { name: 'Details: harbour.png' }).click();
    const dialog = page.getByRole('dialog', { name: 'harbour.png' });
    await dialog.getByRole('button', { name: 'Clear the focal point' }).click();
    await dialog.getByText('No focal point: crops keep the centre.').waitFor();
    await dialog.getByRole('button', { name: 'Save details' }).click();
    await dialog.waitFor({ state: 'detached' });
    expect((await asset(ids['harbour.png']!)).focalPoint).to.equal(null);
  });
});
