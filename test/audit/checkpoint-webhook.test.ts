import { expect } from 'chai';
import { articleFormSet, startAdminFixture, type AdminFixture } from '../admin/support.ts';
import { adminSession } from '../mcp/support.ts';
import { Receiver } from '../webhooks/support.ts';
import { collect } from '../../src/event-store/event-store.ts';
import { checkpointOfNote } from '../../src/audit/log-checkpoints.ts';
import { AUDIT_CHECKPOINT_STREAM } from '../../src/audit/audit-events.ts';
import { verifiedSigners } from '../../src/audit/signed-note.ts';
import { openKeyStoreAuditKeyRing } from '../../src/audit/key-store-audit-key-ring.ts';
import { openKeyStore } from '../../src/key-store/open-key-store.ts';
import { loadConfig } from '../../src/config/config.ts';
import { systemClock } from '../../src/clock.ts';
import { tempDir } from '../support/temp-dir.ts';
import { eventually } from '../support/eventually.ts';
import path from 'node:path';

/**
 * Checkpoints to webhook receivers through the webhook outbox: a webhook subscribed to `log.checkpoint` gets the
 * log's signed checkpoints (signed like every delivery, retried, in the delivery history), which verify with the
 * log's key; one not subscribed gets none; records stop once the log changes by nothing but their own deliveries.
 */
describe('audit: checkpoints delivered to webhooks subscribed to log.checkpoint', function () {
  this.timeout(90_000);
  let receiver: Receiver;
  let f: AdminFixture;
  let dataDir: string;

  before(async () => {
    receiver = await Receiver.start();
    dataDir = path.join(tempDir(), 'data');
    f = await startAdminFixture({ plan: 'standard', dataDir, env: { OUTBOUND_ALLOWLIST: '127.0.0.1', WEBHOOK_CA_FILE: receiver.caFile, AUDIT_CHECKPOINT_WEBHOOK_SECONDS: '1' }, logger: (await import('pino')).pino({ level: 'warn' }) });
    const session = await adminSession(f);
    const as = { token: session, headers: { 'X-Project-Id': f.project.projectId } };
    for (const [name, urlPath, events] of [['checkpoints', '/checkpoints', ['log.checkpoint']], ['content', '/content', ['entry.published']]] as const) {
      const created = await f.call('POST', '/webhooks', { body: { name, url: receiver.url(urlPath), events }, ...as });
      expect(created.status, JSON.stringify(created.body)).to.equal(201);
      receiver.secrets.set(urlPath, created.body.secret);
    }
  });
  after(async () => {
    await f?.stop();
    await receiver?.close();
  });

  it('a subscribed webhook receives signed deliveries of the log\'s checkpoints, which verify with the log\'s key; the other none', async () => {
    expect((await f.call('POST', '/form-sets', { body: articleFormSet })).status).to.equal(201);
    const [got] = await receiver.waitFor('/checkpoints', (r) => r.length >= 1, 30_000);
    expect(got!.verified, 'the delivery signature').to.equal(true);
    expect(got!.headers['x-service-event']).to.equal('log.checkpoint');
    const body = got!.json as { event: string; project_id: string; tree_size: number; root_hash: string; note: string; signed_at: string };
    expect(body).to.include({ event: 'log.checkpoint', project_id: f.project.projectId });
    const parsed = checkpointOfNote(body.note);
    expect(parsed.size).to.equal(body.tree_size);
    expect(Buffer.from(parsed.rootHash).toString('base64')).to.equal(body.root_hash);
    const keys = await openKeyStore(loadConfig({ DATA_DIR: dataDir }));
    try {
      const ring = await openKeyStoreAuditKeyRing(keys, systemClock);
      expect(verifiedSigners(body.note, ring.publicKeys().map((k) => ({ name: parsed.origin, publicKey: k.publicKey })))).to.have.length(1);
    } finally {
      await keys.close();
    }
    expect(receiver.received('/content').filter((r) => r.json?.event === 'log.checkpoint')).to.have.length(0);
  });

  it('once only its own deliveries change the log, no further checkpoint is recorded', async () => {
    const records = async () => (await collect(f.service.stores.events.readAll())).filter((e) => e.type === 'audit.checkpoint-recorded').length;
    // Once the last checkpoint recorded has been delivered, no attempt is left unfinished, and the log has changed
    // since by nothing but records and deliveries, watch two intervals (1 s here) and more. (Read from the log and the
    // receiver: a call to the admin API would change the log.)
    const consequence = (streamId: string) => [AUDIT_CHECKPOINT_STREAM, 'webhook-delivery-', 'outbox-webhooks-'].some((prefix) => streamId.startsWith(prefix));
    const settled = async () => {
      const events = await collect(f.service.stores.events.readAll());
      const count = (type: string) => events.filter((e) => e.type === type).length;
      const lastAt = events.findLastIndex((e) => e.type === 'audit.checkpoint-recorded');
      const last = lastAt === -1 ? undefined : (events[lastAt]!.data as { size: number }).size;
      return {
        last,
        // What the last checkpoint does not cover (the tree's leaves are the log's first `size` events: the
        // tree may lag the log, so events before the record itself may be outside it too).
        since: last === undefined ? [] : events.slice(last).filter((e) => !consequence(e.streamId)).map((e) => e.type),
        received: receiver.received('/checkpoints').map((r) => (r.json as { tree_size?: number } | undefined)?.tree_size),
        started: count('webhook.delivery-attempt-started'),
        finished: count('webhook.delivery-attempt-finished'),
      };
    };
    await eventually(settled, (d) => d.last !== undefined && d.since.length === 0 && d.received.includes(d.last) && d.started === d.finished, 30_000, 'the last checkpoint recorded delivered, nothing else since');
    const before = await records();
    await new Promise((resolve) => setTimeout(resolve, 2500));
    expect(await records()).to.equal(before);
  });
});
