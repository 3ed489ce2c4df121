import { expect } from 'chai';
import { startAdminFixture, type AdminFixture } from '../admin/support.ts';
import { adminSession, contactForm, pinnedBase, submit } from './support.ts';
import { eventually } from '../support/engine-fixture.ts';

const everyType = {
  name: 'Every type',
  slug: 'every-type',
  notification_emails: ['team@example.com'],
  fields: [
    { key: 'name', type: 'text', label: 'Name', required: true, limits: { minLength: 2, maxLength: 10 } },
    { key: 'email', type: 'email', label: 'E-mail', required: true },
    { key: 'home_page', type: 'url', label: 'Home page' },
    { key: 'phone', type: 'tel', label: 'Phone' },
    { key: 'message', type: 'textarea', label: 'Message', limits: { maxLength: 20 } },
    { key: 'guests', type: 'number', label: 'Guests', limits: { min: 1, max: 10, integer: true } },
    { key: 'visit_on', type: 'date', label: 'Visit on' },
    { key: 'topic', type: 'select', label: 'Topic', options: ['sales', 'support'] },
    { key: 'contact_by', type: 'radio', label: 'Contact by', options: ['mail', 'phone'] },
    { key: 'consent', type: 'checkbox', label: 'I agree', required: true },
    { key: 'newsletter', type: 'boolean', label: 'Newsletter' },
    { key: 'interests', type: 'multiselect', label: 'Interests', options: ['a', 'b', 'c'], limits: { maxItems: 2 } },
  ],
};
const valid = { name: 'Ann', email: 'ann@example.org', home_page: 'https://ann.example.org/', phone: '+81 3-1234-5678', message: 'Hello', guests: 2, visit_on: '2026-12-24', topic: 'sales', contact_by: 'mail', consent: true, newsletter: false, interests: ['a', 'c'] };

describe('contact forms: public submit POST /contact-forms/{slug}/submit', function () {
  this.timeout(60_000);
  let f: AdminFixture;
  let base: string;
  // TRUST_PROXY is on: each test speaks from its own X-Forwarded-For address, so the rate limit of one never touches another.
  let ipCounter = 10;
  const fromNewIp = () => ({ 'X-Forwarded-For': `203.0.113.${ipCounter++}` });
  before(async () => {
    f = await startAdminFixture({ plan: 'standard', env: { TRUST_PROXY: 'true', CONTACT_SUBMIT_RATE_LIMIT: '30', CONTACT_SUBMIT_MAX_BYTES: '4096' } });
    base = pinnedBase(f);
    expect((await f.call('POST', '/contact-forms', { body: everyType })).status).to.equal(201);
    expect((await f.call('POST', '/contact-forms', { body: contactForm() })).status).to.equal(201);
  });
  after(async () => {
    await f.stop();
  });

  it('saves a valid submission without authentication on both public bases: 200 {ok: true, submissionId}', async () => {
    const headers = fromNewIp();
    const pinned = await submit(base, 'every-type', valid, { headers });
    expect(pinned.status, JSON.stringify(pinned.body)).to.equal(200);
    expect(pinned.body).to.have.keys(['ok', 'submissionId']);
    expect(pinned.body.ok).to.equal(true);
    expect(pinned.body.submissionId).to.match(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(pinned.headers.get('access-control-allow-origin')).to.equal('*');
    expect(pinned.headers.get('cache-control')).to.equal('no-store');
    // The host-resolved base, with the project's public key.
    const hosted = await submit(`${f.service.url}/public/v1`, 'contact', { name: 'Bo', email: 'bo@example.org', message: 'Hi' }, { headers: { ...headers, 'X-Service-Public-Api-Key': f.project.publicKey.key } });
    expect(hosted.status, JSON.stringify(hosted.body)).to.equal(200);
    expect(hosted.body.submissionId).to.not.equal(pinned.body.submissionId);
    // Both are saved: the console lists them.
    const session = await adminSession(f);
    const forms = (await f.call('GET', '/contact-forms')).body.items as Array<{ id: string; slug: string }>;
    // (The admin API follows the log: a public submit does not wait for it.)
    const list = await eventually(
      () => f.call('GET', `/contact-forms/${forms.find((x) => x.slug === 'every-type')!.id}/submissions`, session),
      (r) => r.body.items.some((s: { id: string }) => s.id === pinned.body.submissionId),
    );
    expect(list.body.items.map((s: { id: string }) => s.id)).to.include(pinned.body.submissionId);
    const saved = list.body.items.find((s: { id: string }) => s.id === pinned.body.submissionId);
    expect(saved.values).to.deep.equal(valid);
  });

  it('answers a browser\'s preflight for the cross-origin POST', async () => {
    const response = await fetch(`${base}/contact-forms/contact/submit`, { method: 'OPTIONS', headers: { Origin: 'https://shop.example.com', 'Access-Control-Request-Method': 'POST', 'Access-Control-Request-Headers': 'content-type' } });
    expect(response.status).to.equal(204);
    expect(response.headers.get('access-control-allow-origin')).to.equal('*');
    expect(response.headers.get('access-control-allow-methods')).to.contain('POST');
  });

  const cases: Array<[string, string, unknown, string]> = [
    ['text: required', 'name', undefined, 'name: is required'],
    ['text: blank is missing', 'name', '   ', 'name: is required'],
    ['text: too short', 'name', 'A', 'name: must be at least 2 characters'],
    ['text: too long', 'name', 'Annabelle Lee', 'name: must be at most 10 characters'],
    ['text: not a string', 'name', 42, 'name: must be a string'],
    ['text: one line only', 'name', 'An\nn', 'name: must be a single line'],
    ['email: required', 'email', undefined, 'email: is required'],
    ['email: format', 'email', 'ann@', 'email: must be an e-mail address'],
    ['email: header injection', 'email', 'ann@example.org\r\nBcc: x@example.net', 'email: must be a single line'],
    ['url: format', 'home_page', 'not a url', 'home_page: must be an http or https URL'],
    ['url: scheme', 'home_page', 'javascript:alert(1)', 'home_page: must be an http or https URL'],
    ['tel: format', 'phone', 'call me', 'phone: must be a telephone number'],
    ['textarea: too long', 'message', 'x'.repeat(21), 'message: must be at most 20 characters'],
    ['textarea: control characters', 'message', 'a\u0000b', 'message: must not contain control characters'],
    ['number: type', 'guests', '2', 'guests: must be a number'],
    ['number: whole', 'guests', 2.5, 'guests: must be a whole number'],
    ['number: min', 'guests', 0, 'guests: must be at least 1'],
    ['number: max', 'guests', 11, 'guests: must be at most 10'],
    ['date: format', 'visit_on', '24.12.2026', 'visit_on: must be a date YYYY-MM-DD'],
    ['date: calendar', 'visit_on', '2026-02-30', 'visit_on: must be a date YYYY-MM-DD'],
    ['select: option', 'topic', 'billing', 'topic: must be one of: sales, support'],
    ['radio: option', 'contact_by', 'pigeon', 'contact_by: must be one of: mail, phone'],
    ['checkbox: required must be ticked', 'consent', false, 'consent: must be checked'],
    ['checkbox: missing', 'consent', undefined, 'consent: is required (it must be checked)'],
    ['boolean: type', 'newsletter', 'yes', 'newsletter: must be true or false'],
    ['multiselect: type', 'interests', 'a', 'interests: must be an array of option values'],
    ['multiselect: option', 'interests', ['a', 'z'], 'interests: "z" is not one of: a, b, c'],
    ['multiselect: max items', 'interests', ['a', 'b', 'c'], 'interests: must name at most 2 options'],
    ['multiselect: duplicates', 'interests', ['a', 'a'], 'interests: must not name an option twice'],
  ];
  for (const [title, key, value, message] of cases) {
    it(`400 VALIDATION_ERROR naming the field and the problem: ${title}`, async () => {
      const body: Record<string, unknown> = { ...valid };
      if (value === undefined) delete body[key];
      else body[key] = value;
      const response = await submit(base, 'every-type', body, { headers: fromNewIp() });
      expect(response.status).to.equal(400);
      expect(response.body.error.code).to.equal('VALIDATION_ERROR');
      expect(response.body.error.message).to.contain(message);
    });
  }

  it('refuses keys that are not fields of the form, and names every problem at once', async () => {
    const response = await submit(base, 'every-type', { ...valid, name: undefined, email: 'x', coupon: 'FREE' }, { headers: fromNewIp() });
    expect(response.status).to.equal(400);
    expect(response.body.error.message).to.equal('Invalid submission: coupon: is not a field of this form; name: is required; email: must be an e-mail address');
  });

  it('refuses a body that is not a JSON object, and an unknown or malformed form slug with 404', async () => {
    const headers = fromNewIp();
    expect((await submit(base, 'contact', '[1,2]', { headers })).status).to.equal(400);
    expect((await submit(base, 'contact', 'name=x', { headers: { ...headers, 'content-type': 'text/plain' } })).status).to.equal(415);
    const unknown = await submit(base, 'no-such-form', { name: 'x' }, { headers });
    expect(unknown.status).to.equal(404);
    expect(unknown.body.error.code).to.equal('NOT_FOUND');
    expect((await submit(base, 'Bad_Slug', { name: 'x' }, { headers })).status).to.equal(404);
  });

  it('answers a filled honeypot exactly like a success, with a fresh id, and saves nothing', async () => {
    const session = await adminSession(f);
    const formId = ((await f.call('GET', '/contact-forms')).body.items as Array<{ id: string; slug: string }>).find((x) => x.slug === 'contact')!.id;
    const before = (await f.call('GET', `/contact-forms/${formId}/submissions?limit=100`, session)).body.items.length as number;
    const headers = fromNewIp();
    // Even with invalid values: a bot learns nothing from the answer.
    const bot = await submit(base, 'contact', { name: '', email: 'nope', message: 'buy now', website: 'https://spam.example' }, { headers });
    const human = await submit(base, 'contact', { name: 'Cy', email: 'cy@example.org', message: 'Hi', website: '' }, { headers });
    expect(bot.status).to.equal(200);
    expect(Object.keys(bot.body)).to.deep.equal(Object.keys(human.body));
    expect(bot.body.ok).to.equal(true);
    expect(bot.body.submissionId).to.match(/^[0-9a-f-]{36}$/).and.not.equal(human.body.submissionId);
    expect([...bot.headers.keys()].filter((h) => !['date', 'content-length', 'x-request-id'].includes(h)).sort()).to.deep.equal([...human.headers.keys()].filter((h) => !['date', 'content-length', 'x-request-id'].includes(h)).sort());
    // The admin list follows the log (a public submit does not wait for it): once it shows the human's
    // submission, it would show the bot's too, had that been appended first.
    const after = await eventually(() => f.call('GET', `/contact-forms/${formId}/submissions?limit=100`, session), (r) => r.body.items.some((s: { id: string }) => s.id === human.body.submissionId));
    expect(after.body.items).to.have.length(before + 1);
    expect(after.body.items.map((s: { id: string }) => s.id)).to.not.include(bot.body.submissionId);
  });

  it('takes the autoreply language from the locale query parameter or the body\'s _locale, else the default locale', async () => {
    const session = await adminSession(f);
    const formId = ((await f.call('GET', '/contact-forms')).body.items as Array<{ id: string; slug: string }>).find((x) => x.slug === 'contact')!.id;
    const headers = fromNewIp();
    const body = { name: 'Di', email: 'di@example.org', message: 'Hi' };
    const byQuery = await submit(base, 'contact', body, { headers, query: '?locale=ja' });
    const byBody = await submit(base, 'contact', { ...body, _locale: 'ja-JP' }, { headers });
    const unknown = await submit(base, 'contact', body, { headers, query: '?locale=fr' });
    const none = await submit(base, 'contact', body, { headers });
    const locale = async (id: string) => (await eventually(() => f.call('GET', `/contact-forms/${formId}/submissions/${id}`, session), (r) => r.status === 200)).body.locale;
    expect(await locale(byQuery.body.submissionId)).to.equal('ja');
    expect(await locale(byBody.body.submissionId)).to.equal('ja');
    expect(await locale(unknown.body.submissionId)).to.equal('en');
    expect(await locale(none.body.submissionId)).to.equal('en');
    const malformed = await submit(base, 'contact', body, { headers, query: '?locale=not_a_locale' });
    expect(malformed.status).to.equal(400);
    expect(malformed.body.error.message).to.contain('locale: must be a locale code');
  });

  it('refuses a body over CONTACT_SUBMIT_MAX_BYTES with 413', async () => {
    const response = await submit(base, 'contact', { name: 'Ed', email: 'ed@example.org', message: 'x'.repeat(5000) }, { headers: fromNewIp() });
    expect(response.status).to.equal(413);
    expect(response.body.error.code).to.equal('PAYLOAD_TOO_LARGE');
  });

  it('limits submissions per client IP (the proxy\'s last X-Forwarded-For entry): 429 RATE_LIMITED with Retry-After', async () => {
    const proxySaw = `198.51.100.${ipCounter++}`;
    const statuses: number[] = [];
    let limited: Awaited<ReturnType<typeof submit>> | undefined;
    for (let i = 0; i < 32; i++) {
      // The client varies the entries it controls; the address the proxy appended stays the same.
      const response = await submit(base, 'contact', { name: 'Flo', email: 'flo@example.org', message: `#${i}` }, { headers: { 'X-Forwarded-For': `10.9.${i}.1, ${proxySaw}` } });
      statuses.push(response.status);
      if (response.status === 429) limited ??= response;
    }
    expect(statuses.filter((s) => s === 200)).to.have.length(30);
    expect(statuses.slice(30)).to.deep.equal([429, 429]);
    expect(limited!.body.error.code).to.equal('RATE_LIMITED');
    expect(Number(limited!.headers.get('retry-after'))).to.be.greaterThan(0);
    // Another client is not affected.
    expect((await submit(base, 'contact', { name: 'Gus', email: 'gus@example.org', message: 'Hi' }, { headers: fromNewIp() })).status).to.equal(200);
  });

  it('ignores X-Forwarded-For unless TRUST_PROXY is on', async () => {
    const direct = await startAdminFixture({ env: { CONTACT_SUBMIT_RATE_LIMIT: '2' } });
    try {
      await direct.call('POST', '/contact-forms', { body: contactForm() });
      const statuses = [];
      for (let i = 0; i < 3; i++) statuses.push((await submit(pinnedBase(direct), 'contact', { name: 'Hal', email: 'hal@example.org', message: 'Hi' }, { headers: { 'X-Forwarded-For': `192.0.2.${i}` } })).status);
      expect(statuses).to.deep.equal([200, 200, 429]);
    } finally {
      await direct.stop();
    }
  });
});
