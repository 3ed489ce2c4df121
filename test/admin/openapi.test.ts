import { expect } from 'chai';
import SwaggerParser from '@apidevtools/swagger-parser';
import { startAdminFixture, type AdminFixture } from './support.ts';

describe('admin API: the OpenAPI document', function () {
  this.timeout(60_000);
  let f: AdminFixture;
  before(async () => {
    f = await startAdminFixture();
  });
  after(async () => {
    await f.stop();
  });

  it('is served without credentials at /admin/v1/openapi.json and passes a real OpenAPI 3.1 validator', async () => {
    const response = await fetch(`${f.service.url}/admin/v1/openapi.json`);
    expect(response.status).to.equal(200);
    const document = (await response.json()) as { openapi: string; paths: Record<string, Record<string, { operationId: string }>> };
    expect(document.openapi).to.equal('3.1.0');
    await SwaggerParser.validate(structuredClone(document) as never);
    // The spec's named routes are there at exactly those paths.
    expect(document.paths['/form-sets']?.['get']?.operationId).to.equal('listFormSets');
    expect(document.paths['/form-sets/{formSetId}/entries']?.['post']?.operationId).to.equal('createEntry');
    expect(document.paths['/revisions/{revisionId}/publish']?.['post']?.operationId).to.equal('publishRevision');
    expect(document.paths['/form-blueprints/apply']?.['post']?.operationId).to.be.a('string');
    // Template ids are words, not UUIDs, and are documented as such.
    const template = document.paths['/form-set-templates/{id}/apply']?.['post'] as unknown as { parameters: Array<{ name: string; schema: { format?: string } }> };
    expect(template.parameters.find((p) => p.name === 'id')?.schema.format).to.equal(undefined);
  });

  it('documents every request body with the schema that validates it', async () => {
    const document = (await (await fetch(`${f.service.url}/admin/v1/openapi.json`)).json()) as {
      paths: Record<string, Record<string, { requestBody?: { content: { 'application/json': { schema: { properties: Record<string, unknown>; required?: string[] } } } } }>>;
    };
    const createEntry = document.paths['/form-sets/{formSetId}/entries']!['post']!.requestBody!.content['application/json'].schema;
    expect(Object.keys(createEntry.properties)).to.include.members(['slug', 'fields', 'importPath', 'external', 'idempotencyKey']);
    // What the schema says is what the route enforces: externalId over 2000 characters is refused.
    const formSet = await f.call('POST', '/form-sets', { body: { slug: 'docs', name: 'Docs', fields: [{ key: 'title', type: 'text', label: 'Title', required: true }] } });
    const tooLong = await f.call('POST', `/form-sets/${formSet.body.id}/entries`, { body: { slug: 'x', fields: { title: 'x' }, external: { externalId: 'x'.repeat(2001) } } });
    expect(tooLong.status).to.equal(400);
    expect(tooLong.body.error.message).to.match(/^external\.externalId: at most 2000 characters/);
  });
});
