import { expect } from 'chai';
import SwaggerParser from '@apidevtools/swagger-parser';
import { startAdminFixture, type AdminFixture } from '../admin/support.ts';
import { adminSession, contactForm } from './support.ts';

describe('contact forms: admin API (create_contact_form, update_contact_form, read, list, delete)', function () {
  this.timeout(60_000);
  let f: AdminFixture;
  let session: { token: string; headers: Record<string, string> };
  before(async () => {
    f = await startAdminFixture({ plan: 'standard' });
    session = await adminSession(f);
  });
  after(async () => {
    await f.stop();
  });

  it('creates a form with every setting of the spec\'s table and reads it back, list included', async () => {
    const created = await f.call('POST', '/contact-forms', { body: contactForm({ slug: 'every-setting', honeypot_field: 'homepage', chat_webhook_url: 'https://93.184.216.34/services/T000/B000/SECRETTOKEN' }) });
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
    const form = created.body;
    expect(form).to.include({ slug: 'every-setting', name: 'Contact us', reply_to_field: 'email', honeypot_enabled: true, honeypot_field: 'homepage', autoreply_enabled: true, autoreply_to_field: 'email', hosted_page_enabled: true, version: 1 });
    expect(form.id).to.match(/^[0-9a-f-]{36}$/);
    expect(form.notification_emails).to.deep.equal(['team@example.com', 'sales@example.com']);
    expect(form.autoreply_subject).to.deep.equal({ en: 'Thank you, {{name}}', ja: 'お問い合わせありがとうございます' });
    expect(form.email_signature).to.equal('Example Shop\nhttps://shop.example.com');
    expect(form.fields.map((x: { key: string }) => x.key)).to.deep.equal(['name', 'email', 'company', 'inquiry_type', 'message']);
    expect(form.fields[3].options).to.deep.equal([{ value: 'sales', label: 'Sales' }, { value: 'support', label: 'Support' }]);
    // The chat webhook URL is a credential: shown by scheme and host only, never again in full.
    expect(form.chat_webhook_url).to.equal('https://93.184.216.34/…');
    expect(JSON.stringify(form)).to.not.contain('SECRETTOKEN');
    expect(form.submitPath).to.equal('/contact-forms/every-setting/submit');
    expect(form.hostedPagePath).to.equal(`/contact/${f.project.projectSlug}/every-setting`);

    const read = await f.call('GET', `/contact-forms/${form.id}`);
    expect(read.body).to.deep.equal(form);
    const list = await f.call('GET', '/contact-forms');
    expect(list.body.items.map((x: { slug: string }) => x.slug)).to.include('every-setting');
    // The log holds the chat URL sealed, never in clear.
    const raw = await rawEvents(f, `contact-form-${form.id}`);
    expect(raw).to.not.contain('SECRETTOKEN');
  });

  it('defaults: honeypot on with field website, no autoreply, no hosted page; a plain-string subject is the default locale\'s', async () => {
    const created = await f.call('POST', '/contact-forms', { body: { name: 'Minimal', slug: 'minimal', fields: [{ key: 'email', type: 'email', label: 'E-mail' }], autoreply_subject: 'Thanks' } });
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
    expect(created.body).to.include({ honeypot_enabled: true, honeypot_field: 'website', autoreply_enabled: false, hosted_page_enabled: false, reply_to_field: null, email_signature: null, chat_webhook_url: null, hostedPagePath: null });
    expect(created.body.autoreply_subject).to.deep.equal({ en: 'Thanks' });
    expect(created.body.notification_emails).to.deep.equal([]);
  });

  it('is idempotent by key: the same key answers with the same id, the key with another request is a conflict', async () => {
    const body = contactForm({ slug: 'idem', idempotencyKey: 'create-idem-1' });
    const first = await f.call('POST', '/contact-forms', { body });
    const again = await f.call('POST', '/contact-forms', { body });
    expect(first.status).to.equal(201);
    expect(again.status).to.equal(201);
    expect(again.body.id).to.equal(first.body.id);
    const viaHeader = await f.call('POST', '/contact-forms', { body: contactForm({ slug: 'idem-header' }), headers: { 'Idempotency-Key': 'create-idem-2' } });
    const viaHeaderAgain = await f.call('POST', '/contact-forms', { body: contactForm({ slug: 'idem-header' }), headers: { 'Idempotency-Key': 'create-idem-2' } });
    expect(viaHeaderAgain.body.id).to.equal(viaHeader.body.id);
    const other = await f.call('POST', '/contact-forms', { body: contactForm({ slug: 'idem-other', idempotencyKey: 'create-idem-1' }) });
    expect(other.status).to.equal(409);
    expect(other.body.error.code).to.equal('CONFLICT');
    const listed = (await f.call('GET', '/contact-forms')).body.items.filter((x: { slug: string }) => x.slug.startsWith('idem'));
    expect(listed.map((x: { slug: string }) => x.slug).sort()).to.deep.equal(['idem', 'idem-header']);
  });

  it('answers 409 on a slug clash within the project, without a key and with one', async () => {
    await f.call('POST', '/contact-forms', { body: contactForm({ slug: 'clash' }) });
    const clash = await f.call('POST', '/contact-forms', { body: contactForm({ slug: 'clash', name: 'Another' }) });
    expect(clash.status).to.equal(409);
    expect(clash.body.error.code).to.equal('CONFLICT');
    expect(clash.body.error.message).to.contain('"clash"');
    const keyed = await f.call('POST', '/contact-forms', { body: contactForm({ slug: 'clash', idempotencyKey: 'clash-key' }) });
    expect(keyed.status).to.equal(409);
  });

  it('refuses settings that do not fit together, naming every problem, and writes nothing', async () => {
    const fields = [
      { key: 'message', type: 'textarea', label: 'Message' },
      { key: 'kind', type: 'select', label: 'Kind' },
      { key: 'age', type: 'number', label: 'Age', limits: { maxLength: 3, min: 10, max: 5 } },
      { key: 'website', type: 'url', label: 'Web site' },
      { key: 'message', type: 'text', label: 'Again' },
    ];
    // Shape problems are named first (an address that is not one)...
    const bad = await f.call('POST', '/contact-forms', { body: { name: 'Bad', slug: 'bad-form', notification_emails: ['not-an-address'], fields } });
    expect(bad.status).to.equal(400);
    expect(bad.body.error.code).to.equal('VALIDATION_ERROR');
    expect(bad.body.error.message).to.contain('notification_emails[0]: must be an e-mail address');
    // ...then every rule and cross-reference at once.
    const again = await f.call('POST', '/contact-forms', {
      body: {
        name: 'Bad',
        slug: 'bad-form',
        notification_emails: ['ok@example.com', 'OK@example.com'],
        reply_to_field: 'message',
        autoreply_enabled: true,
        autoreply_to_field: 'nope',
        autoreply_body: { en: 'Hello {{missing}}', fr: 'Bonjour' },
        fields,
        chat_webhook_url: 'http://hooks.example.com/x',
      },
    });
    expect(again.status).to.equal(400);
    const all: string = again.body.error.message;
    for (const expected of [
      'fields[4]: key "message" is used twice',
      'fields.kind.options: is required for select fields',
      'fields.age.limits.maxLength: does not apply to number fields',
      'fields.age.limits.min: must not exceed max',
      'fields.website.key: is the honeypot field name',
      'reply_to_field: must name an email field, but "message" is a textarea field',
      'autoreply_to_field: names no field of this form ("nope")',
      'autoreply_body.fr: is not a content locale of the project (en, ja)',
      'autoreply_body.en: uses {{missing}}, which names no field of this form',
      'autoreply_subject: needs a text for the project\'s default locale en',
      'chat_webhook_url: must be an https URL',
      'notification_emails: lists OK@example.com twice',
    ]) {
      expect(all).to.contain(expected);
    }
    expect((await f.call('GET', '/contact-forms')).body.items.map((x: { slug: string }) => x.slug)).to.not.include('bad-form');
  });

  it('updates settings (autoreply included), keeps the ones left out, checks the result as a whole, and moves the slug', async () => {
    const created = (await f.call('POST', '/contact-forms', { body: contactForm({ slug: 'to-update', chat_webhook_url: 'https://93.184.216.34/services/KEEP' }) })).body;
    const updated = await f.call('PATCH', `/contact-forms/${created.id}`, { body: { autoreply_subject: { en: 'We got it', ja: '受け付けました' }, autoreply_enabled: false, email_signature: null, slug: 'updated' } });
    expect(updated.status, JSON.stringify(updated.body)).to.equal(200);
    expect(updated.body).to.include({ slug: 'updated', autoreply_enabled: false, email_signature: null, version: 2, name: 'Contact us', chat_webhook_url: 'https://93.184.216.34/…' });
    expect(updated.body.autoreply_subject).to.deep.equal({ en: 'We got it', ja: '受け付けました' });
    expect(updated.body.fields).to.deep.equal(created.fields);
    // The old slug is free again; the new one is taken.
    expect((await f.call('POST', '/contact-forms', { body: contactForm({ slug: 'to-update' }) })).status).to.equal(201);
    expect((await f.call('POST', '/contact-forms', { body: contactForm({ slug: 'updated' }) })).status).to.equal(409);
    // A change that breaks a cross-reference is refused as a whole.
    const broken = await f.call('PATCH', `/contact-forms/${created.id}`, { body: { fields: [{ key: 'name', type: 'text', label: 'Name' }] } });
    expect(broken.status).to.equal(400);
    expect(broken.body.error.message).to.contain('reply_to_field: names no field of this form ("email")');
    // expectedVersion guards against lost updates; an unchanged update writes nothing.
    const stale = await f.call('PATCH', `/contact-forms/${created.id}`, { body: { name: 'Stale', expectedVersion: 1 } });
    expect(stale.status).to.equal(409);
    const same = await f.call('PATCH', `/contact-forms/${created.id}`, { body: { name: 'Contact us' } });
    expect(same.body.version).to.equal(2);
    const cleared = await f.call('PATCH', `/contact-forms/${created.id}`, { body: { chat_webhook_url: null } });
    expect(cleared.body.chat_webhook_url).to.equal(null);
  });

  it('lets only a console tenant admin delete a form: agent keys get 403 FORBIDDEN whatever their scope; the slug is free afterwards', async () => {
    const created = (await f.call('POST', '/contact-forms', { body: contactForm({ slug: 'to-delete' }) })).body;
    const byAgent = await f.call('DELETE', `/contact-forms/${created.id}`);
    expect(byAgent.status).to.equal(403);
    expect(byAgent.body.error.code).to.equal('FORBIDDEN');
    expect(byAgent.body.error.message).to.contain('Agent keys can never delete form sets or contact forms');
    const bySession = await f.call('DELETE', `/contact-forms/${created.id}`, { token: session.token, headers: session.headers });
    expect(bySession.status).to.equal(204);
    expect((await f.call('GET', `/contact-forms/${created.id}`)).status).to.equal(404);
    expect((await f.call('POST', '/contact-forms', { body: contactForm({ slug: 'to-delete' }) })).status).to.equal(201);
  });

  it('refuses a chat webhook URL that reaches a loopback, private or unresolvable host when it is set, as webhooks do (issue 12 item 8)', async () => {
    for (const [url, reason] of [
      ['https://127.0.0.1:9/hook', /^chat_webhook_url: 127\.0\.0\.1 is a loopback address/],
      ['https://localhost/hook', /^chat_webhook_url: localhost resolves to (127\.0\.0\.1|::1), which is a loopback address/],
      ['https://10.0.0.1/hook', /private address/],
      ['https://[::ffff:0:7f00:1]/hook', /IPv4-translated 127\.0\.0\.1/],
      ['https://nowhere.invalid/hook', /could not be resolved/],
    ] as const) {
      const refused = await f.call('POST', '/contact-forms', { body: contactForm({ slug: `chat-${Math.random().toString(36).slice(2, 8)}`, chat_webhook_url: url }) });
      expect(refused.status, url).to.equal(400);
      expect(refused.body.error.code).to.equal('VALIDATION_ERROR');
      expect(refused.body.error.message, url).to.match(reason);
    }
    const form = (await f.call('POST', '/contact-forms', { body: contactForm({ slug: 'chat-later' }) })).body;
    const patched = await f.call('PATCH', `/contact-forms/${form.id}`, { body: { chat_webhook_url: 'https://127.0.0.1/hook' } });
    expect(patched.status).to.equal(400);
    expect(patched.body.error.message).to.match(/loopback/);
  });

  it('asks for the Standard plan before taking a chat webhook', async () => {
    const free = await startAdminFixture({ plan: 'free' });
    try {
      const refused = await free.call('POST', '/contact-forms', { body: contactForm({ chat_webhook_url: 'https://hooks.example.com/x' }) });
      expect(refused.status).to.equal(403);
      expect(refused.body.error.code).to.equal('PLAN_REQUIRED');
      expect((await free.call('POST', '/contact-forms', { body: contactForm() })).status).to.equal(201);
    } finally {
      await free.stop();
    }
  });

  it('documents every contact-form route in the OpenAPI document, which stays valid', async () => {
    const document = (await (await fetch(`${f.service.url}/admin/v1/openapi.json`)).json()) as { paths: Record<string, Record<string, { operationId: string }>> };
    await SwaggerParser.validate(structuredClone(document) as never);
    expect(document.paths['/contact-forms']?.['post']?.operationId).to.equal('createContactForm');
    expect(document.paths['/contact-forms/{formId}']?.['patch']?.operationId).to.equal('updateContactForm');
    expect(document.paths['/contact-forms/{formId}/submissions/{submissionId}']?.['delete']?.operationId).to.equal('eraseContactSubmission');
  });
});

/** The stored JSON of a stream's events, as the SQLite event store holds them. */
async function rawEvents(f: AdminFixture, streamId: string): Promise<string> {
  const out: unknown[] = [];
  for await (const event of f.service.log.store.readStream(streamId)) out.push(event);
  return JSON.stringify(out, (_, v) => (typeof v === 'bigint' ? v.toString() : v));
}
