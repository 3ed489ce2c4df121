import { expect } from 'chai';
import { startAdminFixture, type AdminFixture } from '../admin/support.ts';
import { eventually } from '../support/engine-fixture.ts';
import { startSmtpPeer, type ReceivedMail, type SmtpPeer } from '../mail/smtp-peer.ts';
import { Receiver, adminSession, PASSWORD } from '../webhooks/support.ts';

type Caller = { token: string; headers: Record<string, string> };

/**
 * A change of the approval policy is told: by e-mail (a real SMTP server on loopback) to every tenant_admin, the
 * one who made it and those who opted out of review notices included; posted to the review chat; and delivered
 * as the webhook event approval-policy.changed to a real HTTPS receiver that verifies its signature, only to the
 * webhooks that subscribe to it. A refused change tells nobody.
 */
describe('policy changes: every tenant_admin is told, and a webhook event fires', function () {
  this.timeout(120_000);
  let smtp: SmtpPeer;
  let receiver: Receiver;
  let f: AdminFixture;
  let admin: Caller;
  let editor: Caller;
  let adminId: string;

  const act = async (who: Caller, method: string, route: string, body?: unknown, status = 200) => {
    const answer = await f.call(method, route, { ...who, ...(body === undefined ? {} : { body }) });
    expect(answer.status, `${method} ${route}: ${JSON.stringify(answer.body)}`).to.equal(status);
    return answer.body;
  };
  const signIn = async (email: string): Promise<Caller> => {
    const login = await f.call('POST', '/auth/login', { body: { email, password: PASSWORD }, token: '' });
    expect(login.status, JSON.stringify(login.body)).to.equal(200);
    return { token: login.body.token, headers: { 'X-Project-Id': f.project.projectId } };
  };
  const policyMails = () => smtp.messages.filter((m) => m.parsed.headers.get('x-review-notice') === 'policy-changed');
  const mailAbout = (change: string): Promise<ReceivedMail> =>
    eventually(async () => policyMails().filter((m) => (m.parsed.subject ?? '').endsWith(change)), (list) => list.length > 0, 20_000).then((list) => list[0]!);

  before(async () => {
    smtp = await startSmtpPeer();
    receiver = await Receiver.start();
    f = await startAdminFixture({
      plan: 'standard',
      env: { SMTP_URL: smtp.url, MAIL_FROM: 'Annals <annals@example.com>', CONSOLE_URL: 'https://console.example.com', OUTBOUND_ALLOWLIST: '127.0.0.1', WEBHOOK_CA_FILE: receiver.caFile },
    });
    admin = await adminSession(f);
    for (const [email, role] of [['other-admin@example.com', 'tenant_admin'], ['editor@example.com', 'tenant_user']] as const) {
      await act(admin, 'POST', '/users', { email, password: PASSWORD, role }, 201);
    }
    // An admin who turned review notices off is told of policy changes all the same.
    await act(await signIn('other-admin@example.com'), 'PUT', '/me/notice-preferences', { reviewNotices: false });
    editor = await signIn('editor@example.com');
    adminId = (await act(admin, 'GET', '/users')).items.find((u: { email: string }) => u.email === f.project.adminEmail).id;
    await act(admin, 'PUT', '/project/review-notices', { chatWebhookUrl: receiver.url('/chat/policy') });
    for (const [path, events] of [['/policy', ['approval-policy.changed']], ['/entries', ['entry.published']]] as const) {
      const created = await act(admin, 'POST', '/webhooks', { name: path, url: receiver.url(path), events }, 201);
      receiver.secrets.set(path, created.secret);
    }
  });
  after(async () => {
    await f?.stop();
    await smtp?.close();
    await receiver?.close();
  });

  it('turning fourEyes on mails every tenant_admin (opted out or not, the one who did it included), posts to the chat, and delivers approval-policy.changed', async () => {
    await act(admin, 'PUT', '/project/approval-policy', { fourEyes: true });

    const mail = await mailAbout('fourEyes turned on');
    expect(mail.envelope.to).to.have.members([f.project.adminEmail, 'other-admin@example.com']);
    expect(mail.parsed.subject).to.match(/^Approval policy changed in "Project [a-z0-9]+": fourEyes turned on$/);
    expect(mail.parsed.text).to.include(`changed by ${f.project.adminEmail}: fourEyes turned on.`);
    expect(mail.parsed.text).to.include('fourEyes (whoever approves or publishes a revision is another person than its author and submitter): on (was off)');
    expect(mail.parsed.text).to.include('humanApproval (a person approves and publishes; agent keys may not, nor change live content): off (unchanged)');
    expect(mail.parsed.text).to.include(`See the audit log: https://console.example.com/p/${f.project.projectId}/audit`);

    const chat = await receiver.waitFor('/chat/policy', (got) => got.length > 0);
    expect(JSON.stringify(chat[0]!.json)).to.include('fourEyes turned on');

    const [delivery] = await receiver.waitFor('/policy', (got) => got.length === 1);
    expect(delivery!.verified).to.equal(true);
    expect(delivery!.headers['x-service-event']).to.equal('approval-policy.changed');
    const payload = delivery!.json;
    expect(payload).to.deep.equal({
      event: 'approval-policy.changed',
      project_id: f.project.projectId,
      human_approval: false,
      four_eyes: true,
      previous_human_approval: false,
      previous_four_eyes: false,
      changed_by_type: 'user',
      changed_by_id: adminId,
      timestamp: payload.timestamp,
    });
    expect(payload.timestamp).to.match(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  });

  it('turning it off again says so, and that approvals it would refuse are flagged meanwhile', async () => {
    await act(admin, 'PUT', '/project/approval-policy', { fourEyes: false });
    const mail = await mailAbout('fourEyes turned off');
    expect(mail.parsed.text).to.include('While fourEyes is off, every approval it would have refused is flagged in the audit log.');
    const deliveries = await receiver.waitFor('/policy', (got) => got.length === 2);
    expect(deliveries[1]!.json).to.deep.include({ four_eyes: false, previous_four_eyes: true });
  });

  it('a refused change and an unchanged one tell nobody; a webhook not subscribed to the event gets none', async () => {
    const before = policyMails().length;
    await act(editor, 'PUT', '/project/approval-policy', { humanApproval: true }, 403);
    await act(admin, 'PUT', '/project/approval-policy', { fourEyes: false });
    // Something later that is told, so that anything asked for before it would have been sent by now.
    await act(admin, 'PUT', '/project/approval-policy', { humanApproval: true });
    await mailAbout('humanApproval turned on');
    expect(policyMails().length).to.equal(before + 1);
    expect((await receiver.waitFor('/policy', (got) => got.length === 3)).map((r) => r.json.human_approval)).to.deep.equal([false, false, true]);
    expect(receiver.received('/entries')).to.have.length(0);
  });
});
