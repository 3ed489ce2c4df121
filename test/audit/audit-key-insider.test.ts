import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { createPrivateKey } from 'node:crypto';
import { expect } from 'chai';
import { startAdminFixture } from '../admin/support.ts';
import { adminSession } from '../mcp/support.ts';
import { articleFormSet } from '../admin/support.ts';
import { runEntry, runProgram } from '../support/child-process.ts';
import { tempDir } from '../support/temp-dir.ts';
import { jq, needing, openssl, requireProgram } from '../support/system-program.ts';
import { SqliteKeyStore } from '../../src/key-store/sqlite-key-store.ts';
import { chainLink } from '../../src/event-store/hash-chain.ts';
import { announceKey, KeyChain } from '../../src/audit/key-chain.ts';
import { jwkOf } from '../../src/audit/ed25519.ts';
import { keyFileEnv, memoryKey, readLines, reprove, resign, writeLines, type Line } from './audit-key-support.ts';
import { verifyWithOpensslAsDocumented } from './openssl-as-documented.ts';

const SCRIPT = 'scripts/audit/verify-audit-export.mjs';
const REFUSED = 'write.refused';

/**
 * The insider: someone with write access to the data folder (and the database) only, who removes the
 * approval refusals from the history and hands auditors a re-signed export. With the audit key in a file
 * outside DATA_DIR they can make the bundle consistent line by line, renumbering the streams and building a
 * Merkle tree and a checkpoint of their own over its lines, but they can sign it (and the checkpoint) only with
 * a key of their own, which the auditor's key list refuses, however they present it; the key itself is nowhere
 * in the data folder.
 */
describe(needing(openssl, needing(jq, 'audit keys against an insider: the key outside DATA_DIR, a re-signed export refused')), function () {
  this.timeout(180_000);

  let dataDir: string;
  let keyFile: string;
  let env: Record<string, string>;
  let bundle: string;
  let keyList: string;
  let refusals = 0;
  let projectId: string;

  before(async function () {
    requireProgram(this, openssl);
    requireProgram(this, jq);
    dataDir = path.join(tempDir(), 'data');
    const keysDir = path.join(tempDir(), 'audit-keys');
    fs.mkdirSync(keysDir, { recursive: true });
    keyFile = path.join(keysDir, 'audit-key.pem');
    // As docs/operations.md "The tamper-evident log" says to make it.
    execFileSync('openssl', ['genpkey', '-algorithm', 'ed25519', '-out', keyFile]);
    fs.chmodSync(keyFile, 0o440);
    env = { DATA_DIR: dataDir, LOG_LEVEL: 'silent', ...keyFileEnv(keyFile, path.join(keysDir, 'audit-key-chain.ndjson')) };

    const f = await startAdminFixture({ dataDir, env });
    try {
      const admin = await adminSession(f);
      const asAdmin = { token: admin, headers: { 'X-Project-Id': f.project.projectId } };
      expect((await f.call('PUT', '/project/approval-policy', { body: { humanApproval: true }, ...asAdmin })).status).to.equal(200);
      const formSet = await f.call('POST', '/form-sets', { body: articleFormSet });
      for (let i = 0; i < 3; i++) {
        const created = await f.call('POST', `/form-sets/${formSet.body.id}/entries`, { body: { slug: `figures-${i}`, fields: { title: `Figures ${i}`, body: 'Text' } } });
        const revision = created.body.revision;
        expect((await f.call('POST', `/revisions/${revision.id}/submit`, { body: {} })).status).to.equal(200);
        // The agent key may not publish under humanApproval: refused, and the refusal recorded.
        const refused = await f.call('POST', `/revisions/${revision.id}/publish`, { body: { revision: revision.revision } });
        expect(refused.status).to.equal(403);
        refusals += 1;
        // Then the agent writes on, after the refusal, in the same stream.
        expect((await f.call('POST', `/revisions/${revision.id}/reject`, { body: { reason: 'later' }, ...asAdmin })).status).to.equal(200);
      }
      projectId = f.project.projectId;
    } finally {
      // A clean stop appends the count of the refusals repeated within the minute (docs/audit.md section 8).
      await f.stop();
    }
    const cli = (args: string[]) => runEntry('src/cli/main.ts', ['audit', ...args], env);
    const dir = tempDir();
    keyList = path.join(dir, 'audit-keys.json');
    const listed = await cli(['public-key', '--json']);
    expect(listed.code, listed.stderr).to.equal(0);
    fs.writeFileSync(keyList, listed.stdout);
    bundle = path.join(dir, 'h1.ndjson');
    const exported = await cli(['export', '--project', projectId, '--from', '2020-01-01', '--to', '2100-01-01', '--out', bundle, '--json']);
    expect(exported.code, exported.stderr).to.equal(0);
  });

  it('the private key is nowhere in the data folder; an honest export verifies with the script and with openssl as docs/audit.md shows, refusals included', async () => {
    const seed = createPrivateKey(fs.readFileSync(keyFile)).export({ format: 'jwk' }).d!;
    const forms = [Buffer.from(seed, 'base64url'), Buffer.from(seed), Buffer.from(Buffer.from(seed, 'base64url').toString('base64')), Buffer.from(fs.readFileSync(keyFile, 'utf8').split('\n')[1]!)];
    const files = fs.readdirSync(dataDir, { recursive: true, withFileTypes: true }).filter((e) => e.isFile());
    expect(files.map((e) => e.name)).to.include.members(['events.sqlite', 'keys.sqlite']);
    for (const entry of files) {
      const bytes = fs.readFileSync(path.join(entry.parentPath, entry.name));
      for (const form of forms) expect(bytes.indexOf(form), `${entry.name} holds the key`).to.equal(-1);
    }

    const lines = readLines(bundle);
    // The first refusal, then the repeats of the minute counted in one event.
    const recorded = lines.filter((l) => l['type'] === REFUSED).map((l) => l['data'] as { repeated?: boolean; count?: number });
    expect(recorded.map((d) => (d.repeated ? d.count : 1)).reduce((a, b) => a! + b!, 0)).to.equal(refusals);
    const verified = await runProgram(process.execPath, [SCRIPT, bundle, '--public-key', keyList], {});
    expect(verified.code, verified.stdout).to.equal(0);
    expect(JSON.parse(verified.stdout)).to.include({ valid: true, authenticated: true });
    const withOpenssl = verifyWithOpensslAsDocumented(bundle, keyList);
    expect(withOpenssl.code, withOpenssl.stderr).to.equal(0);
    expect(withOpenssl.stdout).to.contain('Signature Verified Successfully');
  });

  it('the refusals removed and every chain re-linked, the bundle is consistent; signed with the insider\'s key it is refused, by the script and by openssl', async () => {
    const insider = memoryKey();
    const chain = KeyChain.verify([await announceKey({ chain: null, key: insider, validFrom: new Date('2020-01-01T00:00:00.000Z') })]);
    const forged = await resign(await reprove(withoutRefusals(readLines(bundle)), insider, originOf(bundle)), insider, chain.announcements());
    expect(forged.filter((l) => l['type'] === REFUSED)).to.have.length(0);
    const file = writeLines(forged);

    // Internally consistent: with the keys it carries, it verifies. Only the key gives it away.
    const alone = JSON.parse((await runProgram(process.execPath, [SCRIPT, file], {})).stdout);
    expect(alone, JSON.stringify(alone.problems)).to.include({ valid: true, authenticated: false });
    const refused = await runProgram(process.execPath, [SCRIPT, file, '--public-key', keyList], {});
    expect(refused.code).to.equal(1);
    const problems = JSON.parse(refused.stdout).problems.map((p: { message: string }) => p.message).join('\n');
    expect(problems).to.contain(`signed by key ${insider.keyId}, which your key list does not hold`);
    expect(problems).to.contain('the key chain was forked');
    expect(problems).to.contain(`log.checkpoint: its signed note verifies with no key of your key list under the origin ${originOf(bundle)}`);
    expect(verifyWithOpensslAsDocumented(file, keyList).code).to.not.equal(0);
  });

  it('its key added to the auditor\'s list, or announced after it without the real key\'s signature, is refused', async () => {
    const insider = memoryKey();
    const honest = JSON.parse(fs.readFileSync(keyList, 'utf8'));
    const current = KeyChain.verify(honest.keyChain);
    // An announcement of the insider's key as the current key's successor, signed by the insider's key alone.
    const announced = await announceKey({ chain: current, previous: { ...insider, keyId: current.current.statement.keyId }, key: insider, validFrom: new Date() }).catch(() => null);
    expect(announced, 'no one signs for the current key but its holder').to.equal(null);
    const statement = { kind: 'annals-audit-key-announcement', version: 1, sequence: current.entries.length, keyId: insider.keyId, publicKey: jwkOf(insider.publicKey), validFrom: new Date().toISOString(), previous: { keyId: current.current.statement.keyId, announcement: current.current.digest } };
    const payload = Buffer.from(JSON.stringify(statement)).toString('base64url');
    const signatures = [];
    for (const kid of [current.current.statement.keyId, insider.keyId]) {
      const header = Buffer.from(JSON.stringify({ alg: 'EdDSA', kid })).toString('base64url');
      signatures.push({ protected: header, signature: Buffer.from(await insider.sign(Buffer.from(`${header}.${payload}`))).toString('base64url') });
    }
    const keyChain = [...honest.keyChain, { payload, signatures }];
    // The auditor's list with the insider's key added (the listing's own `keys` too).
    const doctored = path.join(tempDir(), 'audit-keys.json');
    fs.writeFileSync(doctored, JSON.stringify({ ...honest, keyChain, keys: [...honest.keys, { keyId: insider.keyId, jwk: jwkOf(insider.publicKey), validFrom: statement.validFrom, validUntil: null }] }));
    const forged = writeLines(await resign(await reprove(withoutRefusals(readLines(bundle)), insider, originOf(bundle)), insider, keyChain));
    const withDoctored = JSON.parse((await runProgram(process.execPath, [SCRIPT, forged, '--public-key', doctored], {})).stdout);
    expect(withDoctored.valid).to.equal(false);
    expect(withDoctored.problems[0].message).to.match(/your key list .* does not verify: key announcement 2: no valid signature by the key before it/);
    const withHonest = JSON.parse((await runProgram(process.execPath, [SCRIPT, forged, '--public-key', keyList], {})).stdout);
    expect(withHonest.valid).to.equal(false);
    expect(withHonest.problems.map((p: { message: string }) => p.message).join('\n')).to.match(/the bundle's key chain does not verify: key announcement \d+: .*no valid signature by the key before it/);
  });

  it('a key of its own planted in the data folder\'s key store changes nothing: the ring signs with the key file\'s key, and the list stays as it was', async () => {
    const keys = SqliteKeyStore.open(path.join(dataDir, 'keys.sqlite'));
    try {
      const planted = memoryKey();
      await keys.putSigningKey({ name: 'audit', keyId: planted.keyId, privateJwk: JSON.stringify(createPrivateKey(planted.pem).export({ format: 'jwk' })), publicJwk: JSON.stringify(jwkOf(planted.publicKey)), createdAt: '2020-01-01T00:00:00.000Z' });
    } finally {
      await keys.close();
    }
    const listed = await runEntry('src/cli/main.ts', ['audit', 'public-key', '--json'], env);
    expect(listed.code, listed.stderr).to.equal(0);
    const honest = JSON.parse(fs.readFileSync(keyList, 'utf8'));
    expect(JSON.parse(listed.stdout).keyChain).to.deep.equal(honest.keyChain);
    const again = path.join(tempDir(), 'after-planting.ndjson');
    const projectId = readLines(bundle)[0]!['projectId'] as string;
    const exported = await runEntry('src/cli/main.ts', ['audit', 'export', '--project', projectId, '--from', '2020-01-01', '--to', '2100-01-01', '--out', again, '--json'], env);
    expect(exported.code, exported.stderr).to.equal(0);
    const result = JSON.parse((await runProgram(process.execPath, [SCRIPT, again, '--public-key', keyList], {})).stdout);
    expect(result).to.include({ valid: true, authenticated: true, keyId: honest.keyId });
  });
});

/** The log's origin, as the bundle's checkpoint names it. */
function originOf(bundle: string): string {
  return String((readLines(bundle)[0]!['log'] as { checkpoint: { note: string } }).checkpoint.note.split('\n')[0]);
}

/** The bundle without the approval refusals, every later event of their streams renumbered (and re-linked where linked). */
function withoutRefusals(lines: Line[]): Line[] {
  const kept = lines.filter((l) => l.kind !== 'stream' && l.kind !== 'end' && l['type'] !== REFUSED);
  const tips = new Map<string, { revision: bigint; link: string; first: { revision: bigint; prev: string } }>();
  for (const line of kept) {
    if (line.kind !== 'event' && line.kind !== 'actor') continue;
    const streamId = line['streamId'] as string;
    const tip = tips.get(streamId);
    // The entries' streams lose their refusals: renumbered. The actors' streams keep their revisions.
    const revision = tip && line.kind === 'event' ? tip.revision + 1n : BigInt(line['revision'] as string);
    const prev = tip ? tip.link : (line['prev'] as string);
    const metadata = { ...(line['metadata'] as Record<string, unknown>) };
    const link = chainLink(prev, { id: line['id'] as string, type: line['type'] as string, data: line['data'], metadata } as never);
    Object.assign(line, { revision: revision.toString(), prev, metadata: { ...metadata, chain: link } });
    tips.set(streamId, { revision, link, first: tip?.first ?? { revision, prev } });
  }
  const streams: Line[] = [...tips].map(([streamId, tip]) => ({ kind: 'stream', streamId, firstRevision: tip.first.revision.toString(), lastRevision: tip.revision.toString(), prev: tip.first.prev, last: tip.link }));
  return [...kept, ...streams];
}
