import fs from 'node:fs';
import path from 'node:path';
import { createPrivateKey, createPublicKey, randomBytes } from 'node:crypto';
import { spawn, type ChildProcess } from 'node:child_process';
import { expect } from 'chai';
import { articleFormSet, startAdminFixture, type AdminFixture } from '../admin/support.ts';
import { runEntry, runProgram } from '../support/child-process.ts';
import { tempDir } from '../support/temp-dir.ts';
import { freePort } from '../support/ports.ts';
import { eventually } from '../support/engine-fixture.ts';
import { locateGoPeer, needingPeer, requireGoPeer } from '../support/go-peers.ts';
import { CHECKPOINT_FILE, publishedCheckpoints } from '../../src/audit/checkpoint-folder.ts';
import { checkpointOfNote } from '../../src/audit/log-checkpoints.ts';
import { checkpointBody, noteKeyHash, parseNote, signNote, verifierKey, verifyCosignature } from '../../src/audit/signed-note.ts';
import { openKeyStoreAuditKeyRing } from '../../src/audit/key-store-audit-key-ring.ts';
import { openKeyStore } from '../../src/key-store/open-key-store.ts';
import { loadConfig } from '../../src/config/config.ts';
import { systemClock } from '../../src/clock.ts';

const ORIGIN = 'witnessed.example/annals';
const WITNESS = 'witness.test.example';

/** An Ed25519 key for the witness, as a note signing key (PRIVATE+KEY+name+hash+base64(0x01 || seed)) and its vkey. */
function witnessKey() {
  const seed = randomBytes(32);
  const privateKey = createPrivateKey({ key: Buffer.concat([Buffer.from('302e020100300506032b657004220420', 'hex'), seed]), format: 'der', type: 'pkcs8' });
  const publicKey = new Uint8Array(createPublicKey(privateKey).export({ format: 'der', type: 'spki' }).subarray(12));
  const hash = noteKeyHash(WITNESS, publicKey).toString(16).padStart(8, '0');
  return { skey: `PRIVATE+KEY+${WITNESS}+${hash}+${Buffer.concat([Buffer.from([1]), seed]).toString('base64')}`, vkey: verifierKey(WITNESS, publicKey) };
}

/**
 * The log's side of C2SP tlog-witness against a real witness: transparency-dev's omniwitness (built by
 * scripts/peers/build.sh witness), configured with this log's origin and vkey, kept off the network (no
 * public witness network config, no distributor, no bastion, metrics off). Checkpoints the service sends are
 * cosigned; the cosignatures verify in TypeScript, in the Go verifier (golang.org/x/mod/sumdb/note) and for
 * `annals audit verify --against witness:NAME`; a restarted service catches up from the witness's size (409);
 * a forked checkpoint (same size, another root) is refused by the witness.
 */
describe(needingPeer('witness', 'audit: checkpoints cosigned by a running transparency-dev witness; a fork refused'), function () {
  this.timeout(180_000);
  let witness: ChildProcess | undefined;
  let witnessUrl: string;
  let keys: ReturnType<typeof witnessKey>;
  let dataDir: string;
  let published: string;
  let logVkey: string;
  let f: AdminFixture | undefined;
  let witnessLog = '';

  const env = () => ({ AUDIT_CHECKPOINT_DIR: published, AUDIT_LOG_ORIGIN: ORIGIN, AUDIT_WITNESSES: JSON.stringify([{ url: witnessUrl, vkey: keys.vkey }]) });

  before(async function () {
    const binary = requireGoPeer(this, 'witness');
    dataDir = path.join(tempDir(), 'data');
    published = path.join(tempDir(), 'published');
    // The log's key exists before the service first starts: the witness is configured with it.
    const keyStore = await openKeyStore(loadConfig({ DATA_DIR: dataDir }));
    try {
      const ring = await openKeyStoreAuditKeyRing(keyStore, systemClock);
      logVkey = verifierKey(ORIGIN, ring.current().publicKey);
    } finally {
      await keyStore.close();
    }
    keys = witnessKey();
    const dir = tempDir();
    fs.writeFileSync(path.join(dir, 'witness.key'), keys.skey, { mode: 0o600 });
    fs.writeFileSync(path.join(dir, 'logs.yaml'), `Logs:\n  - Origin: ${ORIGIN}\n    PublicKey: ${logVkey}\n    URL: http://127.0.0.1:9/unused\n`);
    const port = await freePort();
    witnessUrl = `http://127.0.0.1:${port}/`;
    witness = spawn(binary, ['--listen', `127.0.0.1:${port}`, '--metrics_listen', '', '--private_key_path', path.join(dir, 'witness.key'), '--additional_logs', path.join(dir, 'logs.yaml'), '--db_file', path.join(dir, 'witness.db'), '--alsologtostderr'], { stdio: ['ignore', 'pipe', 'pipe'] });
    witness.stderr!.on('data', (d: Buffer) => (witnessLog += d.toString()));
    witness.stdout!.on('data', (d: Buffer) => (witnessLog += d.toString()));
    await eventually(() => fetch(`${witnessUrl}add-checkpoint`, { method: 'POST', body: 'old 0\n\n' }).then((r) => r.status, () => 0), (status) => status > 0, 20_000);
  });
  after(async () => {
    await f?.stop();
    witness?.kill('SIGTERM');
  });

  it('the service\'s checkpoints are cosigned; the cosignature verifies in TypeScript, in Go and for verify --against witness:NAME', async () => {
    f = await startAdminFixture({ dataDir, env: env() });
    const formSet = await f.call('POST', '/form-sets', { body: articleFormSet });
    expect(formSet.status).to.equal(201);
    const cosigned = (await eventually(
      async () => (fs.existsSync(path.join(published, CHECKPOINT_FILE)) ? publishedCheckpoints(published).filter((c) => c.cosignatures[WITNESS]).at(-1) : undefined),
      (c) => c !== undefined,
      30_000,
    ).catch((error: Error) => {
      throw new Error(`${error.message}\nwitness log:\n${witnessLog.slice(-3000)}`);
    }))!;
    const { body } = parseNote(cosigned.note);
    expect(verifyCosignature(body, cosigned.cosignatures[WITNESS]!, keys.vkey)).to.have.property('time').that.is.a('number');
    // The tree store keeps it beside the checkpoint too.
    expect((await f.service.logTree!.tree.checkpointOfSize(cosigned.size))?.cosignatures[WITNESS]).to.equal(cosigned.cosignatures[WITNESS]);

    const noteFile = path.join(tempDir(), 'checkpoint.note');
    fs.writeFileSync(noteFile, cosigned.note);
    if (locateGoPeer('tlog-verifier')) {
      const go = await runProgram(locateGoPeer('tlog-verifier')!, ['cosigned', '--checkpoint', noteFile, '--vkey', logVkey, '--witness', keys.vkey, '--cosignature', cosigned.cosignatures[WITNESS]!], {});
      expect(go.code, go.stdout).to.equal(0);
      const refused = await runProgram(locateGoPeer('tlog-verifier')!, ['cosigned', '--checkpoint', noteFile, '--vkey', logVkey, '--witness', witnessKey().vkey, '--cosignature', cosigned.cosignatures[WITNESS]!], {});
      expect(refused.code, 'another witness key').to.equal(1);
    }
    await f.stop();
    f = undefined;
    const verified = await runEntry('src/cli/main.ts', ['audit', 'verify', '--against', `witness:${WITNESS}`, '--json'], { DATA_DIR: dataDir, LOG_LEVEL: 'silent', ...env() });
    expect(verified.code, verified.stderr).to.equal(0);
    const report = JSON.parse(verified.stdout);
    expect(report.tree.checkpoint.cosignatures).to.deep.equal([{ witness: WITNESS, verified: true, time: report.tree.checkpoint.cosignatures[0].time }]);
  });

  it('a restarted service, which no longer knows the witness\'s size, catches up from its 409 and is cosigned again', async () => {
    const before = publishedCheckpoints(published).filter((c) => c.cosignatures[WITNESS]).at(-1)!.size;
    f = await startAdminFixture({ dataDir, env: env() });
    await eventually(async () => publishedCheckpoints(published).filter((c) => c.cosignatures[WITNESS]).at(-1)!.size, (size) => size > before, 30_000);
    await f.stop();
    f = undefined;
  });

  it('a forked checkpoint, of the size the witness holds but another root, signed with the log\'s own key, is refused (422)', async () => {
    const latest = publishedCheckpoints(published).filter((c) => c.cosignatures[WITNESS]).at(-1)!;
    const { size } = checkpointOfNote(latest.note);
    const keyStore = await openKeyStore(loadConfig({ DATA_DIR: dataDir }));
    let forged: string;
    try {
      const key = (await openKeyStoreAuditKeyRing(keyStore, systemClock)).current();
      forged = await signNote(checkpointBody({ origin: ORIGIN, size, rootHash: new Uint8Array(randomBytes(32)), extensions: [] }), [{ name: ORIGIN, publicKey: key.publicKey, sign: (m) => key.sign(m) }]);
    } finally {
      await keyStore.close();
    }
    const answer = await fetch(`${witnessUrl}add-checkpoint`, { method: 'POST', body: `old ${size}\n\n${forged}` });
    expect(answer.status).to.equal(422);
  });
});
