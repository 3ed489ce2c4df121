/**
 * The administrator console (issue 19) end to end: Debian's Chromium through playwright-core against a
 * started service (one browser and one service for the file). Contact forms and their inbox, webhooks
 * against a real HTTPS receiver, agent keys, the sign-in page's appearance; axe-core on each page.
 */
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { simpleParser } from 'mailparser';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { articleFormSet, OPERATOR, startAdminFixture, type AdminFixture } from '../admin/support.ts';
import { adminSession, PASSWORD, Receiver, until } from '../webhooks/support.ts';
import { chromium as chromiumProgram, needing, requireProgram } from '../support/system-program.ts';
import { tempDir } from '../support/temp-dir.ts';
import { collect } from '../../src/event-store/event-store.ts';
import { CHROMIUM_ARGS, expectAccessible, fastForwardUntil, requireConsoleBuild, screenshot, signIn, watchedPage } from './support.ts';

/** The background image of an element as the browser computes it (where the sign-in page's colours show). */
const backgroundOf = (el: unknown): string => (globalThis as unknown as { getComputedStyle(e: unknown): { backgroundImage: string } }).getComputedStyle(el).backgroundImage;

/** The session lives in the page's memory only: moving between pages goes through the app's own navigation. */
async function openArea(page: Page, name: string): Promise<void> {
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name, exact: true }).click();
}

describe(needing(chromiumProgram, 'console: the administrator pages in headless Chromium'), function () {
  this.timeout(120_000);
  let f: AdminFixture;
  let browser: Browser;
  let receiver: Receiver;
  let dataDir: string;
  let session: { token: string; headers: Record<string, string> };
  let consoleUrl: string;
  let admin: { context: BrowserContext; page: Page; problems: string[] };
  const api = (method: string, route: string, body?: unknown) => f.call(method, route, { token: session.token, headers: session.headers, ...(body === undefined ? {} : { body }) });

  before(async function () {
    const executablePath = requireProgram(this, chromiumProgram);
    requireConsoleBuild();
    receiver = await Receiver.start();
    dataDir = path.join(tempDir(), 'data');
    f = await startAdminFixture({
      plan: 'business',
      dataDir,
      env: { CONTACT_POW_DIFFICULTY: '8', CONTACT_SUBMIT_RATE_LIMIT: '1000', OUTBOUND_ALLOWLIST: '127.0.0.1', WEBHOOK_CA_FILE: receiver.caFile, SCHEDULED_PUBLISH_INTERVAL_MS: '86400000' },
    });
    session = await adminSession(f);
    consoleUrl = `${f.service.url}/console/p/${f.project.projectId}/`;
    browser = await chromium.launch({ executablePath, args: CHROMIUM_ARGS });
    const context = await browser.newContext({ locale: 'en-GB', viewport: { width: 1280, height: 900 } });
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: f.service.url });
    // The administrator's pages run on a clock the test can move: their polls come at once when a test waits on one.
    await context.clock.install();
    admin = { context, ...(await watchedPage(context)) };
    await signIn(admin.page, consoleUrl, f.project.adminEmail, PASSWORD);
  });
  afterEach(() => {
    expect(admin?.problems ?? [], 'CSP refusals or page errors').to.deep.equal([]);
  });
  after(async () => {
    await browser?.close();
    await f?.stop();
    await receiver?.close();
  });

  it('contact form: created with its settings, a hosted-page submission arrives unread, the e-mail link opens it after sign-in, a note, erasure', async () => {
    const { page } = admin;
    await openArea(page, 'Contact forms');
    await page.getByRole('link', { name: 'New contact form' }).click();
    await page.getByLabel('Name', { exact: true }).fill('Enquiries');
    await page.getByLabel('Slug').fill('enquiries');
    await page.getByLabel('Notification e-mails').fill('team@example.com');
    await page.getByLabel('Reply-To field').selectOption('email');
    await page.getByLabel('Send an autoreply').check();
    await page.getByLabel('Send the autoreply to the address in').selectOption('email');
    await page.getByLabel('Autoreply subject (en)').fill('Thank you, {name}');
    await page.getByLabel('Autoreply body (en)').fill('We will answer soon.');
    await page.getByLabel('Autoreply subject (ja)').fill('お問い合わせありがとうございます');
    await page.getByLabel('Publish a hosted page').check();
    await page.getByRole('button', { name: 'Add a field' }).click();
    await page.getByLabel('Key of field 4').fill('topic');
    await page.getByLabel('Type of field 4').selectOption('select');
    await page.getByLabel('Label of field 4').fill('Topic');
    await page.getByLabel('Options of field 4').fill('sales=Sales\nsupport=Support');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('heading', { name: 'Contact form: Enquiries' }).waitFor();
    const formId = page.url().split('/').pop()!;
    const form = (await api('GET', `/contact-forms/${formId}`)).body;
    expect(form).to.deep.include({ name: 'Enquiries', slug: 'enquiries', notification_emails: ['team@example.com'], reply_to_field: 'email', autoreply_enabled: true, autoreply_to_field: 'email', hosted_page_enabled: true });
    expect(form.autoreply_subject).to.deep.equal({ en: 'Thank you, {name}', ja: 'お問い合わせありがとうございます' });
    expect(form.fields[3]).to.deep.include({ key: 'topic', type: 'select', label: 'Topic', options: [{ value: 'sales', label: 'Sales' }, { value: 'support', label: 'Support' }] });
    const hostedUrl = `${f.service.url}/contact/${f.project.projectSlug}/enquiries`;
    expect(await page.getByRole('link', { name: hostedUrl }).count()).to.equal(1);
    expect(await page.getByLabel('Embed snippet').inputValue()).to.equal(`<iframe src="${hostedUrl}/embed" title="Enquiries" width="100%" height="640" loading="lazy"></iframe>`);
    await expectAccessible(page, 'the contact form editor');
    await screenshot(page, 'admin-contact-form-editor');

    // A visitor submits through the hosted page.
    const visitor = await browser.newContext();
    const hosted = await visitor.newPage();
    await hosted.goto(hostedUrl);
    await hosted.getByLabel('Name').fill('Mia Müller');
    await hosted.getByLabel('E-mail').fill('mia@example.org');
    await hosted.getByLabel('Message').fill('Please call me back.');
    await hosted.getByLabel('Topic').selectOption('sales');
    await hosted.getByRole('button', { name: 'Send' }).click();
    await hosted.locator('#thank-you').waitFor({ timeout: 30_000 });
    await visitor.close();
    // A Japanese browser gets the hosted page in Japanese (the project has Japanese), unless ?locale= says otherwise.
    const japanese = await browser.newContext({ locale: 'ja-JP' });
    const jaPage = await japanese.newPage();
    await jaPage.goto(hostedUrl);
    await jaPage.getByRole('button', { name: '送信' }).waitFor();
    expect(await jaPage.locator('html').getAttribute('lang')).to.equal('ja');
    await expectAccessible(jaPage, 'the hosted page in Japanese');
    await jaPage.goto(`${hostedUrl}?locale=en`);
    await jaPage.getByRole('button', { name: 'Send' }).waitFor();
    await japanese.close();

    // It waits in the inbox, unread.
    await page.getByRole('link', { name: 'Submissions' }).click();
    const unread = page.getByRole('region', { name: /^Unread/ });
    await unread.getByRole('link', { name: /Mia Müller/ }).waitFor();
    expect(await unread.getByRole('listitem').count()).to.equal(1);
    expect(await page.getByRole('region', { name: 'Read' }).getByText('None.').count()).to.equal(1);
    await expectAccessible(page, 'the submissions inbox');
    await screenshot(page, 'admin-submissions-inbox');

    // The notification e-mail links the submission's console page, which opens it after sign-in.
    const mailDir = path.join(dataDir, 'mail');
    const file = await until(async () => (fs.existsSync(mailDir) ? fs.readdirSync(mailDir).find((n) => n.includes('.notification@')) : undefined), Boolean, 15_000, 'the notification e-mail');
    const mail = await simpleParser(fs.readFileSync(path.join(mailDir, file!)));
    const submissionId = file!.split('.')[0]!;
    const link = /Open it in the console: (\S+)/.exec(mail.text!)![1]!;
    expect(link).to.equal(`${f.service.url}/console/p/${f.project.projectId}/contact-forms/${formId}/submissions/${submissionId}`);
    const reader = await browser.newContext({ locale: 'en-GB' });
    const readerPage = (await watchedPage(reader)).page;
    await signIn(readerPage, link, f.project.adminEmail, PASSWORD);
    const detail = readerPage.getByRole('article');
    await detail.getByText('Please call me back.').waitFor();
    expect(await detail.getByText('mia@example.org').count()).to.equal(1);
    // A choice is shown by its option's label, not the value stored.
    expect(await detail.locator('dl.values > div').filter({ hasText: 'Topic' }).locator('dd').innerText()).to.equal('Sales');
    // Opened, it is read.
    await until(async () => (await api('GET', `/contact-forms/${formId}/submissions/${submissionId}`)).body.read, (read) => read === true, 5_000, 'read');
    await readerPage.getByLabel('Add a note').fill('Called back; sending a quote.');
    await readerPage.getByRole('button', { name: 'Add note' }).click();
    await detail.getByText('Called back; sending a quote.').waitFor();
    await detail.getByRole('row', { name: /Notification e-mail sent/ }).waitFor();
    await expectAccessible(readerPage, 'a submission');
    await screenshot(readerPage, 'admin-submission');

    // Erase: the dialog says what goes and what stays.
    await readerPage.getByRole('button', { name: 'Erase…' }).click();
    const dialog = readerPage.getByRole('dialog', { name: 'Erase this submission?' });
    await dialog.waitFor();
    const text = await dialog.innerText();
    expect(text).to.contain('Its submitted values (4 fields) and internal notes (1) can never be read again').and.contain('This cannot be undone.').and.contain('Kept: the fact that a submission arrived');
    await expectAccessible(readerPage, 'the erase dialog');
    await screenshot(readerPage, 'admin-submission-erase');
    await dialog.getByRole('button', { name: 'Erase for good' }).click();
    await detail.getByText(/Erased .*: its values and notes can no longer be read/).waitFor();
    const erased = (await api('GET', `/contact-forms/${formId}/submissions/${submissionId}`)).body;
    expect(erased).to.deep.include({ erased: true, values: null });
    expect(erased.notes.map((n: { text: string | null }) => n.text)).to.deep.equal([null]);
    const listed = (await api('GET', `/contact-forms/${formId}/submissions`)).body.items;
    expect(listed.map((s: { id: string }) => s.id)).to.deep.equal([submissionId]);
    await reader.close();
  });

  it('contact form deleted from its editor: the dialog says what stays, the hosted page goes, the slug is free again', async () => {
    const { page } = admin;
    const fields = [{ key: 'email', type: 'email', label: 'E-mail' }];
    const created = await api('POST', '/contact-forms', { name: 'Old enquiries', slug: 'old-enquiries', fields, notification_emails: ['team@example.com'], hosted_page_enabled: true });
    expect(created.status).to.equal(201);
    const hostedUrl = `${f.service.url}/contact/${f.project.projectSlug}/old-enquiries`;
    expect((await fetch(hostedUrl)).status).to.equal(200);
    await openArea(page, 'Contact forms');
    await page.getByRole('link', { name: 'Old enquiries' }).click();
    await page.getByRole('heading', { name: 'Contact form: Old enquiries' }).waitFor();
    await page.getByRole('button', { name: 'Delete form' }).click();
    const dialog = page.getByRole('dialog', { name: 'Delete the contact form Old enquiries?' });
    expect(await dialog.innerText()).to.contain('Its submissions stay filed.');
    await expectAccessible(page, 'the delete dialog');
    await screenshot(page, 'admin-contact-form-delete');
    await dialog.getByRole('button', { name: 'Delete form' }).click();
    // Back on the list, without it; the API, the hosted page and the slug agree.
    await page.getByRole('link', { name: 'New contact form' }).waitFor();
    await page.getByRole('link', { name: 'Old enquiries' }).waitFor({ state: 'detached' });
    expect((await api('GET', `/contact-forms/${created.body.id}`)).status).to.equal(404);
    expect((await fetch(hostedUrl)).status).to.equal(404);
    const again = await api('POST', '/contact-forms', { name: 'New enquiries', slug: 'old-enquiries', fields });
    expect(again.status).to.equal(201);
    // Gone again, so that the other tests see the contact forms they made only.
    expect((await api('DELETE', `/contact-forms/${again.body.id}`)).status).to.be.oneOf([200, 204]);
  });

  it('webhooks: the secret shown once, a failed delivery (500) with its response, redelivered after recovery, a test sent, failures filtered', async () => {
    const { page } = admin;
    receiver.behaviours.set('/hook', { status: 500, body: 'receiver down' });
    await openArea(page, 'Webhooks');
    await page.getByRole('button', { name: 'New webhook' }).click();
    const create = page.getByRole('dialog', { name: 'New webhook' });
    await create.getByLabel('Name').fill('Site rebuild');
    await create.getByLabel('URL (https)').fill(receiver.url('/hook'));
    await create.getByRole('button', { name: 'Create webhook' }).click();
    const shown = page.getByRole('dialog', { name: 'The signing secret' });
    await shown.waitFor();
    const secret = await shown.getByLabel('Signing secret').inputValue();
    expect(secret).to.match(/^whsec_/);
    expect(await shown.getByRole('alert').innerText()).to.contain('shown only this once');
    await shown.getByRole('button', { name: 'Copy' }).click();
    await shown.getByText('Copied to the clipboard.').waitFor();
    expect(await page.evaluate('navigator.clipboard.readText()')).to.equal(secret);
    await expectAccessible(page, 'the signing secret dialog');
    await screenshot(page, 'admin-webhook-secret');
    await shown.getByRole('button', { name: 'I have stored it' }).click();
    receiver.secrets.set('/hook', secret);
    const webhooks = (await api('GET', '/webhooks')).body;
    expect(JSON.stringify(webhooks)).not.to.include(secret);

    // An entry is published: the receiver answers 500.
    const formSet = await f.call('POST', '/form-sets', { body: articleFormSet });
    const entry = (await f.call('POST', `/form-sets/${formSet.body.id}/entries`, { body: { slug: 'hello', fields: { title: { en: 'Hello' } } } })).body;
    expect((await api('POST', `/revisions/${entry.revision.id}/submit`, {})).status).to.equal(200);
    expect((await api('POST', `/revisions/${entry.revision.id}/publish`, {})).status).to.equal(200);
    await receiver.waitFor('/hook', (got) => got.length === 1);
    // The failed attempt is recorded once the receiver has answered (and the page reads it once): wait for it.
    const hookId = (webhooks.items as Array<{ id: string; name: string }>).find((w) => w.name === 'Site rebuild')!.id;
    await until(() => api('GET', `/webhooks/${hookId}/deliveries?status=failed`), (r) => r.body.items?.length === 1, 10_000, 'the failed delivery recorded');

    await page.getByRole('link', { name: 'Site rebuild' }).click();
    await page.getByLabel('Status').selectOption('failed');
    const failed = page.locator('ul.deliveries > li');
    await failed.filter({ hasText: 'HTTP 500' }).waitFor();
    expect(await failed.count()).to.equal(1);
    await failed.locator('summary').click();
    await failed.getByText('receiver down').waitFor();
    expect(await failed.locator('pre.code').first().innerText()).to.equal(receiver.received('/hook')[0]!.raw.toString('utf8'));
    // The headers as the receiver got them, signature included.
    const sent = receiver.received('/hook')[0]!.headers;
    for (const name of ['X-Service-Signature', 'X-Service-Delivery', 'X-Service-Attempt', 'User-Agent']) {
      expect(await failed.getByRole('row', { name: new RegExp(`^${name}`) }).getByRole('cell').innerText(), name).to.equal(sent[name.toLowerCase()]);
    }
    await expectAccessible(page, 'the delivery history');
    await screenshot(page, 'admin-webhook-deliveries');

    // The receiver recovers; redelivered, the same bytes arrive, signed.
    receiver.behaviours.set('/hook', { status: 200, body: 'ok' });
    await failed.getByRole('button', { name: 'Redeliver' }).click();
    const got = await receiver.waitFor('/hook', (all) => all.length === 2);
    expect(got[1]!.raw.equals(got[0]!.raw)).to.equal(true);
    expect(got[1]!.verified).to.equal(true);
    // As for the failure above: the redelivery is recorded once the receiver has answered; the page, which polls
    // only while a delivery is pending, reads the list once that is so (a fresh machine's CI once read it before).
    await until(() => api('GET', `/webhooks/${hookId}/deliveries`), (r) => (r.body.items as Array<{ status: string; attempts: unknown[] }> | undefined)?.some((d) => d.status === 'succeeded' && d.attempts.length === 2) === true, 10_000, 'the redelivery recorded');
    await page.getByLabel('Status').selectOption('');
    const all = page.locator('ul.deliveries > li');
    await fastForwardUntil(page, 1000, all.filter({ hasText: 'succeeded' }).filter({ hasText: '2 attempts' }));

    // Send test.
    await page.getByRole('button', { name: 'Send test' }).click();
    const tests = await receiver.waitFor('/hook', (r) => r.length === 3);
    expect(tests[2]!.headers['x-service-test']).to.equal('true');
    await all.filter({ hasText: 'test' }).filter({ hasText: 'succeeded' }).waitFor();
    await page.getByLabel('Status').selectOption('failed');
    await page.getByText('No deliveries.').waitFor();
    await expectAccessible(page, 'the webhook page');
  });

  it('agent keys: created with a scope and shown once, used, revoked and refused', async () => {
    const { page } = admin;
    await openArea(page, 'People and keys');
    const keys = page.getByRole('region', { name: 'API keys' });
    await keys.getByLabel('Name').fill('Build bot');
    await keys.getByLabel('Scope').selectOption('content');
    await keys.getByRole('button', { name: 'Create agent key' }).click();
    const shown = page.getByRole('dialog', { name: 'Your new key' });
    const key = await shown.getByLabel('Agent key, scope content').inputValue();
    expect(key).to.match(/^sk-agent-/);
    await expectAccessible(page, 'the new key dialog');
    await shown.getByRole('button', { name: 'I have stored it' }).click();
    expect((await f.call('GET', '/form-sets', { token: key })).status).to.equal(200);
    // Shown once: the list holds its prefix only.
    expect(JSON.stringify((await api('GET', '/keys')).body)).not.to.include(key);
    const row = keys.getByRole('row', { name: /Build bot/ });
    // Used, it shows when (the list is read again on the revocation below at the latest).
    await row.getByRole('cell', { name: 'never' }).waitFor();
    // Each row's button is named with its key (a screen reader's list of buttons tells them apart).
    await row.getByRole('button', { name: /^Revoke the key \S+…$/ }).click();
    const confirm = page.getByRole('dialog', { name: /^Revoke the key/ });
    expect(await confirm.innerText()).to.contain('refused (401)');
    await confirm.getByRole('button', { name: 'Revoke' }).click();
    await row.getByText(/revoked/).waitFor();
    expect(await row.getByRole('cell', { name: 'never' }).count()).to.equal(0);
    const refused = await f.call('GET', '/form-sets', { token: key });
    expect(refused.status).to.equal(401);
    await expectAccessible(page, 'people and keys');
    await screenshot(page, 'admin-people-keys');
  });

  it('console users: one added as an editor, made an administrator, disabled, and then refused at sign-in and in the session they had', async () => {
    const { page } = admin;
    await openArea(page, 'People and keys');
    const users = page.getByRole('region', { name: 'Console users' });
    const email = `editor-${randomUUID().slice(0, 6)}@example.com`;
    await users.getByLabel('E-mail').fill(email);
    await users.getByLabel('How they sign in').selectOption({ label: 'Set a first password now' });
    await users.getByLabel('First password').fill(PASSWORD);
    // The new user's role (the list's selects are named "Role of <e-mail>").
    await users.getByRole('combobox', { name: /^Role(?! of)/ }).selectOption({ label: 'editor' });
    await users.getByRole('button', { name: 'Add user' }).click();
    const role = users.getByRole('combobox', { name: `Role of ${email}` });
    expect(await role.inputValue()).to.equal('tenant_user');
    const login = () => fetch(`${f.service.url}/admin/v1/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email, password: PASSWORD }) });
    const signedIn = await login();
    expect(signedIn.status).to.equal(200);
    const { token } = (await signedIn.json()) as { token: string };
    const asThem = () => f.call('GET', '/form-sets', { token, headers: { 'x-project-id': f.project.projectId } });
    expect((await asThem()).status).to.equal(200);
    await role.selectOption({ label: 'administrator' });
    await until(async () => ((await api('GET', '/users')).body.items as Array<{ email: string; role: string }>).find((u) => u.email === email)?.role, (r) => r === 'tenant_admin', 10_000, 'role changed');
    await users.getByRole('button', { name: `Disable ${email}`, exact: true }).click();
    const confirm = page.getByRole('dialog', { name: `Disable ${email}?` });
    expect(await confirm.innerText()).to.contain('can no longer sign in');
    await expectAccessible(page, 'the disable dialog');
    await screenshot(page, 'admin-user-disable');
    await confirm.getByRole('button', { name: 'Disable' }).click();
    const row = users.getByRole('row', { name: new RegExp(email.replace(/[.]/g, '\\.')) });
    await row.getByRole('cell', { name: 'disabled', exact: true }).waitFor();
    // Disabled: no role to change, no button, no sign-in, and the session they had is refused.
    expect(await row.getByRole('combobox').count()).to.equal(0);
    expect(await users.getByRole('button', { name: `Disable ${email}`, exact: true }).count()).to.equal(0);
    const refusedLogin = await login();
    expect(refusedLogin.status).to.equal(403);
    expect(((await refusedLogin.json()) as { error: { message: string } }).error.message).to.equal('This account is disabled.');
    expect((await asThem()).status).to.equal(401);
  });

  it('login appearance: a live preview while editing, then the sign-in page shows it', async () => {
    const { page } = admin;
    await openArea(page, 'Project settings');
    const card = page.getByRole('form', { name: 'Sign-in page' });
    await card.getByLabel('Primary colour', { exact: true }).fill('#7c2d12');
    await card.getByLabel('Message').fill('Welcome to the newsroom');
    const preview = card.getByRole('figure', { name: 'Preview of the sign-in page' });
    await preview.getByText('Welcome to the newsroom').waitFor();
    expect(await preview.locator('.sign-in-page').evaluate(backgroundOf)).to.contain('rgb(124, 45, 18)');
    await expectAccessible(page, 'project settings');
    await screenshot(page, 'admin-settings');
    await card.getByRole('button', { name: 'Save' }).click();
    await card.getByRole('status').getByText('Saved.').waitFor();

    // Where the articles' entries live on the site: the form set's sitemap URL pattern.
    const patterns = page.getByRole('region', { name: 'Entry URLs on the site' });
    await patterns.getByLabel('URL pattern of Articles').fill('/news/{slug}');
    await patterns.getByRole('form', { name: 'Articles' }).getByRole('button', { name: 'Save' }).click();
    await patterns.getByRole('status').getByText('Saved.').waitFor();
    const articles = (await api('GET', '/form-sets')).body.items.find((s: { slug: string }) => s.slug === 'articles');
    const definition = (await api('GET', `/form-sets/${articles.id}`)).body.definition;
    expect(definition.sitemap).to.include({ urlPattern: '/news/{slug}', include: true });
    expect(definition.fields.map((field: { key: string }) => field.key)).to.deep.equal(articleFormSet.fields.map((field) => field.key));

    const visitor = await browser.newContext();
    const signInPage = await visitor.newPage();
    await signInPage.goto(consoleUrl);
    await signInPage.getByText('Welcome to the newsroom').waitFor();
    expect(await signInPage.locator('.sign-in-page').evaluate(backgroundOf)).to.contain('rgb(124, 45, 18)');
    await screenshot(signInPage, 'admin-sign-in-branded');
    await visitor.close();
  });

  it('IP allowlist: removing the range that admits the session is refused, and the refusal is told inside the confirmation dialog', async () => {
    const { page } = admin;
    expect((await api('POST', '/project/ip-allowlist', { cidr: '127.0.0.0/8', label: 'loopback' })).status).to.equal(201);
    expect((await api('POST', '/project/ip-allowlist', { cidr: '10.0.0.0/8', label: 'office VPN' })).status).to.equal(201);
    await openArea(page, 'Operations');
    await openArea(page, 'Project settings');
    const allowlist = page.getByRole('region', { name: 'Console IP allowlist' });
    const loopback = allowlist.getByRole('row', { name: /127\.0\.0\.0\/8/ });
    // Each row's button is named with its range, so they are told apart without the row around them.
    await allowlist.getByRole('button', { name: 'Remove 127.0.0.0/8', exact: true }).click();
    const refused = page.getByRole('dialog', { name: 'Remove 127.0.0.0/8?' });
    await refused.getByRole('button', { name: 'Remove' }).click();
    // The service's error envelope, message and hint, in the dialog that asked; nothing else on the page repeats it.
    const alert = refused.getByRole('alert');
    await alert.getByText(/would block your own address \(/).waitFor();
    expect(await alert.innerText()).to.contain('Add an entry that covers your current address first.');
    // A refusal is told as the service said it, not as something that went wrong.
    expect(await alert.innerText()).to.match(/^This change would block your own address/).and.not.contain('Something went wrong');
    expect(await page.getByText(/would block your own address \(/).count()).to.equal(1);
    expect(await refused.getByRole('button', { name: 'Remove' }).isEnabled()).to.equal(true);
    await expectAccessible(page, 'a refused removal');
    await screenshot(page, 'admin-allowlist-remove-refused');
    await refused.getByRole('button', { name: 'Cancel' }).click();
    await refused.waitFor({ state: 'hidden' });
    expect((await api('GET', '/project/ip-allowlist')).body.items).to.have.length(2);

    // The other range goes; then the last one, whose dialog says so, and which asks afresh, without the refusal.
    await allowlist.getByRole('button', { name: 'Remove 10.0.0.0/8', exact: true }).click();
    await page.getByRole('dialog', { name: 'Remove 10.0.0.0/8?' }).getByRole('button', { name: 'Remove' }).click();
    await allowlist.getByRole('row', { name: /10\.0\.0\.0\/8/ }).waitFor({ state: 'detached' });
    await allowlist.getByRole('button', { name: 'Remove 127.0.0.0/8', exact: true }).click();
    expect(await refused.innerText()).to.contain('This is the last range');
    expect(await refused.getByRole('alert').count()).to.equal(0);
    await refused.getByRole('button', { name: 'Remove' }).click();
    await loopback.waitFor({ state: 'detached' });
    expect((await api('GET', '/project/ip-allowlist')).body.items).to.deep.equal([]);
  });

  it('operations: a poisoned projection shown with its failing event, retried, skipped with a reason; outboxes, version and adapters', async () => {
    const { page } = admin;
    const poisonId = randomUUID();
    await f.service.stores.events.append(`imported-${poisonId}`, [{ id: poisonId, type: 'legacy.imported', data: {}, metadata: {} as never }], 'no_stream');
    await openArea(page, 'Operations');
    const row = page.getByRole('row', { name: /audit-trail/ });
    await row.getByText('paused').waitFor();
    const failure = page.getByRole('alert').filter({ hasText: poisonId });
    await failure.getByText(`Paused on legacy.imported event ${poisonId}`).waitFor();
    expect(await page.getByRole('definition').allInnerTexts()).to.include.members(['sqlite', 'local-folder']);
    await expectAccessible(page, 'operations with a paused projection');
    await screenshot(page, 'admin-operations-paused');

    // Retried, the same event fails again.
    await row.getByRole('button', { name: 'Retry' }).click();
    await until(async () => (await api('GET', '/operations')).body.projections.find((p: { name: string }) => p.name === 'audit-trail'), (p) => p.state === 'paused', 10_000, 'paused again');
    // The page shows it failing again at its next look at the projections (every 5 s).
    await fastForwardUntil(page, 5000, row.getByRole('button', { name: 'Skip event…' }), 15_000);
    await row.getByRole('button', { name: 'Skip event…' }).click();
    const dialog = page.getByRole('dialog', { name: 'Skip the failing event of audit-trail?' });
    expect(await dialog.innerText()).to.contain(poisonId).and.contain('recorded in the log');
    const confirm = dialog.getByRole('button', { name: 'Skip the event' });
    expect(await confirm.isDisabled()).to.equal(true);
    await dialog.getByLabel('Reason').fill('Legacy import without metadata');
    await expectAccessible(page, 'the skip dialog');
    await confirm.click();
    await fastForwardUntil(page, 5000, row.getByText('live'), 15_000);
    expect(await page.getByRole('alert').filter({ hasText: poisonId }).count()).to.equal(0);
    const skip = (await collect(f.service.log.readStream('operations-projections'))).find((e) => (e.data as { eventId: string }).eventId === poisonId)!;
    expect(skip.data).to.deep.include({ reason: 'Legacy import without metadata' });
    expect(skip.metadata.actor).to.deep.equal({ type: 'user', id: f.project.userId });
    await screenshot(page, 'admin-operations');

    // Rebuild asks first, saying that projections serve every tenant; cancelled, nothing starts.
    const auditTrail = async () => (await api('GET', '/operations')).body.projections.find((p: { name: string }) => p.name === 'audit-trail');
    await row.getByRole('button', { name: 'Rebuild' }).click();
    const rebuild = page.getByRole('dialog', { name: 'Rebuild audit-trail for every tenant?' });
    expect(await rebuild.innerText()).to.contain('Projections serve every tenant of this service, not only this project');
    await expectAccessible(page, 'the rebuild confirmation');
    await screenshot(page, 'admin-operations-rebuild');
    await rebuild.getByRole('button', { name: 'Cancel' }).click();
    await rebuild.waitFor({ state: 'hidden' });
    expect((await auditTrail()).rebuild ?? null, 'no rebuild after Cancel').to.equal(null);
    await row.getByRole('button', { name: 'Rebuild' }).click();
    await rebuild.getByRole('button', { name: 'Rebuild for every tenant' }).click();
    await rebuild.waitFor({ state: 'hidden' });
    await until(auditTrail, (p) => p.rebuild?.state === 'done', 30_000, 'the rebuild done');
  });

  it('role-aware and in Japanese: an editor reads the inbox but sees no administrator area and no erase', async () => {
    const email = `editor-${Math.random().toString(36).slice(2, 8)}@example.com`;
    expect((await api('POST', '/users', { email, password: PASSWORD, role: 'tenant_user' })).status).to.equal(201);
    const context = await browser.newContext({ locale: 'ja-JP' });
    const { page, problems } = await watchedPage(context);
    await page.goto(consoleUrl);
    await page.getByLabel('メールアドレス').fill(email);
    await page.getByLabel('パスワード').fill(PASSWORD);
    await page.getByRole('button', { name: 'サインイン' }).click();
    const nav = page.getByRole('navigation', { name: 'メイン' });
    await nav.getByRole('link', { name: 'お問い合わせフォーム' }).click();
    for (const area of ['Webhook', 'ユーザーとキー', 'プロジェクト設定', '運用']) expect(await nav.getByRole('link', { name: area, exact: true }).count(), area).to.equal(0);
    await page.getByRole('link', { name: /受信一覧/ }).click();
    await page.getByRole('link', { name: /Mia Müller|消去済み/ }).first().waitFor();
    await page.getByRole('link', { name: /消去済み/ }).first().click();
    await page.getByRole('article').waitFor();
    expect(await page.getByRole('button', { name: '消去…' }).count()).to.equal(0);
    await expectAccessible(page, 'the inbox in Japanese, as an editor');
    expect(problems).to.deep.equal([]);
    await context.close();
  });

  // Last in the file: a second tenant ends the single-tenant default, so the admin is no operator from here on.
  it('operations, for a tenant admin who is not the service\'s operator: state, lag and the failing event\'s type; no controls, and why', async () => {
    const { page } = admin;
    const other = await f.access.bootstrap(OPERATOR, { projectName: 'Other tenant', plan: 'free', adminEmail: `other-${randomUUID().slice(0, 8)}@example.com`, adminPassword: PASSWORD });
    await f.service.supervisor!.waitFor(other.position, 5000);
    const poisonId = randomUUID();
    await f.service.stores.events.append(`imported-${poisonId}`, [{ id: poisonId, type: 'legacy.imported', data: {}, metadata: {} as never }], 'no_stream');
    await openArea(page, 'Contact forms');
    await openArea(page, 'Operations');
    const row = page.getByRole('row', { name: /audit-trail/ });
    await row.getByText('paused').waitFor();
    await page.getByRole('alert').getByText('Paused on a legacy.imported event').waitFor();
    expect(await page.getByText(poisonId).count(), 'the failing event\'s id and stream').to.equal(0);
    for (const name of ['Retry', 'Skip event…', 'Rebuild']) expect(await page.getByRole('button', { name }).count(), name).to.equal(0);
    await page.getByText(/are for the service's operators/).waitFor();
    await expectAccessible(page, 'operations for a tenant admin who is not an operator');
    await screenshot(page, 'admin-operations-not-operator');
  });
});
