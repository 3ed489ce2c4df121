import path from 'node:path';
import { expect } from 'chai';
import sharp from 'sharp';
import { pino } from 'pino';
import { LocalFolderBlobStore } from '../../src/blobs/local-folder-blob-store.ts';
import type { BlobSource, BlobStore } from '../../src/blobs/blob-store.ts';
import { WebpVariants } from '../../src/media/webp-variants.ts';
import { tempDir } from '../support/temp-dir.ts';
import { readAll } from '../blobs/blob-store.conformance.ts';
import { animatedGif, png } from './support.ts';

/** A real local-folder store that counts the puts it is asked for. */
class CountingStore extends LocalFolderBlobStore {
  puts = 0;
  override async put(key: string, source: BlobSource, options: { contentType: string }): Promise<void> {
    this.puts++;
    return super.put(key, source, options);
  }
}

describe('WebpVariants', () => {
  const logger = pino({ level: 'silent' });
  let store: CountingStore;
  let variants: WebpVariants;
  beforeEach(() => {
    const dir = tempDir('annals-webp-');
    store = new CountingStore(path.join(dir, 'media'));
    variants = new WebpVariants({ blobs: store as BlobStore, tempDir: dir, logger });
  });

  it('converts once for concurrent first requests, stores the variant beside the original, and reuses it', async () => {
    await store.put('p/a', { bytes: await png(120, 80) }, { contentType: 'image/png' });
    store.puts = 0;
    const asset = { assetId: 'a', blobKey: 'p/a', mimeType: 'image/png', animated: false };
    const results = await Promise.all(Array.from({ length: 20 }, () => variants.ensure(asset)));
    expect(store.puts).to.equal(1);
    expect(new Set(results.map((r) => JSON.stringify(r))).size).to.equal(1);
    expect(results[0]!.key).to.equal('p/a.webp');
    const stored = await readAll((await store.get('p/a.webp'))!.body);
    expect(stored.length).to.equal(results[0]!.size);
    const meta = await sharp(stored).metadata();
    expect([meta.format, meta.width, meta.height]).to.deep.equal(['webp', 120, 80]);
    // A new process (no memory of it) finds the stored variant instead of converting again.
    const fresh = new WebpVariants({ blobs: store as BlobStore, tempDir: tempDir(), logger });
    expect(await fresh.ensure(asset)).to.deep.equal(results[0]);
    expect(store.puts).to.equal(1);
  });

  it('makes none for SVG, WebP and animated images, and answers null (original served) when the image cannot be decoded', async () => {
    expect(await variants.ensure({ assetId: 's', blobKey: 'p/s', mimeType: 'image/svg+xml', animated: false })).to.equal(null);
    expect(await variants.ensure({ assetId: 'w', blobKey: 'p/w', mimeType: 'image/webp', animated: false })).to.equal(null);
    await store.put('p/g', { bytes: await animatedGif() }, { contentType: 'image/gif' });
    expect(await variants.ensure({ assetId: 'g', blobKey: 'p/g', mimeType: 'image/gif', animated: true })).to.equal(null);
    const broken = Buffer.concat([(await png(50, 50)).subarray(0, 40), Buffer.alloc(500, 7)]);
    await store.put('p/b', { bytes: broken }, { contentType: 'image/png' });
    store.puts = 0;
    expect(await variants.ensure({ assetId: 'b', blobKey: 'p/b', mimeType: 'image/png', animated: false })).to.equal(null);
    expect(await variants.ensure({ assetId: 'b', blobKey: 'p/b', mimeType: 'image/png', animated: false })).to.equal(null);
    expect(store.puts).to.equal(0);
    expect(await store.stat('p/b.webp')).to.equal(null);
  });
});
