import path from 'node:path';
import { expect } from 'chai';
import sharp from 'sharp';
import { tempDir } from '../support/temp-dir.ts';
import { runEntry, startServiceProcess } from '../support/child-process.ts';
import { freePort } from '../support/ports.ts';
import type { DemoResult } from '../../src/application/demo-content.ts';

/** What `annals demo` prints. */
type Demo = Omit<DemoResult, 'position'>;

describe('operator CLI: annals demo', function () {
  this.timeout(120_000);

  it('creates a Business demo project with bilingual published blog entries and news in every workflow status', async () => {
    const dataDir = path.join(tempDir(), 'data');
    const port = await freePort();
    const serviceUrl = `http://127.0.0.1:${port}`;
    const run = await runEntry('src/cli/main.ts', ['demo', '--base-url', `${serviceUrl}/`], { DATA_DIR: dataDir });
    expect(run.code, run.stderr).to.equal(0);
    const demo = JSON.parse(run.stdout) as Demo;
    expect(Object.keys(demo).sort()).to.deep.equal(['adminApi', 'adminEmail', 'adminPassword', 'agentKey', 'console', 'contactForms', 'formSets', 'hostedContactPage', 'mediaAssets', 'projectId', 'publicApiKey', 'publicBase', 'sampleEntry', 'serviceUrl']);
    expect(demo.agentKey).to.match(/^sk-agent-/);
    expect(demo.publicApiKey).to.match(/^service_pub_/);
    expect(demo.formSets).to.deep.equal(['blog', 'news']);
    expect(demo.contactForms).to.deep.equal(['contact']);
    expect(demo.serviceUrl).to.equal(serviceUrl);
    expect(demo.publicBase).to.equal(`${serviceUrl}/public/p/${demo.projectId}/v1`);
    expect(demo.adminApi).to.equal(`${serviceUrl}/admin/v1`);
    expect(demo.hostedContactPage).to.match(new RegExp(`^${serviceUrl}/contact/demo-[0-9a-f]{6}/contact$`));
    expect(demo.console).to.equal(`${serviceUrl}/console/p/${demo.projectId}/`);
    expect(demo.mediaAssets).to.equal(8);

    const service = await startServiceProcess({ DATA_DIR: dataDir, PORT: String(port) });
    expect(service.url).to.equal(serviceUrl);
    try {
      const call = async (route: string) => {
        for (let i = 0; i < 100; i++) {
          const response = await fetch(`${service.url}/admin/v1${route}`, { headers: { authorization: `Bearer ${demo.agentKey}` } });
          if (response.status !== 401) return (await response.json()) as any;
          await new Promise((r) => setTimeout(r, 100)); // projections still catching up with the demo's history
        }
        throw new Error('the demo agent key never authenticated');
      };
      const formSets = (await call('/form-sets')).items as Array<{ id: string; slug: string }>;
      expect(formSets.map((f) => f.slug)).to.deep.equal(['blog', 'news']);
      const blog = await call(`/form-sets/${formSets[0]!.id}/entries?limit=100`);
      expect(blog.items).to.have.length(24);
      expect(blog.nextCursor).to.equal(null);
      expect(blog.items.every((e: { liveRevision: unknown }) => e.liveRevision !== null)).to.equal(true);
      const sample = await call(`/revisions/${blog.items[0].liveRevision.revisionId}`);
      expect(Object.keys(sample.snapshot.title).sort()).to.deep.equal(['en', 'ja']);
      const news = await call(`/form-sets/${formSets[1]!.id}/entries?limit=100`);
      const statuses = new Set<string>();
      for (const entry of news.items) for (const revision of (await call(`/entries/${entry.id}/revisions?limit=100`)).items) statuses.add(revision.status);
      expect([...statuses].sort()).to.deep.equal(['draft', 'pending_review', 'published', 'rejected', 'scheduled', 'superseded']);
      // The public API serves the published entries in both languages, with sitemaps on the demo's site URL.
      let publicList: any;
      for (let i = 0; i < 100; i++) {
        publicList = await (await fetch(`${demo.publicBase}/form-sets/blog/entries?limit=1&include_snapshot=true&locale=ja`)).json();
        if (publicList.total === 24) break;
        await new Promise((r) => setTimeout(r, 100)); // the public read model still catching up
      }
      expect(publicList.total).to.equal(24);
      expect(publicList.items[0].published.snapshot.title).to.match(/[\u3040-\u30ff\u4e00-\u9fff]/);
      const sitemap = await (await fetch(`${demo.publicBase}/form-sets/blog/sitemap.xml`)).text();
      expect(sitemap.match(/<loc>https:\/\/demo-[0-9a-f]+\.annals\.example\//g)).to.have.length(24);
      const llms = await (await fetch(`${service.url}/public/v1/llms.txt`, { headers: { 'X-Service-Public-Api-Key': demo.publicApiKey } })).text();
      expect(llms).to.match(/^# Annals demo\n\n> /);
      // The contact form takes a submission on the public API.
      const submitted = await fetch(`${demo.publicBase}/contact-forms/contact/submit`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'Ada', email: 'ada@example.com', inquiry_type: 'support', message: 'Hello from the demo test.' }),
      });
      expect(submitted.status, await submitted.clone().text()).to.equal(200);
      expect(((await submitted.json()) as { ok: boolean }).ok).to.equal(true);
      // Every URL printed works as it is: the sample entry with its Open Graph image, the image itself, the hosted page.
      const entry = (await (await fetch(demo.sampleEntry)).json()) as { data: { og_image: string }; mediaUrls: { og_image: string } };
      expect(entry.mediaUrls.og_image).to.equal(`${demo.publicBase}/media/${entry.data.og_image}`);
      const image = await fetch(entry.mediaUrls.og_image);
      expect(image.status).to.equal(200);
      expect(image.headers.get('content-type')).to.equal('image/jpeg');
      const pixels = await sharp(Buffer.from(await image.arrayBuffer())).metadata();
      expect([pixels.width, pixels.height]).to.deep.equal([1200, 630]);
      const ogp = (await (await fetch(`${demo.sampleEntry}/ogp.json`)).json()) as Record<string, string>;
      expect(ogp['og:image']).to.equal(entry.mediaUrls.og_image);
      const hosted = await fetch(demo.hostedContactPage);
      expect(hosted.status).to.equal(200);
      expect(await hosted.text()).to.include('<form');
      const media = (await call('/media?limit=100')) as { nextCursor: string | null; items: Array<{ mimeType: string; width: number }> };
      expect(media.items).to.have.length(8);
      expect(media.nextCursor).to.equal(null);
      expect(media.items.every((a) => a.mimeType === 'image/jpeg' && a.width === 1200)).to.equal(true);
      const login = await fetch(`${service.url}/admin/v1/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: demo.adminEmail, password: demo.adminPassword }) });
      expect(login.status).to.equal(200);
    } finally {
      await service.stop();
    }
  });
});
