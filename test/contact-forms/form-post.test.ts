import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { chromium, type Browser } from 'playwright-core';
import { startAdminFixture, type AdminFixture } from '../admin/support.ts';
import { adminSession, contactForm, pinnedBase } from './support.ts';
import { eventually } from '../support/engine-fixture.ts';

const FORM = 'application/x-www-form-urlencoded';
const BROWSER_ACCEPT = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8';

/** Issue 12: a plain HTML form on a customer's own site posts to the public submit route. */
describe('contact forms: HTML form posts to POST /contact-forms/{slug}/submit', function () {
  this.timeout(60_000);
  let f: AdminFixture;
  let base: string;
  let formId: string;
  let ip = 10;
  const fromNewIp = () => ({ 'X-Forwarded-For': `198.51.100.${ip++}` });

  before(async () => {
    f = await startAdminFixture({ plan: 'standard', env: { TRUST_PROXY: 'true', CONTACT_SUBMIT_RATE_LIMIT: '3' } });
    base = pinnedBase(f);
    const created = await f.call('POST', '/contact-forms', {
      body: contactForm({
        fields: [
          { key: 'name', type: 'text', label: 'Name', required: true, limits: { maxLength: 100 } },
          { key: 'email', type: 'email', label: 'E-mail', required: true },
          { key: 'guests', type: 'number', label: 'Guests', limits: { min: 1, max: 10, integer: true } },
          { key: 'consent', type: 'checkbox', label: 'I agree', required: true },
          { key: 'interests', type: 'multiselect', label: 'Interests', options: ['a', 'b', 'c'] },
          { key: 'message', type: 'textarea', label: 'Message' },
        ],
      }),
    });
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
    formId = created.body.id;
  });
  after(() => f.stop());

  const post = (body: string, headers: Record<string, string> = {}) =>
    fetch(`${base}/contact-forms/contact/submit`, { method: 'POST', headers: { 'content-type': FORM, ...headers }, body, redirect: 'manual' });
  // The admin API follows the log: a public submit does not wait for it.
  const saved = async (id: string) => (await eventually(async () => f.call('GET', `/contact-forms/${formId}/submissions/${id}`, await adminSession(f)), (r) => r.status === 200)).body;

  it('takes a form post with the same validation as JSON: values converted as the hosted page does', async () => {
    const response = await post('name=Ann&email=ann%40example.org&guests=3&consent=on&interests=a&interests=c&message=Hello+there', fromNewIp());
    expect(response.status).to.equal(200);
    const body = (await response.json()) as { ok: boolean; submissionId: string };
    expect(body.ok).to.equal(true);
    const submission = await saved(body.submissionId);
    expect(submission.values).to.deep.equal({ name: 'Ann', email: 'ann@example.org', guests: 3, consent: true, interests: ['a', 'c'], message: 'Hello there' });
    const invalid = await post('name=Ann&email=nope&guests=30', fromNewIp());
    expect(invalid.status).to.equal(400);
    const error = (await invalid.json()) as { error: { code: string; message: string } };
    expect(error.error.code).to.equal('VALIDATION_ERROR');
    expect(error.error.message).to.contain('email: must be an e-mail address').and.contain('guests: ').and.contain('consent: is required');
  });

  it('answers a browser (Accept: text/html) with the thank-you page (leading back to the project\'s site), or an error page naming the problem', async () => {
    expect((await f.call('PUT', '/project/site-settings', { body: { siteUrl: 'https://shop.example/', siteName: 'The <Shop>' }, ...(await adminSession(f)) })).status).to.equal(200);
    const thanks = await post('name=Ann&email=ann%40example.org&consent=on', { ...fromNewIp(), accept: BROWSER_ACCEPT });
    expect(thanks.status).to.equal(200);
    expect(thanks.headers.get('content-type')).to.equal('text/html; charset=utf-8');
    expect(thanks.headers.get('content-security-policy')).to.contain("default-src 'none'");
    const page = await thanks.text();
    expect(page).to.contain('id="thank-you"');
    expect(page).to.contain('<a href="https://shop.example">Back to The &lt;Shop&gt;</a>');
    const invalid = await post('name=Ann&email=nope&consent=on', { ...fromNewIp(), accept: BROWSER_ACCEPT });
    expect(invalid.status).to.equal(400);
    expect(invalid.headers.get('content-type')).to.equal('text/html; charset=utf-8');
    expect(await invalid.text()).to.contain('email: must be an e-mail address');
    const japanese = await post('name=Ann&email=ann%40example.org&consent=on&_locale=ja', { ...fromNewIp(), accept: BROWSER_ACCEPT });
    expect(await japanese.text()).to.contain('ありがとうございました');
  });

  it('keeps the honeypot and the rate limit for form posts', async () => {
    const before = (await f.call('GET', `/contact-forms/${formId}/submissions`, await adminSession(f))).body.total;
    const bot = await post('name=Bot&email=bot%40example.org&consent=on&website=https%3A%2F%2Fspam.example', { ...fromNewIp(), accept: BROWSER_ACCEPT });
    expect(bot.status).to.equal(200);
    expect(await bot.text()).to.contain('id="thank-you"');
    expect((await f.call('GET', `/contact-forms/${formId}/submissions`, await adminSession(f))).body.total).to.equal(before);
    const headers = { ...fromNewIp(), accept: BROWSER_ACCEPT };
    for (let i = 0; i < 3; i++) await post('name=x', headers);
    const limited = await post('name=Ann&email=ann%40example.org&consent=on', headers);
    expect(limited.status).to.equal(429);
    expect(limited.headers.get('retry-after')).to.match(/^\d+$/);
    expect(limited.headers.get('content-type')).to.equal('text/html; charset=utf-8');
  });

  describe('in a browser, from a page on another site', () => {
    let browser: Browser;
    let site: http.Server;
    before(async () => {
      browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync'] });
      site = http.createServer((_req, res) => {
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
        res.end(`<!doctype html><title>Shop</title><form method="post" action="${base}/contact-forms/contact/submit">
<input name="name" value="Dee"><input name="email" value="dee@example.org"><input type="checkbox" name="consent" checked>
<textarea name="message">From the shop's own page</textarea><button id="send">Send</button></form>`);
      });
      await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', () => resolve()));
    });
    after(async () => {
      await browser?.close();
      await new Promise((resolve) => site?.close(resolve));
    });

    it('posts the plain form and lands on the thank-you page, and the submission is saved', async () => {
      const page = await browser.newPage();
      try {
        await page.goto(`http://127.0.0.1:${(site.address() as AddressInfo).port}/`);
        await Promise.all([page.waitForNavigation(), page.click('#send')]);
        expect(page.url()).to.equal(`${base}/contact-forms/contact/submit`);
        expect(await page.locator('#thank-you').count()).to.equal(1);
      } finally {
        await page.close();
      }
      const session = await adminSession(f);
      const list = (await eventually(() => f.call('GET', `/contact-forms/${formId}/submissions`, session), (r) => r.body.items.length > 0)).body.items as Array<{ values: { message?: string } }>;
      expect(list.map((s) => s.values?.message)).to.include("From the shop's own page");
    });
  });
});
