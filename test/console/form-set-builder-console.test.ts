import { expect } from 'chai';
import { chromium, type Browser, type Page } from 'playwright-core';
import { adminSession, OPERATOR, PASSWORD, startAdminFixture, type AdminFixture } from '../admin/support.ts';
import { chromium as chromiumProgram, needing, requireProgram } from '../support/system-program.ts';
import { eventually } from '../support/engine-fixture.ts';
import { CHROMIUM_ARGS, expectAccessible, requireConsoleBuild, screenshot, sessionCall, signIn, watchedPage } from './support.ts';

/**
 * The form-set builder (issue 44): a tenant admin makes a form set and changes it in the console; the service
 * refuses what would break the values entries hold, and a change made meanwhile elsewhere.
 */
describe(needing(chromiumProgram, 'console: the form-set builder, in headless Chromium'), function () {
  this.timeout(180_000);
  let f: AdminFixture;
  let browser: Browser;
  let page: Page;
  let problems: string[];
  let admin: ReturnType<typeof sessionCall>;
  let formSetId: string;
  const fieldsOf = async () => ((await admin('GET', `/form-sets/${formSetId}`)).body.definition.fields as Array<{ key: string; type: string; label: string; required: boolean }>).map((field) => [field.key, field.type, field.label, field.required]);

  before(async function () {
    const executablePath = requireProgram(this, chromiumProgram);
    requireConsoleBuild();
    f = await startAdminFixture({ plan: 'business' });
    admin = sessionCall(f, (await adminSession(f)).token);
    browser = await chromium.launch({ executablePath, args: CHROMIUM_ARGS });
    const context = await browser.newContext({ locale: 'en-US', viewport: { width: 1280, height: 900 } });
    ({ page, problems } = await watchedPage(context));
    await signIn(page, `${f.service.url}/console/p/${f.project.projectId}/form-sets`, f.project.adminEmail, PASSWORD);
  });
  after(async () => {
    await browser?.close();
    await f?.stop();
  });

  const row = (name: string) => page.getByRole('listitem', { name });

  it('makes a form set: keys and slug proposed from the labels, fields in the order arranged', async () => {
    await page.getByRole('link', { name: 'New form set' }).click();
    await page.getByLabel('Name').fill('Club events');
    expect(await page.getByLabel('Slug').inputValue()).to.equal('club-events');
    for (const [label, type] of [['Title', 'Text, one line'], ['Starts on', 'Date'], ['Venue address', 'Text, several lines']] as const) {
      await page.getByRole('button', { name: 'Add a field' }).click();
      const added = page.getByRole('listitem', { name: 'New field' });
      await added.getByLabel('Label').fill(label);
      await row(label).getByLabel('Type').selectOption({ label: type });
    }
    expect(await row('Starts on').getByLabel('Key').inputValue()).to.equal('starts_on');
    await row('Title').getByLabel('Required').check();
    await row('Venue address').getByRole('button', { name: 'Move up: Venue address' }).click();
    await expectAccessible(page, 'the form-set builder');
    await screenshot(page, 'form-set-builder-new');
    await page.getByRole('button', { name: 'Create the form set' }).click();
    await page.waitForURL(/\/form-sets\/[0-9a-f-]{36}$/);
    await page.getByRole('heading', { name: 'Form set: Club events' }).waitFor();
    await row('Title').waitFor();
    formSetId = /form-sets\/([0-9a-f-]{36})/.exec(page.url())![1]!;
    expect(await fieldsOf()).to.deep.equal([
      ['title', 'text', 'Title', true],
      ['venue_address', 'textarea', 'Venue address', false],
      ['starts_on', 'date', 'Starts on', false],
    ]);
    // Editors write entries with it at once.
    const created = await admin('POST', `/form-sets/${formSetId}/entries`, { slug: 'first', fields: { title: { en: 'First' }, starts_on: '2027-01-05' } });
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
  });

  it('changes it: a saved key is fixed, a type changes only to one that keeps the values, a field removed after a confirmation', async () => {
    expect(await row('Title').getByLabel('Key').getAttribute('readonly')).to.not.equal(null);
    const dateTypes = await row('Starts on').getByLabel('Type').locator('option').allInnerTexts();
    expect(dateTypes, 'a date stays a date').to.deep.equal(['Date']);
    expect(await row('Venue address').getByLabel('Type').locator('option').allInnerTexts()).to.deep.equal(['Text, several lines', 'Text, one line']);
    await row('Venue address').getByLabel('Type').selectOption({ label: 'Text, one line' });
    await row('Title').getByLabel('Label').fill('Headline');
    await row('Starts on').getByRole('button', { name: 'Remove: Starts on' }).click();
    await page.getByRole('status').getByText('On saving, these fields go: Starts on.').waitFor();
    let asked = '';
    page.once('dialog', (dialog) => {
      asked = dialog.message();
      void dialog.accept();
    });
    await screenshot(page, 'form-set-builder-edit');
    await page.getByRole('button', { name: 'Save the form set' }).click();
    await page.getByText('Saved as version 2.').waitFor();
    expect(asked).to.contain('Remove these fields: Starts on?');
    expect(await fieldsOf()).to.deep.equal([
      ['title', 'text', 'Headline', true],
      ['venue_address', 'text', 'Venue address', false],
    ]);
    expect(problems).to.deep.equal([]);
  });

  it('a change made meanwhile elsewhere is refused with the reason, and nothing is lost from the page', async () => {
    const current = (await admin('GET', `/form-sets/${formSetId}`)).body;
    const elsewhere = await admin('PUT', `/form-sets/${formSetId}`, { ...current.definition, name: 'Club events (renamed)', expectedVersion: current.version });
    expect(elsewhere.status, JSON.stringify(elsewhere.body)).to.equal(200);
    await row('Headline').getByLabel('Help for editors').fill('As it appears on posters.');
    await page.getByRole('button', { name: 'Save the form set' }).click();
    await page.getByRole('alert').getByText(/changed since it was read/).waitFor();
    expect(await row('Headline').getByLabel('Help for editors').inputValue()).to.equal('As it appears on posters.');
    expect((await admin('GET', `/form-sets/${formSetId}`)).body.name).to.equal('Club events (renamed)');
  });

  it('the API refuses a change that would break stored values, naming the field, whoever sends it', async () => {
    const current = (await admin('GET', `/form-sets/${formSetId}`)).body;
    const fields = current.definition.fields.map((field: { key: string }) => (field.key === 'title' ? { ...field, type: 'number' } : field));
    const refused = await admin('PUT', `/form-sets/${formSetId}`, { ...current.definition, fields, expectedVersion: current.version });
    expect(refused.status).to.equal(400);
    expect(refused.body.error.code).to.equal('VALIDATION_ERROR');
    expect(refused.body.error.message).to.contain('field "title": its type cannot change from text to number');
    expect(refused.body.error.hint).to.contain('new key');
    // The list of form sets, as an administrator finds it.
    await page.goto(`${f.service.url}/console/p/${f.project.projectId}/form-sets`);
    await page.getByRole('row', { name: /Club events \(renamed\)/ }).waitFor();
    await expectAccessible(page, 'the list of form sets');
    await screenshot(page, 'form-sets-list');
  });

  it('is an administrator\'s page: an editor opening it by URL is told so', async () => {
    const editor = await f.access.createUser(OPERATOR, { tenantId: f.project.tenantId, email: 'builder-editor@example.com', password: 'editor password 1', role: 'editor' });
    await f.service.supervisor!.waitFor(editor.position, 5000);
    const context = await browser.newContext({ locale: 'en-US' });
    const { page: theirs } = await watchedPage(context);
    await signIn(theirs, `${f.service.url}/console/p/${f.project.projectId}/form-sets/${formSetId}`, 'builder-editor@example.com', 'editor password 1');
    await eventually(async () => (await theirs.getByText(/needs an administrator/i).count()) > 0, (shown) => shown, 10_000);
    expect(await theirs.getByRole('button', { name: 'Save the form set' }).count()).to.equal(0);
    await context.close();
  });
});
