/**
 * Uploading media through the admin API (POST /admin/v1/media) on a started service: multipart, base64 in
 * JSON and source URLs; MIME sniffing; the size limit; empty and unreadable files; SSRF refusals;
 * permissions; idempotency; the event and the stored blob.
 */
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { collect } from '../../src/event-store/event-store.ts';
import { OPERATOR, type AdminFixture } from '../admin/support.ts';
import { file, redirect, startSourceServer, type SourceServer } from './source-server.ts';
import { PASSWORD, png, pinnedUrl, startMediaFixture, uploadMultipart } from './support.ts';
import { tempDir } from '../support/temp-dir.ts';
import { uploadTempRoot } from '../../src/media/received-file.ts';
import { freePort } from '../support/ports.ts';
import { eventuallyPasses } from '../support/eventually.ts';

const MAX = 200_000;
const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

describe('media upload (POST /admin/v1/media)', function () {
  this.timeout(60_000);
  let f: AdminFixture;
  let source: SourceServer;
  let dataDir: string;

  before(async () => {
    dataDir = path.join(tempDir(), 'data');
    f = await startMediaFixture({ OUTBOUND_ALLOWLIST: '127.0.0.1', MEDIA_MAX_BYTES: String(MAX), MEDIA_SOURCE_TIMEOUT_MS: '1500' }, dataDir);
    source = await startSourceServer();
  });
  after(async () => {
    await source?.close();
    await f?.stop();
  });

  const json = (body: unknown, token?: string) => f.call('POST', '/media', { body, ...(token ? { token } : {}) });

  it('multipart: a PNG sent as text/plain named .txt is stored as image/png with size, hash, dimensions, alt text and caption; the public URL serves those bytes', async () => {
    const bytes = await png(64, 48);
    const up = await uploadMultipart(f, bytes, { fileName: 'notes.txt', type: 'text/plain', fields: { altText: 'A test card', caption: 'Seen from the left' } });
    expect(up.status, JSON.stringify(up.body)).to.equal(201);
    expect(up.body).to.deep.include({ fileName: 'notes.txt', mimeType: 'image/png', kind: 'image', byteSize: bytes.length, sha256: sha256(bytes), width: 64, height: 48, altText: 'A test card', caption: 'Seen from the left' });
    expect(up.body.id).to.match(/^[0-9a-f-]{36}$/);
    expect(up.body.url).to.equal(pinnedUrl(f, up.body.id));
    const read = await f.call('GET', `/media/${up.body.id}`);
    expect(read.status).to.equal(200);
    expect(read.body).to.deep.equal(up.body);
    const served = await fetch(up.body.url);
    expect(served.status).to.equal(200);
    expect(served.headers.get('content-type')).to.equal('image/png');
    expect(Buffer.from(await served.arrayBuffer()).equals(bytes)).to.equal(true);
  });

  it('base64 in JSON, plain or as a data: URL, stores the decoded bytes; malformed base64 is 400', async () => {
    const bytes = await png(10, 12, 2);
    const plain = await json({ base64: bytes.toString('base64'), fileName: 'dir/../pixel.png', altText: 'Pixel' });
    expect(plain.status, JSON.stringify(plain.body)).to.equal(201);
    expect(plain.body).to.deep.include({ fileName: 'pixel.png', mimeType: 'image/png', byteSize: bytes.length, sha256: sha256(bytes), width: 10, height: 12, altText: 'Pixel' });
    const dataUrl = await json({ base64: `data:application/pdf;base64,${bytes.toString('base64')}` });
    expect(dataUrl.status).to.equal(201);
    expect(dataUrl.body).to.deep.include({ fileName: 'upload', mimeType: 'image/png', sha256: sha256(bytes) });
    const bad = await json({ base64: 'not base64 at all!' });
    expect(bad.status).to.equal(400);
    expect(bad.body.error).to.include({ code: 'VALIDATION_ERROR' });
    expect(bad.body.error.message).to.match(/^base64: not valid base64/);
  });

  it('sourceUrl: fetched from an allowlisted local server, named after the URL path; a redirect within the same host is followed', async () => {
    const bytes = await png(20, 30, 3);
    source.route('/files/sunset%20photo.png', file(bytes, { type: 'text/html' }));
    source.route('/moved', redirect('/files/sunset%20photo.png', 301));
    const direct = await json({ sourceUrl: `${source.url}/files/sunset%20photo.png`, caption: 'Sunset' });
    expect(direct.status, JSON.stringify(direct.body)).to.equal(201);
    expect(direct.body).to.deep.include({ fileName: 'sunset photo.png', mimeType: 'image/png', byteSize: bytes.length, sha256: sha256(bytes), width: 20, height: 30, caption: 'Sunset' });
    const moved = await json({ sourceUrl: `${source.url}/moved`, fileName: 'chosen.png' });
    expect(moved.status, JSON.stringify(moved.body)).to.equal(201);
    expect(moved.body).to.deep.include({ fileName: 'chosen.png', sha256: sha256(bytes) });
    const served = await fetch(moved.body.url);
    expect(Buffer.from(await served.arrayBuffer()).equals(bytes)).to.equal(true);
  });

  it('sniffs the type from the bytes: UTF-8 text, binary, SVG and JPEG whatever the client claims', async () => {
    const cases: Array<[Uint8Array, string, string]> = [
      [Buffer.from('Hello, wörld.\nSecond line.'), 'image/png', 'text/plain'],
      [Buffer.from([0x00, 0xff, 0x10, 0x80, 0x81, 0x82, 0x00]), 'text/plain', 'application/octet-stream'],
      [Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" width="16" height="8"><rect width="16" height="8"/></svg>'), 'text/plain', 'image/svg+xml'],
    ];
    for (const [bytes, claimed, expected] of cases) {
      const up = await uploadMultipart(f, bytes, { fileName: 'x', type: claimed });
      expect(up.status, JSON.stringify(up.body)).to.equal(201);
      expect(up.body.mimeType, expected).to.equal(expected);
      if (expected === 'image/svg+xml') expect([up.body.width, up.body.height]).to.deep.equal([16, 8]);
      else expect([up.body.width, up.body.height]).to.deep.equal([null, null]);
    }
  });

  it('size limit: MEDIA_MAX_BYTES exactly is accepted; one byte more is 413 PAYLOAD_TOO_LARGE for multipart, base64 and sourceUrl; the service stays usable', async () => {
    const exact = randomBytes(MAX);
    const ok = await uploadMultipart(f, exact);
    expect(ok.status, JSON.stringify(ok.body)).to.equal(201);
    expect(ok.body.byteSize).to.equal(MAX);
    const over = randomBytes(MAX + 1);
    const big = await uploadMultipart(f, over);
    expect(big.status).to.equal(413);
    expect(big.body.error).to.include({ code: 'PAYLOAD_TOO_LARGE', retryable: false });
    expect(big.body.error.message).to.contain(String(MAX));
    const much = await uploadMultipart(f, randomBytes(MAX * 4));
    expect(much.status).to.equal(413);
    const b64 = await json({ base64: over.toString('base64') });
    expect(b64.status).to.equal(413);
    expect(b64.body.error.code).to.equal('PAYLOAD_TOO_LARGE');
    source.route('/big', file(over));
    source.route('/big-chunked', file(over, { chunked: true }));
    for (const route of ['/big', '/big-chunked']) {
      const fetched = await json({ sourceUrl: `${source.url}${route}` });
      expect(fetched.status, route).to.equal(413);
      expect(fetched.body.error.code).to.equal('PAYLOAD_TOO_LARGE');
    }
    // The next request on the service works, and nothing half-written is left in the upload folder.
    const after = await uploadMultipart(f, Buffer.from('still here'));
    expect(after.status).to.equal(201);
    await eventually(() => expect(filesUnder(uploadTempRoot())).to.deep.equal([]));
  });

  it('an empty file is 400 VALIDATION_ERROR (multipart, base64, sourceUrl); so is an image that cannot be read', async () => {
    const empty = await uploadMultipart(f, new Uint8Array(0), { fileName: 'empty.png', type: 'image/png' });
    expect(empty.status).to.equal(400);
    expect(empty.body.error).to.include({ code: 'VALIDATION_ERROR', message: 'The file is empty.' });
    expect((await json({ base64: '' })).body.error.message).to.equal('The file is empty.');
    source.route('/empty', file(new Uint8Array(0)));
    const fetched = await json({ sourceUrl: `${source.url}/empty` });
    expect(fetched.status).to.equal(400);
    expect(fetched.body.error.message).to.equal('The file is empty.');
    const broken = Buffer.concat([(await png(8, 8)).subarray(0, 16), Buffer.alloc(64, 0x42)]);
    const unreadable = await uploadMultipart(f, broken, { fileName: 'broken.png', type: 'image/png' });
    expect(unreadable.status).to.equal(400);
    expect(unreadable.body.error.code).to.equal('VALIDATION_ERROR');
    expect(unreadable.body.error.message).to.match(/looks like image\/png but cannot be read/);
  });

  it('refuses malformed requests: no file part, both or neither of base64 and sourceUrl, another body type (415), over-long alt text', async () => {
    const noFile = await uploadMultipart(f, Buffer.from('x'), { field: 'attachment' });
    expect(noFile.status).to.equal(400);
    expect(noFile.body.error.message).to.match(/^file: required/);
    const both = await json({ base64: 'aGk=', sourceUrl: 'http://127.0.0.1/x' });
    expect(both.status).to.equal(400);
    expect(both.body.error.message).to.match(/^base64: send exactly one of base64 and sourceUrl/);
    expect((await json({ altText: 'x' })).status).to.equal(400);
    const csv = await f.call('POST', '/media', { body: 'a,b\n1,2', headers: { 'content-type': 'text/csv' } });
    expect(csv.status).to.equal(415);
    expect(csv.body.error.code).to.equal('UNSUPPORTED_MEDIA_TYPE');
    const longAlt = await uploadMultipart(f, Buffer.from('x'), { fields: { altText: 'a'.repeat(1001) } });
    expect(longAlt.status).to.equal(400);
    expect(longAlt.body.error.message).to.match(/^altText: at most 1000/);
    const twoFiles = new FormData();
    twoFiles.append('file', new Blob([Buffer.from('one')]), 'one.txt');
    twoFiles.append('file', new Blob([Buffer.from('two')]), 'two.txt');
    const response = await fetch(`${f.service.url}/admin/v1/media`, { method: 'POST', headers: { authorization: `Bearer ${f.project.agentKey.key}` }, body: twoFiles });
    expect(response.status).to.equal(400);
    expect(((await response.json()) as any).error.message).to.match(/one file per upload/);
  });

  it('sourceUrl: non-http schemes, credentials, upstream errors, unreachable hosts and a timeout are 400 naming sourceUrl', async () => {
    const closedPort = await freePort();
    source.route('/hang', () => {
      /* never answers */
    });
    const cases: Array<[string, RegExp]> = [
      ['ftp://127.0.0.1/file', /^sourceUrl: the scheme ftp is not allowed/],
      ['file:///etc/passwd', /^sourceUrl: the scheme file is not allowed/],
      [`http://user:secret@127.0.0.1:${source.port}/x`, /^sourceUrl: credentials in the URL are not allowed/],
      [`${source.url}/missing`, /^sourceUrl: the server answered HTTP 404/],
      ['not a url', /^sourceUrl: not a valid absolute URL/],
      [`http://127.0.0.1:${closedPort}/x`, /^sourceUrl: the file could not be fetched \(ECONNREFUSED\)/],
      [`${source.url}/hang`, /^sourceUrl: no complete answer within 1500 ms/],
    ];
    for (const [url, message] of cases) {
      const response = await json({ sourceUrl: url });
      expect(response.status, url).to.equal(400);
      expect(response.body.error.code).to.equal('VALIDATION_ERROR');
      expect(response.body.error.message, url).to.match(message);
      expect(response.body.error.message).to.not.contain('secret');
    }
  });

  it('SSRF: a redirect from an allowlisted server to a metadata or private address, or to another host, is refused without following it', async () => {
    const other = await startSourceServer();
    try {
      other.route('/secret', file(Buffer.from('internal')));
      source.route('/to-metadata', redirect('http://169.254.169.254/latest/meta-data/'));
      source.route('/to-private', redirect('http://10.1.2.3/admin'));
      source.route('/to-other-port', redirect(`${other.url}/secret`));
      source.route('/to-localhost', redirect(`http://localhost:${source.port}/files/sunset%20photo.png`));
      const expectations: Array<[string, RegExp]> = [
        ['/to-metadata', /^sourceUrl: refused \(after a redirect\): 169\.254\.169\.254 is a cloud metadata address/],
        ['/to-private', /^sourceUrl: refused \(after a redirect\): 10\.1\.2\.3 is a private address/],
        ['/to-other-port', /^sourceUrl: redirected to another host \(127\.0\.0\.1:\d+\)/],
        ['/to-localhost', /another host|refused/],
      ];
      for (const [route, message] of expectations) {
        const response = await json({ sourceUrl: `${source.url}${route}` });
        expect(response.status, route).to.equal(400);
        expect(response.body.error.message, route).to.match(message);
      }
      expect(other.requests).to.deep.equal([]);
    } finally {
      await other.close();
    }
  });

  it('permissions: a content-scope key may list media but not upload (403 FORBIDDEN); a tenant_user session may upload, not delete', async () => {
    const issued = await f.access.issueAgentKey(OPERATOR, f.project.projectId, 'content', 'content key');
    await f.service.supervisor!.waitFor(issued.position, 5000);
    const refused = await uploadMultipart(f, await png(4, 4), { token: issued.key });
    expect(refused.status).to.equal(403);
    expect(refused.body.error.code).to.equal('FORBIDDEN');
    expect(refused.body.error.message).to.contain('media.upload');
    expect((await json({ base64: 'aGk=' }, issued.key)).status).to.equal(403);
    const listed = await f.call('GET', '/media', { token: issued.key });
    expect(listed.status).to.equal(200);

    const editor = await f.access.createUser(OPERATOR, { tenantId: f.project.tenantId, email: 'media-editor@example.com', password: PASSWORD, role: 'tenant_user' });
    await f.service.supervisor!.waitFor(editor.position, 5000);
    const login = await f.call('POST', '/auth/login', { body: { email: 'media-editor@example.com', password: PASSWORD }, token: '' });
    expect(login.status, JSON.stringify(login.body)).to.equal(200);
    const session = { token: login.body.token as string, headers: { 'X-Project-Id': f.project.projectId } };
    const up = await uploadMultipart(f, Buffer.from('by an editor'), session);
    expect(up.status).to.equal(201);
    const del = await f.call('DELETE', `/media/${up.body.id}`, session);
    expect(del.status).to.equal(403);
    expect(del.body.error.message).to.contain('media.delete');
  });

  it('Idempotency-Key: resent with the same file answers the same asset; with another file, 409', async () => {
    const bytes = Buffer.from('idempotent bytes');
    const first = await uploadMultipart(f, bytes, { headers: { 'Idempotency-Key': 'media-key-1' } });
    const again = await uploadMultipart(f, bytes, { headers: { 'Idempotency-Key': 'media-key-1' } });
    expect(first.status).to.equal(201);
    expect(again.status).to.equal(201);
    expect(again.body.id).to.equal(first.body.id);
    const other = await json({ base64: Buffer.from('other bytes').toString('base64'), idempotencyKey: 'media-key-1' });
    expect(other.status).to.equal(409);
    expect(other.body.error.code).to.equal('CONFLICT');
  });

  it('appends one media.asset-uploaded event with id, name, type, size, SHA-256 and dimensions, after the bytes are in DATA_DIR/media', async () => {
    const bytes = await png(33, 22, 9);
    const up = await uploadMultipart(f, bytes, { fileName: 'event.png' });
    const events = await collect(f.service.log.readStream(`media-asset-${up.body.id}`));
    expect(events.map((e) => e.type)).to.deep.equal(['media.asset-uploaded']);
    expect(events[0]!.data).to.deep.include({
      assetId: up.body.id,
      projectId: f.project.projectId,
      fileName: 'event.png',
      mimeType: 'image/png',
      byteSize: bytes.length,
      sha256: sha256(bytes),
      width: 33,
      height: 22,
      animated: false,
      blobKey: `${f.project.projectId}/${up.body.id}`,
      source: 'multipart',
    });
    expect(events[0]!.metadata.actor).to.deep.equal({ type: 'agent', id: f.project.agentKey.keyId });
    const stored = path.join(dataDir, 'media', f.project.projectId, up.body.id);
    expect(fs.readFileSync(stored).equals(bytes)).to.equal(true);
  });

  it('tenant isolation: another project\'s key, and the other project\'s public base, find nothing', async () => {
    const up = await uploadMultipart(f, Buffer.from('mine'));
    const other = await f.access.bootstrap(OPERATOR, { projectName: 'Other project', plan: 'business', adminEmail: 'other-media@example.com', adminPassword: PASSWORD, contentLocales: { locales: ['en'], defaultLocale: 'en' } });
    await f.service.supervisor!.waitFor(other.position, 5000);
    const read = await f.call('GET', `/media/${up.body.id}`, { token: other.agentKey.key });
    expect(read.status).to.equal(404);
    expect(read.body.error.code).to.equal('NOT_FOUND');
    expect((await f.call('DELETE', `/media/${up.body.id}`, { token: other.agentKey.key })).status).to.equal(404);
    expect((await f.call('GET', '/media', { token: other.agentKey.key })).body).to.deep.equal({ items: [], nextCursor: null });
    const publicOther = await fetch(`${f.service.url}/public/p/${other.projectId}/v1/media/${up.body.id}`);
    expect(publicOther.status).to.equal(404);
  });
});

describe('media upload: SSRF refusals without an allowlist', function () {
  this.timeout(60_000);
  let f: AdminFixture;
  let target: SourceServer;
  before(async () => {
    f = await startMediaFixture();
    target = await startSourceServer();
    target.route('/file.png', file(await png(4, 4)));
  });
  after(async () => {
    await target?.close();
    await f?.stop();
  });

  it('refuses loopback, private, link-local and metadata addresses with 400 naming sourceUrl and the reason, without connecting', async () => {
    const cases: Array<[string, RegExp]> = [
      [`${target.url}/file.png`, /^sourceUrl: refused: 127\.0\.0\.1 is a loopback address/],
      [`http://localhost:${target.port}/file.png`, /^sourceUrl: refused: localhost resolves to (127\.0\.0\.1|::1), which is a loopback address/],
      [`http://[::1]:${target.port}/file.png`, /^sourceUrl: refused: ::1 is a loopback address/],
      ['http://10.0.0.7/file.png', /^sourceUrl: refused: 10\.0\.0\.7 is a private address/],
      ['http://192.168.1.1/file.png', /^sourceUrl: refused: 192\.168\.1\.1 is a private address/],
      ['http://169.254.169.254/latest/meta-data/', /^sourceUrl: refused: 169\.254\.169\.254 is a cloud metadata address/],
      ['http://169.254.10.10/', /^sourceUrl: refused: 169\.254\.10\.10 is a link-local address/],
      ['http://[::ffff:127.0.0.1]/', /^sourceUrl: refused: .*loopback address/],
    ];
    for (const [url, message] of cases) {
      const response = await f.call('POST', '/media', { body: { sourceUrl: url } });
      expect(response.status, url).to.equal(400);
      expect(response.body.error.code).to.equal('VALIDATION_ERROR');
      expect(response.body.error.message, url).to.match(message);
    }
    expect(target.requests).to.deep.equal([]);
  });
});


/** Every file (not folder) under a folder, recursively. */
function filesUnder(dir: string): string[] {
  return fs.readdirSync(dir, { recursive: true, withFileTypes: true }).filter((entry) => entry.isFile()).map((entry) => entry.name);
}

/** Retries an assertion for a short while (work that finishes just after the response, e.g. temp-file removal). */
const eventually = (assertion: () => void, timeoutMs = 2000) => eventuallyPasses(assertion, timeoutMs);
