import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { articleFormSet, startAdminFixture } from '../admin/support.ts';
import { runEntry, runProgram } from '../support/child-process.ts';
import { tempDir } from '../support/temp-dir.ts';
import { needing, openssl, requireProgram } from '../support/system-program.ts';
import { SqliteEventStore } from '../../src/event-store/sqlite-event-store.ts';
import { collect } from '../../src/event-store/event-store.ts';
import { KeyChain } from '../../src/audit/key-chain.ts';
import { readAuditKeyFile } from '../../src/audit/key-file-audit-key-source.ts';
import { keyFileEnv, readLines, resign, writeLines } from './audit-key-support.ts';

const SCRIPT = 'scripts/audit/verify-audit-export.mjs';

/**
 * An install's whole key history, through the operator's commands: it begins on the key store's key (the
 * fallback, with its warning), moves to a key file (the service announces it with the key store's key at its
 * next start), then rotates to a second key file. Every export made on the way verifies afterwards against the
 * newest key list, an export made after a rotation verifies against an older list through the bundle's chain,
 * and what a retired key signs afterwards is refused.
 */
describe(needing(openssl, 'audit key rotation: key store, key file, second key file; every export verifies after'), function () {
  this.timeout(240_000);

  let dataDir: string;
  let keysDir: string;
  let projectId: string;
  let chainFile: string;
  const exports: Record<string, string> = {};
  const lists: Record<string, string> = {};

  const cli = (args: string[], env: Record<string, string> = {}) => runEntry('src/cli/main.ts', ['audit', ...args], { DATA_DIR: dataDir, LOG_LEVEL: 'warn', ...env });
  const keyFile = (name: string) => {
    const file = path.join(keysDir, name);
    execFileSync('openssl', ['genpkey', '-algorithm', 'ed25519', '-out', file]);
    fs.chmodSync(file, 0o400);
    return file;
  };
  const exportAs = async (name: string, env: Record<string, string> = {}) => {
    const out = path.join(tempDir(), `${name}.ndjson`);
    const result = await cli(['export', '--project', projectId, '--from', '2020-01-01', '--to', '2100-01-01', '--out', out, '--json'], env);
    expect(result.code, result.stderr).to.equal(0);
    exports[name] = out;
    const listed = await cli(['public-key', '--json'], env);
    expect(listed.code, listed.stderr).to.equal(0);
    lists[name] = path.join(tempDir(), `${name}-keys.json`);
    fs.writeFileSync(lists[name], listed.stdout);
    return { stderr: result.stderr, list: JSON.parse(listed.stdout) };
  };
  const verify = async (bundle: string, list: string) => JSON.parse((await runProgram(process.execPath, [SCRIPT, bundle, '--public-key', list], {})).stdout);

  before(async function () {
    requireProgram(this, openssl);
    dataDir = path.join(tempDir(), 'data');
    keysDir = path.join(tempDir(), 'audit-keys');
    fs.mkdirSync(keysDir, { recursive: true });
    chainFile = path.join(keysDir, 'audit-key-chain.ndjson');
    const f = await startAdminFixture({ dataDir });
    try {
      projectId = f.project.projectId;
      expect((await f.call('POST', '/form-sets', { body: articleFormSet })).status).to.equal(201);
    } finally {
      await f.stop();
    }
  });

  it('on the key store\'s key: signs, and warns on every use that it protects nothing against readers of DATA_DIR', async () => {
    const { stderr, list } = await exportAs('keyStore');
    expect(stderr).to.contain('the audit signing key is kept in the key store beside the log');
    expect(stderr).to.contain('AUDIT_KEY_FILE');
    expect(list.keys).to.have.length(1);
    expect(list.keys[0]).to.include({ status: 'current', validUntil: null });
    // The signed-note form: the log's origin, the key hash, base64 of 0x01 and the 32-byte key (44 characters).
    expect(list.keys[0].vkey).to.match(new RegExp(`^${list.origin.replace('/', '\\/')}\\+[0-9a-f]{8}\\+A[A-Za-z0-9+/]{43}$`));
    expect(Buffer.from(list.keys[0].vkey.split('+').slice(2).join('+'), 'base64').subarray(1).toString('base64url')).to.equal(list.keys[0].jwk.x);
  });

  it('moved to a key file: the service announces it with the key store\'s key at start, which is retired and still verifies', async () => {
    const first = keyFile('first.pem');
    const env = keyFileEnv(first, chainFile);
    const f = await startAdminFixture({ dataDir, env });
    await f.stop();
    const chain = KeyChain.verify(fs.readFileSync(chainFile, 'utf8').trim().split('\n').map((l) => JSON.parse(l)));
    expect(chain.entries).to.have.length(2);
    const { stderr, list } = await exportAs('firstFile', env);
    expect(stderr).to.not.contain('kept in the key store');
    expect(list.keys.map((k: { status: string }) => k.status)).to.deep.equal(['retired', 'current']);
    expect(list.keys[0].keyId).to.equal(JSON.parse(fs.readFileSync(lists['keyStore']!, 'utf8')).keyId);
    expect(list.keys[0].validUntil).to.equal(list.keys[1].validFrom);
  });

  it('rotate-key announces the second key file, signed by the first (named with --previous-key-file); refused without it', async () => {
    const second = keyFile('second.pem');
    const env = keyFileEnv(second, chainFile);
    const unannounced = await cli(['export', '--project', projectId, '--from', '2020-01-01', '--to', '2100-01-01', '--out', path.join(tempDir(), 'x.ndjson'), '--json'], env);
    expect(unannounced.code).to.equal(2);
    expect(JSON.parse(unannounced.stdout).error).to.include({ code: 'AUDIT_KEY_SETUP' });
    expect(unannounced.stderr).to.contain('annals audit rotate-key').and.contain('--previous-key-file');

    const without = await cli(['rotate-key', '--json'], env);
    expect(without.code).to.equal(2);
    expect(without.stderr).to.contain('name its key file with --previous-key-file');
    const rotated = await cli(['rotate-key', '--previous-key-file', path.join(keysDir, 'first.pem'), '--json'], env);
    expect(rotated.code, rotated.stderr).to.equal(0);
    const result = JSON.parse(rotated.stdout);
    expect(result).to.include({ outcome: 'rotated', chainFile, recordedInLog: 1 });
    expect(result.keys).to.have.length(3);
    // It returns once the new key signs.
    expect(Date.parse(result.validFrom)).to.be.at.most(Date.now());
    expect(JSON.parse((await cli(['rotate-key', '--json'], env)).stdout)).to.include({ outcome: 'current' });
    await exportAs('secondFile', env);
  });

  it('every export verifies against the newest list, each by the key valid when it was signed; the newest against the oldest list through the bundle\'s chain', async () => {
    const newest = lists['secondFile']!;
    const keys = JSON.parse(fs.readFileSync(newest, 'utf8')).keys;
    for (const [name, signer] of [['keyStore', 0], ['firstFile', 1], ['secondFile', 2]] as const) {
      const result = await verify(exports[name]!, newest);
      expect(result, `${name}: ${JSON.stringify(result.problems)}`).to.include({ valid: true, authenticated: true, keyId: keys[signer].keyId });
      expect(result.keyChain).to.include({ announcedInBundle: 0, validFrom: keys[signer].validFrom, validUntil: keys[signer].validUntil });
    }
    const throughChain = await verify(exports['secondFile']!, lists['keyStore']!);
    expect(throughChain, JSON.stringify(throughChain.problems)).to.include({ valid: true, authenticated: true });
    expect(throughChain.keyChain).to.include({ announcedInBundle: 2 });
  });

  it('the first key file, retired: the service will not start on it, and what its holder signs now is refused as outside its validity', async () => {
    const first = path.join(keysDir, 'first.pem');
    await startAdminFixture({ dataDir: path.join(tempDir(), 'data'), env: keyFileEnv(first, chainFile) }).then(
      async (f) => {
        await f.stop();
        expect.fail('started on a retired key');
      },
      (error: Error) => expect(error.message).to.match(/retired at .* when key .* took over: configure the current key instead/),
    );
    const { key } = readAuditKeyFile({ file: first, dataDir, setting: 'test' });
    const lines = readLines(exports['firstFile']!);
    const header = lines[0]!;
    const resigned = writeLines(await resign(lines.slice(0, -1), key, header['keyChain'] as unknown[]));
    const result = await verify(resigned, lists['secondFile']!);
    expect(result.valid).to.equal(false);
    expect(result.problems.map((p: { message: string }) => p.message).join('\n')).to.match(/signed at .* by key .* until .*: outside its validity/);
  });

  it('the log records each announcement once, in chain order (audit.key-announced)', async () => {
    const store = SqliteEventStore.open(path.join(dataDir, 'events.sqlite'));
    try {
      const announced = await collect(store.readStream('audit-keys'));
      const list = JSON.parse(fs.readFileSync(lists['secondFile']!, 'utf8'));
      expect(announced.map((e) => e.type)).to.deep.equal(['audit.key-announced', 'audit.key-announced', 'audit.key-announced']);
      expect(announced.map((e) => (e.data as { keyId: string }).keyId)).to.deep.equal(list.keys.map((k: { keyId: string }) => k.keyId));
      expect(announced.map((e) => (e.data as { announcement: unknown }).announcement)).to.deep.equal(list.keyChain);
    } finally {
      await store.close();
    }
  });
});

describe('audit key file at service start: refusals that name the fix', function () {
  this.timeout(60_000);

  it('a key file open to other users stops `npm start` with exit code 1 and the chmod that fixes it; inside DATA_DIR, with where to move it', async () => {
    const dataDir = path.join(tempDir(), 'data');
    const keysDir = path.join(tempDir(), 'audit-keys');
    fs.mkdirSync(keysDir, { recursive: true });
    const file = path.join(keysDir, 'audit-key.pem');
    execFileSync('openssl', ['genpkey', '-algorithm', 'ed25519', '-out', file]);
    fs.chmodSync(file, 0o644);
    const started = await runEntry('src/main.ts', [], { DATA_DIR: dataDir, PORT: '0', ...keyFileEnv(file, path.join(keysDir, 'chain.ndjson')) });
    expect(started.code).to.equal(1);
    expect(started.stderr).to.contain(`annals: cannot start: AUDIT_KEY_FILE=${file} is open to other users (mode 0644): it is a secret; run chmod o-rwx ${file}`);
    expect(fs.existsSync(path.join(keysDir, 'chain.ndjson')), 'nothing created').to.equal(false);

    const inside = path.join(dataDir, 'audit-key.pem');
    fs.mkdirSync(dataDir, { recursive: true });
    fs.copyFileSync(file, inside);
    fs.chmodSync(inside, 0o400);
    const refused = await runEntry('src/main.ts', [], { DATA_DIR: dataDir, PORT: '0', ...keyFileEnv(inside, path.join(keysDir, 'chain.ndjson')) });
    expect(refused.code).to.equal(1);
    expect(refused.stderr).to.contain(`AUDIT_KEY_FILE=${inside} is inside DATA_DIR (${dataDir})`).and.contain('move it out');
  });

  it('settings that do not fit together are a configuration error (exit code 2), the PIN never shown', async () => {
    const result = await runEntry('src/main.ts', [], { DATA_DIR: path.join(tempDir(), 'data'), AUDIT_PKCS11_MODULE: '/nonexistent.so', AUDIT_PKCS11_PIN: 'secret-pin-1234', AUDIT_PKCS11_KEY_LABEL: 'k' });
    expect(result.code).to.equal(2);
    expect(result.stderr).to.contain('AUDIT_PKCS11_MODULE needs exactly one of AUDIT_PKCS11_TOKEN and AUDIT_PKCS11_SLOT').and.contain('AUDIT_KEY_CHAIN_FILE is unset').and.not.contain('secret-pin-1234');
  });
});
