import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { articleFormSet, startAdminFixture, type AdminFixture } from '../admin/support.ts';
import { eventually } from '../support/engine-fixture.ts';
import { startSmtpPeer, type ReceivedMail, type SmtpPeer } from '../mail/smtp-peer.ts';
import { Receiver, adminSession, PASSWORD } from '../webhooks/support.ts';
import { entryStream } from '../../src/domain/content/entry/entry-events.ts';
import { reviewNoticeAttemptsStream, reviewNoticeJobId } from '../../src/domain/review-notice/review-notice-events.ts';
import { StreamNotFoundError } from '../../src/event-store/errors.ts';
import type { RecordedEvent } from '../../src/event-store/event-store.ts';
import { outboxCompletionStream } from '../../src/outbox/outbox-worker.ts';
import { ReadModelReader } from '../../src/read-models/read-model-reader.ts';

/**
 * Review notices through the outbox, e-mailed to a real SMTP server on loopback and posted to a real HTTPS
 * chat receiver: tenant_admins are told when a revision is submitted, the author when it is rejected (with the
 * reason), scheduled, approved or published; each user may opt out; nobody is told of their own action. The
 * review additions to the webhook events (entry.submitted, entry.rejected, entry.scheduled) reach only the
 * webhooks that opt in.
 */
describe('review notices: e-mail, chat and webhooks about the review workflow', function () {
  this.timeout(120_000);
  let smtp: SmtpPeer;
  let receiver: Receiver;
  let f: AdminFixture;
  let admin: { token: string; headers: Record<string, string> };
  let reviewer: { token: string; headers: Record<string, string> };
  let author: { token: string; headers: Record<string, string> };
  let quiet: { token: string; headers: Record<string, string> };
  let formSetId: string;
  let reader: ReadModelReader;
  let slugs = 0;

  const signIn = async (email: string) => {
    const login = await f.call('POST', '/auth/login', { body: { email, password: PASSWORD }, token: '' });
    expect(login.status, JSON.stringify(login.body)).to.equal(200);
    return { token: login.body.token as string, headers: { 'X-Project-Id': f.project.projectId } };
  };
  const act = async (who: { token: string; headers: Record<string, string> }, method: string, route: string, body?: unknown, status = 200) => {
    const answer = await f.call(method, route, { ...who, ...(body === undefined ? {} : { body }) });
    expect(answer.status, `${method} ${route}: ${JSON.stringify(answer.body)}`).to.equal(status);
    return answer.body;
  };
  /** A new entry saved and submitted by the author; answers its ids. */
  const submitted = async (title: string) => {
    const created = await act(author, 'POST', `/form-sets/${formSetId}/entries`, { slug: `entry-${++slugs}`, fields: { title } }, 201);
    await act(author, 'POST', `/revisions/${created.revision.id}/submit`, {});
    return { entryId: created.entry.id as string, revisionId: created.revision.id as string, slug: created.entry.slug as string };
  };
  /** Every event of a stream, none when it does not exist. */
  const eventsOf = async (streamId: string) => {
    const events: RecordedEvent[] = [];
    try {
      for await (const event of f.service.log.readStream(streamId)) events.push(event);
    } catch (error) {
      if (!(error instanceof StreamNotFoundError)) throw error;
    }
    return events;
  };
  /**
   * How the notice of `kind` about the entry ended, as the log records it: the outbox keeps a notice only while
   * it is pending; its completion event (on its own stream) says how it ended, its attempt events how often it was handed over.
   */
  const noticeOf = (entryId: string, kind: string, channel: 'mail' | 'chat' = 'mail') =>
    eventually(
      async () => {
        for (const told of await eventsOf(entryStream(entryId))) {
          const jobId = reviewNoticeJobId(told.id, channel);
          const [completed] = await eventsOf(outboxCompletionStream('review-notices', jobId));
          const d = completed?.data as { kind: string; outcome: string; messageId: string | null; recipients: number; detail: string | null } | undefined;
          if (d?.kind !== kind) continue;
          return { status: d.outcome, messageId: d.messageId, recipients: d.recipients, detail: d.detail, attempts: (await eventsOf(reviewNoticeAttemptsStream(jobId))).length };
        }
        return undefined;
      },
      (n) => n !== undefined,
      20_000,
    ).then((n) => n!);
  const mailsOf = (kind: string, revisionId: string) => smtp.messages.filter((m) => m.parsed.headers.get('x-review-notice') === kind && (m.parsed.text ?? '').includes(`/review/${revisionId}`));
  const mailOf = (kind: string, revisionId: string): Promise<ReceivedMail> => eventually(async () => mailsOf(kind, revisionId), (list) => list.length > 0, 20_000).then((list) => list[0]!);

  before(async () => {
    smtp = await startSmtpPeer();
    receiver = await Receiver.start();
    f = await startAdminFixture({
      plan: 'standard',
      env: {
        SMTP_URL: smtp.url,
        MAIL_FROM: 'Annals <annals@example.com>',
        CONSOLE_URL: 'https://console.example.com',
        OUTBOUND_ALLOWLIST: '127.0.0.1',
        WEBHOOK_CA_FILE: receiver.caFile,
        SCHEDULED_PUBLISH_INTERVAL_MS: '1000',
      },
    });
    reader = new ReadModelReader(f.service.stores.readModels, { cacheMs: 0 });
    admin = await adminSession(f);
    for (const [email, role] of [['reviewer@example.com', 'tenant_admin'], ['quiet@example.com', 'tenant_admin'], ['author@example.com', 'tenant_user']] as const) {
      await act(admin, 'POST', '/users', { email, password: PASSWORD, role }, 201);
    }
    reviewer = await signIn('reviewer@example.com');
    quiet = await signIn('quiet@example.com');
    author = await signIn('author@example.com');
    formSetId = (await act(admin, 'POST', '/form-sets', articleFormSet, 201)).id;
  });
  after(async () => {
    await f?.stop();
    await smtp?.close();
    await receiver?.close();
  });

  it('each user turns their own review notices off and on; agent keys have none; the chat webhook is a tenant_admin setting, https only, shown by host', async () => {
    expect(await act(quiet, 'GET', '/me/notice-preferences')).to.deep.equal({ reviewNotices: true });
    expect(await act(quiet, 'PUT', '/me/notice-preferences', { reviewNotices: false })).to.deep.equal({ reviewNotices: false });
    expect(await act(quiet, 'GET', '/me/notice-preferences')).to.deep.equal({ reviewNotices: false });
    const byKey = await f.call('GET', '/me/notice-preferences');
    expect(byKey.status).to.equal(403);
    expect(byKey.body.error.code).to.equal('FORBIDDEN');
    expect((await f.call('PUT', '/me/notice-preferences', { body: { reviewNotices: 'no' }, ...quiet })).status).to.equal(400);

    expect(await act(admin, 'GET', '/project/review-notices')).to.deep.equal({ chatWebhookUrl: null });
    const plain = await f.call('PUT', '/project/review-notices', { body: { chatWebhookUrl: 'http://127.0.0.1/hook' }, ...admin });
    expect(plain.status).to.equal(400);
    expect(plain.body.error.message).to.match(/https/);
    expect((await f.call('PUT', '/project/review-notices', { body: { chatWebhookUrl: receiver.url('/chat/T1/secret') }, ...author })).status).to.equal(403);
    expect((await f.call('PUT', '/project/review-notices', { body: { chatWebhookUrl: receiver.url('/chat/T1/secret') } })).status).to.equal(403);
    const set = await act(admin, 'PUT', '/project/review-notices', { chatWebhookUrl: receiver.url('/chat/T1/secret') });
    expect(set).to.deep.equal({ chatWebhookUrl: `https://127.0.0.1:${receiver.port}/…` });
    expect(JSON.stringify(await act(admin, 'GET', '/audit-log?limit=100'))).not.to.include('/chat/T1/secret');
  });

  it('a submitted revision is mailed once to every tenant_admin who has not opted out, with the title, form set, submitter and console review link; the chat channel gets a post', async () => {
    const entry = await submitted('Spring sale');
    const mail = await mailOf('submitted', entry.revisionId);
    expect(mail.envelope.to).to.have.members([f.project.adminEmail, 'reviewer@example.com']);
    expect(mail.parsed.subject).to.equal('Review requested: "Spring sale"');
    expect(mail.parsed.text).to.include('Form set: Articles');
    expect(mail.parsed.text).to.include('Submitted by: author@example.com');
    // The console's review page of the revision (console/src/app.tsx: /p/:projectId/review/:revisionId under CONSOLE_URL).
    const review = `https://console.example.com/p/${f.project.projectId}/review/${entry.revisionId}`;
    expect(mail.parsed.text).to.include(`Review it in the console: ${review}\n`);
    expect(mail.parsed.html).to.include(`href="${review}"`);
    const chat = await receiver.waitFor('/chat/T1/secret', (got) => got.some((r) => JSON.stringify(r.json).includes(entry.revisionId)));
    const post = chat.find((r) => JSON.stringify(r.json).includes(entry.revisionId))!;
    expect(post.json.text).to.include('"Spring sale" was submitted for review by author@example.com');
    const notice = await noticeOf(entry.entryId, 'submitted');
    expect(notice).to.include({ status: 'sent', attempts: 1, recipients: 2, messageId: mail.parsed.messageId });
    expect((await noticeOf(entry.entryId, 'submitted', 'chat')).status).to.equal('sent');
    // Both done, both leave the outbox: it holds only work still to do.
    await eventually(() => reader.find('review-queue', 'notices', { filter: { entryId: entry.entryId }, limit: 10 }), (pending) => pending.length === 0, 10_000);
    expect(mailsOf('submitted', entry.revisionId)).to.have.length(1);
  });

  it('the author is told of a rejection with the reason, of scheduling, of the scheduled publication and of an approval', async () => {
    const rejectedEntry = await submitted('Summer sale');
    await act(reviewer, 'POST', `/revisions/${rejectedEntry.revisionId}/reject`, { reason: 'Needs a source for the prices.' });
    const rejected = await mailOf('rejected', rejectedEntry.revisionId);
    expect(rejected.envelope.to).to.deep.equal(['author@example.com']);
    expect(rejected.parsed.subject).to.equal('Rejected: "Summer sale"');
    expect(rejected.parsed.text).to.include('Reason: Needs a source for the prices.');
    expect(rejected.parsed.text).to.include('By: reviewer@example.com');

    const scheduledEntry = await submitted('Autumn sale');
    const publishAt = new Date(Date.now() + 1500).toISOString();
    await act(reviewer, 'POST', `/revisions/${scheduledEntry.revisionId}/approve`, { publishAt });
    const scheduled = await mailOf('scheduled', scheduledEntry.revisionId);
    expect(scheduled.envelope.to).to.deep.equal(['author@example.com']);
    expect(scheduled.parsed.text).to.include(`Publish at: ${publishAt}`);
    const published = await mailOf('published', scheduledEntry.revisionId);
    expect(published.parsed.text).to.include('was published by the scheduled publisher');

    const approvedEntry = await submitted('Winter sale');
    await act(reviewer, 'POST', `/revisions/${approvedEntry.revisionId}/approve`, {});
    const approved = await mailOf('approved', approvedEntry.revisionId);
    expect(approved.parsed.subject).to.equal('Approved and published: "Winter sale"');
    for (const [entry, kind] of [[rejectedEntry, 'rejected'], [scheduledEntry, 'scheduled'], [scheduledEntry, 'published'], [approvedEntry, 'approved']] as const) {
      expect(await noticeOf(entry.entryId, kind)).to.include({ status: 'sent', attempts: 1, recipients: 1 });
      expect(mailsOf(kind, entry.revisionId)).to.have.length(1);
    }
  });

  /**
   * That no e-mail notice of `kind` about the entry was queued: the chat notice of the same event (the chat
   * webhook the first test set) is queued in the same fold and has completed, while the e-mail one is neither
   * pending nor completed, and was never handed over.
   */
  const expectNoMailNotice = async (entryId: string, kind: string) => {
    expect(await noticeOf(entryId, kind, 'chat')).to.include({ status: 'sent' });
    const told = (await eventsOf(entryStream(entryId))).filter((event) => event.type === (kind === 'submitted' ? 'entry.revision-submitted' : 'entry.revision-published'));
    expect(told).to.have.length.greaterThan(0);
    for (const event of told) {
      const jobId = reviewNoticeJobId(event.id, 'mail');
      expect(await reader.get('review-queue', 'notices', jobId), 'a pending e-mail notice').to.equal(null);
      expect(await eventsOf(outboxCompletionStream('review-notices', jobId)), 'a completed e-mail notice').to.deep.equal([]);
      expect(await eventsOf(reviewNoticeAttemptsStream(jobId)), 'an e-mail hand-over').to.deep.equal([]);
    }
  };

  it('no e-mail about one\'s own action, nor of a publication an operator wrote: not even queued; an author who opted out is recorded as skipped', async () => {
    // A tenant_admin who submits and publishes their own revision: the other admins hear of the submission, nobody of the publication.
    const created = await act(reviewer, 'POST', `/form-sets/${formSetId}/entries`, { slug: `entry-${++slugs}`, fields: { title: 'Own work' } }, 201);
    await act(reviewer, 'POST', `/revisions/${created.revision.id}/submit`, {});
    const mail = await mailOf('submitted', created.revision.id);
    expect(mail.envelope.to).to.deep.equal([f.project.adminEmail]);
    await act(reviewer, 'POST', `/revisions/${created.revision.id}/publish`, {});
    await expectNoMailNotice(created.entry.id, 'published');
    expect(mailsOf('published', created.revision.id)).to.have.length(0);

    // Who opted out is known only when the notice is due: it is queued, and recorded as skipped with the reason.
    await act(author, 'PUT', '/me/notice-preferences', { reviewNotices: false });
    const entry = await submitted('Quiet sale');
    await act(reviewer, 'POST', `/revisions/${entry.revisionId}/reject`, { reason: 'No.' });
    expect(await noticeOf(entry.entryId, 'rejected')).to.include({ status: 'skipped', detail: 'the author opted out of review notices', attempts: 0 });
    expect(mailsOf('rejected', entry.revisionId)).to.have.length(0);
    await act(author, 'PUT', '/me/notice-preferences', { reviewNotices: true });

    // A revision an operator wrote (an import, the demo content) has no console user to tell of its publication.
    const scope = { projectId: f.project.projectId, formSetId, entryId: randomUUID() };
    const revisionId = randomUUID();
    await f.service.log.append(
      entryStream(scope.entryId),
      [
        { type: 'entry.created', data: { ...scope, slug: `entry-${++slugs}` } },
        { type: 'entry.revision-saved', data: { ...scope, revisionId, revision: 1, snapshot: { title: 'Imported' }, savedAt: new Date().toISOString() } },
        { type: 'entry.revision-submitted', data: { ...scope, revisionId, revision: 1 } },
        { type: 'entry.revision-published', data: { ...scope, revisionId, revision: 1, publishedAt: new Date().toISOString(), trigger: 'publish' } },
      ],
      'no_stream',
      { actor: { type: 'operator', id: 'importer' } },
    );
    await expectNoMailNotice(scope.entryId, 'published');
    // Its submission still goes to the tenant_admins.
    expect(await noticeOf(scope.entryId, 'submitted')).to.include({ status: 'sent', recipients: 2 });
  });

  it('webhooks opt in to entry.submitted, entry.rejected and entry.scheduled (additions to the spec\'s four); a webhook of the four gets none of them', async () => {
    for (const [name, path, events] of [['review', '/review', ['entry.submitted', 'entry.rejected', 'entry.scheduled']], ['spec', '/spec', ['entry.published', 'entry.updated', 'entry.deleted', 'master.published']]] as const) {
      const created = await act(admin, 'POST', '/webhooks', { name, url: receiver.url(path), events }, 201);
      receiver.secrets.set(path, created.secret);
    }
    const entry = await submitted('Hooked');
    await act(reviewer, 'POST', `/revisions/${entry.revisionId}/reject`, { reason: 'Not yet.' });
    const resubmitted = await act(author, 'POST', `/entries/${entry.entryId}/revisions`, { fields: { title: 'Hooked again' } }, 201);
    const revisionId: string = resubmitted.id ?? resubmitted.revision.id;
    await act(author, 'POST', `/revisions/${revisionId}/submit`, {});
    const publishAt = new Date(Date.now() + 3_600_000).toISOString();
    await act(reviewer, 'POST', `/revisions/${revisionId}/approve`, { publishAt });
    const got = await receiver.waitFor('/review', (r) => r.length === 4);
    const base = { project_id: f.project.projectId, form_set_slug: 'articles', entry_slug: entry.slug, entry_id: entry.entryId };
    const withoutTime = got.map(({ json: { timestamp, ...rest } }) => rest);
    expect(withoutTime).to.deep.equal([
      { event: 'entry.submitted', ...base, revision_id: entry.revisionId },
      { event: 'entry.rejected', ...base, revision_id: entry.revisionId },
      { event: 'entry.submitted', ...base, revision_id: revisionId },
      { event: 'entry.scheduled', ...base, revision_id: revisionId, publish_at: publishAt },
    ]);
    expect(got.every((r) => r.verified)).to.equal(true);
    expect(got.map((r) => r.headers['x-service-event'])).to.deep.equal(['entry.submitted', 'entry.rejected', 'entry.submitted', 'entry.scheduled']);
    expect(receiver.received('/spec')).to.have.length(0);
  });

  it('custom roles: whoever may approve in the revision\'s form set is told of a submission (a reviewer of another form set is not)', async () => {
    const other = await act(admin, 'POST', '/form-sets', { ...articleFormSet, slug: 'press', name: 'Press' }, 201);
    const legal = await act(admin, 'POST', '/roles', { name: 'Legal reviewer', capabilities: ['content.approve'], formSetIds: [formSetId] }, 201);
    const press = await act(admin, 'POST', '/roles', { name: 'Press reviewer', capabilities: ['content.approve'], formSetIds: [other.id] }, 201);
    const editors = await act(admin, 'POST', '/roles', { name: 'Writers', capabilities: ['content.write', 'content.submit'] }, 201);
    for (const [email, roleId] of [['legal@example.com', legal.id], ['press@example.com', press.id], ['writer@example.com', editors.id]] as const) {
      await act(admin, 'POST', '/users', { email, password: PASSWORD, role: 'tenant_user', roleId }, 201);
    }
    const entry = await submitted('Terms of sale');
    const mail = await mailOf('submitted', entry.revisionId);
    expect(mail.envelope.to).to.have.members([f.project.adminEmail, 'reviewer@example.com', 'legal@example.com']);
  });
});
