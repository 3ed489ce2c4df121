import { expect } from 'chai';
import { startPublicFixture, type PublicFixture } from '../public/support.ts';
import { createArticleFormSet } from './support.ts';
import { contactForm, submit } from '../contact-forms/support.ts';

/**
 * Issue 41 item 5: the six creates the spec's 4.3 names as creates too take an Idempotency-Key (header or body
 * field idempotencyKey), as the other creates do: a resent key answers the same result and makes nothing
 * twice. Each one declares the header in the admin OpenAPI document.
 */
describe('admin API: the six creates honour Idempotency-Key', function () {
  this.timeout(120_000);
  let f: PublicFixture;
  let session: { token: string; headers: Record<string, string> };
  let revisionId: string;
  let formId: string;
  let submissionId: string;

  // The service's clock, moved on by hand: the system's time plus `aheadMs`.
  const clock = { aheadMs: 0, now: () => new Date(Date.now() + clock.aheadMs) };

  before(async () => {
    f = await startPublicFixture({ clock });
    session = { token: await f.sessionToken(), headers: { 'x-project-id': f.project.projectId } };
    const formSetId = await createArticleFormSet(f);
    const entry = await f.call('POST', `/form-sets/${formSetId}/entries`, { body: { slug: 'hello', fields: { title: 'Hello' } } });
    revisionId = entry.body.revision.id;
    const form = await f.call('POST', '/contact-forms', { body: contactForm() });
    formId = form.body.id;
    const submitted = await submit(f.pinnedBase, 'contact', { name: 'Ada', email: 'ada@example.com', message: 'Hello' });
    submissionId = submitted.body.submissionId;
    await f.settle();
  });
  after(() => f?.stop());

  const twice = async (route: string, body: unknown, key: string) => {
    const call = () => f.call('POST', route, { ...session, body, headers: { ...session.headers, 'idempotency-key': key } });
    const first = await call();
    const again = await call();
    return { first, again };
  };
  const count = async (route: string, pick: (body: any) => unknown[] = (b) => b.items) => pick((await f.call('GET', route, session)).body).length;

  it('declares the Idempotency-Key header on each of the six', async () => {
    const document = (await (await fetch(`${f.service.url}/admin/v1/openapi.json`)).json()) as { paths: Record<string, Record<string, { parameters?: Array<{ $ref?: string }> }>> };
    for (const path of ['/keys', '/users', '/webhooks', '/project/ip-allowlist', '/revisions/{revisionId}/preview-token', '/contact-forms/{formId}/submissions/{submissionId}/notes']) {
      expect(document.paths[path]!['post']!.parameters?.some((p) => p.$ref === '#/components/parameters/IdempotencyKey'), path).to.equal(true);
    }
  });

  it('POST /keys: the same key shown again, one key issued', async () => {
    const before = await count('/keys');
    const { first, again } = await twice('/keys', { type: 'agent', name: 'Deploy bot' }, 'issue-key-1');
    expect(first.status, JSON.stringify(first.body)).to.equal(201);
    expect(again.status).to.equal(201);
    expect(again.body).to.deep.equal(first.body);
    expect(first.body.key).to.match(/^sk-agent-/);
    expect(await count('/keys')).to.equal(before + 1);
    // And it works.
    expect((await f.call('GET', '/form-sets', { token: first.body.key })).status).to.equal(200);
  });

  it('POST /users: the same user, one user', async () => {
    const before = await count('/users');
    const { first, again } = await twice('/users', { email: 'editor@example.com', password: 'correct horse battery staple', role: 'tenant_user' }, 'create-user-1');
    expect(first.status, JSON.stringify(first.body)).to.equal(201);
    expect([again.status, again.body]).to.deep.equal([201, first.body]);
    expect(await count('/users')).to.equal(before + 1);
  });

  it('POST /webhooks: the same webhook with the same signing secret, one webhook', async () => {
    const { first, again } = await twice('/webhooks', { name: 'Site', url: 'https://93.184.216.34/hook', events: ['entry.published'] }, 'create-webhook-1');
    expect(first.status, JSON.stringify(first.body)).to.equal(201);
    expect([again.status, again.body]).to.deep.equal([201, first.body]);
    expect(first.body.secret).to.match(/^whsec_/);
    expect(await count('/webhooks')).to.equal(1);
  });

  it('POST /project/ip-allowlist: the same entry, one entry', async () => {
    const { first, again } = await twice('/project/ip-allowlist', { cidr: '127.0.0.0/8', label: 'loopback' }, 'allow-1');
    expect(first.status, JSON.stringify(first.body)).to.equal(201);
    expect([again.status, again.body]).to.deep.equal([201, first.body]);
    expect(await count('/project/ip-allowlist')).to.equal(1);
  });

  it('POST /revisions/{id}/preview-token: the same token', async () => {
    const { first, again } = await twice(`/revisions/${revisionId}/preview-token`, undefined, 'preview-1');
    expect(first.status, JSON.stringify(first.body)).to.equal(201);
    expect([again.status, again.body]).to.deep.equal([201, first.body]);
    // Another key, another token (a second later at least: the token names its second of issue).
    clock.aheadMs += 1100;
    const other = await f.call('POST', `/revisions/${revisionId}/preview-token`, { ...session, headers: { ...session.headers, 'idempotency-key': 'preview-2' } });
    expect(other.body.token).to.not.equal(first.body.token);
  });

  it('POST /contact-forms/{formId}/submissions/{id}/notes: one note, the submission answered with it both times', async () => {
    const { first, again } = await twice(`/contact-forms/${formId}/submissions/${submissionId}/notes`, { text: 'Called back on Monday.' }, 'note-1');
    expect(first.status, JSON.stringify(first.body)).to.equal(201);
    expect([again.status, again.body]).to.deep.equal([201, first.body]);
    expect(first.body.notes.map((n: { text: string }) => n.text)).to.deep.equal(['Called back on Monday.']);
    // The same key with another text is refused.
    const other = await f.call('POST', `/contact-forms/${formId}/submissions/${submissionId}/notes`, { ...session, body: { text: 'Something else.' }, headers: { ...session.headers, 'idempotency-key': 'note-1' } });
    expect(other.status).to.equal(409);
  });
});
