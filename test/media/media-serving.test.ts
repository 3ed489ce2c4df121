/**
 * GET /media/{assetId} on both public bases, on a started service: streaming, caching headers, ETag and
 * 304, byte ranges (206, 416), HEAD, WebP negotiation (decoded with sharp), Vary: Accept, and 404s. The same
 * suite runs with the local folder store and with S3 (s3rver started on 127.0.0.1).
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { GetObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { expect } from 'chai';
import sharp from 'sharp';
import type { AdminFixture } from '../admin/support.ts';
import { startS3rver, type LocalS3 } from '../blobs/s3rver.ts';
import { tempDir } from '../support/temp-dir.ts';
import { animatedGif, hostUrl, jpeg, pinnedUrl, png, startMediaFixture, uploadMultipart } from './support.ts';

const WEBP = 'image/avif,image/webp,image/apng,image/svg+xml,image/*,*/*;q=0.8';

interface StoreSetup {
  env: Record<string, string>;
  /** The bytes the store holds under a key, read around the service (null when none). */
  read(dataDir: string, key: string): Promise<Buffer | null>;
  close?: () => Promise<void>;
}

function servingSuite(title: string, env: () => Promise<StoreSetup>): void {
  describe(title, function () {
    this.timeout(60_000);
    let f: AdminFixture;
    let store: StoreSetup;
    let dataDir: string;
    let image: { id: string; bytes: Buffer };
    let text: { id: string; bytes: Buffer };

    before(async () => {
      store = await env();
      dataDir = path.join(tempDir(), 'data');
      f = await startMediaFixture(store.env, dataDir);
      const bytes = await png(300, 200);
      const up = await uploadMultipart(f, bytes, { fileName: 'card.png' });
      expect(up.status, JSON.stringify(up.body)).to.equal(201);
      image = { id: up.body.id, bytes };
      const textBytes = Buffer.from('0123456789'.repeat(100));
      const t = await uploadMultipart(f, textBytes, { fileName: 'digits.txt' });
      text = { id: t.body.id, bytes: textBytes };
    });
    after(async () => {
      await f?.stop();
      await store?.close?.();
    });

    const get = (url: string, headers: Record<string, string> = {}, method = 'GET') => fetch(url, { method, headers });

    it('streams the bytes with Content-Type, Content-Length, a year of immutable caching, a strong ETag from the SHA-256, Accept-Ranges and CORS', async () => {
      const response = await get(pinnedUrl(f, image.id));
      expect(response.status).to.equal(200);
      const body = Buffer.from(await response.arrayBuffer());
      expect(body.equals(image.bytes)).to.equal(true);
      expect(response.headers.get('content-type')).to.equal('image/png');
      expect(response.headers.get('content-length')).to.equal(String(image.bytes.length));
      expect(response.headers.get('cache-control')).to.equal('public, max-age=31536000, immutable');
      expect(response.headers.get('etag')).to.equal(`"${createHash('sha256').update(image.bytes).digest('hex')}"`);
      expect(response.headers.get('accept-ranges')).to.equal('bytes');
      expect(response.headers.get('vary')).to.equal('Accept');
      expect(response.headers.get('access-control-allow-origin')).to.equal('*');
      expect(response.headers.get('x-content-type-options')).to.equal('nosniff');
      const plain = await get(pinnedUrl(f, text.id));
      expect(plain.headers.get('content-type')).to.equal('text/plain; charset=utf-8');
      expect(plain.headers.get('vary')).to.equal(null);
      expect(Buffer.from(await plain.arrayBuffer()).equals(text.bytes)).to.equal(true);
    });

    it('keeps the original and, once asked for, the WebP variant in the configured blob store', async () => {
      const key = `${f.project.projectId}/${image.id}`;
      expect((await store.read(dataDir, key))?.equals(image.bytes)).to.equal(true);
      const webp = await get(pinnedUrl(f, image.id), { Accept: 'image/webp' });
      const body = Buffer.from(await webp.arrayBuffer());
      expect((await store.read(dataDir, `${key}.webp`))?.equals(body)).to.equal(true);
    });

    it('answers on the host-resolved base too (project found by its public key)', async () => {
      const response = await get(hostUrl(f, image.id), { 'X-Service-Public-Api-Key': f.project.publicKey.key });
      expect(response.status).to.equal(200);
      expect(Buffer.from(await response.arrayBuffer()).equals(image.bytes)).to.equal(true);
      expect(response.headers.get('etag')).to.equal(`"${createHash('sha256').update(image.bytes).digest('hex')}"`);
    });

    it('hands out mediaUrls on the key-resolved base that a browser loads as they are, without a key (issue 12)', async () => {
      const formSet = await f.call('POST', '/form-sets', { body: { slug: `cards-${Math.random().toString(36).slice(2, 8)}`, name: 'Cards', fields: [{ key: 'title', type: 'text', label: 'Title', required: true }, { key: 'picture', type: 'image', label: 'Picture' }] } });
      expect(formSet.status, JSON.stringify(formSet.body)).to.equal(201);
      const entry = await f.call('POST', `/form-sets/${formSet.body.id}/entries`, { body: { slug: 'card', fields: { title: 'Card', picture: image.id } } });
      await f.call('POST', `/revisions/${entry.body.revision.id}/submit`, { body: {} });
      const published = await f.call('POST', `/revisions/${entry.body.revision.id}/publish`, { body: { revision: entry.body.revision.revision } });
      expect(published.status, JSON.stringify(published.body)).to.equal(200);
      const read = await fetch(`${f.service.url}/public/v1/form-sets/${formSet.body.slug}/entries/card`, { headers: { 'X-Service-Public-Api-Key': f.project.publicKey.key } });
      expect(read.status).to.equal(200);
      const url = ((await read.json()) as { mediaUrls: { picture: string } }).mediaUrls.picture;
      expect(url).to.equal(pinnedUrl(f, image.id));
      // What an <img src> does: a plain GET, no key, no Host trick.
      const loaded = await get(url);
      expect(loaded.status).to.equal(200);
      expect(Buffer.from(await loaded.arrayBuffer()).equals(image.bytes)).to.equal(true);
    });

    it('answers 304 for a matching If-None-Match (also in a list, weak, or *), with the ETag and caching headers and no body', async () => {
      const etag = (await get(pinnedUrl(f, image.id))).headers.get('etag')!;
      for (const header of [etag, `"other", ${etag}`, `W/${etag}`, '*']) {
        const response = await get(pinnedUrl(f, image.id), { 'If-None-Match': header });
        expect(response.status, header).to.equal(304);
        expect(response.headers.get('etag')).to.equal(etag);
        expect(response.headers.get('cache-control')).to.equal('public, max-age=31536000, immutable');
        expect(response.headers.get('vary')).to.equal('Accept');
        expect((await response.arrayBuffer()).byteLength).to.equal(0);
      }
      const changed = await get(pinnedUrl(f, image.id), { 'If-None-Match': '"something-else"' });
      expect(changed.status).to.equal(200);
      await changed.arrayBuffer();
    });

    it('serves byte ranges: 206 with Content-Range for first-last, open-ended and suffix ranges', async () => {
      const size = text.bytes.length;
      const cases: Array<[string, number, number]> = [
        ['bytes=0-99', 0, 99],
        ['bytes=10-19', 10, 19],
        ['bytes=990-', 990, size - 1],
        ['bytes=-25', size - 25, size - 1],
        ['bytes=900-5000', 900, size - 1],
      ];
      for (const [range, start, end] of cases) {
        const response = await get(pinnedUrl(f, text.id), { Range: range });
        expect(response.status, range).to.equal(206);
        expect(response.headers.get('content-range'), range).to.equal(`bytes ${start}-${end}/${size}`);
        expect(response.headers.get('content-length'), range).to.equal(String(end - start + 1));
        expect(Buffer.from(await response.arrayBuffer()).equals(text.bytes.subarray(start, end + 1)), range).to.equal(true);
      }
      const imageRange = await get(pinnedUrl(f, image.id), { Range: 'bytes=0-7' });
      expect(imageRange.status).to.equal(206);
      expect(Buffer.from(await imageRange.arrayBuffer()).equals(image.bytes.subarray(0, 8))).to.equal(true);
    });

    it('answers 416 with Content-Range bytes */size for an unsatisfiable range; several or malformed ranges get the whole file', async () => {
      const size = text.bytes.length;
      for (const range of [`bytes=${size}-`, 'bytes=5000-6000', 'bytes=-0']) {
        const response = await get(pinnedUrl(f, text.id), { Range: range });
        expect(response.status, range).to.equal(416);
        expect(response.headers.get('content-range')).to.equal(`bytes */${size}`);
        const body = (await response.json()) as { error: { code: string } };
        expect(body.error.code).to.equal('RANGE_NOT_SATISFIABLE');
      }
      for (const range of ['bytes=0-1,5-6', 'bytes=abc', 'items=0-5', 'bytes=9-2']) {
        const response = await get(pinnedUrl(f, text.id), { Range: range });
        expect(response.status, range).to.equal(200);
        expect(Buffer.from(await response.arrayBuffer()).equals(text.bytes)).to.equal(true);
      }
    });

    it('honours If-Range: the current ETag keeps the range, another one gets the whole file', async () => {
      const etag = (await get(pinnedUrl(f, text.id))).headers.get('etag')!;
      const same = await get(pinnedUrl(f, text.id), { Range: 'bytes=0-4', 'If-Range': etag });
      expect(same.status).to.equal(206);
      expect(await same.text()).to.equal('01234');
      const stale = await get(pinnedUrl(f, text.id), { Range: 'bytes=0-4', 'If-Range': '"stale"' });
      expect(stale.status).to.equal(200);
      expect((await stale.arrayBuffer()).byteLength).to.equal(text.bytes.length);
    });

    it('answers HEAD with the headers of GET and no body', async () => {
      const head = await get(pinnedUrl(f, image.id), {}, 'HEAD');
      expect(head.status).to.equal(200);
      expect(head.headers.get('content-length')).to.equal(String(image.bytes.length));
      expect(head.headers.get('content-type')).to.equal('image/png');
      expect(head.headers.get('etag')).to.match(/^"[0-9a-f]{64}"$/);
      expect((await head.arrayBuffer()).byteLength).to.equal(0);
      const ranged = await get(pinnedUrl(f, text.id), { Range: 'bytes=0-9' }, 'HEAD');
      expect(ranged.status).to.equal(206);
      expect(ranged.headers.get('content-length')).to.equal('10');
    });

    it('serves WebP to clients naming image/webp: decoded by sharp as webp of the same size, with its own ETag and Vary: Accept', async () => {
      const original = await get(pinnedUrl(f, image.id));
      await original.arrayBuffer();
      const response = await get(pinnedUrl(f, image.id), { Accept: WEBP });
      expect(response.status).to.equal(200);
      expect(response.headers.get('content-type')).to.equal('image/webp');
      expect(response.headers.get('vary')).to.equal('Accept');
      expect(response.headers.get('cache-control')).to.equal('public, max-age=31536000, immutable');
      const etag = response.headers.get('etag')!;
      expect(etag).to.match(/^"[0-9a-f]{64}-webp"$/);
      expect(etag).to.not.equal(original.headers.get('etag'));
      const body = Buffer.from(await response.arrayBuffer());
      expect(response.headers.get('content-length')).to.equal(String(body.length));
      const meta = await sharp(body).metadata();
      expect([meta.format, meta.width, meta.height]).to.deep.equal(['webp', 300, 200]);
      // Conditional and ranged requests apply to the variant, with its own ETag.
      expect((await get(pinnedUrl(f, image.id), { Accept: 'image/webp', 'If-None-Match': etag })).status).to.equal(304);
      const notTheOriginal = await get(pinnedUrl(f, image.id), { Accept: 'image/webp', 'If-None-Match': original.headers.get('etag')! });
      expect(notTheOriginal.status).to.equal(200);
      await notTheOriginal.arrayBuffer();
      const ranged = await get(pinnedUrl(f, image.id), { Accept: 'image/webp', Range: 'bytes=0-11' });
      expect(ranged.status).to.equal(206);
      expect(ranged.headers.get('content-range')).to.equal(`bytes 0-11/${body.length}`);
      const head = Buffer.from(await ranged.arrayBuffer());
      expect(head.subarray(0, 4).toString()).to.equal('RIFF');
      expect(head.subarray(8, 12).toString()).to.equal('WEBP');
    });

    it('serves the original to clients that do not name image/webp, or refuse it with q=0', async () => {
      for (const accept of ['*/*', 'image/*', 'image/png,image/*;q=0.8', 'image/webp;q=0, */*', '']) {
        const response = await get(pinnedUrl(f, image.id), accept ? { Accept: accept } : {});
        expect(response.headers.get('content-type'), accept).to.equal('image/png');
        expect(response.headers.get('vary'), accept).to.equal('Accept');
        expect(Buffer.from(await response.arrayBuffer()).equals(image.bytes), accept).to.equal(true);
      }
    });

    it('concurrent first WebP requests all get the same variant', async () => {
      const up = await uploadMultipart(f, await jpeg(120, 90), { fileName: 'photo.jpg' });
      const bodies = await Promise.all(Array.from({ length: 8 }, async () => {
        const response = await get(pinnedUrl(f, up.body.id), { Accept: 'image/webp' });
        expect(response.headers.get('content-type')).to.equal('image/webp');
        return Buffer.from(await response.arrayBuffer());
      }));
      expect(new Set(bodies.map((b) => b.toString('base64'))).size).to.equal(1);
      const meta = await sharp(bodies[0]!).metadata();
      expect([meta.format, meta.width, meta.height]).to.deep.equal(['webp', 120, 90]);
    });

    it('keeps SVG and animated GIFs as they are, still with Vary: Accept', async () => {
      const svg = await uploadMultipart(f, Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" width="4" height="4"/>'), { fileName: 'icon.svg' });
      const gif = await uploadMultipart(f, await animatedGif(), { fileName: 'anim.gif' });
      for (const [up, type] of [[svg, 'image/svg+xml'], [gif, 'image/gif']] as const) {
        const response = await get(pinnedUrl(f, up.body.id), { Accept: 'image/webp' });
        expect(response.headers.get('content-type')).to.equal(type);
        expect(response.headers.get('vary')).to.equal('Accept');
        expect(response.headers.get('content-security-policy')).to.contain("default-src 'none'");
        await response.arrayBuffer();
      }
    });

    it('answers 404 NOT_FOUND in the envelope for a malformed, unknown or deleted id, and on an unknown project', async () => {
      const doomed = await uploadMultipart(f, Buffer.from('short-lived'), { fileName: 'doomed.txt' });
      expect((await f.call('DELETE', `/media/${doomed.body.id}`)).status).to.equal(204);
      const urls = [
        pinnedUrl(f, 'not-a-uuid'),
        pinnedUrl(f, '00000000-0000-4000-8000-000000000000'),
        pinnedUrl(f, doomed.body.id),
        `${f.service.url}/public/p/00000000-0000-4000-8000-000000000001/v1/media/${image.id}`,
      ];
      for (const url of urls) {
        for (const accept of [{}, { Accept: 'image/webp' }] as Array<Record<string, string>>) {
          const response = await get(url, accept);
          expect(response.status, url).to.equal(404);
          expect(response.headers.get('content-type')).to.match(/^application\/json/);
          expect(((await response.json()) as { error: { code: string } }).error.code).to.equal('NOT_FOUND');
        }
      }
    });
  });
}

servingSuite('public media serving (local folder store)', async () => ({
  env: {},
  read: async (dataDir, key) => {
    const file = path.join(dataDir, 'media', ...key.split('/'));
    return fs.existsSync(file) ? fs.readFileSync(file) : null;
  },
}));

let s3: LocalS3 | undefined;
servingSuite('public media serving (S3 store: s3rver on 127.0.0.1)', async () => {
  s3 = await startS3rver(['annals-media']);
  return {
    env: {
      S3_BUCKET: 'annals-media',
      S3_ENDPOINT: s3.endpoint,
      S3_FORCE_PATH_STYLE: 'true',
      S3_ACCESS_KEY_ID: s3.credentials.accessKeyId,
      S3_SECRET_ACCESS_KEY: s3.credentials.secretAccessKey,
    },
    read: async (_dataDir, key) => {
      const client = new S3Client({ region: 'us-east-1', endpoint: s3!.endpoint, forcePathStyle: true, credentials: s3!.credentials });
      try {
        const object = await client.send(new GetObjectCommand({ Bucket: 'annals-media', Key: key }));
        return Buffer.from(await object.Body!.transformToByteArray());
      } catch {
        return null;
      } finally {
        client.destroy();
      }
    },
    close: () => s3!.close(),
  };
});
