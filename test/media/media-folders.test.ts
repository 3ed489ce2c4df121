/**
 * The media library's folders and images' focal points (issue 44), through the admin API on a started service:
 * put at upload or moved later, listed with their counts, filtered by, refused when malformed; a focal point
 * set, rounded, cleared, refused for what is not an image; and all of it still so after a rebuild.
 */
import path from 'node:path';
import { expect } from 'chai';
import { pino } from 'pino';
import type { AdminFixture } from '../admin/support.ts';
import { documentedResponses } from '../support/openapi-responses.ts';
import { tempDir } from '../support/temp-dir.ts';
import { eventually } from '../support/engine-fixture.ts';
import { startRebuild } from '../../src/projection-engine/rebuild.ts';
import { media } from '../../projections/media.ts';
import { png, startMediaFixture, uploadMultipart } from './support.ts';

describe('media admin API: folders and focal points', function () {
  this.timeout(60_000);
  let f: AdminFixture;
  const ids: Record<string, string> = {};

  before(async () => {
    f = await startMediaFixture({}, path.join(tempDir(), 'data'));
    const uploads: Array<[string, string | undefined, Uint8Array]> = [
      ['cover.png', 'Press/2026', await png(40, 20, 1)],
      ['logo.png', ' Press / 2026 ', await png(8, 8, 2)],
      ['team.png', 'Press', await png(8, 8, 3)],
      ['loose.png', undefined, await png(8, 8, 4)],
      ['notes.txt', 'Docs', Buffer.from('plain notes')],
    ];
    for (const [name, folder, bytes] of uploads) {
      const up = await uploadMultipart(f, bytes, { fileName: name, ...(folder === undefined ? {} : { fields: { folder } }) });
      expect(up.status, `${name}: ${JSON.stringify(up.body)}`).to.equal(201);
      ids[name] = up.body.id;
    }
  });
  after(async () => {
    await f?.stop();
  });

  const folders = async () => (await f.call('GET', '/media/folders')).body.items;
  const namesIn = async (folder: string) => (await f.call('GET', `/media?folder=${encodeURIComponent(folder)}`)).body.items.map((i: { fileName: string }) => i.fileName);

  it('files uploads into folders (names trimmed), lists the folders with their counts, and filters by folder', async () => {
    expect((await f.call('GET', `/media/${ids['logo.png']}`)).body).to.include({ folder: 'Press/2026', focalPoint: null });
    const listed = await f.call('GET', '/media/folders');
    expect(listed.status).to.equal(200);
    expect(listed.body.items).to.deep.equal([
      { folder: 'Docs', assets: 1 },
      { folder: 'Press', assets: 1 },
      { folder: 'Press/2026', assets: 2 },
    ]);
    (await documentedResponses(f.service.url))('listMediaFolders', 200, listed.body);
    expect(await namesIn('Press/2026')).to.deep.equal(['logo.png', 'cover.png']);
    expect(await namesIn('Press'), 'not its subfolders').to.deep.equal(['team.png']);
    expect(await namesIn(''), 'the top').to.deep.equal(['loose.png']);
    expect((await f.call('GET', '/media')).body.items, 'no filter: everything').to.have.length(5);
  });

  it('moves an asset between folders; a folder goes with its last asset', async () => {
    const moved = await f.call('PATCH', `/media/${ids['team.png']}`, { body: { folder: 'Press/2026' } });
    expect(moved.status, JSON.stringify(moved.body)).to.equal(200);
    expect(moved.body.folder).to.equal('Press/2026');
    expect(await folders()).to.deep.equal([
      { folder: 'Docs', assets: 1 },
      { folder: 'Press/2026', assets: 3 },
    ]);
    await f.call('PATCH', `/media/${ids['notes.txt']}`, { body: { folder: '' } });
    await f.call('DELETE', `/media/${ids['cover.png']}`);
    expect(await folders()).to.deep.equal([{ folder: 'Press/2026', assets: 2 }]);
  });

  it('sets an image\'s focal point (rounded to 4 decimals), clears it, and refuses one for what is not an image', async () => {
    const set = await f.call('PATCH', `/media/${ids['logo.png']}`, { body: { focalPoint: { x: 0.123456, y: 1 } } });
    expect(set.status, JSON.stringify(set.body)).to.equal(200);
    expect(set.body.focalPoint).to.deep.equal({ x: 0.1235, y: 1 });
    expect((await f.call('GET', `/media/${ids['logo.png']}`)).body.focalPoint).to.deep.equal({ x: 0.1235, y: 1 });
    const cleared = await f.call('PATCH', `/media/${ids['logo.png']}`, { body: { focalPoint: null } });
    expect(cleared.body.focalPoint).to.equal(null);
    const notImage = await f.call('PATCH', `/media/${ids['notes.txt']}`, { body: { focalPoint: { x: 0.5, y: 0.5 } } });
    expect(notImage.status).to.equal(400);
    expect(notImage.body.error.message).to.contain('only images have one');
    const outside = await f.call('PATCH', `/media/${ids['logo.png']}`, { body: { focalPoint: { x: 1.5, y: 0.5 } } });
    expect(outside.status).to.equal(400);
    expect(outside.body.error.code).to.equal('VALIDATION_ERROR');
  });

  it('refuses malformed folder names with 400, at upload and on a move, and changes nothing', async () => {
    for (const folder of ['a//b', '../up', 'a/./b', 'x'.repeat(65), Array.from({ length: 9 }, (_, i) => `l${i}`).join('/'), 'tab\there']) {
      const moved = await f.call('PATCH', `/media/${ids['loose.png']}`, { body: { folder } });
      expect(moved.status, folder).to.equal(400);
      expect(moved.body.error.code).to.equal('VALIDATION_ERROR');
      expect(moved.body.error.message).to.contain('folder');
    }
    const upload = await uploadMultipart(f, await png(4, 4, 9), { fileName: 'bad.png', fields: { folder: 'a//b' } });
    expect(upload.status).to.equal(400);
    expect((await f.call('GET', `/media/${ids['loose.png']}`)).body.folder).to.equal('');
    expect(await namesIn('')).to.not.include('bad.png');
  });

  it('a rebuild of the media read model gives the same folders, counts and focal points', async () => {
    await f.call('PATCH', `/media/${ids['team.png']}`, { body: { focalPoint: { x: 0.25, y: 0.75 } } });
    const before = { folders: await folders(), assets: (await f.call('GET', '/media')).body.items };
    const rebuild = startRebuild({ projection: media, log: f.service.log, store: f.service.stores.readModels, clock: { now: () => new Date() }, logger: pino({ level: 'silent' }), dropGraceMs: 1000 });
    const result = await rebuild.result;
    await eventually(async () => f.service.supervisor!.liveGeneration(media.name), (generation) => generation === result.generation, 10_000);
    await rebuild.dropped;
    expect(await folders()).to.deep.equal(before.folders);
    expect((await f.call('GET', '/media')).body.items).to.deep.equal(before.assets);
  });
});
