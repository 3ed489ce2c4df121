import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { LocalFolderBlobStore } from '../../src/blobs/local-folder-blob-store.ts';
import { BlobStoreUnavailableError } from '../../src/blobs/blob-store.ts';
import { tempDir } from '../support/temp-dir.ts';
import { blobStoreConformance, readAll } from './blob-store.conformance.ts';

blobStoreConformance('LocalFolderBlobStore (conformance)', {
  create: async () => new LocalFolderBlobStore(path.join(tempDir('annals-media-'), 'media')),
});

describe('LocalFolderBlobStore', () => {
  it('keeps each key as one file under its folder and leaves no temporary files behind', async () => {
    const root = path.join(tempDir('annals-media-'), 'media');
    const store = new LocalFolderBlobStore(root);
    await store.put('p1/a1', { bytes: Buffer.from('bytes') }, { contentType: 'text/plain' });
    await store.put('p1/a1.webp', { bytes: Buffer.from('webp') }, { contentType: 'image/webp' });
    expect(fs.readdirSync(path.join(root, 'p1')).sort()).to.deep.equal(['a1', 'a1.webp']);
    expect(fs.readFileSync(path.join(root, 'p1', 'a1'), 'utf8')).to.equal('bytes');
  });

  it('a blob deleted while it is being read is still read whole', async () => {
    const store = new LocalFolderBlobStore(path.join(tempDir('annals-media-'), 'media'));
    const bytes = Buffer.alloc(3 * 1024 * 1024, 7);
    await store.put('p/a', { bytes }, { contentType: 'application/octet-stream' });
    const read = await store.get('p/a');
    await store.delete('p/a');
    expect((await readAll(read!.body)).equals(bytes)).to.equal(true);
  });

  it('ping fails with BlobStoreUnavailableError when the folder cannot be created', async () => {
    const file = path.join(tempDir('annals-media-'), 'a-file');
    fs.writeFileSync(file, 'not a folder');
    let error: unknown;
    try {
      await new LocalFolderBlobStore(path.join(file, 'media')).ping();
    } catch (e) {
      error = e;
    }
    expect(error).to.be.instanceOf(BlobStoreUnavailableError);
  });
});
