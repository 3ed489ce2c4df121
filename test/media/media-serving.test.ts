/**
 * GET /media/{assetId} on both public bases, on a started service: streaming, caching headers, ETag and
 * 304, byte ranges (206, 416), HEAD, WebP negotiation (decoded with sharp), Vary: Accept, 404s (for an
 * asset whose bytes are missing or damaged too, logged), and deletion through the purge outbox. The same
 * suite runs with the local folder store, with S3 on s3rver, and with S3 on MinIO (the compose file's S3
 * server: test/support/minio-server.ts; pending with the reason where none can run).
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { Writable } from 'node:stream';
import { CreateBucketCommand, DeleteObjectCommand, GetObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { pino } from 'pino';
import { expect } from 'chai';
import sharp from 'sharp';
import type { AdminFixture } from '../admin/support.ts';
import { startS3rver, type LocalS3 } from '../blobs/s3rver.ts';
import { tempDir } from '../support/temp-dir.ts';
import { collect } from '../../src/event-store/event-store.ts';
import { minioServer, minioServerPending } from '../support/minio-server.ts';
import { animatedGif, hostUrl, jpeg, pinnedUrl, png, startMediaFixture, uploadMultipart } from './support.ts';
import { eventually } from '../support/eventually.ts';

const WEBP = 'image/avif,image/webp,image/apng,image/svg+xml,image/*,*/*;q=0.8';

interface StoreSetup {
  env: Record<string, string>;
  /** The bytes the store holds under a key, read around the service (null when none). */
  read(dataDir: string, key: string): Promise<Buffer | null>;
  /** Writes bytes under a key, or removes the key (null), around the service: an operator's mistake, a bad move. */
  write(dataDir: string, key: string, bytes: Buffer | null): Promise<void>;
  close?: () => Promise<void>;
}

function servingSuite(title: string, env: () => Promise<StoreSetup>, pending?: string): void {
  if (pending) {
    describe(`${title} [pending: ${pending}]`, () => it('serves media from this store'));
    return;
  }
  describe(title, function () {
    this.timeout(60_000);
    let f: AdminFixture;
    let store: StoreSetup;
    let dataDir: string;
    let image: { id: string; bytes: Buffer };
    let text: { id: string; bytes: Buffer };
    const logged: Array<Record<string, any>> = [];

    before(async () => {
      store = await env();
      dataDir = path.join(tempDir(), 'data');
      const sink = new Writable({
        write(chunk: Buffer, _encoding, done) {
          for (const line of chunk.toString().split('\n').filter(Boolean)) logged.push(JSON.parse(line) as Record<string, any>);
          done();
        },
      });
      f = await startMediaFixture(store.env, dataDir, pino({ level: 'warn' }, sink));
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

    it('answers 404, never 500, for an asset whose bytes are gone from the store, and logs an error naming the asset and the blob key', async () => {
      const up = await uploadMultipart(f, await png(40, 30, 7), { fileName: 'lost.png' });
      const key = `${f.project.projectId}/${up.body.id}`;
      await store.write(dataDir, key, null);
      const requests: Array<[string, Record<string, string>]> = [['GET', {}], ['HEAD', {}], ['GET', { Range: 'bytes=0-9' }], ['GET', { Accept: WEBP }], ['HEAD', { Accept: WEBP }]];
      for (const [method, headers] of requests) {
        const response = await get(pinnedUrl(f, up.body.id), headers, method);
        const what = `${method} ${JSON.stringify(headers)}`;
        expect(response.status, what).to.equal(404);
        expect(response.headers.get('cache-control'), what).to.equal('no-store');
        expect(response.headers.get('etag'), what).to.equal(null);
        if (method === 'GET') expect(((await response.json()) as { error: { code: string; message: string } }).error).to.deep.include({ code: 'NOT_FOUND', message: `The file of asset ${up.body.id} is not available.` });
      }
      const lines = logged.filter((line) => line['assetId'] === up.body.id);
      expect(lines).to.have.length(requests.length);
      for (const line of lines) {
        expect(line).to.deep.include({ level: 50, blobKey: key, projectId: f.project.projectId });
        expect(line['msg']).to.include(`asset ${up.body.id} has no blob at ${key}`).and.include('annals media verify');
      }
      // The admin API still knows the asset: the bytes are what is missing.
      expect((await f.call('GET', `/media/${up.body.id}`)).status).to.equal(200);
    });

    it('answers 404 for bytes of another size than the log records (damaged behind the service), never serving them under the asset\'s ETag', async () => {
      const bytes = await png(60, 40, 9);
      const up = await uploadMultipart(f, bytes, { fileName: 'damaged.png' });
      const key = `${f.project.projectId}/${up.body.id}`;
      await store.write(dataDir, key, bytes.subarray(0, 50));
      for (const headers of [{}, { Range: 'bytes=100-199' }, { Range: 'bytes=0-9' }] as Array<Record<string, string>>) {
        const response = await get(pinnedUrl(f, up.body.id), headers);
        expect(response.status, JSON.stringify(headers)).to.equal(404);
        await response.arrayBuffer();
      }
      expect((await get(pinnedUrl(f, up.body.id), {}, 'HEAD')).status).to.equal(404);
      const lines = logged.filter((line) => line['assetId'] === up.body.id);
      expect(lines).to.have.length(4);
      expect(lines[0]).to.deep.include({ level: 50, blobKey: key, recordedBytes: bytes.length, storedBytes: 50 });
    });

    it('serves the original when the WebP variant has gone from the store, then makes the variant again', async () => {
      const up = await uploadMultipart(f, await png(50, 20, 11), { fileName: 'variant.png' });
      const key = `${f.project.projectId}/${up.body.id}`;
      const first = await get(pinnedUrl(f, up.body.id), { Accept: WEBP });
      expect(first.headers.get('content-type')).to.equal('image/webp');
      const variant = Buffer.from(await first.arrayBuffer());
      await store.write(dataDir, `${key}.webp`, null);
      const fallback = await get(pinnedUrl(f, up.body.id), { Accept: WEBP });
      expect(fallback.status).to.equal(200);
      expect(fallback.headers.get('content-type')).to.equal('image/png');
      await fallback.arrayBuffer();
      const again = await get(pinnedUrl(f, up.body.id), { Accept: WEBP });
      expect(again.headers.get('content-type')).to.equal('image/webp');
      expect(Buffer.from(await again.arrayBuffer()).equals(variant)).to.equal(true);
      expect((await store.read(dataDir, `${key}.webp`))?.equals(variant)).to.equal(true);
      expect(logged.filter((line) => line['assetId'] === up.body.id && line['level'] >= 50)).to.deep.equal([]);
    });

    it('deleting an asset through the admin API removes its bytes and its WebP variant from the store (the purge outbox), then records it', async () => {
      const up = await uploadMultipart(f, await png(30, 30, 13), { fileName: 'purged.png' });
      const key = `${f.project.projectId}/${up.body.id}`;
      await (await get(pinnedUrl(f, up.body.id), { Accept: WEBP })).arrayBuffer();
      expect(await store.read(dataDir, `${key}.webp`)).to.not.equal(null);
      expect((await f.call('DELETE', `/media/${up.body.id}`)).status).to.equal(204);
      expect((await get(pinnedUrl(f, up.body.id))).status).to.equal(404);
      const purged = () => collect(f.service.log.readStream(`outbox-media-purge-${up.body.id}`)).catch(() => []);
      await eventually(
        async () => ({ original: (await store.read(dataDir, key)) !== null, variant: (await store.read(dataDir, `${key}.webp`)) !== null, purged: (await purged()).length }),
        (x) => !x.original && !x.variant && x.purged > 0,
        15_000,
        'the blobs purged and that recorded',
        50,
      );
      expect(await store.read(dataDir, key), 'original purged').to.equal(null);
      expect(await store.read(dataDir, `${key}.webp`), 'variant purged').to.equal(null);
      expect((await purged()).map((e) => [e.type, (e.data as { ok: boolean }).ok])).to.deep.equal([['media.blobs-purged', true]]);
      // A deleted asset is not a missing blob: nothing is logged as an error for it.
      expect(logged.filter((line) => line['assetId'] === up.body.id)).to.deep.equal([]);
    });
  });
}

servingSuite('public media serving (local folder store)', async () => ({
  env: {},
  read: async (dataDir, key) => {
    const file = path.join(dataDir, 'media', ...key.split('/'));
    return fs.existsSync(file) ? fs.readFileSync(file) : null;
  },
  write: async (dataDir, key, bytes) => {
    const file = path.join(dataDir, 'media', ...key.split('/'));
    if (bytes) fs.writeFileSync(file, bytes);
    else fs.rmSync(file, { force: true });
  },
}));

/** The store's settings for the service, and reads and writes around it, on a bucket of an S3 server. */
function s3Setup(server: { endpoint: string; credentials: { accessKeyId: string; secretAccessKey: string } }, bucket: string, close?: () => Promise<void>): StoreSetup {
  const client = () => new S3Client({ region: 'us-east-1', endpoint: server.endpoint, forcePathStyle: true, credentials: server.credentials });
  return {
    env: {
      S3_BUCKET: bucket,
      S3_ENDPOINT: server.endpoint,
      S3_FORCE_PATH_STYLE: 'true',
      S3_ACCESS_KEY_ID: server.credentials.accessKeyId,
      S3_SECRET_ACCESS_KEY: server.credentials.secretAccessKey,
    },
    read: async (_dataDir, key) => {
      const s3 = client();
      try {
        const object = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
        return Buffer.from(await object.Body!.transformToByteArray());
      } catch {
        return null;
      } finally {
        s3.destroy();
      }
    },
    write: async (_dataDir, key, bytes) => {
      const s3 = client();
      try {
        await s3.send(bytes ? new PutObjectCommand({ Bucket: bucket, Key: key, Body: bytes }) : new DeleteObjectCommand({ Bucket: bucket, Key: key }));
      } finally {
        s3.destroy();
      }
    },
    ...(close ? { close } : {}),
  };
}

let s3: LocalS3 | undefined;
servingSuite('public media serving (S3 store: s3rver on 127.0.0.1)', async () => {
  s3 = await startS3rver(['annals-media']);
  return s3Setup(s3, 'annals-media', () => s3!.close());
});

servingSuite(
  'public media serving (S3 store: MinIO)',
  async () => {
    const minio = await minioServer();
    const bucket = `annals-serving-${Math.random().toString(36).slice(2, 10)}`;
    const client = new S3Client({ region: 'us-east-1', endpoint: minio.endpoint, forcePathStyle: true, credentials: minio.credentials });
    await client.send(new CreateBucketCommand({ Bucket: bucket }));
    client.destroy();
    return s3Setup(minio, bucket);
  },
  await minioServerPending(),
);
