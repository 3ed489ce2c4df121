import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { execFileSync, spawnSync } from 'node:child_process';
import { expect } from 'chai';
import { articleFormSet, startAdminFixture, type AdminFixture } from '../admin/support.ts';
import { tempDir } from '../support/temp-dir.ts';
import { eventually } from '../support/engine-fixture.ts';
import { readPublishedLines } from '../../src/audit/checkpoint-folder.ts';
import { parseTimestampResponse, timestampRequest } from '../../src/audit/timestamp-publisher.ts';

/**
 * RFC 3161 timestamps of checkpoints, from a timestamp authority made for the test: a tiny HTTP server that
 * answers each TimeStampReq with `openssl ts -reply`, signing with a certificate made here. The token the
 * service keeps beside a published checkpoint verifies with `openssl ts -verify` against that note, and not
 * against another.
 */
describe('audit: checkpoints timestamped by an RFC 3161 authority (openssl ts)', function () {
  this.timeout(60_000);
  let dir: string;
  let server: http.Server;
  let url: string;
  let f: AdminFixture | undefined;
  let requests = 0;

  before(async () => {
    dir = tempDir();
    const openssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
    openssl('req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', 'tsa.key', '-out', 'tsa.crt', '-days', '2', '-subj', '/CN=annals test TSA', '-addext', 'extendedKeyUsage=critical,timeStamping', '-addext', 'keyUsage=critical,digitalSignature');
    fs.writeFileSync(path.join(dir, 'serial'), '01\n');
    fs.writeFileSync(
      path.join(dir, 'ts.cnf'),
      ['[ tsa ]', 'default_tsa = test_tsa', '[ test_tsa ]', `serial = ${path.join(dir, 'serial')}`, 'crypto_device = builtin', 'signer_digest = sha256', 'default_policy = 1.2.3.4.1', 'digests = sha256', 'accuracy = secs:1', 'ordering = yes', 'tsa_name = yes', 'ess_cert_id_chain = no', 'ess_cert_id_alg = sha256', ''].join('\n'),
    );
    server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const n = ++requests;
        const query = path.join(dir, `q${n}.tsq`);
        const reply = path.join(dir, `r${n}.tsr`);
        fs.writeFileSync(query, Buffer.concat(chunks));
        const run = spawnSync('openssl', ['ts', '-reply', '-config', path.join(dir, 'ts.cnf'), '-queryfile', query, '-signer', path.join(dir, 'tsa.crt'), '-inkey', path.join(dir, 'tsa.key'), '-out', reply], { cwd: dir });
        if (run.status !== 0 || req.headers['content-type'] !== 'application/timestamp-query') {
          res.writeHead(400).end(run.stderr);
          return;
        }
        res.writeHead(200, { 'content-type': 'application/timestamp-reply' }).end(fs.readFileSync(reply));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as { port: number }).port}/tsa`;
  });
  after(async () => {
    await f?.stop();
    server?.close();
  });

  it('every nonce is encoded as DER requires, so that a strict TSA grants each request: high bit set or not, leading zeros', async () => {
    // Before: one zero byte too many whenever the nonce's first byte was below 0x80, and OpenSSL answered "rejection".
    const digest = Buffer.alloc(32, 7);
    for (const hex of ['0123456789abcdef', '7fffffffffffffff', '8000000000000000', 'ffffffffffffffff', '0000000000000001', '00ff000000000000', '0000000000000000']) {
      const response = await fetch(url, { method: 'POST', body: timestampRequest(digest, Buffer.from(hex, 'hex')), headers: { 'content-type': 'application/timestamp-query' } });
      expect(response.status).to.equal(200);
      const { status, token } = parseTimestampResponse(Buffer.from(await response.arrayBuffer()));
      expect(status, `nonce ${hex}`).to.equal(0);
      expect(token!.includes(digest), `nonce ${hex}`).to.equal(true);
    }
  });

  it('a published checkpoint carries a TimeStampToken that openssl ts -verify accepts for its note, and refuses for another', async () => {
    const published = path.join(tempDir(), 'published');
    f = await startAdminFixture({ env: { AUDIT_CHECKPOINT_DIR: published, AUDIT_TSA_URL: url } });
    expect((await f.call('POST', '/form-sets', { body: articleFormSet })).status).to.equal(201);
    const stamped = (await eventually(async () => (fs.existsSync(path.join(published, 'checkpoints.ndjson')) ? readPublishedLines(published) : []), (lines) => lines.some((l) => l.kind === 'timestamp'), 20_000)).find((l) => l.kind === 'timestamp')!;
    const lines = readPublishedLines(published);
    const checkpoint = lines.find((l) => l.kind === 'checkpoint' && l.size === stamped.size)!;
    expect(checkpoint).to.not.equal(undefined);
    const token = path.join(dir, 'token.der');
    const note = path.join(dir, 'note.txt');
    fs.writeFileSync(token, Buffer.from((stamped as { token: string }).token, 'base64'));
    fs.writeFileSync(note, (checkpoint as { note: string }).note);
    const verify = (data: string) => spawnSync('openssl', ['ts', '-verify', '-token_in', '-in', token, '-data', data, '-CAfile', path.join(dir, 'tsa.crt')], { encoding: 'utf8' });
    const accepted = verify(note);
    expect(accepted.status, accepted.stdout + accepted.stderr).to.equal(0);
    expect(accepted.stdout).to.contain('Verification: OK');
    fs.writeFileSync(path.join(dir, 'other.txt'), (checkpoint as { note: string }).note.replace(/\n\d+\n/, '\n999999\n'));
    expect(verify(path.join(dir, 'other.txt')).status).to.not.equal(0);
    // The tree store keeps it beside the checkpoint too.
    expect((await f.service.logTree!.tree.checkpointOfSize(stamped.size))?.timestampToken).to.equal((stamped as { token: string }).token);
  });
});
