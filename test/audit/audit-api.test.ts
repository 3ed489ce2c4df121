import { expect } from 'chai';
import { articleFormSet, OPERATOR, startAdminFixture, type AdminFixture } from '../admin/support.ts';
import { adminSession, ok, PASSWORD, spawnStdioClient } from '../mcp/support.ts';
import { eventually } from '../support/engine-fixture.ts';
import { collect } from '../../src/event-store/event-store.ts';
import { leafHash, verifyConsistency, verifyInclusion } from '../../src/audit/merkle-tree.ts';


const b = (text: string) => Buffer.from(text, 'base64');

/**
 * The log tree through the admin API and the MCP server: tenant admins read the latest checkpoint, ask for one,
 * and get proofs that verify; an inclusion proof is given only for an event of the request's project (another
 * tenant's event answers 404, as one that does not exist); agent keys are refused.
 */
describe('audit API: checkpoints and proofs for tenant admins, nothing of another tenant disclosed', function () {
  this.timeout(60_000);
  let f: AdminFixture;
  let session: string;
  const asAdmin = () => ({ token: session, headers: { 'X-Project-Id': f.project.projectId } });

  before(async () => {
    f = await startAdminFixture();
    session = await adminSession(f);
    expect((await f.call('POST', '/form-sets', { body: articleFormSet })).status).to.equal(201);
  });
  after(() => f?.stop());

  it('signs a checkpoint on demand; proves an event of the project in it and the consistency of two checkpoints', async () => {
    const before = (await collect(f.service.stores.events.readAll())).length;
    const made = await f.call('POST', '/audit/checkpoint', asAdmin());
    expect(made.status, JSON.stringify(made.body)).to.equal(200);
    const events = await collect(f.service.stores.events.readAll());
    // It covers the log as it was at the request, whether or not the tree had taken it in (the service may append
    // more meanwhile: usage of keys, recorded checkpoints).
    expect(made.body.size).to.be.at.least(before).and.at.most(events.length);
    expect(made.body.note).to.match(/^annals\/[A-Za-z0-9_-]{16}\n\d+\n[A-Za-z0-9+/=]{44}\n\n\u2014 /);

    const ours = events.filter((e) => e.metadata.projectId === f.project.projectId).at(-1)!;
    const proof = await f.call('GET', `/audit/proofs/inclusion?eventId=${ours.id}`, asAdmin());
    expect(proof.status, JSON.stringify(proof.body)).to.equal(200);
    expect(Buffer.from(leafHash(proof.body.leaf)).toString('base64')).to.equal(proof.body.leafHash);
    expect(verifyInclusion(b(proof.body.leafHash), proof.body.leafIndex, proof.body.treeSize, proof.body.proof.map(b), b(proof.body.checkpoint.rootHash))).to.equal(true);

    expect((await f.call('POST', `/form-sets/${(await f.call('GET', '/form-sets')).body.items[0].id}/entries`, { body: { slug: 'later', fields: { title: 'Later' } } })).status).to.equal(201);
    const later = (await eventually(() => f.call('GET', '/audit/checkpoint', asAdmin()), (r) => r.body.checkpoint?.size > made.body.size, 10_000)).body.checkpoint;
    const consistency = await f.call('GET', `/audit/proofs/consistency?fromSize=${made.body.size}`, asAdmin());
    expect(consistency.status).to.equal(200);
    expect(consistency.body.toSize).to.be.at.least(later.size);
    expect(verifyConsistency(made.body.size, consistency.body.toSize, consistency.body.proof.map(b), b(made.body.rootHash), b(consistency.body.to.rootHash))).to.equal(true);
    expect((await f.call('GET', `/audit/proofs/consistency?fromSize=${consistency.body.toSize + 5}`, asAdmin())).status).to.equal(400);
  });

  it('an event of another tenant, or of no project, is not found; agent keys are refused', async () => {
    const other = await f.access.bootstrap(OPERATOR, { projectName: 'Other tenant', plan: 'business', adminEmail: 'other-admin@example.com', adminPassword: PASSWORD, contentLocales: { locales: ['en'], defaultLocale: 'en' } });
    await f.service.supervisor!.waitFor(other.position, 5000);
    await f.call('POST', '/audit/checkpoint', asAdmin());
    const events = await collect(f.service.stores.events.readAll());
    const theirs = events.find((e) => e.metadata.projectId === other.projectId)!;
    const noProject = events.find((e) => e.metadata.projectId === undefined)!;
    for (const event of [theirs, noProject]) {
      const answer = await f.call('GET', `/audit/proofs/inclusion?eventId=${event.id}`, asAdmin());
      expect(answer.status).to.equal(404);
      expect(answer.body.error.code).to.equal('NOT_FOUND');
      expect(JSON.stringify(answer.body)).to.not.contain(event.streamId);
    }
    const byAgent = await f.call('GET', '/audit/checkpoint');
    expect(byAgent.status).to.equal(403);
    expect((await f.call('GET', '/audit/proofs/inclusion?eventId=not-a-uuid', asAdmin())).status).to.equal(400);
  });

  it('the MCP tools answer the same, for a tenant admin session (the stdio server)', async () => {
    // The stdio server with a session (the remote endpoint takes agent keys only).
    const { client: mcp } = await spawnStdioClient({ ANNALS_ADMIN_BASE: `${f.service.url}/admin`, ANNALS_SESSION_TOKEN: session, ANNALS_PROJECT_ID: f.project.projectId, PATH: process.env['PATH'] ?? '', HOME: process.env['HOME'] ?? '' });
    try {
      const latest = await ok(mcp, 'get_log_checkpoint');
      expect(latest.checkpoint.size).to.be.greaterThan(0);
      const event = (await collect(f.service.stores.events.readAll())).filter((e) => e.metadata.projectId === f.project.projectId && e.position <= BigInt(latest.checkpoint.size)).at(-1)!;
      const proof = await ok(mcp, 'get_log_inclusion_proof', { eventId: event.id });
      expect(verifyInclusion(b(proof.leafHash), proof.leafIndex, proof.treeSize, proof.proof.map(b), b(proof.checkpoint.rootHash))).to.equal(true);
      const consistency = await ok(mcp, 'get_log_consistency_proof', { fromSize: 1 });
      expect(consistency.fromSize).to.equal(1);
    } finally {
      await mcp.close();
    }
  });
});
