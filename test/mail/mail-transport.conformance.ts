import { expect } from 'chai';
import type { ParsedMail } from 'mailparser';
import type { MailMessage, MailTransport } from '../../src/mail/mail-transport.ts';
import { conformanceSuite, type HarnessOrPending } from '../support/conformance.ts';

/** A fresh transport and a way to read back what it delivered (the folder's files, the SMTP server's inbox). */
export interface MailHarness {
  transport: MailTransport;
  delivered(): Promise<ParsedMail[]>;
  close(): Promise<void>;
}

const message = (overrides: Partial<MailMessage> = {}): MailMessage => ({
  messageId: `<${Math.random().toString(36).slice(2)}.notification@example.com>`,
  from: 'Example Shop <shop@example.com>',
  to: ['team@example.com', 'sales@example.com'],
  replyTo: 'customer@example.org',
  subject: 'New submission: お問い合わせ',
  text: 'Name: 山田 太郎\nMessage:\n  Hello\n',
  html: '<p>Name: 山田 太郎</p>',
  date: new Date('2026-11-22T10:00:00.000Z'),
  headers: { 'X-Contact-Form': 'contact' },
  ...overrides,
});

/** The mail port's contract: every adapter (.eml files, SMTP) passes it. */
export function mailTransportConformance(title: string, harness: HarnessOrPending<MailHarness>): void {
  conformanceSuite(title, harness, ({ test, harness: h }) => {
    const fresh = () => h().create();

    test('delivers a message with its Message-ID, sender, every recipient, Reply-To, subject, text and HTML, non-ASCII intact', async () => {
      const mail = await fresh();
      try {
        const sent = message();
        const receipt = await mail.transport.send(sent);
        expect(receipt.messageId).to.equal(sent.messageId);
        expect(receipt.accepted).to.have.members(sent.to);
        expect(receipt.rejected).to.deep.equal([]);
        const [got, ...rest] = await mail.delivered();
        expect(rest).to.have.length(0);
        expect(got!.messageId).to.equal(sent.messageId);
        expect(got!.from?.value[0]?.address).to.equal('shop@example.com');
        expect((Array.isArray(got!.to) ? got!.to : [got!.to!]).flatMap((a) => a.value.map((v) => v.address))).to.have.members(sent.to);
        expect(got!.replyTo?.value[0]?.address).to.equal('customer@example.org');
        expect(got!.subject).to.equal(sent.subject);
        expect(got!.text).to.contain('山田 太郎');
        expect(got!.html).to.contain('<p>Name: 山田 太郎</p>');
        expect(got!.date?.toISOString()).to.equal('2026-11-22T10:00:00.000Z');
        expect(got!.headers.get('x-contact-form')).to.equal('contact');
      } finally {
        await mail.close();
      }
    });

    test('a line break in the subject cannot add a header', async () => {
      const mail = await fresh();
      try {
        await mail.transport.send(message({ subject: 'Hello\r\nBcc: attacker@example.net', html: undefined }));
        const [got] = await mail.delivered();
        expect(got!.headers.has('bcc')).to.equal(false);
        expect(got!.bcc).to.equal(undefined);
        expect(got!.subject).to.contain('Bcc: attacker@example.net'); // kept as text of the subject, not as a header
      } finally {
        await mail.close();
      }
    });

    test('verify() accepts a working transport', async () => {
      const mail = await fresh();
      try {
        await mail.transport.verify();
        expect(mail.transport.describe()).to.be.a('string').and.not.match(/pass/);
      } finally {
        await mail.close();
      }
    });
  });
}
