/**
 * What checking costs when media moves between stores (`annals media copy`, `log import --media-from`): the
 * verified copy (SHA-256 gate on the way in, every blob read back from the target and hashed) against a bare
 * copy of the same blobs through the same blob port (streamed, unchecked), measured in the same run,
 * interleaved, into fresh targets each round; and a rerun over a complete target (what resuming costs when
 * everything is there already: one read of each blob at the target).
 *
 *   npm run bench:media-copy -- [--assets 24] [--mb 4] [--rounds 3] [--concurrency 4] [--json]
 *
 * Also the process's peak RSS during the rounds above its RSS before them: with `--assets 2 --mb 512` it shows
 * that a blob is never held whole in memory.
 *
 * The source is a local folder; the target is S3 on MinIO when it is built (scripts/peers/build.sh minio, or
 * MINIO_URL), else another local folder (the output says which). Prints MB/s of each and the ratios; absolute
 * figures on a shared machine are noisy, the ratios less so.
 */
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import type { BlobStore } from '../../src/blobs/blob-store.ts';
import { LocalFolderBlobStore } from '../../src/blobs/local-folder-blob-store.ts';
import { S3BlobStore } from '../../src/blobs/s3-blob-store.ts';
import type { LoggedAsset } from '../../src/media/logged-assets.ts';
import { copyMedia } from '../../src/media/media-copy.ts';
import { forEachAsset } from '../../src/media/media-transfer.ts';
import { minioServer, minioServerPending, stopMinioServer } from '../../test/support/minio-server.ts';

const { values } = parseArgs({
  options: {
    assets: { type: 'string', default: '24' },
    mb: { type: 'string', default: '4' },
    rounds: { type: 'string', default: '3' },
    concurrency: { type: 'string', default: '4' },
    json: { type: 'boolean', default: false },
  },
});
const count = Number(values.assets);
const size = Math.round(Number(values.mb) * 1024 * 1024);
const rounds = Number(values.rounds);
const concurrency = Number(values.concurrency);
const say = (line: string) => process.stderr.write(`${line}\n`);

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'annals-bench-media-copy-'));
const project = randomUUID();
try {
  const source = new LocalFolderBlobStore(path.join(dir, 'source'));
  const assets: LoggedAsset[] = [];
  for (let i = 0; i < count; i++) {
    const bytes = randomBytes(size);
    const assetId = randomUUID();
    const asset = { assetId, projectId: project, fileName: `asset-${i}.bin`, mimeType: 'application/octet-stream', byteSize: size, sha256: createHash('sha256').update(bytes).digest('hex'), blobKey: `${project}/${assetId}` };
    await source.put(asset.blobKey, { bytes }, { contentType: asset.mimeType });
    assets.push(asset);
  }
  const pending = await minioServerPending();
  const targetKind = pending ? 'local folder' : 'S3 on MinIO';
  if (pending) say(`media-copy bench: no MinIO (${pending}): the target is a local folder`);
  const freshTarget = async (): Promise<BlobStore> => {
    if (pending) return new LocalFolderBlobStore(path.join(dir, `target-${randomUUID()}`));
    const minio = await minioServer();
    const bucket = `bench-${randomUUID().slice(0, 8)}`;
    const client = new S3Client({ region: 'us-east-1', endpoint: minio.endpoint, forcePathStyle: true, credentials: minio.credentials });
    await client.send(new CreateBucketCommand({ Bucket: bucket }));
    client.destroy();
    return new S3BlobStore({ bucket, region: 'us-east-1', endpoint: minio.endpoint, forcePathStyle: true, credentials: minio.credentials });
  };
  const totalMb = (count * size) / 1e6;
  const timed = async (work: () => Promise<unknown>): Promise<number> => {
    const started = performance.now();
    await work();
    return performance.now() - started;
  };
  const bare = (to: BlobStore) =>
    forEachAsset(assets, concurrency, async (asset) => {
      const read = (await source.get(asset.blobKey))!;
      await to.put(asset.blobKey, { stream: read.body, size: read.size }, { contentType: asset.mimeType });
    });
  const verified = async (to: BlobStore) => {
    const result = await copyMedia(assets, source, to, { concurrency });
    if (!result.verified || result.copied !== count) throw new Error(`the verified copy did not copy everything: ${JSON.stringify(result)}`);
  };
  const resume = async (to: BlobStore) => {
    const result = await copyMedia(assets, source, to, { concurrency });
    if (result.present !== count) throw new Error(`the rerun copied again: ${JSON.stringify(result)}`);
  };

  global.gc?.();
  const rssBefore = process.memoryUsage().rss;
  let rssPeak = rssBefore;
  const sampler = setInterval(() => {
    rssPeak = Math.max(rssPeak, process.memoryUsage().rss);
  }, 20);
  const samples: Array<{ bare: number; verified: number; resume: number }> = [];
  for (let round = 0; round < rounds; round++) {
    const [a, b] = [await freshTarget(), await freshTarget()];
    // Interleaved: the order alternates, so neither side always runs on a warmer machine.
    let bareMs: number;
    let verifiedMs: number;
    if (round % 2 === 0) {
      bareMs = await timed(() => bare(a));
      verifiedMs = await timed(() => verified(b));
    } else {
      verifiedMs = await timed(() => verified(b));
      bareMs = await timed(() => bare(a));
    }
    const resumeMs = await timed(() => resume(b));
    await Promise.all([a.close(), b.close()]);
    samples.push({ bare: bareMs, verified: verifiedMs, resume: resumeMs });
    say(`round ${round + 1}/${rounds}: bare ${(totalMb / (bareMs / 1000)).toFixed(1)} MB/s, verified ${(totalMb / (verifiedMs / 1000)).toFixed(1)} MB/s, rerun over a complete target ${(totalMb / (resumeMs / 1000)).toFixed(1)} MB/s`);
  }
  clearInterval(sampler);
  const median = (xs: number[]) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)]!;
  const result = {
    target: targetKind,
    assets: count,
    megabytes: Math.round(totalMb),
    concurrency,
    rounds,
    bareMBps: Number((totalMb / (median(samples.map((s) => s.bare)) / 1000)).toFixed(1)),
    verifiedMBps: Number((totalMb / (median(samples.map((s) => s.verified)) / 1000)).toFixed(1)),
    rerunMBps: Number((totalMb / (median(samples.map((s) => s.resume)) / 1000)).toFixed(1)),
    verifiedToBareTime: Number(median(samples.map((s) => s.verified / s.bare)).toFixed(2)),
    rerunToBareTime: Number(median(samples.map((s) => s.resume / s.bare)).toFixed(2)),
    peakRssGrowthMB: Math.round((rssPeak - rssBefore) / 1e6),
  };
  if (values.json) process.stdout.write(`${JSON.stringify(result)}\n`);
  else {
    say(`media copy of ${count} × ${values.mb} MB into ${targetKind}, ${concurrency} at once, median of ${rounds} rounds:`);
    say(`  bare copy (streamed through the blob port, unchecked)  ${result.bareMBps} MB/s`);
    say(`  verified copy (SHA-256 gate, read back and hashed)      ${result.verifiedMBps} MB/s   ${result.verifiedToBareTime}× the bare copy's time`);
    say(`  rerun over a complete target (resuming)               ${result.rerunMBps} MB/s   ${result.rerunToBareTime}× the bare copy's time`);
    say(`  peak RSS during the rounds: +${result.peakRssGrowthMB} MB over the ${Math.round(rssBefore / 1e6)} MB before them (blobs of ${values.mb} MB)`);
  }
} finally {
  await stopMinioServer();
  fs.rmSync(dir, { recursive: true, force: true });
}
