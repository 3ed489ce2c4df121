import fs from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { expect } from 'chai';
import { ManualClock } from '../../src/clock.ts';
import { adminSession, articleFormSet, startAdminFixture, startApiReplica, PASSWORD, type AdminFixture } from '../admin/support.ts';
import { runEntry, runProgram } from '../support/child-process.ts';
import { jq, needing, openssl, requireProgram } from '../support/system-program.ts';
import { needingPeer, requireGoPeer } from '../support/go-peers.ts';
import { memoryKey, reprove, resign } from './audit-key-support.ts';
import { chainLink } from '../../src/event-store/hash-chain.ts';
import { tempDir } from '../support/temp-dir.ts';

const SCRIPT = 'scripts/audit/verify-audit-export.mjs';
const HOUR = 3_600_000;
const MINUTE = 60_000;
const DOCS = path.resolve(import.meta.dirname, '../../docs/audit.md');
const WALKTHROUGH_MARKER = '<!-- tested: test/audit/audit-export.test.ts runs the blocks of this walkthrough as they are -->';

type Line = Record<string, any>;
const linesOf = (file: string): Line[] => fs.readFileSync(file, 'utf8').trimEnd().split('\n').map((l) => JSON.parse(l) as Line);

/**
 * Audit exports as an auditor gets and checks them: a period and an entry's history, over the admin API (tenant
 * admins only) and the CLI, each with the events of the people and keys its events name (who they are, their
 * roles, who issued each key) from before the period too, password hashes left out and contact-form values
 * still sealed; verified by the standalone script with the operator's public key, and by the documented
 * walkthrough (openssl, jq and the script) run as written. A forger who re-signs with a key of their own is
 * caught by what the header promises (period, stream, redactions), not only by the key.
 */
describe('audit exports: periods, entries and their actors, verified by an auditor alone', function () {
  this.timeout(240_000);
  const t0 = Date.parse('2026-05-04T08:00:00.000Z');
  const clock = new ManualClock(new Date(t0));
  const at = (ms: number) => new Date(ms).toISOString();
  const step = (ms: number) => clock.set(new Date(t0 + ms));
  let f: AdminFixture;
  let dataDir: string;
  let admin: { token: string; headers: Record<string, string> };
  let editor: { userId: string; email: string };
  let writerKey: { id: string; key: string };
  let figures: string;
  let other: string;
  let adminUserId: string;
  const dir = tempDir();
  const file = (name: string) => path.join(dir, name);
  const period = { from: at(t0 + HOUR), to: at(t0 + 4.5 * HOUR) };
  const SUBMITTED = { name: 'Reader Sealed', email: 'reader.sealed@example.org', message: 'A message only its recipients may read.' };

  const asAdmin = (method: string, route: string, body?: unknown) => f.call(method, route, { token: admin.token, headers: admin.headers, ...(body === undefined ? {} : { body }) });
  const download = async (route: string, token: string, headers: Record<string, string> = {}) => {
    const response = await fetch(`${f.service.url}/admin/v1${route}`, { headers: { authorization: `Bearer ${token}`, ...headers } });
    return { status: response.status, headers: response.headers, text: await response.text() };
  };
  const verify = async (bundle: string, key?: string) => {
    const run = await runProgram(process.execPath, [SCRIPT, bundle, ...(key ? ['--public-key', key] : [])], {});
    return { code: run.code, stderr: run.stderr, report: JSON.parse(run.stdout) };
  };

  before(async () => {
    dataDir = path.join(tempDir(), 'data');
    f = await startAdminFixture({ clock, dataDir });
    admin = await adminSession(f);
    adminUserId = f.project.userId;
    step(10 * MINUTE); // an editor joins, as tenant_user
    editor = { email: 'editor@example.com', userId: '' };
    const created = await asAdmin('POST', '/users', { email: editor.email, password: PASSWORD, role: 'tenant_user' });
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
    editor.userId = created.body.id;
    step(20 * MINUTE); // the admin issues an agent key
    const issued = await asAdmin('POST', '/keys', { type: 'agent', scope: 'content', name: 'writer' });
    expect(issued.status, JSON.stringify(issued.body)).to.equal(201);
    writerKey = { id: issued.body.id, key: issued.body.key };

    step(HOUR); // the period begins: the writer key writes and submits, the entry is assigned to the editor
    const formSetId = (await asAdmin('POST', '/form-sets', articleFormSet)).body.id;
    const entry = await f.call('POST', `/form-sets/${formSetId}/entries`, { token: writerKey.key, body: { slug: 'figures', fields: { title: 'Quarterly figures' } } });
    expect(entry.status, JSON.stringify(entry.body)).to.equal(201);
    figures = entry.body.entry.id;
    expect((await f.call('POST', `/revisions/${entry.body.revision.id}/submit`, { token: writerKey.key, body: {} })).status).to.equal(200);
    expect((await asAdmin('PUT', `/entries/${figures}/assignee`, { userId: editor.userId })).status).to.equal(200);
    step(2 * HOUR); // the admin publishes
    expect((await asAdmin('POST', `/revisions/${entry.body.revision.id}/publish`, { revision: 1 })).status).to.equal(200);
    step(3 * HOUR); // the editor is promoted, and renames the entry
    expect((await asAdmin('PATCH', `/users/${editor.userId}`, { role: 'tenant_admin' })).status).to.equal(200);
    const login = await fetch(`${f.service.url}/admin/v1/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: editor.email, password: PASSWORD }) });
    const editorToken = ((await login.json()) as { token: string }).token;
    expect((await f.call('PATCH', `/entries/${figures}/slug`, { token: editorToken, headers: admin.headers, body: { slug: 'figures-q1' } })).status).to.equal(200);
    step(4 * HOUR); // a reader writes through a contact form: personal data, sealed in the log
    const form = await asAdmin('POST', '/contact-forms', { name: 'Contact', slug: 'contact', fields: [{ key: 'name', type: 'text', label: 'Name' }, { key: 'email', type: 'email', label: 'E-mail' }, { key: 'message', type: 'textarea', label: 'Message' }] });
    expect(form.status, JSON.stringify(form.body)).to.equal(201);
    const submitted = await fetch(`${f.service.url}/public/p/${f.project.projectId}/v1/contact-forms/contact/submit`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(SUBMITTED) });
    expect(submitted.status).to.equal(200);
    step(5 * HOUR); // after the period: another entry, by the fixture's own key
    other = (await f.call('POST', `/form-sets/${formSetId}/entries`, { body: { slug: 'other', fields: { title: 'After the period' } } })).body.entry.id;
    step(6 * HOUR);
  });
  after(() => f?.stop());

  it('a period over the admin API: the period\'s events and the actors they name, from before the period too; password hashes out, contact values sealed; valid with the operator\'s key', async () => {
    const answer = await download(`/audit/exports/period?from=${period.from}&to=${period.to}`, admin.token, admin.headers);
    expect(answer.status, answer.text).to.equal(200);
    expect(answer.headers.get('content-type')).to.equal('application/x-ndjson');
    expect(answer.headers.get('content-disposition')).to.match(/^attachment; filename="audit-.*-2026-05-04-2026-05-04\.ndjson"$/);
    expect(answer.headers.get('cache-control')).to.equal('no-store');
    fs.writeFileSync(file('period.ndjson'), answer.text);
    const lines = linesOf(file('period.ndjson'));
    expect(answer.headers.get('x-audit-export-digest')).to.equal(lines.at(-1)!['digest']);

    const header = lines[0]!;
    expect(header).to.deep.include({ kind: 'header', format: 'annals-audit-export', version: 2, projectId: f.project.projectId, tenantId: f.project.tenantId, selection: { kind: 'period', ...period }, ...period, actors: 'referenced' });
    expect(header['log'].through).to.match(/^\d{20}$/);
    // The checkpoint it belongs to covers every event of the log up to `through`, and each line carries its place in its tree.
    const checkpoint = header['log'].checkpoint;
    expect(checkpoint).to.include.keys(['size', 'rootHash', 'note', 'signedAt']);
    expect(checkpoint.note.split('\n').slice(1, 3)).to.deep.equal([String(checkpoint.size), checkpoint.rootHash]);
    const withProofs = lines.filter((l) => l['kind'] === 'event' || l['kind'] === 'actor');
    for (const line of withProofs) expect(line['proof'].leafIndex, line['id']).to.be.within(0, checkpoint.size - 1);
    expect(Math.max(...withProofs.map((l) => Number(l['position'])))).to.be.at.most(Number(header['log'].through));
    const events = lines.filter((l) => l['kind'] === 'event');
    expect(events.length).to.be.greaterThan(6);
    for (const event of events) expect(Date.parse(event['metadata'].occurredAt)).to.be.within(Date.parse(period.from), Date.parse(period.to) - 1);
    expect(events.some((e) => e['streamId'] === `entry-${other}`), 'the entry made after the period').to.equal(false);
    expect(events.map((e) => e['type'])).to.include.members(['entry.created', 'entry.revision-published', 'entry.assigned', 'entry.slug-changed', 'contact-submission.received']);

    // The actors: the writer key (issued before the period, by the admin), the admin, the editor (created before
    // the period as tenant_user); nobody the period's events do not name. The editor's promotion inside the period
    // was made in the project (it names it), so it is one of the period's events.
    const actors = lines.filter((l) => l['kind'] === 'actor');
    const described = actors.map((a) => `${a['type']} ${a['data'].keyId ?? a['data'].userId}`);
    expect(described).to.include.members([`agent-key.issued ${writerKey.id}`, `user.created ${adminUserId}`, `user.created ${editor.userId}`]);
    expect(events.some((e) => e['type'] === 'user.role-changed' && e['data'].userId === editor.userId && e['data'].role === 'tenant_admin'), 'the promotion, an event of the period').to.equal(true);
    expect(described.some((d) => d.includes(f.project.agentKey.keyId)), 'the fixture\'s key wrote nothing in the period').to.equal(false);
    const text = fs.readFileSync(file('period.ndjson'), 'utf8');
    expect(text).to.not.contain('scrypt$');
    for (const value of Object.values(SUBMITTED)) expect(text, 'a submitted value in clear').to.not.contain(value);

    const key = await publicKeyFile();
    const { code, stderr, report } = await verify(file('period.ndjson'), key);
    expect(code, stderr).to.equal(0);
    expect(report).to.deep.include({ valid: true, authenticated: true, version: 2, events: events.length, actorEvents: actors.length, through: header['log'].through, selection: header['selection'] });
    expect(report.redactedEvents).to.equal(2);
    // Every line in the checkpoint's tree: the two redacted ones by the leaf hash their proof gives.
    expect(report.inclusion).to.deep.equal({ proved: events.length + actors.length, leafHashesGiven: 2 });
    expect(report.checkpoint).to.include({ size: checkpoint.size, rootHash: checkpoint.rootHash, signedAt: checkpoint.signedAt, keyId: report.keyId });
    const editorRecord = report.actors.users.find((u: { userId: string }) => u.userId === editor.userId);
    expect(editorRecord).to.deep.include({ email: editor.email, disabledAt: null });
    expect(editorRecord.roles.map((r: { role: string; from: string }) => [r.role, r.from])).to.deep.equal([
      ['tenant_user', at(t0 + 10 * MINUTE)],
      ['tenant_admin', at(t0 + 3 * HOUR)],
    ]);
    expect(report.actors.agentKeys).to.deep.equal([{ keyId: writerKey.id, name: 'writer', scope: 'content', issuedAt: at(t0 + 20 * MINUTE), issuedBy: { type: 'user', id: adminUserId }, revokedAt: null }]);
  });

  it('an entry\'s whole history over the admin API and the CLI: its stream alone, with its actors; the same events both ways', async () => {
    const answer = await download(`/audit/exports/entries/${figures}`, admin.token, admin.headers);
    expect(answer.status, answer.text).to.equal(200);
    fs.writeFileSync(file('entry.ndjson'), answer.text);
    const lines = linesOf(file('entry.ndjson'));
    expect(lines[0]).to.deep.include({ selection: { kind: 'entry', entryId: figures, streamId: `entry-${figures}` } });
    expect(lines[0]).to.not.have.property('from');
    const events = lines.filter((l) => l['kind'] === 'event');
    expect(new Set(events.map((e) => e['streamId']))).to.deep.equal(new Set([`entry-${figures}`]));
    expect(events.map((e) => Number(e['revision']))).to.deep.equal(events.map((_, i) => i));
    const { code, report } = await verify(file('entry.ndjson'), await publicKeyFile());
    expect(code).to.equal(0);
    expect(report.actors.users.map((u: { userId: string }) => u.userId).sort()).to.deep.equal([adminUserId, editor.userId].sort());

    // Refused: a tenant user, an agent key (any scope), an entry of no project of theirs, a range backwards.
    expect((await download(`/audit/exports/entries/${figures}`, f.project.agentKey.key)).status).to.equal(403);
    expect((await download(`/audit/exports/period?from=${period.from}&to=${period.to}`, writerKey.key)).status).to.equal(403);
    const user = await asAdmin('POST', '/users', { email: 'reader@example.com', password: PASSWORD, role: 'tenant_user' });
    expect(user.status).to.equal(201);
    const userLogin = await fetch(`${f.service.url}/admin/v1/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: 'reader@example.com', password: PASSWORD }) });
    const userToken = ((await userLogin.json()) as { token: string }).token;
    expect((await download(`/audit/exports/entries/${figures}`, userToken, admin.headers)).status).to.equal(403);
    const unknown = await download('/audit/exports/entries/00000000-0000-4000-8000-000000000000', admin.token, admin.headers);
    expect(unknown.status).to.equal(404);
    expect(JSON.parse(unknown.text).error.code).to.equal('NOT_FOUND');
    const backwards = await download(`/audit/exports/period?from=${period.to}&to=${period.from}`, admin.token, admin.headers);
    expect(backwards.status).to.equal(400);
    expect(JSON.parse(backwards.text).error.message).to.match(/^to: /);

    // The CLI, on the service's data folder: the same events and actor events.
    const cli = await runEntry('src/cli/main.ts', ['audit', 'export', '--project', f.project.projectId, '--entry', figures, '--out', file('entry-cli.ndjson'), '--json'], { DATA_DIR: dataDir, LOG_LEVEL: 'silent' });
    expect(cli.code, cli.stderr).to.equal(0);
    expect(JSON.parse(cli.stdout)).to.deep.include({ selection: { kind: 'entry', entryId: figures, streamId: `entry-${figures}` }, events: events.length });
    const fromCli = linesOf(file('entry-cli.ndjson'));
    const ids = (all: Line[]) => all.filter((l) => l['kind'] === 'event' || l['kind'] === 'actor').map((l) => `${l['kind']} ${l['id']}`);
    expect(ids(fromCli)).to.deep.equal(ids(lines));
    expect((await verify(file('entry-cli.ndjson'), await publicKeyFile())).report).to.include({ valid: true, authenticated: true });
  });

  it('comparable: a later export of the same period reads the log further (log.through) and holds the earlier one\'s events unchanged', async () => {
    step(6 * HOUR + MINUTE);
    // An event the period holds, appended after the first export (a clock behind, or a late writer): only the later export has it.
    clock.set(new Date(Date.parse(period.from) + 30 * MINUTE));
    expect((await asAdmin('PUT', `/entries/${figures}/assignee`, { userId: null })).status).to.equal(200);
    clock.set(new Date(t0 + 6 * HOUR + 2 * MINUTE));
    const later = await download(`/audit/exports/period?from=${period.from}&to=${period.to}`, admin.token, admin.headers);
    fs.writeFileSync(file('period-later.ndjson'), later.text);
    const [a, b] = [linesOf(file('period.ndjson')), linesOf(file('period-later.ndjson'))];
    expect(b[0]!['log'].through > a[0]!['log'].through).to.equal(true);
    expect(b[0]!['log'].checkpoint.size).to.be.greaterThan(a[0]!['log'].checkpoint.size);
    // The same events at the same leaves; their paths lead to the later, larger tree's root.
    const withoutPath = ({ proof, ...line }: Line) => ({ ...line, leafIndex: proof.leafIndex });
    const byId = new Map(b.filter((l) => l['kind'] === 'event').map((l) => [l['id'], withoutPath(l)]));
    for (const event of a.filter((l) => l['kind'] === 'event')) expect(byId.get(event['id']), event['id']).to.deep.equal(withoutPath(event));
    expect(byId.size).to.equal(a.filter((l) => l['kind'] === 'event').length + 1);
    expect((await verify(file('period-later.ndjson'), await publicKeyFile())).report.valid).to.equal(true);

    // annals audit diff: the later one extends the earlier, its checkpoint by a consistency proof from the log tree.
    const diff = await runEntry('src/cli/main.ts', ['audit', 'diff', file('period.ndjson'), file('period-later.ndjson'), '--public-key', await publicKeyFile(), '--json'], { DATA_DIR: dataDir, LOG_LEVEL: 'silent' });
    expect(diff.code, diff.stdout + diff.stderr).to.equal(0);
    const result = JSON.parse(diff.stdout);
    expect(result).to.deep.include({ extends: true, relation: 'covers', keys: 'key list', newEvents: 1 });
    expect(result.consistency).to.include({ fromSize: a[0]!['log'].checkpoint.size, toSize: b[0]!['log'].checkpoint.size, verified: true });
    // The same, away from the service (no log tree where it runs), with the proof it printed given as a file.
    fs.writeFileSync(file('consistency.json'), JSON.stringify(result.consistency));
    const away = await runEntry('src/cli/main.ts', ['audit', 'diff', file('period.ndjson'), file('period-later.ndjson'), '--consistency', file('consistency.json'), '--json'], { DATA_DIR: path.join(tempDir(), 'elsewhere'), LOG_LEVEL: 'silent' });
    expect(away.code, away.stdout + away.stderr).to.equal(0);
    expect(JSON.parse(away.stdout)).to.include({ extends: true, keys: 'bundles' });
    expect(away.stderr).to.contain('the keys the bundles carry');
    // Backwards, the earlier does not extend the later.
    const backwards = await runEntry('src/cli/main.ts', ['audit', 'diff', file('period-later.ndjson'), file('period.ndjson'), '--json'], { DATA_DIR: dataDir, LOG_LEVEL: 'silent' });
    expect(backwards.code).to.equal(1);
    expect(JSON.parse(backwards.stdout).problems.map((p: { detail: string }) => p.detail).join('\n')).to.match(/is older than/);
  });

  it('an API-only process beside the service exports too: signed with the ring it opens at its first export, with the latest checkpoint the projector process signed; one that cannot open the key answers 503 naming it', async () => {
    // A session of the replica's own (its clock is the system's, the fixture's is set back in 2026).
    const signIn = async (url: string) => {
      const login = await fetch(`${url}/admin/v1/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: f.project.adminEmail, password: PASSWORD }) });
      return { authorization: `Bearer ${((await login.json()) as { token: string }).token}`, ...admin.headers };
    };
    const replica = await startApiReplica(dataDir);
    try {
      const response = await fetch(`${replica.url}/admin/v1/audit/exports/entries/${figures}`, { headers: await signIn(replica.url) });
      const text = await response.text();
      expect(response.status, text).to.equal(200);
      fs.writeFileSync(file('entry-replica.ndjson'), text);
      const { code, report } = await verify(file('entry-replica.ndjson'), await publicKeyFile());
      expect(code, JSON.stringify(report.problems)).to.equal(0);
      expect(report).to.include({ valid: true, authenticated: true });
      const latest = await f.service.logTree!.tree.latestCheckpoint();
      expect(linesOf(file('entry-replica.ndjson'))[0]!['log'].checkpoint.size).to.be.at.most(latest!.size);
    } finally {
      await replica.stop();
    }
    const keys = tempDir();
    const keyless = await startApiReplica(dataDir, { AUDIT_KEY_FILE: path.join(keys, 'not-on-this-host.pem'), AUDIT_KEY_CHAIN_FILE: path.join(keys, 'chain.ndjson') });
    try {
      const response = await fetch(`${keyless.url}/admin/v1/audit/exports/entries/${figures}`, { headers: await signIn(keyless.url) });
      const body = (await response.json()) as { error: { code: string; message: string; hint: string } };
      expect(response.status).to.equal(503);
      expect(body.error.code).to.equal('SERVICE_UNAVAILABLE');
      expect(body.error.message).to.match(/^This process cannot sign audit exports: .*not-on-this-host\.pem/);
      expect(body.error.hint).to.contain('projector role');
    } finally {
      await keyless.stop();
    }
  });

  it('a forger re-signing with a key of their own, over a tree and a checkpoint of their own, is caught by what the header says: an event out of the period, a line of another stream, a redaction on an event that has none', async () => {
    const period = linesOf(file('period.ndjson'));
    const entry = linesOf(file('entry.ndjson'));
    const forgeries: Array<{ name: string; lines: Line[]; expected: RegExp }> = [
      {
        name: 'an event moved out of the period',
        lines: period.map((l) => (l['kind'] === 'event' && l['type'] === 'entry.revision-published' ? { ...l, metadata: { ...l['metadata'], occurredAt: at(t0 + 5 * HOUR) } } : l)),
        expected: /occurredAt .* is outside \[/,
      },
      {
        name: 'an event of another stream in an entry\'s export',
        lines: [...entry.slice(0, 2), { ...period.find((l) => l['type'] === 'contact-submission.received')!, position: '99999999999999999998' }, ...entry.slice(2)].map((l) => (l['kind'] === 'header' ? { ...l, log: { ...l['log'], through: '99999999999999999999' } } : l)),
        expected: /is not the entry's/,
      },
      {
        name: 'a redaction claimed to hide an edited title',
        lines: entry.map((l) => (l['type'] === 'entry.revision-saved' ? { ...l, data: { ...l['data'], snapshot: '[redacted]' }, redacted: ['data.snapshot'] } : l)),
        expected: /redacts "data.snapshot", which no export leaves out/,
      },
    ];
    for (const forgery of forgeries) {
      const forged = file(`forged-${forgeries.indexOf(forgery)}.ndjson`);
      fs.writeFileSync(forged, await resigned(forgery.lines));
      // Without the operator's key list the forger's own key inside the bundle is used: the signature, the
      // checkpoint and the proofs hold.
      const { code, report } = await verify(forged);
      expect(code, forgery.name).to.equal(1);
      const problems = report.problems.map((p: { message: string }) => p.message).join('\n');
      expect(problems, forgery.name).to.match(forgery.expected);
      expect(problems, `${forgery.name}: the forger's signature, checkpoint and proofs verify`).to.not.match(/^signature|log\.checkpoint|inclusion proof/m);
      // With it, the signature and the checkpoint are refused too.
      const withKeys = (await verify(forged, await publicKeyFile())).report.problems.map((p: { message: string }) => p.message).join('\n');
      expect(withKeys).to.match(/^signature: signed by key/m);
      expect(withKeys).to.match(/log\.checkpoint: .* a checkpoint of the log "forged\.example\/log"/);
    }
  });

  it('an edited event, the bundle re-signed by a forger who cannot rebuild the tree the checkpoint signs: its inclusion proof names the line', async () => {
    const lines = linesOf(file('period.ndjson'));
    const target = lines.findIndex((l) => l['kind'] === 'event' && JSON.stringify(l['data']).includes('Quarterly figures'));
    const edited = lines.map((l, i) => (i === target ? JSON.parse(JSON.stringify(l).replace('Quarterly figures', 'Quarterly figures (restated)')) : l));
    fs.writeFileSync(file('edited.ndjson'), await resigned(edited, { ownTree: false }));
    const { code, report } = await verify(file('edited.ndjson'));
    expect(code).to.equal(1);
    expect(report.problems).to.deep.include({ line: target + 1, message: `event ${lines[target]!['id']}: its inclusion proof does not lead to the checkpoint's root: the event is not the one the log holds at leaf ${lines[target]!['proof'].leafIndex}` });
  });

  it(needingPeer('tlog-verifier', 'the Go verifier checks an export alone: its checkpoint, every line\'s inclusion proof, its signature; an edited line fails'), async function () {
    const verifier = requireGoPeer(this, 'tlog-verifier');
    const keys = JSON.parse(fs.readFileSync(await publicKeyFile(), 'utf8')) as { keys: Array<{ vkey: string }> };
    const vkeys = keys.keys.flatMap((k) => ['--vkey', k.vkey]);
    const good = await runProgram(verifier, ['export', '--export', file('period.ndjson'), ...vkeys], {});
    expect(good.code, good.stdout + good.stderr).to.equal(0);
    const lines = linesOf(file('period.ndjson'));
    expect(JSON.parse(good.stdout)).to.include({ verified: true, events: lines.filter((l) => l['kind'] === 'event').length, actorEvents: lines.filter((l) => l['kind'] === 'actor').length, leafHashesGiven: 2, treeSize: lines[0]!['log'].checkpoint.size });
    const edited = await runProgram(verifier, ['export', '--export', file('edited.ndjson'), ...vkeys], {});
    expect(edited.code).to.equal(1);
    expect(JSON.parse(edited.stdout).detail).to.match(/is not in the checkpoint's tree/);
  });

  it(needing(openssl, needing(jq, 'the walkthrough in docs/audit.md, run as written, with openssl, jq and the standalone script alone; an edited line fails it')), async function () {
    requireProgram(this, openssl);
    requireProgram(this, jq);
    const blocks = walkthroughBlocks();
    expect(blocks.length).to.be.greaterThan(3);
    const run = (bundle: string, steps = blocks) => {
      const folder = tempDir();
      fs.copyFileSync(bundle, path.join(folder, 'export.ndjson'));
      fs.copyFileSync(keyFile!, path.join(folder, 'audit-keys.json'));
      fs.copyFileSync(SCRIPT, path.join(folder, 'verify-audit-export.mjs'));
      return spawnSync('bash', ['-euo', 'pipefail', '-c', steps.join('\n')], { cwd: folder, encoding: 'utf8', env: { PATH: process.env['PATH'] ?? '' } });
    };
    const good = run(file('period.ndjson'));
    expect(good.status, `${good.stdout}\n${good.stderr}`).to.equal(0);
    expect(good.stdout).to.contain('Signature Verified Successfully');
    expect(good.stdout).to.match(/ok: the digest is the one signed/);
    expect(good.stdout).to.match(/ok: the checkpoint of size \d+ is signed by a key of the list/);
    expect(good.stdout).to.match(/ok: the event is in the checkpoint's tree/);

    // The first event line edited (the one step 4 checks by hand), nothing re-signed: the script, the digest and the proof fail.
    const lines = fs.readFileSync(file('period.ndjson'), 'utf8').split('\n');
    const target = lines.findIndex((l) => l.includes('"kind":"event"'));
    fs.writeFileSync(file('period-edited.ndjson'), lines.map((l, i) => (i === target ? l.replace(/"occurredAt":"([^"]+)"/, '"occurredAt":"$1 "') : l)).join('\n'));
    expect(run(file('period-edited.ndjson')).status).to.not.equal(0);
    // The checkpoint (step 3) still verifies; the event checked by hand (step 4) does not lead to its root.
    const byHand = run(file('period-edited.ndjson'), blocks.slice(2));
    expect(byHand.status).to.not.equal(0);
    expect(byHand.stdout).to.match(/ok: the checkpoint of size \d+ is signed by a key of the list/);
    expect(byHand.stdout).to.contain('MISMATCH: the event is not the one the log holds at its leaf');
  });

  let keyFile: string | undefined;
  /** The audit public key as the operator hands it over (`annals audit public-key --json`), read once the service has made one. */
  async function publicKeyFile(): Promise<string> {
    if (keyFile) return keyFile;
    const key = await runEntry('src/cli/main.ts', ['audit', 'public-key', '--json'], { DATA_DIR: dataDir, LOG_LEVEL: 'silent' });
    expect(key.code, key.stderr).to.equal(0);
    keyFile = file('audit-keys.json');
    fs.writeFileSync(keyFile, key.stdout);
    return keyFile;
  }
});

/** The shell blocks of docs/audit.md's walkthrough, after its marker, as an auditor reads them. */
function walkthroughBlocks(): string[] {
  const text = fs.readFileSync(DOCS, 'utf8');
  const start = text.indexOf(WALKTHROUGH_MARKER);
  if (start < 0) throw new Error('docs/audit.md: the tested walkthrough is gone');
  const end = text.indexOf('\n## ', start);
  return [...text.slice(start, end < 0 ? undefined : end).matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!);
}

/**
 * The bundle re-signed by a key of the forger's own: header key, digest and signature made anew (stream anchors
 * recomputed). With `ownTree` (the default) the forger also builds a Merkle tree over the bundle's lines and signs
 * a checkpoint of it under a log name of their own, so that every proof in the bundle verifies; without, the lines
 * keep the service's checkpoint and proofs.
 */
async function resigned(lines: Line[], options: { ownTree?: boolean } = {}): Promise<string> {
  const key = memoryKey();
  let body = lines.filter((l) => l['kind'] !== 'end' && l['kind'] !== 'stream') as Array<Line & { kind: string }>;
  if (options.ownTree ?? true) body = await reprove(body, key, 'forged.example/log');
  const streams = new Map<string, Line & { kind: string }>();
  for (const l of body.filter((l) => l['kind'] === 'event' || l['kind'] === 'actor')) {
    const known = streams.get(l['streamId']);
    streams.set(l['streamId'], { kind: 'stream', streamId: l['streamId'], firstRevision: known?.['firstRevision'] ?? l['revision'], lastRevision: l['revision'], prev: known?.['prev'] ?? l['prev'], last: l['metadata'].chain ?? chainLink('0'.repeat(64), l as never) });
  }
  const signed = await resign([...body, ...streams.values()], key, null, body[0]!['exportedAt']);
  return signed.map((l) => `${JSON.stringify(l)}\n`).join('');
}
