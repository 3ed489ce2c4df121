import { expect } from 'chai';
import SwaggerParser from '@apidevtools/swagger-parser';
import { startAdminFixture, type AdminFixture } from '../admin/support.ts';

describe('public API: the OpenAPI document', function () {
  this.timeout(60_000);
  let f: AdminFixture;
  before(async () => {
    f = await startAdminFixture();
  });
  after(() => f.stop());

  it('is served at /public/v1/openapi.json without a project, with CORS, and passes a real OpenAPI 3.1 validator', async () => {
    const response = await fetch(`${f.service.url}/public/v1/openapi.json`);
    expect(response.status).to.equal(200);
    expect(response.headers.get('access-control-allow-origin')).to.equal('*');
    const document = (await response.json()) as { openapi: string; paths: Record<string, Record<string, any>> };
    expect(document.openapi).to.equal('3.1.0');
    await SwaggerParser.validate(structuredClone(document) as never);
    for (const path of [
      '/form-sets/{slug}',
      '/form-sets/{formSetSlug}/entries',
      '/form-sets/{formSetSlug}/entries/{entrySlug}',
      '/form-sets/{formSetSlug}/entries/{entrySlug}/schema.json',
      '/form-sets/{formSetSlug}/entries/{entrySlug}/ogp.json',
      '/content/by-path',
      '/content/by-slug',
      '/content/by-external-id',
      '/preview/revisions',
      '/master-entities',
      '/master-entities/{key}/records',
      '/sitemap.xml',
      '/form-sets/{slug}/sitemap.xml',
      '/llms.txt',
    ]) {
      expect(document.paths[path]?.['get']?.operationId, path).to.be.a('string');
    }
    expect(document.paths['/contact-forms/{slug}/submit']?.['post']?.operationId).to.equal('submitContactForm');
    expect(document.paths['/media/{assetId}']?.['get']?.operationId).to.equal('getMedia');
    // What happens when page and offset are both sent is written down.
    expect(document.paths['/form-sets/{formSetSlug}/entries']!['get'].description).to.match(/offset wins/);
  });
});
