import { expect } from 'chai';
import { projectionHarness } from '../support/projection-harness.ts';
import { handleCommand } from '../../src/application/command-handler.ts';
import { assetDecider, type AssetCommand } from '../../src/domain/media/asset-decider.ts';
import { assetStreamId, blobsPurged } from '../../src/domain/media/media-events.ts';
import type { Principal } from '../../src/domain/principal.ts';
import { media } from '../../projections/media.ts';

const PROJECT = '7d2a9c1e-2b44-4e8a-8f0a-6c1d2e3f4a01';
const A1 = 'a1111111-1111-4111-8111-111111111111';
const A2 = 'a2222222-2222-4222-8222-222222222222';
const admin: Principal = { kind: 'user', userId: 'u1', tenantId: 't1', role: 'tenant_admin' };
const actor = { actor: { type: 'user' as const, id: 'u1' } };

describe('media projection', () => {
  let h: ReturnType<typeof projectionHarness>;
  beforeEach(() => {
    h = projectionHarness(media, { start: '2026-11-22T12:00:00.000Z', batchSize: 2 });
  });
  afterEach(async () => {
    await h.close();
  });

  const run = async (assetId: string, command: AssetCommand) => {
    h.clock.advance(1000);
    return handleCommand(h.log, assetStreamId(assetId), assetDecider, command, { principal: admin, now: h.clock.now().toISOString() }, actor);
  };
  const upload = (assetId: string, mimeType: string, fileName: string): AssetCommand => ({
    type: 'register_upload',
    assetId,
    projectId: PROJECT,
    fileName,
    mimeType,
    byteSize: 10,
    sha256: 'ab'.repeat(32),
    width: mimeType.startsWith('image/') ? 3 : null,
    height: mimeType.startsWith('image/') ? 4 : null,
    animated: false,
    altText: '',
    caption: '',
    blobKey: `${PROJECT}/${assetId}`,
    source: 'base64',
  });

  it('given uploads, details changes, a deletion and its purge, expects these documents', async () => {
    await run(A1, upload(A1, 'image/png', 'a.png'));
    await run(A2, upload(A2, 'application/pdf', 'b.pdf'));
    await run(A1, { type: 'update_details', projectId: PROJECT, altText: 'Alt', caption: 'Cap' });
    await run(A2, { type: 'delete_asset', projectId: PROJECT, blobKeys: [`${PROJECT}/${A2}`, `${PROJECT}/${A2}.webp`] });
    await h.project();

    const a1 = await h.doc('assets', A1);
    expect(a1!['seq']).to.match(/^\d{20}$/);
    expect(a1).to.deep.include({ assetId: A1, projectId: PROJECT, fileName: 'a.png', mimeType: 'image/png', mimeTop: 'image', kind: 'image', width: 3, height: 4, altText: 'Alt', caption: 'Cap', uploadedAt: '2026-11-22T12:00:01.000Z', updatedAt: '2026-11-22T12:00:03.000Z', uploadedBy: { type: 'user', id: 'u1' } });
    expect(await h.doc('assets', A2)).to.equal(null);
    expect(await h.doc('purges', A2)).to.deep.equal({ assetId: A2, projectId: PROJECT, blobKeys: [`${PROJECT}/${A2}`, `${PROJECT}/${A2}.webp`], status: 'pending', error: null, deletedAt: '2026-11-22T12:00:04.000Z', finishedAt: null });

    h.clock.advance(1000);
    await h.log.append(`outbox-media-purge-${A2}`, [{ type: blobsPurged.type, data: { projectId: PROJECT, assetId: A2, ok: false, error: 'boom' } }], 'no_stream', { actor: { type: 'system', id: 'outbox:media-purge' } });
    await h.project();
    expect(await h.doc('purges', A2)).to.deep.include({ status: 'failed', error: 'boom', finishedAt: '2026-11-22T12:00:05.000Z' });
    expect(await h.find('purges', { filter: { status: 'pending' } })).to.deep.equal([]);
  });

  it('classifies kinds: image, video, audio, and everything else as document', async () => {
    const ids = ['b1111111-1111-4111-8111-111111111111', 'b2222222-2222-4222-8222-222222222222', 'b3333333-3333-4333-8333-333333333333', 'b4444444-4444-4444-8444-444444444444'];
    const types = ['image/svg+xml', 'video/mp4', 'audio/mpeg', 'text/plain'];
    for (let i = 0; i < ids.length; i++) await run(ids[i]!, upload(ids[i]!, types[i]!, `f${i}`));
    await h.project();
    const kinds = await Promise.all(ids.map(async (id) => (await h.doc('assets', id))!['kind']));
    expect(kinds).to.deep.equal(['image', 'video', 'audio', 'document']);
  });
});
