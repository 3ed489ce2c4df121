import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { chromium, type Browser } from 'playwright-core';
import { startAdminFixture, type AdminFixture } from '../admin/support.ts';
import { eventually } from '../support/engine-fixture.ts';
import { chromium as chromiumProgram, needing, requireProgram } from '../support/system-program.ts';
import { adminSession, contactForm } from './support.ts';

/** A request with any Host header (fetch does not let one choose it). */
function get(url: string, host: string): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }> {
  return new Promise((resolve, reject) => {
    const request = http.request(url, { headers: { host } }, (response) => {
      let body = '';
      response.on('data', (c: Buffer) => (body += c.toString()));
      response.on('end', () => resolve({ status: response.statusCode!, headers: response.headers, body }));
    });
    request.on('error', reject);
    request.end();
  });
}

describe(needing(chromiumProgram, 'contact forms: the hosted page and its iframe embed, in headless Chromium'), function () {
  this.timeout(120_000);
  let f: AdminFixture;
  let browser: Browser;
  let session: { token: string; headers: Record<string, string> };
  let formId: string;
  let pageUrl: string;
  const submissions = async () => (await f.call('GET', `/contact-forms/${formId}/submissions?limit=100`, session)).body;

  before(async function () {
    const executablePath = requireProgram(this, chromiumProgram);
    f = await startAdminFixture({ env: { CONTACT_POW_DIFFICULTY: '12', CONTACT_NOJS_MIN_SECONDS: '2', CONTACT_HOSTS: 'contact.example.test', CONTACT_SUBMIT_RATE_LIMIT: '1000' } });
    session = await adminSession(f);
    const fields = [
      ...contactForm().fields,
      { key: 'contact_by', type: 'radio', label: 'Contact me by', options: [{ value: 'mail', label: 'Letter' }, { value: 'phone', label: 'Telephone' }] },
      { key: 'consent', type: 'checkbox', label: 'I agree to the privacy policy', required: true, help: 'We use your data only to answer you.' },
    ];
    const created = await f.call('POST', '/contact-forms', { body: contactForm({ fields }) });
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
    formId = created.body.id;
    pageUrl = `${f.service.url}${created.body.hostedPagePath}`;
    browser = await chromium.launch({ executablePath, args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync'] });
  });
  after(async () => {
    await browser?.close();
    await f?.stop();
  });

  it('with JavaScript: fill in, solve the challenge, submit, see the thank-you; the submission is saved; no CSP violation', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    const problems: string[] = [];
    page.on('console', (m) => {
      // (The browser's own favicon request answers 404; only refusals by the page's CSP count here.)
      if (/Content Security Policy|Refused to/i.test(m.text())) problems.push(m.text());
    });
    const response = await page.goto(pageUrl);
    expect(response!.status()).to.equal(200);
    const headers = response!.headers();
    expect(headers['content-security-policy']).to.match(/default-src 'none'; script-src 'nonce-[A-Za-z0-9+/=]+'; style-src 'nonce-[A-Za-z0-9+/=]+';.*form-action 'self'.*frame-ancestors 'none'/);
    expect(headers['x-frame-options']).to.equal('DENY');
    expect(headers['cache-control']).to.equal('no-store');
    expect(await page.locator('html').getAttribute('lang')).to.equal('en');
    await page.getByLabel('Name').fill('Mia Müller');
    await page.getByLabel('E-mail').fill('mia@example.org');
    await page.getByLabel('Inquiry type').selectOption('support');
    await page.getByLabel('Message').fill('Hello from the hosted page.\nSecond line.');
    await page.getByLabel('Telephone').check();
    await page.getByLabel('I agree to the privacy policy').check();
    await page.getByRole('button', { name: 'Send' }).click();
    await page.locator('#thank-you').waitFor({ timeout: 30_000 });
    expect(await page.getByRole('heading', { name: 'Thank you' }).count()).to.equal(1);
    // The way on: the form again (no site is set for this project, so no link back to one).
    expect(await page.getByRole('link', { name: /^Back to / }).count()).to.equal(0);
    await page.getByRole('link', { name: 'Send another message' }).click();
    await page.getByLabel('Name').waitFor();
    expect(await page.getByLabel('Name').inputValue()).to.equal('');
    expect(problems).to.deep.equal([]);
    const list = await eventually(submissions, (b) => b.items.some((s: { values: { name?: string } | null }) => s.values?.name === 'Mia Müller'));
    const saved = list.items.find((s: { values: { name?: string } | null }) => s.values?.name === 'Mia Müller');
    expect(saved.values).to.deep.equal({ name: 'Mia Müller', email: 'mia@example.org', inquiry_type: 'support', message: 'Hello from the hosted page.\nSecond line.', contact_by: 'phone', consent: true });
    await context.close();
  });

  it('shows each error next to its field (aria-describedby, aria-invalid) and in a summary, keeping what was typed', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(pageUrl);
    await page.getByLabel('Name').fill('Noah');
    await page.getByLabel('E-mail').fill('not-an-address');
    await page.getByRole('button', { name: 'Send' }).click();
    await page.locator('#error-summary').waitFor({ timeout: 30_000 });
    expect(await page.locator('#error-summary').getAttribute('role')).to.equal('alert');
    const email = page.getByLabel('E-mail');
    expect(await email.inputValue()).to.equal('not-an-address');
    expect(await email.getAttribute('aria-invalid')).to.equal('true');
    const describedBy = (await email.getAttribute('aria-describedby'))!.split(' ');
    expect(await page.locator(`#${describedBy[0]}`).innerText()).to.contain('must be an e-mail address');
    const message = page.getByLabel('Message');
    expect(await page.locator(`#${(await message.getAttribute('aria-describedby'))!}`).innerText()).to.contain('is required');
    const consent = page.getByLabel('I agree to the privacy policy');
    expect((await consent.getAttribute('aria-describedby'))!.split(' ')).to.have.members(['f-consent-error', 'f-consent-help']);
    expect(await page.getByLabel('Name').inputValue()).to.equal('Noah');
    // The summary links to the field.
    expect(await page.locator('#error-summary a[href="#f-email"]').innerText()).to.contain('E-mail');
    // Corrected, the same page goes through.
    await email.fill('noah@example.org');
    await message.fill('Now complete.');
    await consent.check();
    await page.getByRole('button', { name: 'Send' }).click();
    await page.locator('#thank-you').waitFor({ timeout: 30_000 });
    await context.close();
  });

  it('without JavaScript: the plain form post is accepted once the page has been open CONTACT_NOJS_MIN_SECONDS, with a clear message before', async () => {
    const context = await browser.newContext({ javaScriptEnabled: false });
    const page = await context.newPage();
    await page.goto(`${pageUrl}?locale=ja`);
    expect(await page.locator('html').getAttribute('lang')).to.equal('ja');
    await page.getByLabel('Name').fill('Olga');
    await page.getByLabel('E-mail').fill('olga@example.org');
    await page.getByLabel('Message').fill('No script here.');
    await page.getByLabel('I agree to the privacy policy').check();
    await page.getByRole('button', { name: '送信' }).click();
    await page.locator('#error-summary').waitFor();
    expect(await page.locator('#error-summary').innerText()).to.match(/秒待って/);
    expect(await page.getByLabel('Name').inputValue()).to.equal('Olga');
    expect(await page.getByLabel('I agree to the privacy policy').isChecked()).to.equal(true);
    await page.waitForTimeout(2200);
    await page.getByRole('button', { name: '送信' }).click();
    await page.locator('#thank-you').waitFor();
    expect(await page.locator('#thank-you').innerText()).to.contain('ありがとうございました');
    const list = await eventually(submissions, (b) => b.items.some((s: { values: { name?: string } | null }) => s.values?.name === 'Olga'));
    expect(list.items.find((s: { values: { name?: string } | null }) => s.values?.name === 'Olga').locale).to.equal('ja');
    await context.close();
  });

  it('the embed variant may be framed by another site, and works inside the frame; the normal page may not be framed', async () => {
    const embedUrl = `${pageUrl}/embed`;
    const site = http.createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end(`<!doctype html><title>Shop</title><iframe id="embed" title="Contact" src="${embedUrl}" width="600" height="900"></iframe><iframe id="plain" title="Plain" src="${pageUrl}"></iframe>`);
    });
    await new Promise<void>((r) => site.listen(0, 'localhost', () => r()));
    const context = await browser.newContext();
    try {
      const page = await context.newPage();
      const plainResponse = page.waitForResponse((r) => r.url() === pageUrl);
      await page.goto(`http://localhost:${(site.address() as AddressInfo).port}/`);
      const embedded = page.frameLocator('#embed');
      await embedded.getByRole('heading', { name: 'Contact us' }).waitFor();
      expect((await plainResponse).headers()['x-frame-options']).to.equal('DENY');
      // The plain page was refused inside the frame: nothing of it rendered there.
      expect(await page.frameLocator('#plain').getByRole('heading', { name: 'Contact us' }).count()).to.equal(0);
      await embedded.getByLabel('Name').fill('Pia');
      await embedded.getByLabel('E-mail').fill('pia@example.org');
      await embedded.getByLabel('Message').fill('From the iframe.');
      await embedded.getByLabel('I agree to the privacy policy').check();
      await embedded.getByRole('button', { name: 'Send' }).click();
      await embedded.locator('#thank-you').waitFor({ timeout: 30_000 });
      const headers = (await fetch(embedUrl)).headers;
      expect(headers.get('content-security-policy')).to.contain('frame-ancestors *');
      expect(headers.get('x-frame-options')).to.equal(null);
    } finally {
      await context.close();
      await new Promise<void>((r) => site.close(() => r()));
    }
  });

  it('serves /{projectSlug}/{formSlug} on a contact host, 404 pages for anything else there and for forms without hosted publishing', async () => {
    const onContactHost = await get(`${f.service.url}/${f.project.projectSlug}/contact`, 'contact.example.test');
    expect(onContactHost.status).to.equal(200);
    expect(onContactHost.headers['content-type']).to.contain('text/html');
    expect(onContactHost.body).to.contain('<h1>Contact us</h1>');
    expect((await get(`${f.service.url}/${f.project.projectSlug}/nope`, 'contact.example.test')).status).to.equal(404);
    expect((await get(`${f.service.url}/just-one-segment/a/b`, 'contact.example.test')).status).to.equal(404);
    // On other hosts that path is not a contact page.
    expect((await get(`${f.service.url}/${f.project.projectSlug}/contact`, 'localhost')).headers['content-type']).to.contain('application/json');
    await f.call('POST', '/contact-forms', { body: contactForm({ slug: 'not-hosted', hosted_page_enabled: false }) });
    expect((await fetch(`${f.service.url}/contact/${f.project.projectSlug}/not-hosted`)).status).to.equal(404);
  });

  it('answers a filled honeypot on the hosted page with the thank-you page and saves nothing', async () => {
    const before = (await submissions()).items.length as number;
    const html = await (await fetch(pageUrl)).text();
    const token = /name="_challenge" value="([^"]+)"/.exec(html)![1]!;
    const response = await fetch(pageUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ _challenge: token, _pow: '', name: 'Bot', email: 'bot@example.org', message: 'spam', consent: 'true', website: 'https://spam.example' }).toString(),
    });
    expect(response.status).to.equal(200);
    expect(await response.text()).to.contain('id="thank-you"');
    // A submission saved before that answer would be folded once the projections have caught up with the log.
    const head = await f.service.stores.events.headPosition();
    if (head !== null) expect(await f.service.supervisor!.waitFor(head, 10_000), 'projections caught up').to.equal(true);
    expect((await submissions()).items).to.have.length(before);
  });

  it('shows the payloads of issue 41 in a form\'s name, labels, help, placeholders and options, and in what was typed, as text', async () => {
    const html = '<img src=x onerror=alert(1)>';
    const end = '</script><script>window.pwned=1</script>';
    const created = await f.call('POST', '/contact-forms', {
      body: contactForm({
        slug: 'hostile',
        name: `Contact ${end} ${html}`,
        fields: [
          { key: 'name', type: 'text', label: `Name ${html}`, required: true, help: `Help ${end}`, placeholder: `"><img src=x onerror=alert(2)>` },
          { key: 'email', type: 'email', label: 'E-mail', required: true },
          { key: 'inquiry_type', type: 'select', label: 'Inquiry type', options: [{ value: 'a"><img src=x>', label: `Option ${html}` }] },
          { key: 'message', type: 'textarea', label: 'Message', required: true },
        ],
      }),
    });
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
    const context = await browser.newContext();
    const page = await context.newPage();
    const dialogs: string[] = [];
    page.on('dialog', (dialog) => {
      dialogs.push(dialog.message());
      void dialog.dismiss();
    });
    await page.goto(`${f.service.url}${created.body.hostedPagePath}`);
    await page.getByRole('textbox', { name: /^Name/ }).fill(`${end}${html}`);
    await page.getByRole('textbox', { name: 'Message' }).fill(`${end}\n${html}`);
    // A wrong e-mail address: the page comes back with what was typed in its fields.
    await page.getByRole('textbox', { name: 'E-mail' }).fill('not-an-address');
    await page.getByRole('button', { name: 'Send' }).click();
    await page.locator('#error-summary').waitFor({ timeout: 30_000 });
    const seen = await page.evaluate<{ pwned: unknown; images: number; scripts: number; h1: string; label: string; option: string }>(`({
      pwned: window.pwned ?? null,
      images: document.images.length,
      scripts: document.scripts.length,
      h1: document.querySelector('h1').textContent,
      label: document.querySelector('label[for="f-name"]').textContent,
      option: document.querySelector('#f-inquiry_type option:last-child').textContent,
    })`);
    expect(seen).to.deep.include({ pwned: null, images: 0, scripts: 1, h1: `Contact ${end} ${html}`, option: `Option ${html}` });
    expect(seen.label).to.include(`Name ${html}`);
    expect(await page.getByRole('textbox', { name: /^Name/ }).inputValue()).to.equal(`${end}${html}`);
    expect(await page.getByRole('textbox', { name: 'Message' }).inputValue()).to.equal(`${end}\n${html}`);
    expect(dialogs).to.deep.equal([]);
    await context.close();
  });
});
