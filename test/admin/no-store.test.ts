import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { startPublicFixture, type PublicFixture } from '../public/support.ts';
import { createArticleFormSet, PASSWORD } from './support.ts';
import { contactForm, submit } from '../contact-forms/support.ts';
import { png } from '../media/support.ts';

interface Operation {
  method: string;
  template: string;
  operationId: string;
}

/**
 * Issue 41 item 6: every answer of the admin API, success or error, carries `Cache-Control: no-store` (a
 * session token, a key shown once, the list of keys, drafts): one request to each operation of the served
 * OpenAPI document, with real ids where the project has them, so that most of them succeed.
 */
describe('admin API: Cache-Control no-store on every answer', function () {
  this.timeout(120_000);
  let f: PublicFixture;
  const known: Record<string, string> = {};

  before(async () => {
    f = await startPublicFixture();
    const token = await f.sessionToken();
    const session = { token, headers: { 'x-project-id': f.project.projectId } };
    known['formSetId'] = await createArticleFormSet(f);
    const entry = await f.call('POST', `/form-sets/${known['formSetId']}/entries`, { body: { slug: 'hello', fields: { title: 'Hello' } } });
    expect(entry.status, JSON.stringify(entry.body)).to.equal(201);
    known['entryId'] = entry.body.entry.id;
    known['revisionId'] = entry.body.revision.id;
    known['slug'] = 'hello';
    const master = await f.call('POST', '/master-entities', { body: { key: 'colour', name: 'Colour', records: [{ value: 'red', labels: { en: 'Red' } }] } });
    expect(master.status, JSON.stringify(master.body)).to.equal(201);
    known['masterId'] = master.body.id;
    known['value'] = 'red';
    const form = await f.call('POST', '/contact-forms', { body: contactForm() });
    expect(form.status, JSON.stringify(form.body)).to.equal(201);
    known['formId'] = form.body.id;
    const submitted = await submit(f.pinnedBase, 'contact', { name: 'Ada', email: 'ada@example.com', message: 'Hello' });
    expect(submitted.status, JSON.stringify(submitted.body)).to.equal(200);
    known['submissionId'] = submitted.body.submissionId;
    const hook = await f.call('POST', '/webhooks', { ...session, body: { name: 'Site', url: 'https://93.184.216.34/hook', events: ['entry.published'] } });
    expect(hook.status, JSON.stringify(hook.body)).to.equal(201);
    known['webhookId'] = hook.body.id;
    const media = await f.call('POST', '/media', { body: { base64: (await png(4, 4)).toString('base64'), fileName: 'dot.png' } });
    expect(media.status, JSON.stringify(media.body)).to.equal(201);
    known['assetId'] = media.body.id;
    const key = await f.call('POST', '/keys', { ...session, body: { type: 'agent', name: 'Spare' } });
    expect(key.status, JSON.stringify(key.body)).to.equal(201);
    known['keyId'] = key.body.id;
    known['userId'] = f.project.userId;
    known['projectId'] = f.project.projectId;
    known['id'] = 'blog';
    known['name'] = 'public-content';
    await f.settle();
  });
  after(() => f?.stop());

  it('answers every operation of the admin document with no-store', async () => {
    const document = (await (await fetch(`${f.service.url}/admin/v1/openapi.json`)).json()) as { paths: Record<string, Record<string, { operationId: string }>> };
    const operations: Operation[] = Object.entries(document.paths).flatMap(([template, methods]) => Object.entries(methods).map(([method, op]) => ({ method: method.toUpperCase(), template, operationId: op.operationId })));
    // Deletions and sign-out last, so that what they take away is not missed by the operations before them.
    const last = (op: Operation) => (op.operationId === 'logout' ? 2 : Number(op.method === 'DELETE'));
    operations.sort((a, b) => last(a) - last(b));
    expect(operations.length).to.be.greaterThan(100);

    const token = await f.sessionToken();
    // A valid body where one matters for this test: the answers that hold secrets.
    const bodies: Record<string, unknown> = { login: { email: f.project.adminEmail, password: PASSWORD }, issueKey: { type: 'agent', name: 'Another' } };
    const missing: string[] = [];
    const statuses: Record<string, number> = {};
    for (const op of operations) {
      const path = op.template.replace(/\{([^}]+)\}/g, (_all, name: string) => encodeURIComponent(known[name] ?? randomUUID()));
      const body = bodies[op.operationId] ?? (op.method === 'GET' || op.method === 'DELETE' ? undefined : {});
      const response = await fetch(`${f.service.url}/admin/v1${path}`, {
        method: op.method,
        headers: {
          authorization: `Bearer ${token}`,
          'x-project-id': f.project.projectId,
          ...(op.operationId === 'mcp' ? { accept: 'application/json, text/event-stream' } : {}),
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(op.operationId === 'mcp' ? { jsonrpc: '2.0', id: 1, method: 'tools/list' } : body) }),
      });
      await response.arrayBuffer();
      statuses[op.operationId] = response.status;
      const cacheControl = response.headers.get('cache-control') ?? '(none)';
      if (cacheControl !== 'no-store') missing.push(`${op.method} ${op.template} answered ${response.status} with Cache-Control: ${cacheControl}`);
    }
    expect(missing, missing.join('\n')).to.deep.equal([]);
    // Successes as well as errors were checked: the requests reached their handlers.
    const succeeded = Object.values(statuses).filter((status) => status < 300).length;
    expect(succeeded, JSON.stringify(statuses)).to.be.greaterThan(60);
    for (const operationId of ['login', 'issueKey', 'listKeys', 'getEntry', 'issuePreviewToken', 'getContactSubmission']) expect(statuses[operationId], operationId).to.be.within(200, 299);
  });
});
