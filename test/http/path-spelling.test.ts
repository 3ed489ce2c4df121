import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { startAdminFixture, type AdminFixture } from '../admin/support.ts';
import { isErrorEnvelope, rawRequest } from '../support/raw-http.ts';
import { nonCanonicalPathReason } from '../../src/http/middleware/canonical-path.ts';

interface Operation {
  method: string;
  /** The path with its parameters filled in, relative to the base. */
  path: string;
  open: boolean;
}

/** Every operation of an OpenAPI document, with path parameters filled by a UUID (or a word for text params). */
function operations(document: { paths: Record<string, Record<string, { security?: unknown[]; parameters?: Array<{ in: string; name: string; schema?: { format?: string } }> }>> }): Operation[] {
  const out: Operation[] = [];
  for (const [template, methods] of Object.entries(document.paths)) {
    for (const [method, operation] of Object.entries(methods)) {
      const path = template.replace(/\{([^}]+)\}/g, (_all, name: string) => {
        const parameter = operation.parameters?.find((p) => p.in === 'path' && p.name === name);
        return parameter?.schema?.format === 'uuid' || /Id$/.test(name) ? randomUUID() : 'blog';
      });
      out.push({ method: method.toUpperCase(), path, open: Array.isArray(operation.security) && operation.security.length === 0 });
    }
  }
  return out;
}

/** The path of `base + path` spelled the ways an attacker would: other case, encoded slashes, dot segments, double slashes. */
function misspellings(base: string, path: string): string[] {
  const full = `${base}${path}`;
  const [, first = '', ...rest] = path.split('/');
  const capitalised = `/${first.charAt(0).toUpperCase()}${first.slice(1)}${rest.length ? `/${rest.join('/')}` : ''}`;
  const [baseHead, ...baseTail] = base.slice(1).split('/');
  return [
    full.toUpperCase(),
    `/${baseHead!.charAt(0).toUpperCase()}${baseHead!.slice(1)}/${baseTail.join('/')}${path}`,
    `/${baseHead}/${baseTail.map((s) => s.toUpperCase()).join('/')}${path}`,
    `${base}${capitalised}`,
    `${base}%2F${path.slice(1)}`,
    `/${baseHead}%2f${baseTail.join('/')}${path}`,
    `${base}${path.replace(/\/(?=[^/]*$)/, '%2F')}`,
    `${base}/.${path}`,
    `${base}/zz/..${path}`,
    `${base}/%2e${path}`,
    `${base}/zz/%2E%2e${path}`,
    `${base}/${path}`,
    `/${full}`,
    `${base}${path.replace(/\/(?=[^/]*$)/, '//')}`,
  ];
}

describe('HTTP: authentication does not depend on how a path is spelled (issue 12 item 1)', function () {
  this.timeout(180_000);
  let f: AdminFixture;
  let admin: Operation[];
  let publicOps: Operation[];
  let publicKey: string;

  before(async () => {
    f = await startAdminFixture();
    admin = operations((await (await fetch(`${f.service.url}/admin/v1/openapi.json`)).json()) as never);
    publicOps = operations((await (await fetch(`${f.service.url}/public/v1/openapi.json`)).json()) as never);
    publicKey = f.project.publicKey.key;
    expect(admin.length).to.be.greaterThan(80);
  });
  after(() => f.stop());

  it('every admin route answers 401 without credentials when spelled as documented', async () => {
    for (const op of admin.filter((o) => !o.open)) {
      const response = await rawRequest(f.service.url, op.method, `/admin/v1${op.path}`);
      expect(response.status, `${op.method} ${op.path}`).to.equal(401);
      expect(isErrorEnvelope(response.json), `${op.method} ${op.path}`).to.equal(true);
    }
  });

  it('every admin route, in odd casings, with encoded slashes, dot segments and double slashes, never reaches a handler', async () => {
    const seen = new Map<number, number>();
    for (const op of admin) {
      for (const path of misspellings('/admin/v1', op.path)) {
        for (const headers of [{}, { authorization: `Bearer ${f.project.agentKey.key}` }] as Array<Record<string, string>>) {
          const response = await rawRequest(f.service.url, op.method, path, { headers: { ...headers, 'content-type': 'application/json' }, body: '{}' });
          const where = `${op.method} ${path}${headers['authorization'] ? ' (with a key)' : ''}: ${response.status} ${response.text.slice(0, 200)}`;
          seen.set(response.status, (seen.get(response.status) ?? 0) + 1);
          // Refused before routing (400: the path is not in canonical form) or not a route at all (404).
          expect(response.status, where).to.be.oneOf([400, 404]);
          expect(isErrorEnvelope(response.json), where).to.equal(true);
        }
      }
    }
    expect(seen.get(400), 'non-canonical paths are named as such').to.be.greaterThan(0);
  });

  it('public routes on the key-resolved base, misspelled, answer 400 or 404 and never 5xx', async () => {
    for (const op of publicOps) {
      for (const path of misspellings('/public/v1', op.path)) {
        const response = await rawRequest(f.service.url, op.method, path, { headers: { 'x-service-public-api-key': publicKey, 'content-type': 'application/json' }, body: op.method === 'GET' ? undefined : '{}' });
        const where = `${op.method} ${path}: ${response.status} ${response.text.slice(0, 200)}`;
        expect(response.status, where).to.be.oneOf([400, 404]);
        expect(isErrorEnvelope(response.json), where).to.equal(true);
      }
    }
  });

  it('health routes and the project-pinned base are matched case-sensitively too', async () => {
    for (const path of ['/HEALTHZ', '/Readyz', `/PUBLIC/P/${f.project.projectId}/V1/llms.txt`, `/public/p/${f.project.projectId}/V1/sitemap.xml`]) {
      const response = await rawRequest(f.service.url, 'GET', path);
      expect(response.status, path).to.equal(404);
      expect(isErrorEnvelope(response.json), path).to.equal(true);
    }
  });
});

describe('HTTP: canonical request paths', () => {
  it('names what makes a path non-canonical, and lets documented paths through', () => {
    for (const path of ['/admin/v1/form-sets', '/public/v1/form-sets/blog/entries/a.b', '/public/v1/content/by-path', '/a%20b', '/', '/admin/v1/master-entities/x/records/v1.2', '/healthz']) {
      expect(nonCanonicalPathReason(path), path).to.equal(null);
    }
    const refused: Array<[string, RegExp]> = [
      ['/admin//v1', /empty segment/],
      ['/admin/v1/./x', /dot segment/],
      ['/admin/v1/x/..', /dot segment/],
      ['/admin/v1/%2E%2e/x', /dot segment/],
      ['/admin%2Fv1', /encoded slash/],
      ['/admin%5cv1', /encoded slash/],
      ['/admin\\v1', /backslash/],
      ['/a%zz', /malformed percent/],
      ['/a%ff', /not UTF-8/],
      ['/a%00b', /control character/],
      ['admin', /start with \//],
    ];
    for (const [path, reason] of refused) expect(nonCanonicalPathReason(path), path).to.match(reason);
  });
});
