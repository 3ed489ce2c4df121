import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { articleFormSet, startAdminFixture, type AdminFixture } from '../admin/support.ts';
import { tempDir } from '../support/temp-dir.ts';
import { eventually } from '../support/engine-fixture.ts';
import { collect } from '../../src/event-store/event-store.ts';
import { eventLeafHash } from '../../src/audit/log-leaf.ts';
import { rootOfLeaves, verifyConsistency, verifyInclusion, leafHash } from '../../src/audit/merkle-tree.ts';
import { CHECKPOINT_FILE, publishedCheckpoints } from '../../src/audit/checkpoint-folder.ts';
import { checkpointOfNote } from '../../src/audit/log-checkpoints.ts';
import { parseNote, verifiedSigners } from '../../src/audit/signed-note.ts';
import { openKeyStoreAuditKeyRing } from '../../src/audit/key-store-audit-key-ring.ts';
import { systemClock } from '../../src/clock.ts';
import { openKeyStore } from '../../src/key-store/open-key-store.ts';
import { loadConfig } from '../../src/config/config.ts';

/**
 * The service keeps one Merkle tree over its whole log, signs checkpoints of it within a second of the log
 * changing, publishes them outside DATA_DIR, and proves inclusion and consistency from the stored tree.
 */
describe('audit: the log tree follows the log; checkpoints are signed, published and proven', function () {
  this.timeout(60_000);
  let f: AdminFixture;
  let dataDir: string;
  let published: string;

  before(async () => {
    dataDir = path.join(tempDir(), 'data');
    published = path.join(tempDir(), 'published');
    f = await startAdminFixture({ dataDir, env: { AUDIT_CHECKPOINT_DIR: published, AUDIT_LOG_ORIGIN: 'test.example/annals' } });
    const formSet = await f.call('POST', '/form-sets', { body: articleFormSet });
    expect(formSet.status).to.equal(201);
    const created = await f.call('POST', `/form-sets/${formSet.body.id}/entries`, { body: { slug: 'first', fields: { title: 'First' } } });
    expect(created.status).to.equal(201);
  });
  after(() => f?.stop());

  it('a checkpoint covering every event is published to the folder outside DATA_DIR within seconds, signed by the audit key', async () => {
    const events = await collect(f.service.stores.events.readAll());
    const head = events.length;
    const checkpoint = (await eventually(
      // The folder is made when the service starts; its file with the first checkpoint.
      async () => (fs.existsSync(path.join(published, CHECKPOINT_FILE)) ? publishedCheckpoints(published).at(-1) : undefined),
      (last) => last !== undefined && last.size >= head,
      10_000,
    ))!;
    const parsed = checkpointOfNote(checkpoint.note);
    expect(parsed.origin).to.equal('test.example/annals');
    const leaves = (await collect(f.service.stores.events.readAll())).slice(0, parsed.size).map(eventLeafHash);
    expect(Buffer.from(parsed.rootHash).toString('hex')).to.equal(Buffer.from(rootOfLeaves(leaves)).toString('hex'));
    const keys = await openKeyStore(loadConfig({ DATA_DIR: dataDir }));
    try {
      const ring = await openKeyStoreAuditKeyRing(keys, systemClock);
      expect(verifiedSigners(checkpoint.note, ring.publicKeys().map((k) => ({ name: parsed.origin, publicKey: k.publicKey })))).to.have.length(1);
    } finally {
      await keys.close();
    }
    expect(parseNote(checkpoint.note).signatures[0]!.name).to.equal('test.example/annals');
  });

  it('proves an event\'s inclusion and one checkpoint\'s consistency with a later one from the stored tree', async () => {
    const proofs = f.service.logTree!.proofs;
    const first = (await proofs.latestCheckpoint())!;
    const formSets = await f.call('GET', '/form-sets');
    const more = await f.call('POST', `/form-sets/${formSets.body.items[0].id}/entries`, { body: { slug: 'second', fields: { title: 'Second' } } });
    expect(more.status).to.equal(201);
    const later = (await eventually(() => proofs.latestCheckpoint(), (latest) => latest !== null && latest.size > first.size, 10_000))!;
    const events = await collect(f.service.stores.events.readAll());
    for (const index of [0, Math.floor(first.size / 2), first.size - 1, later.size - 1]) {
      const proof = await proofs.inclusion(events[index]!.id);
      expect(proof.leafIndex).to.equal(index);
      expect(Buffer.from(leafHash(proof.leaf)).toString('base64')).to.equal(proof.leafHash);
      expect(verifyInclusion(Buffer.from(proof.leafHash, 'base64'), proof.leafIndex, proof.treeSize, proof.proof.map((h) => Buffer.from(h, 'base64')), Buffer.from(proof.checkpoint.rootHash, 'base64'))).to.equal(true);
    }
    const consistency = await proofs.consistency(first.size, later.size);
    expect(verifyConsistency(first.size, later.size, consistency.proof.map((h) => Buffer.from(h, 'base64')), Buffer.from(first.rootHash, 'base64'), Buffer.from(later.rootHash, 'base64'))).to.equal(true);
    expect(fs.existsSync(path.join(dataDir, 'log-tree.sqlite'))).to.equal(true);
  });
});
