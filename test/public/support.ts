import type { Logger } from '../../src/logging/logger.ts';
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import { expect } from 'chai';
import { startAdminFixture, type AdminFixture } from '../admin/support.ts';
import type { Clock } from '../../src/clock.ts';

export const PASSWORD = 'correct horse battery staple';

export interface PublicResponse {
  status: number;
  headers: Headers;
  text: string;
  body: any;
}

/** An admin fixture plus helpers to publish content and read it back through the public API. */
export interface PublicFixture extends AdminFixture {
  /** The project-pinned base, e.g. http://127.0.0.1:PORT/public/p/<id>/v1. */
  pinnedBase: string;
  /** GET (or another method) on the project-pinned base; redirects are not followed. */
  get(path: string, headers?: Record<string, string>, base?: string): Promise<PublicResponse>;
  /** Waits until every projection has folded everything appended so far. */
  settle(): Promise<void>;
  sessionToken(): Promise<string>;
  /** Creates an entry with these values and publishes its first revision; returns ids. */
  publish(formSetId: string, slug: string, fields: Record<string, unknown>, extra?: Record<string, unknown>): Promise<{ entryId: string; revisionId: string }>;
}

export async function startPublicFixture(options: { plan?: string; env?: Record<string, string>; clock?: Clock; logger?: Logger } = {}): Promise<PublicFixture> {
  const f = await startAdminFixture(options);
  const pinnedBase = `${f.service.url}/public/p/${f.project.projectId}/v1`;
  let token: string | undefined;
  const fixture: PublicFixture = {
    ...f,
    pinnedBase,
    async get(path, headers = {}, base = pinnedBase) {
      const response = await fetch(`${base}${path}`, { headers, redirect: 'manual' });
      const text = await response.text();
      let body: unknown = null;
      if ((response.headers.get('content-type') ?? '').includes('json') && text) body = JSON.parse(text);
      return { status: response.status, headers: response.headers, text, body };
    },
    async settle() {
      const head = await f.service.stores.events.headPosition();
      if (head !== null) expect(await f.service.supervisor!.waitFor(head, 10_000), 'projections caught up').to.equal(true);
    },
    async sessionToken() {
      if (token) return token;
      const response = await fetch(`${f.service.url}/admin/v1/auth/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email: f.project.adminEmail, password: PASSWORD }),
      });
      expect(response.status).to.equal(200);
      token = ((await response.json()) as { token: string }).token;
      return token;
    },
    async publish(formSetId, slug, fields, extra = {}) {
      const created = await f.call('POST', `/form-sets/${formSetId}/entries`, { body: { slug, fields, ...extra } });
      expect(created.status, JSON.stringify(created.body)).to.equal(201);
      const revisionId = created.body.revision.id as string;
      const submitted = await f.call('POST', `/revisions/${revisionId}/submit`, { body: {} });
      expect(submitted.status, JSON.stringify(submitted.body)).to.equal(200);
      const published = await f.call('POST', `/revisions/${revisionId}/publish`, { body: { revision: created.body.revision.revision } });
      expect(published.status, JSON.stringify(published.body)).to.equal(200);
      await fixture.settle();
      return { entryId: created.body.entry.id as string, revisionId };
    },
  };
  return fixture;
}

/** A form set exercising localized text, rich text, dates, images, numbers, roles and sitemap settings. */
export function blogFormSet(slug = 'blog') {
  return {
    slug,
    name: 'Blog',
    description: 'Articles',
    fields: [
      { key: 'title', type: 'text', label: 'Title', required: true },
      { key: 'meta_description', type: 'textarea', label: 'Meta description' },
      { key: 'body', type: 'tiptap', label: 'Body' },
      { key: 'published_date', type: 'date', label: 'Published on' },
      { key: 'og_image', type: 'image', label: 'Social image' },
      { key: 'attachment', type: 'file', label: 'Attachment' },
      { key: 'rating', type: 'number', label: 'Rating' },
    ],
    widgetRoles: { title: 'title', date: 'published_date', thumbnail: 'og_image' },
    sitemap: { urlPattern: '/blog/{slug}', changefreq: 'daily', priority: 0.8 },
  };
}

export const assetId = (): string => randomUUID();

/** A GET with an explicit Host header (fetch cannot set one). */
export function getWithHost(url: string, host: string, headers: Record<string, string> = {}): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: any }> {
  return new Promise((resolve, reject) => {
    const request = http.get(url, { headers: { host, ...headers } }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        resolve({ status: response.statusCode ?? 0, headers: response.headers, body: text && (response.headers['content-type'] ?? '').includes('json') ? JSON.parse(text) : text });
      });
    });
    request.on('error', reject);
  });
}

/** Requests a server (a fixture's service, a replica) answered so far before the app (annals_http_request_duration_seconds_count by answered_by). */
export async function answeredBy(server: { url: string }, by: 'read-model' | 'response-cache'): Promise<number> {
  const text = await (await fetch(`${server.url}/metrics`)).text();
  let total = 0;
  for (const line of text.split('\n')) if (line.startsWith('annals_http_request_duration_seconds_count{') && line.includes(`answered_by="${by}"`)) total += Number(line.split(' ').pop());
  return total;
}
