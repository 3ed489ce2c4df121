/**
 * The move to production stores with its media, as an operator runs it, every step a real process: the
 * demo project (8 images) on the embedded default, `annals log export`, then `annals log import
 * --keys-from --media-from` into a service on other stores (SQLite log with MinIO blobs; and MongoDB read
 * models where a real MongoDB runs), and the service started there: every image answers 200 with the bytes
 * it had before the move. Then `annals media verify` finds a blob removed behind the service's back (which
 * answers 404, not 500), and `annals media copy` restores it.
 */
import { createHash, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { CreateBucketCommand, DeleteObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { expect } from 'chai';
import type { DemoResult } from '../../src/application/demo-content.ts';
import { runEntry, startServiceProcess, type StartedService } from '../support/child-process.ts';
import { minioServer, minioServerPending, type MinioServer } from '../support/minio-server.ts';
import { mongoServer, mongoServerTarget } from '../support/mongo-server.ts';
import { tempDir } from '../support/temp-dir.ts';
import { eventually } from '../support/eventually.ts';

type Demo = Omit<DemoResult, 'position'>;

const cli = (env: Record<string, string>, ...args: string[]) => runEntry('src/cli/main.ts', args, env, 120_000);

const until = async <T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 60_000): Promise<T> => (await eventually(probe, (value) => value !== undefined, timeoutMs, what, 100)) as T;

/** The 8 demo assets from the admin API, once the service is ready and its read models hold them all. */
async function mediaList(service: StartedService, agentKey: string): Promise<Asset[]> {
  await until('the service is ready', async () => ((await fetch(`${service.url}/readyz`)).status === 200 ? true : undefined));
  return until('the media list', async () => {
    const response = await fetch(`${service.url}/admin/v1/media?limit=100`, { headers: { authorization: `Bearer ${agentKey}` } });
    if (response.status !== 200) return undefined;
    const items = ((await response.json()) as { items: Asset[] }).items;
    return items.length === 8 ? items : undefined;
  });
}

interface Asset {
  id: string;
  fileName: string;
  mimeType: string;
  byteSize: number;
  sha256: string;
}

/** The embedded default before the move: the demo's data folder, what its service served, its exported log. */
interface Before {
  old: { DATA_DIR: string };
  demo: Demo;
  /** Each image's bytes as the service on the embedded default served them, by asset id. */
  servedBefore: Map<string, Buffer>;
  /** `annals log export` of it. */
  file: string;
}

let before: Promise<Before> | undefined;

/**
 * The move's starting point, the same for every target, so made once (a demo run, a service start and a log
 * export: three process starts each target would repeat). The moves only read it: log import --keys-from and
 * --media-from and media copy --from copy out of it, and each target cuts an image from its own copy.
 */
function embeddedBefore(): Promise<Before> {
  before ??= (async () => {
    // The demo on the embedded default, served by its service; its images in DATA_DIR/media.
    const old = { DATA_DIR: path.join(tempDir(), 'old') };
    const demoRun = await cli(old, 'demo', '--json');
    expect(demoRun.code, demoRun.stderr).to.equal(0);
    const demo = JSON.parse(demoRun.stdout) as Demo;
    expect(demo.mediaAssets).to.equal(8);
    const oldService = await startServiceProcess(old, 60_000);
    const servedBefore = new Map<string, Buffer>();
    try {
      const items = await mediaList(oldService, demo.agentKey);
      for (const asset of items) {
        const response = await fetch(`${oldService.url}/public/p/${demo.projectId}/v1/media/${asset.id}`);
        expect(response.status).to.equal(200);
        servedBefore.set(asset.id, Buffer.from(await response.arrayBuffer()));
      }
    } finally {
      // The move begins with the service stopped, so that the log no longer changes.
      await oldService.stop();
    }
    expect(servedBefore.size).to.equal(8);
    for (const [id, bytes] of servedBefore) expect(fs.readFileSync(path.join(old.DATA_DIR, 'media', demo.projectId, id)).equals(bytes)).to.equal(true);

    const file = path.join(tempDir(), 'annals-log.ndjson');
    const exported = await cli(old, 'log', 'export', '--to', file);
    expect(exported.code, exported.stderr).to.equal(0);
    return { old, demo, servedBefore, file };
  })();
  return before;
}

const minioPending = await minioServerPending();
const mongoTarget = await mongoServerTarget();
const targets: Array<{ title: string; pending?: string | undefined; env: () => Promise<Record<string, string>> }> = [
  { title: 'a SQLite log with MinIO blobs', pending: minioPending, env: async () => ({}) },
  {
    title: 'a SQLite log, MongoDB read models and MinIO blobs',
    pending:
      minioPending ??
      (mongoTarget.kind === 'pending' ? mongoTarget.reason : undefined),
    env: async () => {
      const url = new URL((await mongoServer()).url);
      url.pathname = `/annals_move_${randomUUID().slice(0, 8)}`;
      return { MONGODB_URL: url.toString() };
    },
  },
];

for (const target of targets) {
  describe(`moving the demo with its media from the embedded default to ${target.title}${target.pending ? ` [pending: ${target.pending}]` : ''}`, function () {
    this.timeout(300_000);
    if (target.pending) {
      it('every image answers 200 with the same bytes after log export and log import --media-from');
      return;
    }
    let service: StartedService | undefined;
    after(async () => {
      await service?.stop();
    });

    it('every image answers 200 with the same bytes after log export and log import --media-from; media verify and media copy find and mend a lost blob', async () => {
      const minio: MinioServer = await minioServer();
      const bucket = `annals-move-${randomUUID().slice(0, 8)}`;
      const s3 = new S3Client({ region: 'us-east-1', endpoint: minio.endpoint, forcePathStyle: true, credentials: minio.credentials });
      await s3.send(new CreateBucketCommand({ Bucket: bucket }));

      // Before: the demo on the embedded default, served by its service, its log exported (made once for both targets).
      const { old, demo, servedBefore, file } = await embeddedBefore();

      // The new stores: another data folder (its SQLite log) with S3 on MinIO (and MongoDB where it runs).
      const moved: Record<string, string> = {
        DATA_DIR: path.join(tempDir(), 'new'),
        S3_BUCKET: bucket,
        S3_ENDPOINT: minio.endpoint,
        S3_FORCE_PATH_STYLE: 'true',
        S3_ACCESS_KEY_ID: minio.credentials.accessKeyId,
        S3_SECRET_ACCESS_KEY: minio.credentials.secretAccessKey,
        SECRETS_KEY: fs.readFileSync(path.join(old.DATA_DIR, 'secrets-key'), 'utf8').trim(),
        ...(await target.env()),
      };

      // A first import from a copy of the media folder that lost one image: the log is imported and
      // verified, the media copy names the missing image and fails the command.
      const partial = path.join(tempDir(), 'media-copy');
      fs.cpSync(path.join(old.DATA_DIR, 'media'), partial, { recursive: true });
      const lostId = [...servedBefore.keys()][3]!;
      fs.rmSync(path.join(partial, demo.projectId, lostId));
      const first = await cli(moved, 'log', 'import', file, '--keys-from', path.join(old.DATA_DIR, 'keys.sqlite'), '--media-from', partial, '--json');
      expect(first.code, first.stderr).to.equal(1);
      const firstResult = JSON.parse(first.stdout) as { verified: boolean; media: { copied: number; present: number; verified: boolean; problems: Array<{ assetId: string; problem: string; store: string; blobKey: string }> } };
      expect(firstResult.verified).to.equal(true);
      expect(firstResult.media).to.deep.include({ copied: 7, present: 0, verified: false });
      expect(firstResult.media.problems).to.have.length(1);
      expect(firstResult.media.problems[0]).to.deep.include({ assetId: lostId, problem: 'missing', store: 'source', blobKey: `${demo.projectId}/${lostId}` });
      expect(first.stderr).to.include(`missing at the source: asset ${lostId}`);

      // Run again from the whole folder: the log is there already, seven images too; the eighth is copied.
      const second = await cli(moved, 'log', 'import', file, '--media-from', path.join(old.DATA_DIR, 'media'));
      expect(second.code, second.stderr).to.equal(0);
      const secondResult = JSON.parse(second.stdout) as { appended: number; verified: boolean; media: { from: string; to: string; copied: number; present: number; verified: boolean } };
      expect(secondResult).to.deep.include({ appended: 0, verified: true });
      expect(secondResult.media).to.deep.include({ copied: 1, present: 7, verified: true, from: path.join(old.DATA_DIR, 'media'), to: `s3://${bucket}?endpoint=${minio.endpoint}&region=us-east-1&path-style=true` });
      expect(second.stderr).to.match(/log import media .*8\/8 assets/);
      expect(second.stdout + second.stderr).not.to.include(minio.credentials.secretAccessKey);

      // The service on the new stores builds its read models, then serves every image as it was.
      service = await startServiceProcess(moved, 60_000);
      const assets = await mediaList(service, demo.agentKey);
      const publicBase = `${service.url}/public/p/${demo.projectId}/v1`;
      for (const asset of assets) {
        const response = await fetch(`${publicBase}/media/${asset.id}`);
        expect(response.status, asset.fileName).to.equal(200);
        expect(response.headers.get('content-type')).to.equal(asset.mimeType);
        expect(response.headers.get('etag')).to.equal(`"${asset.sha256}"`);
        const body = Buffer.from(await response.arrayBuffer());
        expect(body.equals(servedBefore.get(asset.id)!), asset.fileName).to.equal(true);
        expect(createHash('sha256').update(body).digest('hex')).to.equal(asset.sha256);
        const webp = await fetch(`${publicBase}/media/${asset.id}`, { headers: { Accept: 'image/webp' } });
        expect(webp.status).to.equal(200);
        expect(webp.headers.get('content-type')).to.equal('image/webp');
        await webp.arrayBuffer();
      }
      // The published entries' Open Graph images, as a site would load them.
      const entry = (await (await fetch(`${publicBase}/form-sets/blog/entries?limit=1&include_snapshot=true`)).json()) as { items: Array<{ published: { mediaUrls: { og_image: string } } }> };
      const ogImage = entry.items[0]!.published.mediaUrls.og_image;
      expect(ogImage.startsWith(`${publicBase}/media/`)).to.equal(true);
      expect((await fetch(ogImage)).status).to.equal(200);

      const verified = await cli(moved, 'media', 'verify', '--json');
      expect(verified.code, verified.stderr).to.equal(0);
      expect(JSON.parse(verified.stdout)).to.deep.include({ assets: 8, verified: true, quick: false, problems: [] });

      // A blob removed from the bucket behind the service's back: 404 (not 500), found by media verify, mended by media copy.
      await s3.send(new DeleteObjectCommand({ Bucket: bucket, Key: `${demo.projectId}/${lostId}` }));
      expect((await fetch(`${publicBase}/media/${lostId}`)).status).to.equal(404);
      await until('the error line naming the lost asset', async () => (service!.logs().some((line) => line['assetId'] === lostId && line['level'] === 'error' && line['blobKey'] === `${demo.projectId}/${lostId}`) ? true : undefined), 5_000);
      const found = await cli(moved, 'media', 'verify', '--json');
      expect(found.code).to.equal(1);
      const foundResult = JSON.parse(found.stdout) as { verified: boolean; problems: Array<{ assetId: string; problem: string }> };
      expect(foundResult.problems.map((p) => [p.assetId, p.problem])).to.deep.equal([[lostId, 'missing']]);
      const mended = await cli(moved, 'media', 'copy', '--from', path.join(old.DATA_DIR, 'media'), '--json');
      expect(mended.code, mended.stderr).to.equal(0);
      expect(JSON.parse(mended.stdout)).to.deep.include({ assets: 8, copied: 1, present: 7, verified: true });
      const back = await fetch(`${publicBase}/media/${lostId}`);
      expect(back.status).to.equal(200);
      expect(Buffer.from(await back.arrayBuffer()).equals(servedBefore.get(lostId)!)).to.equal(true);
      s3.destroy();
    });
  });
}
