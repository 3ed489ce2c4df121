import { expect } from 'chai';
import { chromium, type Browser, type BrowserContext, type Locator, type Page } from 'playwright-core';
import { adminSession, createArticleFormSet, PASSWORD, startAdminFixture, type AdminFixture } from '../admin/support.ts';
import { chromium as chromiumProgram, needing, requireProgram } from '../support/system-program.ts';
import { eventually } from '../support/eventually.ts';
import { CHROMIUM_ARGS, expectAccessible, requireConsoleBuild, screenshot, sessionCall, signIn, watchedPage } from './support.ts';

const APPROVE = 'approve, reject, schedule and publish revisions';

/**
 * Roles with separated duties (issue 47) in headless Chromium: a tenant_admin defines a role on the Roles page
 * ("Legal reviewer": approving only, in one form set) and gives it to a member on the People page; that member's
 * console shows approval where the role allows it and nothing else they may not do (no administrator area, no
 * editing), and the service refuses the rest anyway; a tenant_user's console is as it was.
 */
describe(needing(chromiumProgram, 'console: roles with separated duties, in headless Chromium'), function () {
  this.timeout(180_000);
  let f: AdminFixture;
  let browser: Browser;
  let admin: ReturnType<typeof sessionCall>;
  let consoleUrl: string;
  let articles: string;
  let press: string;
  const entries: Record<string, { entryId: string; revisionId: string }> = {};
  const suffix = Math.random().toString(36).slice(2, 8);
  const editorEmail = `roles-editor-${suffix}@example.com`;
  const reviewerEmail = `roles-reviewer-${suffix}@example.com`;
  const contexts: Array<{ context: BrowserContext; problems: string[] }> = [];

  /** A page of its own browser context (its own session cookie), signed in as `email` at `url`. */
  async function signedIn(email: string, url = consoleUrl): Promise<Page> {
    const context = await browser.newContext({ locale: 'en-GB', viewport: { width: 1280, height: 900 } });
    const { page, problems } = await watchedPage(context);
    contexts.push({ context, problems });
    await signIn(page, url, email, PASSWORD);
    return page;
  }
  const nav = (page: Page) => page.getByRole('navigation', { name: 'Main' });
  const toolbar = (page: Page) => page.getByRole('toolbar', { name: 'Status' });
  const entryUrl = (title: string) => `${consoleUrl}entries/${entries[title]!.entryId}`;
  async function openEntry(page: Page, title: string): Promise<Locator> {
    await page.goto(entryUrl(title));
    await page.getByRole('heading', { name: title, level: 1 }).waitFor();
    return toolbar(page);
  }

  before(async function () {
    const executablePath = requireProgram(this, chromiumProgram);
    requireConsoleBuild();
    f = await startAdminFixture({ plan: 'business' });
    admin = sessionCall(f, (await adminSession(f)).token);
    consoleUrl = `${f.service.url}/console/p/${f.project.projectId}/`;
    articles = await createArticleFormSet(f);
    const pressSet = await admin('POST', '/form-sets', { slug: 'press', name: 'Press releases', fields: [{ key: 'title', type: 'text', label: 'Title', required: true }] });
    expect(pressSet.status, JSON.stringify(pressSet.body)).to.equal(201);
    press = pressSet.body.id;
    for (const email of [editorEmail, reviewerEmail]) expect((await admin('POST', '/users', { email, password: PASSWORD, role: 'tenant_user' })).status).to.equal(201);
    const login = await f.call('POST', '/auth/login', { body: { email: editorEmail, password: PASSWORD }, token: '' });
    const editor = sessionCall(f, login.body.token as string);
    // The editor writes one entry in each form set and submits both; a third stays a draft.
    for (const [title, formSetId, submit] of [
      ['Contract terms', articles, true],
      ['Launch announcement', press, true],
      ['Draft notice', press, false],
    ] as const) {
      const created = await editor('POST', `/form-sets/${formSetId}/entries`, { slug: title.toLowerCase().replace(' ', '-'), fields: { title: { en: title } } });
      expect(created.status, JSON.stringify(created.body)).to.equal(201);
      entries[title] = { entryId: created.body.entry.id, revisionId: created.body.revision.id };
      if (submit) expect((await editor('POST', `/revisions/${created.body.revision.id}/submit`, {})).status).to.equal(200);
    }
    browser = await chromium.launch({ executablePath, args: CHROMIUM_ARGS });
  });
  afterEach(() => {
    for (const { problems } of contexts) expect(problems, 'CSP refusals or page errors').to.deep.equal([]);
  });
  after(async () => {
    await browser?.close();
    await f?.stop();
  });

  it('a tenant_admin defines "Legal reviewer" (approving only, in one form set) on the Roles page and gives it to a member on the People page', async () => {
    const page = await signedIn(f.project.adminEmail);
    await nav(page).getByRole('link', { name: 'Roles', exact: true }).click();
    await page.getByRole('heading', { name: 'Roles', level: 1 }).waitFor();
    const table = page.getByRole('table', { name: 'Roles of the organisation' });
    await table.getByRole('row', { name: /^administrator built in/ }).waitFor();
    expect(await table.getByRole('row', { name: /^editor built in/ }).innerText()).to.include('submit revisions for review');

    await page.getByRole('button', { name: 'New role' }).click();
    const dialog = page.getByRole('dialog', { name: 'New role' });
    await dialog.getByLabel('Name').fill('Legal reviewer');
    await dialog.getByLabel('Description (optional)').fill('Approves contracts and terms before they go live.');
    // The form-set limit applies to content actions only: closed until one is ticked.
    expect(await dialog.getByLabel('Only these form sets').isDisabled(), 'the limit without a content capability').to.equal(true);
    await dialog.getByLabel(APPROVE).check();
    await dialog.getByLabel('Only these form sets').check();
    // No form set ticked: the service's refusal shows at the form sets.
    await dialog.getByRole('button', { name: 'Create the role' }).click();
    const refusal = dialog.getByRole('alert');
    await refusal.waitFor();
    expect(await refusal.innerText()).to.match(/^FormSetIds: .*>=1 items/);
    expect(await dialog.getByLabel('Articles').getAttribute('aria-describedby')).to.equal('role-formSetIds-error');
    await expectAccessible(page, 'the role editor with a refusal at its field');
    // Ticking a form set answers the refusal: it goes.
    await dialog.getByLabel('Articles').check();
    await refusal.waitFor({ state: 'detached' });
    expect(await dialog.getByLabel('Press releases').isChecked()).to.equal(false);
    await screenshot(page, 'admin-roles');
    await dialog.getByRole('button', { name: 'Create the role' }).click();
    await dialog.waitFor({ state: 'hidden' });
    await page.getByRole('status').getByText('Role Legal reviewer saved.').waitFor();
    const row = table.getByRole('row', { name: /^Legal reviewer/ });
    expect(await row.innerText()).to.include(APPROVE).and.include('Articles').and.not.include('Press releases');
    const defined = (await admin('GET', '/roles')).body.items as Array<{ id: string; name: string; capabilities: string[]; formSetIds: string[] | null }>;
    expect(defined.map(({ name, capabilities, formSetIds }) => ({ name, capabilities, formSetIds }))).to.deep.equal([{ name: 'Legal reviewer', capabilities: ['content.approve'], formSetIds: [articles] }]);

    // A name taken: the service's 409, as it says it.
    await page.getByRole('button', { name: 'New role' }).click();
    await dialog.getByLabel('Name').fill('Legal reviewer');
    await dialog.getByRole('button', { name: 'Create the role' }).click();
    await dialog.getByRole('alert').getByText('The organisation already has a role named "Legal reviewer".').waitFor();
    await dialog.getByRole('button', { name: 'Cancel' }).click();

    // The People page offers the role, to invite with and to give.
    await nav(page).getByRole('link', { name: 'People and keys' }).click();
    const picker = page.getByLabel(`Role of ${reviewerEmail}`);
    await picker.locator('option', { hasText: 'Legal reviewer' }).waitFor({ state: 'attached' });
    expect(await picker.locator('option').allTextContents()).to.deep.equal(['editor', 'administrator', 'Legal reviewer']);
    const invite = page.getByRole('form', { name: 'Add user' });
    expect(await invite.getByLabel('Role').locator('option').allTextContents()).to.deep.equal(['editor', 'administrator', 'Legal reviewer']);
    await picker.selectOption({ label: 'Legal reviewer' });
    await eventually(async () => ((await admin('GET', '/users')).body.items as Array<{ email: string; roleId: string | null }>).find((u) => u.email === reviewerEmail)?.roleId, (roleId) => roleId === defined[0]!.id, 10_000);
    await nav(page).getByRole('link', { name: 'Roles', exact: true }).click();
    await eventually(async () => (await row.getByRole('cell').nth(2).innerText()).trim(), (members) => members === '1', 10_000);
  });

  it('the legal reviewer approves in Articles but not in Press releases, sees no administrator area, edits nothing, and may not change roles', async () => {
    const page = await signedIn(reviewerEmail);
    await page.getByText(`Signed in as ${reviewerEmail} (Legal reviewer)`).waitFor();
    for (const area of ['Review desk', 'Media library']) expect(await nav(page).getByRole('link', { name: area }).count(), area).to.equal(1);
    for (const area of ['Settings', 'Project settings', 'People and keys', 'Webhooks', 'Audit log', 'Operations', 'Roles', 'Contact forms']) {
      expect(await nav(page).getByRole('link', { name: area, exact: true }).count(), area).to.equal(0);
    }

    // In Articles, the approval; and nothing that writes.
    let bar = await openEntry(page, 'Contract terms');
    await bar.getByRole('button', { name: 'Approve and publish now' }).waitFor();
    expect(await bar.getByRole('button').allTextContents()).to.deep.equal(['Approve and publish now', 'Approve for a later time', 'Reject']);
    await page.getByText('Your role reads this entry but does not edit it.').waitFor();
    expect(await page.getByLabel('Title').first().isDisabled(), 'the title field').to.equal(true);
    expect(await page.getByRole('button', { name: 'Save' }).count()).to.equal(0);
    await expectAccessible(page, "the reviewer's entry in a form set of their role");
    await screenshot(page, 'admin-roles-reviewer-view');

    // In Press releases, no approval: the role is limited to Articles.
    bar = await openEntry(page, 'Launch announcement');
    await page.getByText('Your role reads this entry but does not edit it.').waitFor();
    expect(await bar.getByRole('button').allTextContents()).to.deep.equal([]);
    // And the service refuses it anyway.
    const login = await f.call('POST', '/auth/login', { body: { email: reviewerEmail, password: PASSWORD }, token: '' });
    const reviewer = sessionCall(f, login.body.token as string);
    const refused = await reviewer('POST', `/revisions/${entries['Launch announcement']!.revisionId}/approve`, {});
    expect(refused.status, JSON.stringify(refused.body)).to.equal(403);
    expect(refused.body.error.code).to.equal('FORBIDDEN');

    // Approving where the role may.
    bar = await openEntry(page, 'Contract terms');
    await bar.getByRole('button', { name: 'Approve and publish now' }).click();
    await page.locator('.page-head').getByText('Published').waitFor();

    // The roles read only; an administrator's page explained, not shown.
    await page.goto(`${consoleUrl}roles`);
    await page.getByRole('table', { name: 'Roles of the organisation' }).getByRole('row', { name: /^Legal reviewer/ }).waitFor();
    await page.getByText('Only an administrator defines, changes or removes roles.').waitFor();
    expect(await page.locator('main').getByRole('button').count(), 'no role controls').to.equal(0);
    expect((await reviewer('PUT', `/roles/${(await admin('GET', '/roles')).body.items[0].id}`, { name: 'Legal reviewer', capabilities: ['content.approve', 'people.manage'] })).status).to.equal(403);
    await page.goto(`${consoleUrl}people`);
    await page.getByRole('heading', { name: 'Your role does not include this page' }).waitFor();
    expect(await page.locator('main').innerText()).to.include(`People and keys needs a role that may manage people, their roles, API keys and sign-in; you are signed in as ${reviewerEmail}, with the role Legal reviewer.`);
    await expectAccessible(page, 'a page the role does not include');
  });

  it('a tenant_user still edits and submits, and is offered no approval', async () => {
    const page = await signedIn(editorEmail);
    await page.getByText(`Signed in as ${editorEmail} (editor)`).waitFor();
    expect(await nav(page).getByRole('link', { name: 'Contact forms' }).count()).to.equal(1);
    for (const area of ['People and keys', 'Roles', 'Audit log']) expect(await nav(page).getByRole('link', { name: area, exact: true }).count(), area).to.equal(0);
    let bar = await openEntry(page, 'Draft notice');
    await bar.getByRole('button', { name: 'Submit for review' }).waitFor();
    expect(await bar.getByRole('button').allTextContents()).to.deep.equal(['Submit for review', 'Preview', 'Duplicate', 'Change slug']);
    expect(await page.getByLabel('Title').first().isDisabled()).to.equal(false);
    expect(await page.getByRole('button', { name: 'Save' }).count()).to.equal(1);
    bar = await openEntry(page, 'Launch announcement');
    await bar.getByRole('button', { name: 'Withdraw' }).waitFor();
    expect(await bar.getByRole('button', { name: /Approve|Reject/ }).count()).to.equal(0);
    // The list: new entries and the selection for submitting, no approval among the bulk actions.
    await page.goto(`${consoleUrl}content/${press}`);
    await page.getByRole('link', { name: 'New entry' }).waitFor();
    await page.getByLabel('Select Draft notice').check();
    const bulk = page.getByRole('toolbar', { name: /selected/ });
    expect(await bulk.getByRole('button').allTextContents()).to.deep.equal(['Submit for review', 'Clear the selection']);
  });

  it('the roles page is accessible in English and Japanese, a role held is not removed, and the editor opens on its definition', async () => {
    const page = await signedIn(f.project.adminEmail, `${consoleUrl}roles`);
    const row = page.getByRole('row', { name: /^Legal reviewer/ });
    await row.getByRole('cell', { name: 'Articles' }).waitFor();
    await expectAccessible(page, 'the roles page');
    await screenshot(page, 'admin-roles-list');
    await row.getByRole('button', { name: 'Remove the role Legal reviewer' }).click();
    const confirm = page.getByRole('dialog', { name: 'Remove the role Legal reviewer?' });
    await confirm.getByRole('button', { name: 'Remove' }).click();
    await confirm.getByRole('alert').getByText('1 member holds the role "Legal reviewer": give them another role first.').waitFor();
    await expectAccessible(page, 'the refused removal');
    await confirm.getByRole('button', { name: 'Cancel' }).click();

    await page.getByLabel('Language').selectOption('ja');
    await page.getByRole('heading', { name: 'ロール', level: 1 }).waitFor();
    await row.getByText('リビジョンの承認・差し戻し・予約・公開').waitFor();
    await expectAccessible(page, 'the roles page in Japanese');
    await row.getByRole('button', { name: 'ロール「Legal reviewer」を編集' }).click();
    const editor = page.getByRole('dialog', { name: 'ロール「Legal reviewer」を編集' });
    expect(await editor.getByLabel('名前').inputValue()).to.equal('Legal reviewer');
    expect(await editor.getByLabel('リビジョンの承認・差し戻し・予約・公開').isChecked()).to.equal(true);
    expect(await editor.getByLabel('次のフォームセットのみ').isChecked()).to.equal(true);
    expect(await editor.getByLabel('Articles').isChecked()).to.equal(true);
    await expectAccessible(page, 'the role editor in Japanese');
    await editor.getByRole('button', { name: 'キャンセル' }).click();
    await page.getByLabel('言語').selectOption('en');
  });
});
