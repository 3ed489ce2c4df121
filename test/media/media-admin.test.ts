/**
 * The admin API's media list, read, edit and delete, on a started service (list_media; alt text and
 * caption; deletion as an event, with the bytes purged from the local folder store by the purge outbox).
 */
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { collect } from '../../src/event-store/event-store.ts';
import { documentedResponses } from '../support/openapi-responses.ts';
import type { AdminFixture } from '../admin/support.ts';
import { tempDir } from '../support/temp-dir.ts';
import { jpeg, png, startMediaFixture, uploadMultipart } from './support.ts';
import { eventually } from '../support/eventually.ts';

describe('media admin API: list, read, edit, delete', function () {
  this.timeout(60_000);
  let f: AdminFixture;
  let dataDir: string;
  const ids: Record<string, string> = {};

  before(async () => {
    dataDir = path.join(tempDir(), 'data');
    f = await startMediaFixture({}, dataDir);
    const uploads: Array<[string, Uint8Array]> = [
      ['Holiday-Beach.png', await png(8, 8, 1)],
      ['holiday-mountain.jpg', await jpeg(8, 8)],
      ['report-2026.pdf', Buffer.concat([Buffer.from('%PDF-1.4\n'), Buffer.from('1 0 obj << >> endobj\ntrailer << >>\n%%EOF\n')])],
      ['notes.txt', Buffer.from('plain notes')],
      ['clip.wav', wav()],
    ];
    // In order, so that the newest-first list order is known.
    for (const [name, bytes] of uploads) {
      const up = await uploadMultipart(f, bytes, { fileName: name });
      expect(up.status, `${name}: ${JSON.stringify(up.body)}`).to.equal(201);
      ids[name] = up.body.id;
    }
  });
  after(async () => {
    await f?.stop();
  });

  const names = (body: { items: Array<{ fileName: string }> }) => body.items.map((i) => i.fileName);

  it('lists the project\'s media newest first, one page when they fit', async () => {
    const all = await f.call('GET', '/media');
    expect(all.status).to.equal(200);
    expect(all.body.nextCursor).to.equal(null);
    expect(names(all.body)).to.deep.equal(['clip.wav', 'notes.txt', 'report-2026.pdf', 'holiday-mountain.jpg', 'Holiday-Beach.png']);
    expect(all.body.items[4]).to.include({ id: ids['Holiday-Beach.png'], mimeType: 'image/png', kind: 'image', width: 8, height: 8 });
    expect(all.body.items[4].url).to.equal(`${f.service.url}/public/p/${f.project.projectId}/v1/media/${ids['Holiday-Beach.png']}`);
    (await documentedResponses(f.service.url))('listMedia', 200, all.body);
  });

  it('pages with limit (max 100) and cursor; page is not a parameter', async () => {
    const first = await f.call('GET', '/media?limit=2');
    const second = await f.call('GET', `/media?limit=2&cursor=${first.body.nextCursor}`);
    expect(names(second.body)).to.deep.equal(['report-2026.pdf', 'holiday-mountain.jpg']);
    const third = await f.call('GET', `/media?limit=2&cursor=${second.body.nextCursor}`);
    expect(names(third.body)).to.deep.equal(['Holiday-Beach.png']);
    expect(third.body.nextCursor).to.equal(null);
    const tooMany = await f.call('GET', '/media?limit=101');
    expect(tooMany.status).to.equal(400);
    expect(tooMany.body.error.message).to.equal('limit: must be at most 100');
    expect((await f.call('GET', '/media?page=2')).status).to.equal(400);
    // A cursor of another list (here: another filter) is refused, naming the cursor.
    const otherList = await f.call('GET', `/media?limit=2&type=image&cursor=${first.body.nextCursor}`);
    expect(otherList.status).to.equal(400);
    expect(otherList.body.error.message).to.match(/^cursor: /);
  });

  it('filters by kind (image, video, audio, document) and by MIME type prefix', async () => {
    expect(names((await f.call('GET', '/media?type=image')).body)).to.deep.equal(['holiday-mountain.jpg', 'Holiday-Beach.png']);
    expect(names((await f.call('GET', '/media?type=audio')).body)).to.deep.equal(['clip.wav']);
    expect((await f.call('GET', '/media?type=video')).body.items).to.have.length(0);
    expect(names((await f.call('GET', '/media?type=document')).body)).to.deep.equal(['notes.txt', 'report-2026.pdf']);
    const png = await f.call('GET', '/media?type=image/png');
    expect(png.body.items).to.have.length(1);
    expect(names(png.body)).to.deep.equal(['Holiday-Beach.png']);
    expect(names((await f.call('GET', '/media?type=image/')).body)).to.deep.equal(['holiday-mountain.jpg', 'Holiday-Beach.png']);
    expect(names((await f.call('GET', '/media?type=application/')).body)).to.deep.equal(['report-2026.pdf']);
    const bad = await f.call('GET', '/media?type=pictures');
    expect(bad.status).to.equal(400);
    expect(bad.body.error.message).to.match(/^type: must be image, video, audio, document or a MIME type prefix/);
  });

  it('filters by a case-insensitive name substring, combined with type and pages', async () => {
    const holiday = await f.call('GET', '/media?name=HOLIDAY');
    expect(holiday.body.items).to.have.length(2);
    expect(names(holiday.body)).to.deep.equal(['holiday-mountain.jpg', 'Holiday-Beach.png']);
    const first = await f.call('GET', '/media?name=holiday&limit=1');
    expect(names(first.body)).to.deep.equal(['holiday-mountain.jpg']);
    const paged = await f.call('GET', `/media?name=holiday&limit=1&cursor=${first.body.nextCursor}`);
    expect(names(paged.body)).to.deep.equal(['Holiday-Beach.png']);
    expect(paged.body.nextCursor).to.equal(null);
    expect(names((await f.call('GET', '/media?name=holiday&type=image/png')).body)).to.deep.equal(['Holiday-Beach.png']);
    expect((await f.call('GET', '/media?name=nothing-like-it')).body.items).to.have.length(0);
  });

  it('PATCH changes alt text and caption (an absent one kept) as an event; over-long text is 400', async () => {
    const id = ids['Holiday-Beach.png']!;
    const first = await f.call('PATCH', `/media/${id}`, { body: { altText: 'Sand and sea', caption: 'Summer 2026' } });
    expect(first.status, JSON.stringify(first.body)).to.equal(200);
    expect(first.body).to.include({ altText: 'Sand and sea', caption: 'Summer 2026' });
    const second = await f.call('PATCH', `/media/${id}`, { body: { caption: '' } });
    expect(second.body).to.include({ altText: 'Sand and sea', caption: '' });
    expect(second.body.updatedAt >= first.body.updatedAt).to.equal(true);
    expect((await f.call('GET', `/media/${id}`)).body).to.include({ altText: 'Sand and sea', caption: '' });
    const tooLong = await f.call('PATCH', `/media/${id}`, { body: { caption: 'x'.repeat(2001) } });
    expect(tooLong.status).to.equal(400);
    expect(tooLong.body.error.message).to.equal('caption: at most 2000 characters');
    const events = await collect(f.service.log.readStream(`media-asset-${id}`));
    expect(events.map((e) => e.type)).to.deep.equal(['media.asset-uploaded', 'media.asset-details-changed', 'media.asset-details-changed']);
    expect((await f.call('PATCH', '/media/not-a-uuid', { body: { caption: 'x' } })).status).to.equal(404);
  });

  it('DELETE is an event; the asset is 404 at once (admin and public), and its bytes are purged from DATA_DIR/media', async () => {
    const id = ids['notes.txt']!;
    const blob = path.join(dataDir, 'media', f.project.projectId, id);
    expect(fs.existsSync(blob)).to.equal(true);
    const deleted = await f.call('DELETE', `/media/${id}`);
    expect(deleted.status).to.equal(204);
    expect((await f.call('GET', `/media/${id}`)).status).to.equal(404);
    const publicRead = await fetch(`${f.service.url}/public/p/${f.project.projectId}/v1/media/${id}`);
    expect(publicRead.status).to.equal(404);
    expect(((await publicRead.json()) as any).error.code).to.equal('NOT_FOUND');
    expect((await f.call('DELETE', `/media/${id}`)).status).to.equal(404);
    expect((await f.call('GET', '/media')).body.items).to.have.length(4);
    // The outbox worker deletes the bytes, then records that it did: wait for both.
    const purgedEvents = () => collect(f.service.log.readStream(`outbox-media-purge-${id}`)).catch(() => []);
    await eventually(async () => ({ blob: fs.existsSync(blob), purged: (await purgedEvents()).length }), (x) => !x.blob && x.purged > 0, 10_000, 'the blob purged and that recorded', 50);
    expect(fs.existsSync(blob), 'blob purged').to.equal(false);
    const events = await collect(f.service.log.readStream(`media-asset-${id}`));
    expect(events.map((e) => e.type)).to.deep.equal(['media.asset-uploaded', 'media.asset-deleted']);
    expect(events[1]!.data).to.deep.include({ blobKeys: [`${f.project.projectId}/${id}`, `${f.project.projectId}/${id}.webp`] });
    const purged = await purgedEvents();
    expect(purged.map((e) => [e.type, (e.data as { ok: boolean }).ok])).to.deep.equal([['media.blobs-purged', true]]);
  });

  it('an unknown or malformed id is 404 NOT_FOUND', async () => {
    for (const id of ['00000000-0000-4000-8000-000000000000', 'nope']) {
      const response = await f.call('GET', `/media/${id}`);
      expect(response.status, id).to.equal(404);
      expect(response.body.error.code).to.equal('NOT_FOUND');
    }
  });

  it('documents the media routes in the OpenAPI document', async () => {
    const document = await (await fetch(`${f.service.url}/admin/v1/openapi.json`)).json() as { paths: Record<string, Record<string, { operationId: string }>> };
    expect(document.paths['/media']?.['post']?.operationId).to.equal('uploadMedia');
    expect(document.paths['/media']?.['get']?.operationId).to.equal('listMedia');
    expect(Object.keys(document.paths['/media/{assetId}'] ?? {}).sort()).to.deep.equal(['delete', 'get', 'patch']);
  });
});

/** A tiny valid WAV file (RIFF header and a few samples). */
function wav(): Buffer {
  const samples = Buffer.alloc(100, 0x80);
  const header = Buffer.alloc(44);
  header.write('RIFF', 0);
  header.writeUInt32LE(36 + samples.length, 4);
  header.write('WAVE', 8);
  header.write('fmt ', 12);
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(1, 20);
  header.writeUInt16LE(1, 22);
  header.writeUInt32LE(8000, 24);
  header.writeUInt32LE(8000, 28);
  header.writeUInt16LE(1, 32);
  header.writeUInt16LE(8, 34);
  header.write('data', 36);
  header.writeUInt32LE(samples.length, 40);
  return Buffer.concat([header, samples]);
}
