import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { collect } from '../../src/event-store/event-store.ts';
import { ReadModelReader } from '../../src/read-models/read-model-reader.ts';
import { startAdminFixture, OPERATOR, type AdminFixture } from '../admin/support.ts';
import { tempDir } from '../support/temp-dir.ts';
import { adminSession, PASSWORD, UUID } from './support.ts';

/** Webhook administration over HTTP: CRUD, validation, the SSRF guard at creation, plan and role gates, and the secret shown once. */
describe('webhooks: admin API', function () {
  this.timeout(60_000);
  let f: AdminFixture;
  let session: { token: string; headers: Record<string, string> };
  const dataDir = path.join(tempDir(), 'data');
  const call = (method: string, route: string, body?: unknown, as = session) => f.call(method, route, { token: as.token, headers: as.headers, ...(body === undefined ? {} : { body }) });
  const valid = { name: 'Site rebuild', url: 'https://hooks.example.com/annals?team=web', events: ['entry.published', 'entry.updated'] };

  before(async () => {
    // No OUTBOUND_ALLOWLIST: loopback and private receivers are refused. hooks.example.com resolves
    // nowhere here, so the allowed cases use a public IP literal.
    f = await startAdminFixture({ plan: 'standard', dataDir });
    session = await adminSession(f);
  });
  after(async () => {
    await f?.stop();
  });

  describe('create, read, list, update, delete', () => {
    let secret: string;
    let id: string;

    it('creates a webhook and shows its signing secret in that response only', async () => {
      const created = await call('POST', '/webhooks', { ...valid, url: 'https://93.184.216.34/annals?team=web', description: 'Rebuilds the site' });
      expect(created.status, JSON.stringify(created.body)).to.equal(201);
      expect(created.headers.get('cache-control')).to.equal('no-store');
      expect(created.body).to.include({ name: 'Site rebuild', url: 'https://93.184.216.34/annals?team=web', description: 'Rebuilds the site', enabled: true });
      expect(created.body.events).to.deep.equal(['entry.published', 'entry.updated']);
      expect(created.body.id).to.match(UUID);
      expect(created.body.secret).to.match(/^whsec_[A-Za-z0-9_-]{43}$/);
      secret = created.body.secret;
      id = created.body.id;
    });

    it('never shows the secret again: read, list, update', async () => {
      const read = await call('GET', `/webhooks/${id}`);
      expect(read.status).to.equal(200);
      expect(read.body).to.not.have.property('secret');
      expect(Object.keys(read.body).sort()).to.deep.equal(['createdAt', 'description', 'enabled', 'events', 'id', 'name', 'updatedAt', 'url']);
      const list = await call('GET', '/webhooks');
      expect(list.body.items.map((w: { id: string }) => w.id)).to.include(id);
      const updated = await call('PATCH', `/webhooks/${id}`, { name: 'Renamed', events: ['master.published', 'entry.deleted'], enabled: false, description: null });
      expect(updated.status, JSON.stringify(updated.body)).to.equal(200);
      expect(updated.body).to.include({ name: 'Renamed', enabled: false, description: null, url: 'https://93.184.216.34/annals?team=web' });
      // Kept in the spec's order.
      expect(updated.body.events).to.deep.equal(['entry.deleted', 'master.published']);
      for (const body of [read.body, list.body, updated.body]) expect(JSON.stringify(body)).to.not.include(secret);
    });

    it('keeps the secret sealed (AES-256-GCM) in the event log, the read models and their files', async () => {
      const events = await collect(f.service.log.readAll());
      const created = events.find((e) => e.type === 'webhook.created' && (e.data as { webhookId: string }).webhookId === id)!;
      expect((created.data as { sealedSecret: string }).sealedSecret).to.match(/^v1\.[0-9a-f]{8}\./);
      expect(JSON.stringify(events.map((e) => [e.data, e.metadata]))).to.not.include(secret);
      const doc = await new ReadModelReader(f.service.stores.readModels).get('webhooks', 'webhooks', id);
      expect(JSON.stringify(doc)).to.not.include(secret);
      for (const file of fs.readdirSync(dataDir)) {
        const full = path.join(dataDir, file);
        if (fs.statSync(full).isFile()) expect(fs.readFileSync(full).includes(Buffer.from(secret)), file).to.equal(false);
      }
      // The key it is sealed with was generated on the embedded default, readable by the owner only.
      expect(fs.statSync(path.join(dataDir, 'secrets-key')).mode & 0o777).to.equal(0o600);
    });

    it('deletes: 204, then 404 and gone from the list', async () => {
      expect((await call('DELETE', `/webhooks/${id}`)).status).to.equal(204);
      expect((await call('GET', `/webhooks/${id}`)).status).to.equal(404);
      expect((await call('DELETE', `/webhooks/${id}`)).status).to.equal(404);
      expect((await call('PATCH', `/webhooks/${id}`, { name: 'x' })).status).to.equal(404);
      expect((await call('GET', '/webhooks')).body.items.map((w: { id: string }) => w.id)).to.not.include(id);
      expect((await call('GET', '/webhooks/not-a-uuid')).status).to.equal(404);
    });
  });

  describe('validation', () => {
    const refused: Array<[string, Record<string, unknown>, RegExp]> = [
      ['an http:// URL', { url: 'http://93.184.216.34/hook' }, /^url: http:\/\/ URLs are refused/],
      ['another scheme', { url: 'ftp://93.184.216.34/hook' }, /^url: the ftp scheme is not allowed/],
      ['credentials in the URL', { url: 'https://user:pw@93.184.216.34/hook' }, /^url: must not contain a user name or password/],
      ['a fragment', { url: 'https://93.184.216.34/hook#x' }, /^url: must not contain a fragment/],
      ['not a URL', { url: 'hooks' }, /^url: not an absolute URL/],
      ['no events', { events: [] }, /^events: subscribe to at least one/],
      ['an unknown event', { events: ['entry.created'] }, /^events: "entry.created" is not a webhook event/],
      ['an empty name', { name: '  ' }, /^name: must not be empty/],
      ['a long name', { name: 'n'.repeat(101) }, /^name: at most 100 characters/],
      ['a missing url', { url: undefined }, /^url: required/],
      ['enabled not a boolean', { enabled: 'yes' }, /^enabled: /],
    ];
    for (const [what, change, message] of refused) {
      it(`refuses ${what} with 400 VALIDATION_ERROR`, async () => {
        const response = await call('POST', '/webhooks', { ...valid, url: 'https://93.184.216.34/hook', ...change });
        expect(response.status, JSON.stringify(response.body)).to.equal(400);
        expect(response.body.error.code).to.equal('VALIDATION_ERROR');
        expect(response.body.error.message).to.match(message);
      });
    }

    it('refuses an update to an http:// URL and keeps the webhook as it was', async () => {
      const created = await call('POST', '/webhooks', { ...valid, url: 'https://93.184.216.34/keep' });
      const response = await call('PATCH', `/webhooks/${created.body.id}`, { url: 'http://93.184.216.34/keep' });
      expect(response.status).to.equal(400);
      expect((await call('GET', `/webhooks/${created.body.id}`)).body.url).to.equal('https://93.184.216.34/keep');
      await call('DELETE', `/webhooks/${created.body.id}`);
    });
  });

  describe('SSRF guard at creation', () => {
    const cases: Array<[string, RegExp]> = [
      ['https://127.0.0.1/hook', /^url: 127\.0\.0\.1 is a loopback address/],
      ['https://10.1.2.3/hook', /^url: 10\.1\.2\.3 is a private address/],
      ['https://169.254.169.254/latest/meta-data', /^url: 169\.254\.169\.254 is a cloud metadata address/],
      ['https://[::1]:8443/hook', /^url: ::1 is a loopback address/],
      ['https://[::ffff:10.0.0.1]/hook', /^url: .* is a private address \(IPv4-mapped 10\.0\.0\.1\)/],
      ['https://localhost:8443/hook', /^url: localhost resolves to (127\.0\.0\.1|::1), which is a loopback address/],
      ['https://nowhere.invalid/hook', /^url: nowhere\.invalid could not be resolved/],
    ];
    for (const [url, message] of cases) {
      it(`refuses ${url}`, async () => {
        const response = await call('POST', '/webhooks', { ...valid, url });
        expect(response.status, JSON.stringify(response.body)).to.equal(400);
        expect(response.body.error.code).to.equal('VALIDATION_ERROR');
        expect(response.body.error.message).to.match(message);
      });
    }

    it('refuses an update to a private address', async () => {
      const created = await call('POST', '/webhooks', { ...valid, url: 'https://93.184.216.34/x' });
      const response = await call('PATCH', `/webhooks/${created.body.id}`, { url: 'https://192.168.0.10/x' });
      expect(response.status).to.equal(400);
      expect(response.body.error.message).to.match(/^url: 192\.168\.0\.10 is a private address/);
      await call('DELETE', `/webhooks/${created.body.id}`);
    });
  });

  describe('who may', () => {
    it('agent keys are refused whatever their scope (webhooks are not part of any)', async () => {
      const response = await f.call('GET', '/webhooks');
      expect(response.status).to.equal(403);
      expect(response.body.error.code).to.equal('FORBIDDEN');
      expect((await f.call('POST', '/webhooks', { body: valid })).status).to.equal(403);
    });

    it('a tenant_user session is refused', async () => {
      const email = `editor-${Date.now()}@example.com`;
      expect((await call('POST', '/users', { email, password: PASSWORD, role: 'tenant_user' })).status).to.equal(201);
      const login = await fetch(`${f.service.url}/admin/v1/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email, password: PASSWORD }) });
      const { token } = (await login.json()) as { token: string };
      const response = await call('GET', '/webhooks', undefined, { token, headers: session.headers });
      expect(response.status).to.equal(403);
      expect(response.body.error.code).to.equal('FORBIDDEN');
    });

    it('another tenant cannot see or touch this project\'s webhooks', async () => {
      const mine = await call('POST', '/webhooks', { ...valid, url: 'https://93.184.216.34/mine' });
      const other = await f.access.bootstrap(OPERATOR, { projectName: 'Other', plan: 'standard', adminEmail: `other-${Date.now()}@example.com`, adminPassword: PASSWORD, contentLocales: { locales: ['en'], defaultLocale: 'en' } });
      await f.service.supervisor!.waitFor(other.position, 5000);
      const login = await fetch(`${f.service.url}/admin/v1/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: other.adminEmail, password: PASSWORD }) });
      const { token } = (await login.json()) as { token: string };
      const as = { token, headers: { 'X-Project-Id': other.projectId } };
      expect((await call('GET', `/webhooks/${mine.body.id}`, undefined, as)).status).to.equal(404);
      expect((await call('DELETE', `/webhooks/${mine.body.id}`, undefined, as)).status).to.equal(404);
      expect((await call('POST', `/webhooks/${mine.body.id}/test`, {}, as)).status).to.equal(404);
      expect((await call('GET', '/webhooks', undefined, as)).body.items).to.deep.equal([]);
      await call('DELETE', `/webhooks/${mine.body.id}`);
    });

    it(`allows at most 20 webhooks per project`, async () => {
      const existing = (await call('GET', '/webhooks')).body.items.length;
      const ids: string[] = [];
      for (let i = existing; i < 20; i++) ids.push((await call('POST', '/webhooks', { ...valid, url: `https://93.184.216.34/n${i}` })).body.id);
      const refused = await call('POST', '/webhooks', { ...valid, url: 'https://93.184.216.34/too-many' });
      expect(refused.status).to.equal(400);
      expect(refused.body.error.message).to.match(/already has 20 webhooks/);
      for (const id of ids) await call('DELETE', `/webhooks/${id}`);
    });

    it('documents the routes in the OpenAPI document', async () => {
      const document = (await fetch(`${f.service.url}/admin/v1/openapi.json`).then((r) => r.json())) as { paths: Record<string, Record<string, unknown>> };
      expect(Object.keys(document.paths['/webhooks']!)).to.have.members(['get', 'post']);
      expect(Object.keys(document.paths['/webhooks/{webhookId}']!)).to.have.members(['get', 'patch', 'delete']);
      expect(document.paths).to.include.keys('/webhooks/{webhookId}/deliveries', '/webhooks/{webhookId}/deliveries/{deliveryId}', '/webhooks/{webhookId}/deliveries/{deliveryId}/redeliver', '/webhooks/{webhookId}/test');
    });
  });

  describe('plan', () => {
    it('below Standard, every webhook route answers 403 PLAN_REQUIRED', async () => {
      const free = await startAdminFixture({ plan: 'free' });
      try {
        const as = await adminSession(free);
        for (const [method, route, body] of [
          ['GET', '/webhooks', undefined],
          ['POST', '/webhooks', valid],
          ['GET', '/webhooks/00000000-0000-4000-8000-000000000000', undefined],
          ['POST', '/webhooks/00000000-0000-4000-8000-000000000000/test', {}],
        ] as const) {
          const response = await free.call(method, route, { token: as.token, headers: as.headers, ...(body === undefined ? {} : { body }) });
          expect(response.status, `${method} ${route}`).to.equal(403);
          expect(response.body.error.code).to.equal('PLAN_REQUIRED');
          expect(response.body.error.message).to.equal('Webhooks requires the Standard plan or above; this project is on Free.');
        }
      } finally {
        await free.stop();
      }
    });
  });
});
