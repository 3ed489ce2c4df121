import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import { createPublicKey } from 'node:crypto';
import path from 'node:path';
import { expect } from 'chai';
import { articleFormSet, startAdminFixture } from '../admin/support.ts';
import { runEntry, runProgram } from '../support/child-process.ts';
import { tempDir } from '../support/temp-dir.ts';
import { jq, needing, openssl, pkcs11Tool, requireProgram, softHsm2 } from '../support/system-program.ts';
import { ManualClock } from '../../src/clock.ts';
import { loadConfig } from '../../src/config/config.ts';
import { SqliteKeyStore } from '../../src/key-store/sqlite-key-store.ts';
import { openAuditKeyRing } from '../../src/audit/open-audit-key-ring.ts';
import { rotateAuditKey } from '../../src/audit/rotate-audit-key.ts';
import { verifyEd25519 } from '../../src/audit/ed25519.ts';
import { verifyWithOpensslAsDocumented } from './openssl-as-documented.ts';

const SCRIPT = 'scripts/audit/verify-audit-export.mjs';
const PIN = '246810';
const TOKEN = 'annals-audit-test';
const LABEL = 'annals-audit';

/**
 * The audit key in an HSM: a SoftHSM2 token made for the test (its own SOFTHSM2_CONF folder), an Ed25519 key
 * pair made in it with OpenSC's pkcs11-tool as README says, the service and the CLI signing through PKCS#11
 * (CKM_EDDSA), exports verified with the standalone script and with openssl. A rotation adds the next key to
 * the token under the same label: the ring takes it up when its validity begins.
 */
describe(needing(softHsm2, needing(pkcs11Tool, needing(openssl, needing(jq, 'audit key in an HSM (SoftHSM2, PKCS#11, EdDSA)')))), function () {
  this.timeout(180_000);

  let module: string;
  let dataDir: string;
  let env: Record<string, string>;
  let projectId: string;
  let previousConf: string | undefined;

  const pkcs11 = (...args: string[]) => execFileSync('pkcs11-tool', ['--module', module, '--token-label', TOKEN, '--login', '--pin', PIN, ...args], { env: { ...process.env, ...env }, stdio: 'pipe' });
  const keyPair = (id: string) => pkcs11('--keypairgen', '--key-type', 'EC:edwards25519', '--label', LABEL, '--id', id);
  const cli = (args: string[], extra: Record<string, string> = {}) => runEntry('src/cli/main.ts', ['audit', ...args], { ...env, ...extra });
  const exportBundle = async (name: string) => {
    const out = path.join(tempDir(), `${name}.ndjson`);
    const result = await cli(['export', '--project', projectId, '--from', '2020-01-01', '--to', '2100-01-01', '--out', out, '--json']);
    expect(result.code, result.stderr).to.equal(0);
    return out;
  };
  const keyList = async () => {
    const listed = await cli(['public-key', '--json']);
    expect(listed.code, listed.stderr).to.equal(0);
    const file = path.join(tempDir(), 'audit-keys.json');
    fs.writeFileSync(file, listed.stdout);
    return file;
  };

  before(async function () {
    module = requireProgram(this, softHsm2);
    requireProgram(this, pkcs11Tool);
    requireProgram(this, openssl);
    requireProgram(this, jq);
    const hsm = tempDir();
    fs.mkdirSync(path.join(hsm, 'tokens'));
    fs.writeFileSync(path.join(hsm, 'softhsm2.conf'), `directories.tokendir = ${path.join(hsm, 'tokens')}\nobjectstore.backend = file\nlog.level = ERROR\n`);
    const keysDir = path.join(tempDir(), 'audit-keys');
    fs.mkdirSync(keysDir);
    const pinFile = path.join(keysDir, 'pin');
    fs.writeFileSync(pinFile, `${PIN}\n`, { mode: 0o400 });
    dataDir = path.join(tempDir(), 'data');
    env = {
      SOFTHSM2_CONF: path.join(hsm, 'softhsm2.conf'),
      DATA_DIR: dataDir,
      LOG_LEVEL: 'warn',
      AUDIT_PKCS11_MODULE: module,
      AUDIT_PKCS11_TOKEN: TOKEN,
      AUDIT_PKCS11_PIN_FILE: pinFile,
      AUDIT_PKCS11_KEY_LABEL: LABEL,
      AUDIT_KEY_CHAIN_FILE: path.join(keysDir, 'audit-key-chain.ndjson'),
    };
    execFileSync('softhsm2-util', ['--init-token', '--free', '--label', TOKEN, '--pin', PIN, '--so-pin', '13579'], { env: { ...process.env, ...env }, stdio: 'pipe' });
    keyPair('01');
    // SoftHSM2 reads its configuration from the environment when the module is initialised in this process.
    previousConf = process.env['SOFTHSM2_CONF'];
    process.env['SOFTHSM2_CONF'] = env['SOFTHSM2_CONF'];
  });

  after(() => {
    if (previousConf === undefined) delete process.env['SOFTHSM2_CONF'];
    else process.env['SOFTHSM2_CONF'] = previousConf;
  });

  it('the service starts on the token\'s key; an export signed in the HSM verifies with the script and with openssl', async () => {
    const f = await startAdminFixture({ dataDir, env });
    try {
      projectId = f.project.projectId;
      expect((await f.call('POST', '/form-sets', { body: articleFormSet })).status).to.equal(201);
    } finally {
      await f.stop();
    }
    const bundle = await exportBundle('in-hsm');
    const list = await keyList();
    const keys = JSON.parse(fs.readFileSync(list, 'utf8'));
    expect(keys.keys).to.have.length(1);
    const result = JSON.parse((await runProgram(process.execPath, [SCRIPT, bundle, '--public-key', list], {})).stdout);
    expect(result, JSON.stringify(result.problems)).to.include({ valid: true, authenticated: true, keyId: keys.keyId });
    const withOpenssl = verifyWithOpensslAsDocumented(bundle, list);
    expect(withOpenssl.code, withOpenssl.stderr).to.equal(0);
    expect(withOpenssl.stdout).to.contain('Signature Verified Successfully');
    // The public key the token holds is the one listed (read from the token, not from us).
    const exported = path.join(tempDir(), 'public.pem');
    pkcs11('--read-object', '--type', 'pubkey', '--id', '01', '--output-file', exported);
    const bytes = fs.readFileSync(exported);
    const publicKey = bytes.includes('-----BEGIN') ? createPublicKey(bytes) : createPublicKey({ key: bytes, format: 'der', type: 'spki' });
    expect(publicKey.export({ format: 'jwk' })).to.deep.include({ crv: 'Ed25519', x: keys.jwk.x });
  });

  it('a rotation within the token: the next key under the same label, announced by the first from the token itself; both exports verify', async () => {
    const first = await exportBundle('before-rotation');
    keyPair('02');
    const rotated = await cli(['rotate-key', '--json']);
    expect(rotated.code, rotated.stderr).to.equal(0);
    const outcome = JSON.parse(rotated.stdout);
    expect(outcome).to.include({ outcome: 'rotated' });
    const second = await exportBundle('after-rotation');
    const list = await keyList();
    for (const [bundle, keyId] of [[first, outcome.previousKeyId], [second, outcome.keyId]]) {
      const result = JSON.parse((await runProgram(process.execPath, [SCRIPT, bundle, '--public-key', list], {})).stdout);
      expect(result, JSON.stringify(result.problems)).to.include({ valid: true, authenticated: true, keyId });
      expect(verifyWithOpensslAsDocumented(bundle, list).code).to.equal(0);
    }
  });

  it('a running ring takes up the next key of the token when its validity begins', async () => {
    const clock = new ManualClock(new Date(Date.now() + 60_000));
    const config = loadConfig({ ...env });
    const keyStore = SqliteKeyStore.open(path.join(tempDir(), 'keys.sqlite'));
    const ring = await openAuditKeyRing(config, keyStore, clock);
    try {
      const before = ring.current();
      keyPair('03');
      const rotated = await rotateAuditKey({ config, keyStore, clock, noticeMs: 1000 });
      expect(rotated.outcome).to.equal('rotated');
      expect(ring.current().keyId).to.equal(before.keyId);
      clock.advance(1000);
      const now = ring.current();
      expect(now.keyId).to.equal(rotated.keyId);
      const signature = await now.sign(Buffer.from('checkpoint'));
      expect(verifyEd25519(now.publicKey, Buffer.from('checkpoint'), signature)).to.equal(true);
    } finally {
      await ring.close();
      await keyStore.close();
    }
  });

  it('refuses a wrong PIN and a label with no key, saying so without the PIN', async () => {
    const wrongPin = await cli(['export', '--project', projectId, '--from', '2020-01-01', '--to', '2100-01-01', '--out', path.join(tempDir(), 'x.ndjson'), '--json'], { AUDIT_PKCS11_PIN_FILE: '', AUDIT_PKCS11_PIN: '999999' });
    expect(wrongPin.code).to.equal(2);
    expect(wrongPin.stderr).to.contain('the token refused the login with the configured PIN (CKR_PIN_INCORRECT)').and.not.contain('999999');
    const noKey = await cli(['export', '--project', projectId, '--from', '2020-01-01', '--to', '2100-01-01', '--out', path.join(tempDir(), 'y.ndjson'), '--json'], { AUDIT_PKCS11_KEY_LABEL: 'nothing-here' });
    expect(noKey.code).to.equal(2);
    expect(noKey.stderr).to.contain('no Ed25519 private key labelled "nothing-here"').and.contain('pkcs11-tool');
  });
});
