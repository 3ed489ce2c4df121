/**
 * Carrying media bytes between blob stores (src/media/media-copy.ts) and checking a store against the
 * records (src/media/media-verify.ts), on real stores: the local folder and S3 on MinIO (the compose file's
 * S3 server; pending with the reason where none can run), both ways. The digest gate and the locations an
 * operator writes are checked on their own.
 */
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { expect } from 'chai';
import { BlobStoreUnavailableError, type BlobStore } from '../../src/blobs/blob-store.ts';
import { describeBlobLocation, parseBlobLocation, sameBlobLocation } from '../../src/blobs/blob-location.ts';
import { LocalFolderBlobStore } from '../../src/blobs/local-folder-blob-store.ts';
import { S3BlobStore } from '../../src/blobs/s3-blob-store.ts';
import { DigestMismatchError, digestGate } from '../../src/media/blob-digest.ts';
import type { LoggedAsset } from '../../src/media/logged-assets.ts';
import { copyMedia } from '../../src/media/media-copy.ts';
import type { MediaProgress } from '../../src/media/media-transfer.ts';
import { verifyMedia } from '../../src/media/media-verify.ts';
import { minioServer, minioServerPending, type MinioServer } from '../support/minio-server.ts';
import { freePort } from '../support/ports.ts';
import { tempDir } from '../support/temp-dir.ts';
import { readAll } from '../blobs/blob-store.conformance.ts';

const PROJECT = randomUUID();

/** Assets with random bytes of the given sizes, stored in `store`; their records as the log would hold them. */
async function storedAssets(store: BlobStore, sizes: readonly number[]): Promise<Array<LoggedAsset & { bytes: Buffer }>> {
  const assets = [];
  for (const [i, size] of sizes.entries()) {
    const bytes = randomBytes(size);
    const assetId = randomUUID();
    const asset = { assetId, projectId: PROJECT, fileName: `file-${i}.bin`, mimeType: 'application/octet-stream', byteSize: size, sha256: createHash('sha256').update(bytes).digest('hex'), blobKey: `${PROJECT}/${assetId}`, bytes };
    await store.put(asset.blobKey, { bytes }, { contentType: asset.mimeType });
    assets.push(asset);
  }
  return assets;
}

async function bytesAt(store: BlobStore, key: string): Promise<Buffer | null> {
  const read = await store.get(key);
  return read ? readAll(read.body) : null;
}

const folderStore = () => new LocalFolderBlobStore(path.join(tempDir('annals-media-copy-'), 'media'));

const minioPending = await minioServerPending();
let minio: MinioServer | undefined;
async function minioStore(): Promise<S3BlobStore> {
  minio ??= await minioServer();
  const bucket = `annals-copy-${randomUUID().slice(0, 8)}`;
  const client = new S3Client({ region: 'us-east-1', endpoint: minio.endpoint, forcePathStyle: true, credentials: minio.credentials });
  await client.send(new CreateBucketCommand({ Bucket: bucket }));
  client.destroy();
  return new S3BlobStore({ bucket, region: 'us-east-1', endpoint: minio.endpoint, forcePathStyle: true, credentials: minio.credentials });
}

const directions: Array<[string, () => Promise<BlobStore>, () => Promise<BlobStore>]> = [
  ['the local folder to S3 on MinIO', async () => folderStore(), minioStore],
  ['S3 on MinIO to the local folder', minioStore, async () => folderStore()],
  ['one local folder to another', async () => folderStore(), async () => folderStore()],
];

for (const [title, makeSource, makeTarget] of directions) {
  const pending = title.includes('MinIO') ? minioPending : undefined;
  describe(`copying media from ${title}${pending ? ` [pending: ${pending}]` : ''}`, function () {
    this.timeout(60_000);
    if (pending) {
      it('copies every asset checked against its recorded SHA-256');
      return;
    }
    let from: BlobStore;
    let to: BlobStore;
    beforeEach(async () => {
      [from, to] = [await makeSource(), await makeTarget()];
    });
    afterEach(async () => {
      await Promise.all([from.close(), to.close()]);
    });

    it('copies every asset, each read back from the target with its recorded SHA-256; a second run copies nothing and finds them all', async () => {
      const assets = await storedAssets(from, [1, 70_000, 3 * 1024 * 1024 + 17, 5, 200_000]);
      const progress: MediaProgress[] = [];
      const first = await copyMedia(assets, from, to, { concurrency: 2, onProgress: (p) => progress.push(p) });
      const bytes = assets.reduce((sum, a) => sum + a.byteSize, 0);
      expect(first).to.deep.equal({ assets: 5, bytes, copied: 5, copiedBytes: bytes, present: 0, problems: [], verified: true });
      for (const asset of assets) expect((await bytesAt(to, asset.blobKey))?.equals(asset.bytes), asset.fileName).to.equal(true);
      expect(progress.at(-1)).to.deep.include({ assetsDone: 5, assets: 5, fraction: 1 });
      expect(progress.at(-1)!.bytesDone).to.equal(2 * bytes);
      expect(progress.map((p) => p.fraction)).to.deep.equal([...progress.map((p) => p.fraction)].sort((a, b) => a - b));

      const again = await copyMedia(assets, from, to);
      expect(again).to.deep.include({ copied: 0, present: 5, verified: true });
      const check = await verifyMedia(assets, to, assets.length);
      expect(check).to.deep.equal({ assets: 5, bytes, quick: false, problems: [], verified: true });
    });

    it('reports a source blob that is missing, of another size, or of another SHA-256, writes none of them, and copies the rest', async () => {
      const assets = await storedAssets(from, [10_000, 20_000, 30_000, 40_000]);
      const [missing, shorter, flipped, fine] = assets as [LoggedAsset & { bytes: Buffer }, LoggedAsset & { bytes: Buffer }, LoggedAsset & { bytes: Buffer }, LoggedAsset & { bytes: Buffer }];
      await from.delete(missing.blobKey);
      await from.put(shorter.blobKey, { bytes: shorter.bytes.subarray(1) }, { contentType: 'application/octet-stream' });
      const damaged = Buffer.from(flipped.bytes);
      damaged[damaged.length - 1] = damaged[damaged.length - 1]! ^ 0xff;
      await from.put(flipped.blobKey, { bytes: damaged }, { contentType: 'application/octet-stream' });

      const result = await copyMedia(assets, from, to);
      expect(result).to.deep.include({ copied: 1, present: 0, verified: false });
      expect(result.problems.map((p) => [p.assetId, p.problem, p.store])).to.have.deep.members([
        [missing.assetId, 'missing', 'source'],
        [shorter.assetId, 'corrupt', 'source'],
        [flipped.assetId, 'corrupt', 'source'],
      ]);
      expect(result.problems.find((p) => p.assetId === flipped.assetId)!.detail).to.include(flipped.sha256).and.include('nothing was written to the target');
      expect(result.problems.find((p) => p.assetId === missing.assetId)).to.deep.include({ projectId: PROJECT, fileName: missing.fileName, blobKey: missing.blobKey });
      // The digest gate held the damaged bytes back: the target never held them, not even complete but wrong.
      for (const bad of [missing, shorter, flipped]) expect(await to.stat(bad.blobKey), bad.fileName).to.equal(null);
      expect((await bytesAt(to, fine.blobKey))?.equals(fine.bytes)).to.equal(true);

      const check = await verifyMedia(assets, to, assets.length, { quick: true });
      expect(check.problems.map((p) => p.problem)).to.deep.equal(['missing', 'missing', 'missing']);
    });

    it('replaces what the target holds under a key when it is not the recorded bytes', async () => {
      const [asset] = await storedAssets(from, [50_000]);
      await to.put(asset!.blobKey, { bytes: randomBytes(50_000) }, { contentType: 'application/octet-stream' });
      const result = await copyMedia([asset!], from, to);
      expect(result).to.deep.include({ copied: 1, present: 0, verified: true });
      expect((await bytesAt(to, asset!.blobKey))?.equals(asset!.bytes)).to.equal(true);
    });
  });
}

describe('checking a blob store against the records (media verify)', () => {
  it('finds blobs missing, of another size, and (unless quick) of the same size but other bytes', async () => {
    const store = folderStore();
    const assets = await storedAssets(store, [1000, 2000, 3000, 4000]);
    await store.delete(assets[0]!.blobKey);
    await store.put(assets[1]!.blobKey, { bytes: randomBytes(10) }, { contentType: 'application/octet-stream' });
    await store.put(assets[2]!.blobKey, { bytes: randomBytes(3000) }, { contentType: 'application/octet-stream' });
    const full = await verifyMedia(assets, store, 4, { concurrency: 3 });
    expect(full).to.deep.include({ assets: 4, bytes: 10_000, verified: false, quick: false });
    expect(full.problems.map((p) => [p.assetId, p.problem])).to.have.deep.members([
      [assets[0]!.assetId, 'missing'],
      [assets[1]!.assetId, 'corrupt'],
      [assets[2]!.assetId, 'corrupt'],
    ]);
    expect(full.problems.find((p) => p.assetId === assets[2]!.assetId)!.detail).to.include(assets[2]!.sha256);
    const quick = await verifyMedia(assets, store, 4, { quick: true });
    expect(quick.problems.map((p) => p.assetId)).to.have.members([assets[0]!.assetId, assets[1]!.assetId]);
  });

  it('ends with BlobStoreUnavailableError when the store cannot be reached, instead of reporting every asset', async function () {
    this.timeout(30_000);
    const store = new S3BlobStore({ bucket: 'annals-media', region: 'us-east-1', endpoint: `http://127.0.0.1:${await freePort()}`, forcePathStyle: true, credentials: { accessKeyId: 'x', secretAccessKey: 'y' } });
    const assets = await storedAssets(folderStore(), [10, 20, 30]);
    try {
      let error: unknown;
      try {
        await verifyMedia(assets, store, 3, { quick: true });
      } catch (e) {
        error = e;
      }
      expect(error).to.be.instanceOf(BlobStoreUnavailableError);
      error = undefined;
      try {
        await copyMedia(assets, folderStore(), store);
      } catch (e) {
        error = e;
      }
      expect(error).to.be.instanceOf(BlobStoreUnavailableError);
    } finally {
      await store.close();
    }
  });
});

describe('the digest gate', () => {
  const run = async (chunks: Buffer[], expected: string) => {
    const out: Buffer[] = [];
    let error: unknown;
    try {
      for await (const chunk of Readable.from(chunks).pipe(digestGate(expected))) out.push(chunk as Buffer);
    } catch (e) {
      error = e;
    }
    return { out: Buffer.concat(out), error };
  };

  it('passes every byte through when the SHA-256 is the expected one', async () => {
    const chunks = [randomBytes(100), randomBytes(200), randomBytes(300)];
    const whole = Buffer.concat(chunks);
    const { out, error } = await run(chunks, createHash('sha256').update(whole).digest('hex'));
    expect(error).to.equal(undefined);
    expect(out.equals(whole)).to.equal(true);
  });

  it('fails with DigestMismatchError and never releases the last chunk when it is not', async () => {
    const chunks = [randomBytes(100), randomBytes(200), randomBytes(300)];
    const { out, error } = await run(chunks, 'a'.repeat(64));
    expect(error).to.be.instanceOf(DigestMismatchError);
    expect(out.length).to.be.below(600);
  });
});

describe('blob locations an operator writes (--from, --to, --media-from)', () => {
  const env = { S3_ACCESS_KEY_ID: 'AKIDEXAMPLE', S3_SECRET_ACCESS_KEY: 'not-shown-anywhere' };

  it('reads folders and s3:// URLs with the service\'s S3 settings, credentials from the environment', () => {
    expect(parseBlobLocation('data/media', {})).to.deep.equal({ kind: 'local-folder', dir: path.resolve('data/media') });
    expect(parseBlobLocation('file:///srv/annals/media', {})).to.deep.equal({ kind: 'local-folder', dir: '/srv/annals/media' });
    const s3 = parseBlobLocation('s3://annals-media?endpoint=http://127.0.0.1:9000&path-style=true&region=eu-west-1', env);
    expect(s3).to.deep.equal({ kind: 's3', bucket: 'annals-media', region: 'eu-west-1', endpoint: 'http://127.0.0.1:9000', forcePathStyle: true, credentials: { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'not-shown-anywhere' } });
    expect(parseBlobLocation('s3://annals-media', {})).to.deep.include({ region: 'us-east-1', endpoint: undefined, forcePathStyle: false, credentials: undefined });
    expect(describeBlobLocation(s3)).to.equal('s3://annals-media?endpoint=http://127.0.0.1:9000&region=eu-west-1&path-style=true');
    expect(describeBlobLocation(s3)).not.to.include('not-shown');
    expect(sameBlobLocation(s3, parseBlobLocation('s3://annals-media?endpoint=http://127.0.0.1:9000', {}))).to.equal(true);
    expect(sameBlobLocation(s3, parseBlobLocation('s3://annals-media', {}))).to.equal(false);
    expect(sameBlobLocation(parseBlobLocation('a/../media', {}), parseBlobLocation('media', {}))).to.equal(true);
  });

  it('refuses credentials in the URL, unknown parameters, prefixes, other schemes and what the service would refuse', () => {
    const refusals: Array<[string, RegExp, NodeJS.ProcessEnv?]> = [
      ['s3://key:secret@annals-media', /credentials do not go in the location/],
      ['s3://annals-media?acl=public', /unknown parameter "acl"/],
      ['s3://annals-media/some/prefix', /top level/],
      ['https://example.com/media', /https:\/\/ locations are not supported/],
      ['s3://Not_A_Bucket', /bucket="Not_A_Bucket": not an S3 bucket name/],
      ['s3://annals-media?endpoint=ftp://x', /endpoint=/],
      ['s3://annals-media?path-style=maybe', /path-style=/],
      ['s3://annals-media', /S3_SECRET_ACCESS_KEY is unset/, { S3_ACCESS_KEY_ID: 'only-one' }],
      ['', /empty location/],
    ];
    for (const [value, message, environment] of refusals) {
      expect(() => parseBlobLocation(value, environment ?? {}), value).to.throw(message);
    }
    expect(() => parseBlobLocation('s3://key:secret@annals-media', {})).to.throw().with.property('message').that.does.not.include('secret@');
  });
});

// The folder adapter leaves no temporary files behind when a copy is refused by the digest gate.
describe('a refused copy into the local folder', () => {
  it('leaves no temporary file', async () => {
    const root = path.join(tempDir('annals-media-copy-'), 'media');
    const [source, target] = [folderStore(), new LocalFolderBlobStore(root)];
    const [asset] = await storedAssets(source, [100_000]);
    await source.put(asset!.blobKey, { bytes: randomBytes(100_000) }, { contentType: 'application/octet-stream' });
    const result = await copyMedia([asset!], source, target);
    expect(result.problems.map((p) => p.problem)).to.deep.equal(['corrupt']);
    expect(fs.existsSync(path.join(root, PROJECT)) ? fs.readdirSync(path.join(root, PROJECT)) : []).to.deep.equal([]);
  });
});
