import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { simpleParser, type ParsedMail, type AddressObject } from 'mailparser';
import { startAdminFixture, type AdminFixture } from '../admin/support.ts';
import { eventually } from '../support/engine-fixture.ts';
import { tempDir } from '../support/temp-dir.ts';
import { contactForm, pinnedBase, submit } from './support.ts';
import { composeAutoreply, composeNotification, type NoticeContext } from '../../src/contact-forms/notice-messages.ts';
import { parseContactFormSettings } from '../../src/domain/contact-form/contact-form-settings.ts';
import { EmlFileTransport } from '../../src/mail/eml-file-transport.ts';

const HTML = '<img src=x onerror=alert(1)>';
const LINK = '[x](javascript:alert(1))';
const SCRIPT_END = '</script><script>alert(1)</script>';

const addresses = (field: AddressObject | AddressObject[] | undefined) => (Array.isArray(field) ? field : field ? [field] : []).flatMap((a) => a.value.map((v) => v.address));

/** The HTML part holds the payloads as text: no element they spell out, each one's characters escaped. */
function expectInert(html: string): void {
  expect(html).to.not.match(/<img|<script|<\/script|href="javascript:/i);
  expect(html).to.include('&lt;img src=x onerror=alert(1)&gt;');
}

/**
 * Issue 41 item 3, e-mails: the contact-form notices carry what a submitter typed (and what an editor named
 * the form) in their headers and HTML parts. Written as .eml files (the embedded mail transport, as SMTP
 * would carry them) and read back with mailparser: the payloads of the issue stay text in the HTML, and no
 * value adds a recipient or a header.
 */
describe('contact forms: hostile values in notices stay text, and never make a header or a recipient', function () {
  this.timeout(60_000);
  let f: AdminFixture;
  let mailDir: string;

  before(async () => {
    const dataDir = path.join(tempDir(), 'data');
    mailDir = path.join(dataDir, 'mail');
    f = await startAdminFixture({ dataDir, env: { MAIL_FROM: 'Example Shop <shop@example.com>' } });
    const form = contactForm({
      name: `Contact ${HTML} ${SCRIPT_END}`,
      autoreply_subject: { en: 'Thank you, {{name}}' },
      autoreply_body: { en: `Dear {{name}},\n\nyou wrote: {{message}}\n\n${LINK}` },
      email_signature: `Shop ${HTML}`,
    });
    const created = await f.call('POST', '/contact-forms', { body: form });
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
  });
  after(() => f?.stop());

  it('sends the notification and the autoreply with every payload as text, to the configured recipients only', async () => {
    const values = { name: `Ann ${HTML} Bcc: victim@evil.test`, email: 'ann@example.org', company: SCRIPT_END, message: `${LINK}\n# forged\n${HTML}\nBcc: victim@evil.test` };
    const response = await submit(pinnedBase(f), 'contact', values);
    expect(response.status, JSON.stringify(response.body)).to.equal(200);
    const id = response.body.submissionId as string;
    const read = async (kind: string): Promise<ParsedMail> => simpleParser(fs.readFileSync(path.join(mailDir, `${id}.${kind}@example.com.eml`)));
    await eventually(async () => ['notification', 'autoreply'].every((kind) => fs.existsSync(path.join(mailDir, `${id}.${kind}@example.com.eml`))), (done) => done, 15_000);

    const notification = await read('notification');
    expect(addresses(notification.to)).to.have.members(['team@example.com', 'sales@example.com']);
    expect(addresses(notification.replyTo)).to.deep.equal(['ann@example.org']);
    expect(notification.cc).to.equal(undefined);
    expect(notification.bcc).to.equal(undefined);
    expect([...notification.headers.keys()].filter((k) => /^(bcc|cc)$/i.test(k))).to.deep.equal([]);
    expect(notification.subject).to.equal(`New submission: Contact ${HTML} ${SCRIPT_END}`);
    expectInert(notification.html as string);
    expect(notification.text).to.include(`Name: Ann ${HTML} Bcc: victim@evil.test`);

    const autoreply = await read('autoreply');
    expect(addresses(autoreply.to)).to.deep.equal(['ann@example.org']);
    expect(autoreply.bcc).to.equal(undefined);
    expect(autoreply.subject).to.equal(`Thank you, Ann ${HTML} Bcc: victim@evil.test`);
    expectInert(autoreply.html as string);
    expect(autoreply.html).to.include('[x](javascript:alert(1))');
  });

  it('sends no autoreply and no Reply-To to a value that is not one plain address (a value the log holds from before its check)', async () => {
    const form = parseContactFormSettings(contactForm(), { contentLocales: { locales: ['en', 'ja'], defaultLocale: 'en' } }) as unknown as Parameters<typeof composeNotification>[0];
    const context: NoticeContext = { formId: 'f', submissionId: '9d0c6c4e-3c39-4d43-9d9e-8f6a0b0f2b51', receivedAt: '2026-12-01T10:00:00.000Z', locale: 'en', defaultLocale: 'en', mailFrom: 'Shop <shop@example.com>', consoleLink: 'https://annals.example/console' };
    const transport = new EmlFileTransport(path.join(tempDir(), 'mail'));
    for (const email of ['ann@example.org\r\nBcc: victim@evil.test', '"Ann" <ann@example.org>, victim@evil.test', 'ann@example.org; victim@evil.test', 'victim@evil.test (Ann)']) {
      const values = { name: 'Ann', email, message: 'Hi' };
      expect(composeAutoreply(form, values, context), email).to.equal(null);
      const notification = composeNotification(form, values, context);
      expect(notification.replyTo, email).to.equal(undefined);
      await transport.send(notification);
      const parsed = await simpleParser(fs.readFileSync(path.join(transport.dir, `${context.submissionId}.notification@example.com.eml`)));
      expect([...addresses(parsed.to), ...addresses(parsed.replyTo), ...addresses(parsed.bcc)], email).to.not.include('victim@evil.test');
      await transport.discard([notification.messageId]);
    }
  });
});
