import fs from 'node:fs';
import https from 'node:https';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { generate } from 'selfsigned';
import { startAdminFixture, type AdminFixture } from '../admin/support.ts';
import { eventually } from '../support/engine-fixture.ts';
import { tempDir } from '../support/temp-dir.ts';
import { startSmtpPeer, type ReceivedMail, type SmtpPeer } from '../mail/smtp-peer.ts';
import { adminSession, contactForm, pinnedBase, submit } from './support.ts';

/** A real HTTPS receiver for chat posts, with a certificate made now (trusted through WEBHOOK_CA_FILE). */
async function startChatReceiver() {
  const pems = await generate([{ name: 'commonName', value: 'localhost' }], {
    keySize: 2048,
    algorithm: 'sha256',
    extensions: [
      { name: 'basicConstraints', cA: true },
      { name: 'subjectAltName', altNames: [{ type: 2, value: 'localhost' }, { type: 7, ip: '127.0.0.1' }] },
    ],
  });
  const caFile = path.join(tempDir(), 'chat-ca.pem');
  fs.writeFileSync(caFile, pems.cert);
  const posts: Array<{ path: string; contentType: string | undefined; body: any }> = [];
  const server = https.createServer({ key: pems.private, cert: pems.cert }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      posts.push({ path: req.url ?? '', contentType: req.headers['content-type'], body: JSON.parse(Buffer.concat(chunks).toString('utf8')) });
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return { port: (server.address() as AddressInfo).port, caFile, posts, close: () => new Promise<void>((r) => server.close(() => r())) };
}

describe('contact forms: notices by e-mail (a real SMTP server on loopback) and chat, sent by the outbox worker', function () {
  this.timeout(120_000);
  let smtp: SmtpPeer;
  let chat: Awaited<ReturnType<typeof startChatReceiver>>;
  let f: AdminFixture;
  let dataDir: string;
  let session: { token: string; headers: Record<string, string> };
  let formId: string;
  const byMessageId = (id: string) => smtp.messages.filter((m) => m.parsed.messageId === id);
  const waitForMessage = (id: string) => eventually(async () => byMessageId(id), (list) => list.length > 0, 15_000).then((list) => list[0]!);
  const submission = (id: string, form = formId) => f.call('GET', `/contact-forms/${form}/submissions/${id}`, session);

  before(async () => {
    smtp = await startSmtpPeer();
    chat = await startChatReceiver();
    dataDir = path.join(tempDir(), 'data');
    f = await startAdminFixture({
      plan: 'standard',
      dataDir,
      env: { SMTP_URL: smtp.url, MAIL_FROM: 'Example Shop <shop@example.com>', CONTACT_SUBMIT_RATE_LIMIT: '1000', OUTBOUND_ALLOWLIST: '127.0.0.1', WEBHOOK_CA_FILE: chat.caFile },
    });
    session = await adminSession(f);
    const created = await f.call('POST', '/contact-forms', { body: contactForm({ chat_webhook_url: `https://127.0.0.1:${chat.port}/services/T1/B1/chat-token` }) });
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
    formId = created.body.id;
  });
  after(async () => {
    await f.stop();
    await smtp.close();
    await chat.close();
  });

  let first: { id: string; notification: ReceivedMail; autoreply: ReceivedMail };
  it('sends the notification to every configured recipient: all submitted values, the time, a console link, Reply-To from the reply-to field', async () => {
    const values = { name: 'Ann <b>Lee</b>', email: 'ann@example.org', company: 'Lee & Co', inquiry_type: 'support', message: 'Line one\nLine two' };
    const response = await submit(pinnedBase(f), 'contact', values);
    expect(response.status).to.equal(200);
    const id: string = response.body.submissionId;
    const notification = await waitForMessage(`<${id}.notification@example.com>`);
    expect(notification.envelope.to).to.have.members(['team@example.com', 'sales@example.com']);
    const to = notification.parsed.to;
    expect((Array.isArray(to) ? to : [to!]).flatMap((a) => a.value.map((v) => v.address))).to.have.members(['team@example.com', 'sales@example.com']);
    expect(notification.parsed.from?.value[0]).to.deep.include({ address: 'shop@example.com', name: 'Example Shop' });
    expect(notification.parsed.replyTo?.value[0]?.address).to.equal('ann@example.org');
    expect(notification.parsed.subject).to.equal('New submission: Contact us');
    const text = notification.parsed.text!;
    for (const line of ['Name: Ann <b>Lee</b>', 'E-mail: ann@example.org', 'Company: Lee & Co', 'Inquiry type: Support', 'Message:', '  Line one', '  Line two', `Submission: ${id}`]) expect(text).to.contain(line);
    const received = (await submission(id)).body.receivedAt as string;
    expect(text).to.contain(`Received: ${received}`);
    const link = `${f.service.url}/console/p/${f.project.projectId}/contact-forms/${formId}/submissions/${id}`;
    expect(text).to.contain(link);
    // The HTML part escapes what the submitter typed.
    expect(notification.parsed.html).to.contain('Ann &lt;b&gt;Lee&lt;/b&gt;').and.contain(`href="${link}"`);
    // The console link is the console's page of the submission (the console test opens it in a browser).
    const viaLink = await fetch(link, { headers: { accept: 'text/html' } });
    expect([viaLink.status, viaLink.headers.get('content-type')]).to.deep.equal([200, 'text/html; charset=utf-8']);
    const autoreply = await waitForMessage(`<${id}.autoreply@example.com>`);
    first = { id, notification, autoreply };
  });

  it('sends the autoreply as HTML to the address in the autoreply field: default locale, placeholders filled and escaped, signature', async () => {
    const { autoreply } = first;
    expect(autoreply.envelope.to).to.deep.equal(['ann@example.org']);
    expect(autoreply.parsed.subject).to.equal('Thank you, Ann <b>Lee</b>');
    expect(autoreply.parsed.headers.get('auto-submitted')).to.equal('auto-replied');
    const html = autoreply.parsed.html as string;
    expect(html).to.contain('<html lang="en">');
    expect(html).to.contain('<p>Dear Ann &lt;b&gt;Lee&lt;/b&gt;,</p>');
    expect(html).to.contain('<p>thank you for your message.<br>We will answer soon.</p>');
    expect(html).to.contain('Example Shop<br>https://shop.example.com');
    expect(html).to.not.contain('<b>Lee</b>');
    expect(autoreply.parsed.text).to.contain('Dear Ann <b>Lee</b>,').and.contain('-- \nExample Shop');
  });

  it('sends the autoreply in the submission\'s language, and falls back to the project\'s default locale where the form has no text', async () => {
    const ja = await submit(pinnedBase(f), 'contact', { name: '山田', email: 'yamada@example.jp', message: 'こんにちは' }, { query: '?locale=ja' });
    const autoreply = await waitForMessage(`<${ja.body.submissionId}.autoreply@example.com>`);
    expect(autoreply.parsed.subject).to.equal('お問い合わせありがとうございます');
    expect(autoreply.parsed.html).to.contain('<html lang="ja">').and.contain('山田 様');

    const englishOnly = (await f.call('POST', '/contact-forms', { body: contactForm({ slug: 'english-only', autoreply_subject: { en: 'Thanks' }, autoreply_body: { en: 'We got it.' }, chat_webhook_url: null }) })).body;
    const fallback = await submit(pinnedBase(f), 'english-only', { name: 'Kenji', email: 'kenji@example.jp', message: 'Hi' }, { query: '?locale=ja' });
    const mail = await waitForMessage(`<${fallback.body.submissionId}.autoreply@example.com>`);
    expect(mail.parsed.subject).to.equal('Thanks');
    expect(mail.parsed.html).to.contain('<html lang="en">').and.contain('<p>We got it.</p>');
    expect((await submission(fallback.body.submissionId, englishOnly.id)).body.locale).to.equal('ja');
  });

  it('shows the delivery status of each notice on the submission: sent with its Message-ID, or failed with the error', async () => {
    const done = await eventually(() => submission(first.id), (r) => ['notification', 'autoreply', 'chat'].every((k) => r.body.deliveries?.[k]?.status === 'sent'), 15_000);
    expect(done.body.deliveries.notification).to.include({ status: 'sent', attempts: 1, messageId: `<${first.id}.notification@example.com>`, detail: null });
    expect(done.body.deliveries.autoreply).to.include({ status: 'sent', attempts: 1, messageId: `<${first.id}.autoreply@example.com>` });
    expect(done.body.deliveries.notification.completedAt).to.be.a('string');

    smtp.refuse.add('bounce@example.org');
    const bounced = await submit(pinnedBase(f), 'contact', { name: 'Bo', email: 'bounce@example.org', message: 'Hi' });
    // A public submit does not wait for the projection: the submission may not be readable yet (404, no deliveries).
    const failed = await eventually(() => submission(bounced.body.submissionId), (r) => r.body.deliveries?.autoreply?.status === 'failed' && r.body.deliveries?.notification?.status === 'sent', 15_000);
    expect(failed.body.deliveries.autoreply.detail).to.match(/SMTP delivery via smtp:\/\/127\.0\.0\.1:\d+ failed/).and.contain('bounce@example.org');
  });

  it('posts a Slack-compatible {text} to the chat webhook over HTTPS: the form and the console link, no submitted values', async () => {
    const post = await eventually(async () => chat.posts.find((p) => JSON.stringify(p.body).includes(first.id)), (p) => p !== undefined, 15_000);
    expect(post!.path).to.equal('/services/T1/B1/chat-token');
    expect(post!.contentType).to.equal('application/json');
    expect(Object.keys(post!.body)).to.deep.equal(['text']);
    expect(post!.body.text).to.contain('"Contact us"').and.contain(`/contact-forms/${formId}/submissions/${first.id}`);
    expect(post!.body.text).to.not.contain('ann@example.org').and.not.contain('Line one');
  });

  it('refuses a chat webhook the SSRF guard does not allow when it is set, before any submission (issue 12 item 8)', async () => {
    const guarded = await f.call('POST', '/contact-forms', { body: contactForm({ slug: 'guarded', notification_emails: [], autoreply_enabled: false, chat_webhook_url: 'https://10.0.0.1/hook' }) });
    expect(guarded.status).to.equal(400);
    expect(guarded.body.error.message).to.match(/^chat_webhook_url: 10\.0\.0\.1 is a private address/);
  });

  it('sends nothing for a honeypot hit', async () => {
    const before = smtp.messages.length;
    const bot = await submit(pinnedBase(f), 'contact', { name: 'Bot', email: 'bot@example.org', message: 'spam', website: 'https://spam.example' });
    expect(bot.status).to.equal(200);
    // A real submission after it is delivered: anything the bot caused would have gone out first.
    const human = await submit(pinnedBase(f), 'contact', { name: 'Human', email: 'human@example.org', message: 'Hi' });
    await waitForMessage(`<${human.body.submissionId}.notification@example.com>`);
    await waitForMessage(`<${human.body.submissionId}.autoreply@example.com>`);
    // By the submissions they name: an earlier test's notices may still arrive meanwhile (a bounced autoreply's submission).
    const postsFor = (id: string) => chat.posts.filter((p) => JSON.stringify(p.body).includes(id)).length;
    await eventually(async () => postsFor(human.body.submissionId), (n) => n === 1, 15_000);
    expect(postsFor(bot.body.submissionId)).to.equal(0);
    expect(smtp.messages.slice(before).map((m) => m.parsed.messageId).filter((id) => id?.startsWith(`<${human.body.submissionId}`)).sort()).to.deep.equal([`<${human.body.submissionId}.autoreply@example.com>`, `<${human.body.submissionId}.notification@example.com>`]);
    expect(smtp.messages.some((m) => m.envelope.to.includes('bot@example.org') || m.parsed.messageId?.startsWith(`<${bot.body.submissionId}`))).to.equal(false);
  });

  it('sends nothing again when the read model is rebuilt from the log', async () => {
    const count = smtp.messages.length;
    const posts = chat.posts.length;
    const { ProjectionOperations } = await import('../../src/projection-engine/projection-operations.ts');
    const { projections } = await import('../../projections/index.ts');
    const { pino } = await import('pino');
    const { systemClock } = await import('../../src/clock.ts');
    const operations = new ProjectionOperations({ projections, log: f.service.log, store: f.service.stores.readModels, clock: systemClock, logger: pino({ level: 'silent' }) });
    const result = await operations.rebuild('contact-forms');
    await eventually(async () => f.service.supervisor!.liveGeneration('contact-forms'), (g) => g === result.generation, 15_000);
    // By the time the notices of a later submission have gone out, the worker has polled the rebuilt generation:
    // nothing else went out, and every status is as it was.
    const later = (await submit(pinnedBase(f), 'contact', { name: 'Later', email: 'later@example.org', message: 'After the rebuild' })).body.submissionId as string;
    await waitForMessage(`<${later}.notification@example.com>`);
    await waitForMessage(`<${later}.autoreply@example.com>`);
    await eventually(async () => chat.posts.slice(posts).length, (n) => n >= 1, 15_000);
    expect(smtp.messages.slice(count).map((m) => m.parsed.messageId).sort()).to.deep.equal([`<${later}.autoreply@example.com>`, `<${later}.notification@example.com>`]);
    expect(chat.posts.slice(posts).map((p) => JSON.stringify(p.body).includes(later))).to.deep.equal([true]);
    const after = await submission(first.id);
    expect(after.body.deliveries.notification).to.include({ status: 'sent', attempts: 1 });
    expect(after.body.deliveries.chat.status).to.equal('sent');
  });
});
