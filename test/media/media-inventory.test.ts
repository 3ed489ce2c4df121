/**
 * Which assets a media move or check walks: the live assets of the log (src/media/logged-assets.ts: from the
 * configured event log, or from an export file, as `media copy` and `log import --media-from` read them) and
 * every asset of the media read model, a page at a time (src/media/media-verify.ts: what `media verify`
 * walks), on a real SQLite log and read-model store with more assets than one page holds.
 */
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { expect } from 'chai';
import { assetDeleted, assetStreamId, assetUploaded } from '../../src/domain/media/media-events.ts';
import { exportLog, fileEvents } from '../../src/event-store/log-transfer.ts';
import { loggedAssetsOfFile, loggedAssetsOfLog } from '../../src/media/logged-assets.ts';
import { countReadModelAssets, readModelAssets } from '../../src/media/media-verify.ts';
import { ReadModelReader } from '../../src/read-models/read-model-reader.ts';
import { serviceEventCatalog } from '../../src/service/event-catalog.ts';
import { media } from '../../projections/media.ts';
import { projectionHarness } from '../support/projection-harness.ts';
import { tempDir } from '../support/temp-dir.ts';

const actor = { actor: { type: 'user' as const, id: 'u1' } };

describe('the assets a media move or check walks', function () {
  this.timeout(120_000);

  it('the log\'s live assets (from the log and from its export) and the read model\'s, paged past one page, agree', async () => {
    const h = projectionHarness(media, { batchSize: 500 });
    try {
      const projects = [randomUUID(), randomUUID()];
      const uploaded: Array<{ assetId: string; projectId: string; sha256: string }> = [];
      for (let i = 0; i < 1_150; i++) {
        const projectId = projects[i % 2]!;
        const assetId = randomUUID();
        const sha256 = i.toString(16).padStart(64, '0');
        uploaded.push({ assetId, projectId, sha256 });
        const data = { projectId, assetId, fileName: `f-${i}.png`, mimeType: 'image/png', byteSize: 100 + i, sha256, width: 2, height: 2, animated: false, altText: '', caption: '', blobKey: `${projectId}/${assetId}`, uploadedAt: h.clock.now().toISOString(), source: 'multipart' as const };
        await h.log.append(assetStreamId(assetId), [{ type: assetUploaded.type, data }], 'no_stream', actor);
      }
      const deleted = uploaded.splice(7, 1)[0]!;
      await h.log.append(assetStreamId(deleted.assetId), [{ type: assetDeleted.type, data: { projectId: deleted.projectId, assetId: deleted.assetId, blobKeys: [`${deleted.projectId}/${deleted.assetId}`], deletedAt: h.clock.now().toISOString() } }], 'any', actor);
      await h.project();

      const key = (a: { assetId: string; projectId: string; sha256: string }) => `${a.projectId}/${a.assetId}/${a.sha256}`;
      const expected = uploaded.map(key).sort();
      const fromLog = await loggedAssetsOfLog(h.log);
      expect(fromLog.map(key).sort()).to.deep.equal(expected);
      expect(fromLog[0]).to.deep.include({ fileName: 'f-0.png', mimeType: 'image/png', byteSize: 100 });
      const file = path.join(tempDir(), 'log.ndjson');
      await exportLog(h.log.store, file, { now: () => new Date() });
      expect((await loggedAssetsOfFile(fileEvents(file), serviceEventCatalog())).map(key).sort()).to.deep.equal(expected);

      const reader = new ReadModelReader(h.store);
      const walked = [];
      for await (const asset of readModelAssets(reader)) walked.push(asset);
      expect(walked.map(key).sort()).to.deep.equal(expected);
      expect(await countReadModelAssets(reader)).to.equal(expected.length);
      const ofOne = [];
      for await (const asset of readModelAssets(reader, projects[1])) ofOne.push(asset);
      expect(ofOne.map(key).sort()).to.deep.equal(uploaded.filter((a) => a.projectId === projects[1]).map(key).sort());
      expect(await countReadModelAssets(reader, projects[1])).to.equal(ofOne.length);
    } finally {
      await h.close();
    }
  });
});
