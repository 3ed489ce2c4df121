import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { startAdminFixture, type AdminFixture } from '../admin/support.ts';
import { runEntry } from '../support/child-process.ts';
import { tempDir } from '../support/temp-dir.ts';
import { eventually } from '../support/engine-fixture.ts';
import { documentedResponses } from '../support/openapi-responses.ts';
import { adminSession, contactForm, pinnedBase, submit } from './support.ts';

describe('contact forms: submissions in the admin API (list, read, mark, notes, erasure)', function () {
  this.timeout(120_000);
  let f: AdminFixture;
  let dataDir: string;
  let session: { token: string; headers: Record<string, string> };
  let formId: string;
  const ids: string[] = [];
  const call = (method: string, route: string, body?: unknown) => f.call(method, route, { token: session.token, headers: session.headers, ...(body === undefined ? {} : { body }) });

  before(async () => {
    dataDir = path.join(tempDir(), 'data');
    f = await startAdminFixture({ dataDir, env: { CONTACT_SUBMIT_RATE_LIMIT: '1000' } });
    session = await adminSession(f);
    formId = (await f.call('POST', '/contact-forms', { body: contactForm({ notification_emails: [], autoreply_enabled: false }) })).body.id;
    for (let i = 1; i <= 5; i++) {
      const response = await submit(pinnedBase(f), 'contact', { name: `Person ${i}`, email: `person${i}@example.org`, message: `Secret message number ${i}` });
      expect(response.status).to.equal(200);
      ids.push(response.body.submissionId);
      await new Promise((r) => setTimeout(r, 5));
    }
    await eventually(() => call('GET', `/contact-forms/${formId}/submissions`), (r) => r.body.items?.length === 5);
  });
  after(async () => {
    await f.stop();
  });

  it('lists submissions newest first, paginated, with their values opened and the unread count', async () => {
    const page1 = await call('GET', `/contact-forms/${formId}/submissions?limit=2`);
    expect(page1.status).to.equal(200);
    expect(page1.headers.get('cache-control')).to.equal('no-store');
    expect(page1.body).to.include({ unread: 5 });
    expect(page1.body.nextCursor).to.be.a('string');
    expect(page1.body.items.map((s: { id: string }) => s.id)).to.deep.equal([ids[4], ids[3]]);
    expect(page1.body.items[0].values).to.deep.equal({ name: 'Person 5', email: 'person5@example.org', message: 'Secret message number 5' });
    expect(page1.body.items[0]).to.include({ read: false, erased: false, locale: 'en', formId });
    (await documentedResponses(f.service.url))('listContactSubmissions', 200, page1.body);
    const page2 = await call('GET', `/contact-forms/${formId}/submissions?limit=2&cursor=${page1.body.nextCursor}`);
    expect(page2.body.items.map((s: { id: string }) => s.id)).to.deep.equal([ids[2], ids[1]]);
    const page3 = await call('GET', `/contact-forms/${formId}/submissions?limit=2&cursor=${page2.body.nextCursor}`);
    expect(page3.body.items.map((s: { id: string }) => s.id)).to.deep.equal([ids[0]]);
    expect(page3.body.nextCursor).to.equal(null);
    expect((await call('GET', `/contact-forms/${formId}/submissions?limit=101`)).status).to.equal(400);
  });

  it('marks submissions read and unread, and filters by it', async () => {
    const marked = await call('PATCH', `/contact-forms/${formId}/submissions/${ids[1]}`, { read: true });
    expect(marked.status).to.equal(200);
    expect(marked.body.read).to.equal(true);
    await call('PATCH', `/contact-forms/${formId}/submissions/${ids[2]}`, { read: true });
    const read = await call('GET', `/contact-forms/${formId}/submissions?read=true`);
    expect(read.body.items.map((s: { id: string }) => s.id).sort()).to.deep.equal([ids[1], ids[2]].sort());
    const unread = await call('GET', `/contact-forms/${formId}/submissions?read=false`);
    expect(unread.body.items).to.have.length(3);
    expect(unread.body.unread).to.equal(3);
    const back = await call('PATCH', `/contact-forms/${formId}/submissions/${ids[2]}`, { read: false });
    expect(back.body.read).to.equal(false);
    expect((await call('GET', `/contact-forms/${formId}/submissions?read=false`)).body.items).to.have.length(4);
  });

  it('adds internal notes, sealed like the values', async () => {
    const noted = await call('POST', `/contact-forms/${formId}/submissions/${ids[0]}/notes`, { text: 'Called back, customer prefers e-mail.' });
    expect(noted.status).to.equal(201);
    expect(noted.body.notes).to.have.length(1);
    expect(noted.body.notes[0]).to.include({ text: 'Called back, customer prefers e-mail.' });
    expect(noted.body.notes[0].author.type).to.equal('user');
    expect((await call('POST', `/contact-forms/${formId}/submissions/${ids[0]}/notes`, { text: '   ' })).status).to.equal(400);
    const raw = await rawStream(f, `contact-submission-${ids[0]}`);
    expect(raw).to.not.contain('Called back');
    expect(raw).to.not.contain('Person 1');
  });

  it('keeps submissions from agent keys (personal data: console sessions only) and from other forms\' paths', async () => {
    const byAgent = await f.call('GET', `/contact-forms/${formId}/submissions`);
    expect(byAgent.status).to.equal(403);
    const other = (await f.call('POST', '/contact-forms', { body: contactForm({ slug: 'other' }) })).body.id;
    expect((await call('GET', `/contact-forms/${other}/submissions/${ids[0]}`)).status).to.equal(404);
  });

  it('erases a submission: its key is destroyed, so neither the admin API, nor the log, nor a full rebuild shows its values again; the audit trail keeps that it existed', async () => {
    const target = ids[3]!;
    await call('POST', `/contact-forms/${formId}/submissions/${target}/notes`, { text: 'Note about Person 4' });
    // Agent keys may not erase (submissions are for console sessions; erasure for tenant admins).
    expect((await f.call('DELETE', `/contact-forms/${formId}/submissions/${target}`)).status).to.equal(403);
    const erased = await call('DELETE', `/contact-forms/${formId}/submissions/${target}`);
    expect(erased.status).to.equal(204);
    expect((await call('DELETE', `/contact-forms/${formId}/submissions/${target}`)).status).to.equal(204);

    const read = await call('GET', `/contact-forms/${formId}/submissions/${target}`);
    expect(read.status).to.equal(200);
    expect(read.body).to.include({ id: target, erased: true, values: null });
    expect(read.body.erasedAt).to.be.a('string');
    expect(read.body.notes[0].text).to.equal(null);
    expect((await call('POST', `/contact-forms/${formId}/submissions/${target}/notes`, { text: 'more' })).status).to.equal(409);
    // Others are untouched.
    expect((await call('GET', `/contact-forms/${formId}/submissions/${ids[2]}`)).body.values.name).to.equal('Person 3');

    // The raw event in the log holds ciphertext only, and the key to it is gone.
    const raw = await rawStream(f, `contact-submission-${target}`);
    expect(raw).to.contain('contact-submission.received').and.contain('contact-submission.erased');
    for (const plain of ['Person 4', 'person4@example.org', 'Secret message number 4', 'Note about Person 4']) expect(raw).to.not.contain(plain);

    // The audit trail still lists the submission's events, with who erased it.
    const audit = await call('GET', `/audit-log?limit=100`);
    expect(audit.status).to.equal(200);
    const trail = audit.body.items.filter((i: { streamId: string }) => i.streamId === `contact-submission-${target}`);
    expect(trail.map((i: { type: string }) => i.type)).to.include.members(['contact-submission.received', 'contact-submission.erased']);
    expect(trail.find((i: { type: string }) => i.type === 'contact-submission.erased').actor.type).to.equal('user');

    // A full rebuild, by the operator command, from the log alone.
    const rebuilt = await runEntry('src/cli/main.ts', ['projections', 'rebuild', 'contact-forms', '--json'], { DATA_DIR: dataDir, LOG_LEVEL: 'silent' });
    expect(rebuilt.code, rebuilt.stderr).to.equal(0);
    const [result] = JSON.parse(rebuilt.stdout) as Array<{ projection: string; generation: number }>;
    expect(result!.projection).to.equal('contact-forms');
    await eventually(async () => f.service.supervisor!.liveGeneration('contact-forms'), (g) => g === result!.generation, 15_000);
    // The API reads the generation the supervisor names live (ReadModelReader's `generations`): the rebuilt one, from now on.
    const afterRebuild = await call('GET', `/contact-forms/${formId}/submissions/${target}`);
    expect(afterRebuild.body).to.include({ erased: true, values: null });
    expect(afterRebuild.body.notes[0].text).to.equal(null);
    const kept = await call('GET', `/contact-forms/${formId}/submissions/${ids[0]}`);
    expect(kept.body.values.name).to.equal('Person 1');
    expect(kept.body.notes[0].text).to.equal('Called back, customer prefers e-mail.');
    expect(kept.body.read).to.equal(false);
    expect((await call('GET', `/contact-forms/${formId}/submissions/${ids[1]}`)).body.read).to.equal(true);
  });

  it('discards the stored .eml copies of an erased submission\'s notices (the embedded mail adapter)', async () => {
    const mailed = (await f.call('POST', '/contact-forms', { body: contactForm({ slug: 'mailed', notification_emails: ['team@example.com'] }) })).body.id;
    const response = await submit(pinnedBase(f), 'mailed', { name: 'Quinn', email: 'quinn@example.org', message: 'Please forget me.' });
    const id: string = response.body.submissionId;
    const files = () => (fs.existsSync(path.join(dataDir, 'mail')) ? fs.readdirSync(path.join(dataDir, 'mail')).filter((x) => x.startsWith(id)).sort() : []);
    await eventually(async () => files(), (list) => list.length === 2, 15_000);
    expect(files()).to.deep.equal([`${id}.autoreply@localhost.eml`, `${id}.notification@localhost.eml`]);
    expect((await call('DELETE', `/contact-forms/${mailed}/submissions/${id}`)).status).to.equal(204);
    expect(files()).to.deep.equal([]);
  });
});

async function rawStream(f: AdminFixture, streamId: string): Promise<string> {
  const out: unknown[] = [];
  for await (const event of f.service.log.store.readStream(streamId)) out.push(event);
  return JSON.stringify(out, (_, v) => (typeof v === 'bigint' ? v.toString() : v));
}
